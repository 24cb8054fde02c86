"""udfs.log_dirs_describe: kafka-log-dirs --describe output (LogDirsCommand.java shape) -> bronze_reported_replicas rows."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from jobs.tables.bronze import REPORTED_REPLICAS, RUN_COLS
from udfs.log_dirs_describe import ROW_COLUMNS, parse_log_dirs_output, split_topic_partition

DOC = {"brokers": [
    {"logDirs": [{"partitions": [{"partition": "my-topic-with-dashes-12", "size": 1024, "offsetLag": 0, "isFuture": False},
                                 {"isFuture": True, "offsetLag": 3, "partition": "events-1", "size": 77}],
                  "error": None, "logDir": "/var/lib/kafka/b"},
                 {"logDir": "/var/lib/kafka/a", "error": "org.apache.kafka.common.errors.KafkaStorageException",
                  "partitions": []}],
     "broker": 102}],
    "version": 1}
OUTPUT = ("Querying brokers for log directories information\n"
          "Received log directory information from brokers 102\n" + json.dumps(DOC, separators=(",", ":")) + "\n")


def test_columns_are_the_bronze_table_columns():
    run = {name for name, _, _ in RUN_COLS}
    assert ROW_COLUMNS == tuple(c.name for c in REPORTED_REPLICAS.columns if c.name not in run)


def test_rows_from_real_shaped_output():
    out = parse_log_dirs_output(OUTPUT, "log-dirs.txt")
    assert out.errors == [] and out.version == 1 and out.brokers_announced == [102]
    assert out.rows == [
        {"source_file": "log-dirs.txt", "broker_id": 102, "log_dir": "/var/lib/kafka/b", "log_dir_error": None,
         "topic": "my-topic-with-dashes", "partition": 12, "size": 1024, "offset_lag": 0, "is_future": False},
        {"source_file": "log-dirs.txt", "broker_id": 102, "log_dir": "/var/lib/kafka/b", "log_dir_error": None,
         "topic": "events", "partition": 1, "size": 77, "offset_lag": 3, "is_future": True},
        {"source_file": "log-dirs.txt", "broker_id": 102, "log_dir": "/var/lib/kafka/a",
         "log_dir_error": "org.apache.kafka.common.errors.KafkaStorageException",
         "topic": None, "partition": None, "size": None, "offset_lag": None, "is_future": None},
    ]
    assert parse_log_dirs_output(OUTPUT.splitlines(keepends=True)).rows[0]["topic"] == "my-topic-with-dashes"


def test_split_on_the_last_dash():
    assert split_topic_partition("a-b-c-0") == ("a-b-c", 0)
    assert split_topic_partition("__consumer_offsets-49") == ("__consumer_offsets", 49)
    assert split_topic_partition("nodash") is None and split_topic_partition("t-x") is None
    assert split_topic_partition("-1") is None and split_topic_partition(5) is None


def test_malformed_outputs_are_reported():
    assert [e.kind for e in parse_log_dirs_output("Querying brokers for log directories information\n").errors] == ["empty_file"]
    assert [e.kind for e in parse_log_dirs_output("{not json\n").errors] == ["bad_json"]
    assert [e.kind for e in parse_log_dirs_output('{"version":2,"brokers":[]}').errors] == ["bad_version"]
    assert [e.kind for e in parse_log_dirs_output('{"version":1}').errors] == ["bad_json"]
    bad = parse_log_dirs_output('{"version":1,"brokers":[{"broker":"x"},{"broker":1,"logDirs":[{"x":1},'
                                '{"logDir":"/d","partitions":[{"partition":"nodash"}]}]}]}')
    assert [e.kind for e in bad.errors] == ["bad_json", "bad_json", "bad_json"] and bad.rows == []


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(
                        st.sampled_from(["version", "brokers", "broker", "logDirs", "logDir", "error", "partitions",
                                         "partition", "size", "offsetLag", "isFuture"]), c, max_size=4),
                    max_leaves=15))
def test_random_json_never_raises(doc):
    parse_log_dirs_output(json.dumps(doc))


_LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.lists(st.integers(), max_size=2)


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({"version": _LEAF, "brokers": st.lists(st.fixed_dictionaries({
    "broker": _LEAF, "logDirs": _LEAF | st.lists(st.fixed_dictionaries({
        "logDir": _LEAF, "error": _LEAF, "partitions": _LEAF | st.lists(st.fixed_dictionaries({
            "partition": _LEAF | st.from_regex(r"[a-z-]{1,5}-[0-9+]{1,3}", fullmatch=True), "size": _LEAF,
            "offsetLag": _LEAF, "isFuture": _LEAF}), max_size=3)}), max_size=3)}), max_size=3)}))
def test_random_right_shaped_json_never_raises(doc):
    out = parse_log_dirs_output(json.dumps(doc))
    assert all(set(row) == set(ROW_COLUMNS) for row in out.rows)
