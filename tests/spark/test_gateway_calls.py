"""jobs.engine.gateway_calls: the same JVM answers in fewer py4j round trips (the session fixture has it installed, as
every session the job starts does; the rest of the suite runs through it)."""
from __future__ import annotations

import contextlib
import threading

import pytest
from py4j.clientserver import ClientServerConnection
from py4j.java_collections import ListConverter
from pyspark import SparkContext

from jobs.engine import gateway_calls


@contextlib.contextmanager
def round_trips():
    """Counts the commands this thread sends to the JVM, by kind (``c`` call, ``r`` reflection, ``i`` new). Not
    counted: other threads' commands, and py4j's releases of collected objects (``m``), which the garbage collector
    sends whenever it runs, from whichever thread it runs on (a ``make test`` run counted two of them here)."""
    sent: list = []
    original = ClientServerConnection.send_command
    me = threading.get_ident()

    def counting(self, command):
        kind = command.split("\n", 1)[0]
        if threading.get_ident() == me and kind != "m":
            sent.append(kind)
        return original(self, command)

    ClientServerConnection.send_command = counting
    try:
        yield sent
    finally:
        ClientServerConnection.send_command = original


def _java_list_text(java_list) -> list:
    return [str(java_list.get(i)) for i in range(java_list.size())]


def test_the_session_view_is_installed_and_install_is_idempotent(spark):
    assert isinstance(SparkContext._jvm, gateway_calls._RememberingView)
    view = SparkContext._jvm
    assert gateway_calls.install() is True
    assert SparkContext._jvm is view
    assert gateway_calls.install(enabled=False) is False


def test_a_session_without_a_py4j_view_is_left_alone(spark, monkeypatch):
    monkeypatch.setattr(SparkContext, "_jvm", None)  # as under Spark Connect
    assert gateway_calls.install() is False
    assert SparkContext._jvm is None


def test_a_class_and_its_static_method_are_looked_up_once(spark):
    jvm = SparkContext._jvm
    jvm.PythonUtils.toSeq(["warm", "up"])  # the first look-ups (and the list converter's own) may ask the JVM
    with round_trips() as sent:
        seq = jvm.PythonUtils.toSeq(["a", "b", "c"])
        again = jvm.PythonUtils.toSeq(["d", "e"])
    assert [k for k in sent if k == "r"] == []
    assert seq.size() == 3 and again.apply(1) == "e"


def test_a_static_field_is_read_every_time(spark):
    integer = SparkContext._jvm.java.lang.Integer
    assert integer.MAX_VALUE == 2**31 - 1
    assert "MAX_VALUE" not in integer.__dict__
    with round_trips() as sent:
        assert integer.MAX_VALUE == 2**31 - 1
    assert sent == ["r"]


@pytest.mark.parametrize("size", [2, 10, 11, 25])
def test_a_list_crosses_in_a_few_calls_with_the_same_elements(spark, size):
    jvm = SparkContext._jvm
    column = jvm.org.apache.spark.sql.functions.col("x")  # a JavaObject element
    values = [column if i % 7 == 3 else (f"s{i}" if i % 2 else i) for i in range(size)]
    client = SparkContext._gateway._gateway_client
    expected = _java_list_text(ListConverter().convert(values, client))  # py4j's own: new + one add per element
    converter = gateway_calls._ListInFewCalls()
    converter.convert(["warm", "up"], client)  # its one look-up of List.of
    with round_trips() as sent:
        got = converter.convert(values, client)
    assert _java_list_text(got) == expected
    assert got.getClass().getName() == "java.util.ArrayList"
    got.add("still mutable")
    assert len(sent) == 2 * ((size + 9) // 10)  # List.of + new ArrayList, then List.of + addAll per further ten


def test_a_list_holding_none_is_left_to_py4j(spark):
    converter = gateway_calls._ListInFewCalls()
    assert converter.can_convert(["a", None]) is False
    assert converter.can_convert(["a"]) is False and converter.can_convert("ab") is False
    java_list = SparkContext._jvm.PythonUtils.toSeq(["a", None, "c"])  # through py4j's own converter
    assert java_list.size() == 3 and java_list.apply(1) is None


def test_a_select_of_many_columns_takes_a_handful_of_calls(spark):
    frame = spark.createDataFrame([(1, "a")], "n int, s string")
    names = [f"c{i}" for i in range(15)]
    columns = [frame["n"].alias(name) for name in names]
    with round_trips() as sent:
        out = frame.select(*columns)
    # 6: List.of(10), new ArrayList, List.of(5), addAll, toSeq, select; py4j alone: 20 (a new ArrayList and 15
    # adds, look-ups of PythonUtils and of toSeq, toSeq, select)
    assert len(sent) <= 6, sent
    assert out.columns == names and out.first()[0] == 1
