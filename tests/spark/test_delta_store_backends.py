"""Backend choice (delta-spark classes present vs absent), locations, and the delta-spark adapter.

Delta's jars cannot be fetched here, so the delta-spark backend runs against a recording fake of
``delta.tables.DeltaTable`` and fake DataFrame writers: these tests pin which delta-spark calls each
operation makes, not what Delta does with them.
"""
import json

import pytest
from delta_store_helpers import EVENTS, FINDINGS

from jobs.tables.backend_delta_spark import (
    USER_METADATA_CONF,
    DeltaSparkBackend,
    is_catalog_name,
    is_conflict,
)
from jobs.tables.delta_store import (
    BackendUnavailableError,
    ConcurrentTableUpdateError,
    DeltaStore,
    TableLocator,
    choose_backend,
    delta_classes_load,
)
from tests.settings_from import settings_from

# --------------------------------------------------------------------------- backend choice


def _probe(answer, calls=None):
    def probe(spark):
        if calls is not None:
            calls.append(spark)
        return answer
    return probe


def test_auto_picks_delta_spark_when_its_classes_load_and_embedded_otherwise():
    assert choose_backend("auto", "spark", _probe(True)) == "delta-spark"
    assert choose_backend("auto", "spark", _probe(False)) == "embedded"


def test_embedded_is_chosen_without_probing_the_jvm():
    calls = []
    assert choose_backend("embedded", "spark", _probe(True, calls)) == "embedded"
    assert calls == []


def test_forcing_delta_spark_without_its_classes_fails_with_what_to_do():
    with pytest.raises(BackendUnavailableError, match="does not load in this Spark session; start Spark with"):
        choose_backend("delta-spark", "spark", _probe(False))
    assert choose_backend("delta-spark", "spark", _probe(True)) == "delta-spark"


def test_unknown_backend_setting_lists_the_allowed_values():
    with pytest.raises(ValueError, match=r"'deltaspark'; allowed values are \['auto', 'embedded', 'delta-spark'\]"):
        choose_backend("deltaspark", "spark", _probe(True))


@pytest.mark.spark
def test_probe_on_this_session_finds_no_delta_classes(spark):
    # the one JVM look-up: Delta's jars are not on this session's classpath (Maven is unreachable here)
    assert delta_classes_load(spark) is False


class _ConnectLikeSession:
    """No ``_jvm`` (Spark Connect): the probe falls back to the configured SQL extensions."""

    def __init__(self, extensions):
        self.conf = _Conf({"spark.sql.extensions": extensions} if extensions else {})


def test_probe_without_a_jvm_reads_the_sql_extensions(monkeypatch):
    monkeypatch.delenv("DATABRICKS_RUNTIME_VERSION", raising=False)
    assert delta_classes_load(_ConnectLikeSession("io.delta.sql.DeltaSparkSessionExtension")) is True
    assert delta_classes_load(_ConnectLikeSession("")) is False
    monkeypatch.setenv("DATABRICKS_RUNTIME_VERSION", "16.4")
    assert delta_classes_load(_ConnectLikeSession("")) is True


@pytest.mark.spark
def test_from_settings_builds_the_chosen_backend(spark, tmp_path):
    storage = settings_from(storage={"backend": "auto", "root": str(tmp_path), "catalog": "", "schema": "x",
                                     "commit_retries": 5}).storage
    embedded = DeltaStore.from_settings(spark, storage, probe=_probe(False))
    assert embedded.backend_name == "embedded" and embedded.backend.commit_retries == 5
    assert embedded.location("gold_findings") == str(tmp_path / "gold_findings")
    with_delta = DeltaStore.from_settings(spark, storage, probe=_probe(True))
    assert with_delta.backend_name == "delta-spark"


def test_catalog_names_need_the_delta_spark_backend(tmp_path):
    storage = settings_from(storage={"backend": "auto", "root": str(tmp_path), "catalog": "main",
                                     "schema": "kafka_recon", "commit_retries": 3}).storage
    with pytest.raises(BackendUnavailableError, match="storage.catalog is 'main'"):
        DeltaStore.from_settings(object(), storage, probe=_probe(False))
    store = DeltaStore.from_settings(object(), storage, probe=_probe(True))
    assert store.location("gold_findings") == "main.kafka_recon.gold_findings"


def test_locations_are_checked_identifiers():
    assert TableLocator("s3://bucket/tables/").locate("t1") == "s3://bucket/tables/t1"
    with pytest.raises(ValueError, match="not a plain identifier"):
        TableLocator("/tmp/x").locate("../etc")
    with pytest.raises(ValueError, match="storage.schema"):
        TableLocator("", "main", "bad-schema")
    with pytest.raises(ValueError, match="nowhere to put tables"):
        TableLocator("", "", "")
    assert is_catalog_name("main.kafka_recon.gold_findings")
    assert not is_catalog_name("/tmp/a.b.c") and not is_catalog_name("s3://b/a.b.c")


# --------------------------------------------------------------------------- delta-spark adapter (fakes)


class _Conf:
    def __init__(self, values=None):
        self.values = dict(values or {})
        self.history = []

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value):
        self.history.append(("set", key, value))
        self.values[key] = value

    def unset(self, key):
        self.history.append(("unset", key))
        self.values.pop(key, None)


class _Recorder:
    """Records every chained call as (name, args, kwargs); each call returns the recorder itself."""

    def __init__(self, log, fail_on=None):
        self.log = log
        self.fail_on = fail_on or {}

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.log.append((name, args, kwargs))
            failures = self.fail_on.get(name)
            if failures:
                raise failures.pop(0)
            return self
        return call


class _Creator(_Recorder):
    """The table builder: ``execute()`` makes the named table exist in the fake catalog."""

    def __init__(self, log, spark):
        super().__init__(log)
        self.spark = spark

    def tableName(self, name):
        self.log.append(("tableName", (name,), {}))
        self.name = name
        return self

    def execute(self):
        self.log.append(("execute", (), {}))
        self.spark.catalog.tables.add(self.name)


class _HistoryFrame:
    def __init__(self, version):
        self.version = version

    def select(self, *columns):
        return self

    def collect(self):
        return [(self.version,)]


class ConcurrentAppendException(Exception):
    """Named like delta-spark's conflict exception (matched by class name)."""


def _fake_delta_table(log, fail_on=None, version=7, exists=True):
    class FakeDeltaTable:
        @classmethod
        def forPath(cls, spark, path):
            log.append(("forPath", (path,), {}))
            return _Table(log, fail_on, version)

        @classmethod
        def forName(cls, spark, name):
            log.append(("forName", (name,), {}))
            return _Table(log, fail_on, version)

        @classmethod
        def isDeltaTable(cls, spark, path):
            return exists

        @classmethod
        def createIfNotExists(cls, spark):
            log.append(("createIfNotExists", (), {}))
            return _Creator(log, spark)

    return FakeDeltaTable


class _Table:
    def __init__(self, log, fail_on, version):
        self.log, self.fail_on, self.version = log, fail_on, version

    def alias(self, name):
        self.log.append(("alias", (name,), {}))
        return self

    def merge(self, source, condition):
        self.log.append(("merge", (source, condition), {}))
        return _Recorder(self.log, self.fail_on)

    def history(self, limit=None):
        return _HistoryFrame(self.version)


class _FakeSource:
    def __init__(self, log):
        self.log = log
        self.write = _Recorder(log)

    def alias(self, name):
        self.log.append(("source.alias", (name,), {}))
        return f"source as {name}"


class _FakeCatalog:
    def __init__(self, tables):
        self.tables = tables

    def tableExists(self, name):
        return name in self.tables


class _FakeSpark:
    def __init__(self, conf=None, tables=()):
        self.conf = _Conf(conf)
        self.catalog = _FakeCatalog(set(tables))
        self.statements = []

    def sql(self, text):
        self.statements.append(text)


def test_merge_maps_every_clause_onto_delta_sparks_builder():
    log = []
    spark = _FakeSpark(tables={"main.kr.t_findings"})
    backend = DeltaSparkBackend(spark, commit_retries=0, delta_table_cls=_fake_delta_table(log))
    store = DeltaStore(spark, backend, TableLocator("", "main", "kr"), tables={FINDINGS.name: FINDINGS})
    builder = _builder_for(store, log)
    version = (builder
               .when_matched_delete(condition="s.bytes = 0")
               .when_matched_update(set={"bytes": "s.bytes"}, condition="s.bytes > t.bytes")
               .when_matched_update_all()
               .when_not_matched_insert(values={"finding_id": "s.finding_id"}, condition="s.bytes > 1")
               .when_not_matched_insert_all()
               .when_not_matched_by_source_update(set={"status": "'resolved'"}, condition="t.status = 'open'")
               .when_not_matched_by_source_delete()
               .execute())
    assert version == 7
    calls = log[log.index(("forName", ("main.kr.t_findings",), {})):]
    assert calls[:4] == [("forName", ("main.kr.t_findings",), {}), ("alias", ("t",), {}),
                         ("source.alias", ("s",), {}),
                         ("merge", ("source as s", "t.`finding_id` <=> s.`finding_id`"), {})]
    assert calls[4:11] == [
        ("whenMatchedDelete", (), {"condition": "s.bytes = 0"}),
        ("whenMatchedUpdate", (), {"condition": "s.bytes > t.bytes", "set": {"bytes": "s.bytes"}}),
        ("whenMatchedUpdateAll", (), {"condition": None}),
        ("whenNotMatchedInsert", (), {"condition": "s.bytes > 1", "values": {"finding_id": "s.finding_id"}}),
        ("whenNotMatchedInsertAll", (), {"condition": None}),
        ("whenNotMatchedBySourceUpdate", (), {"condition": "t.status = 'open'", "set": {"status": "'resolved'"}}),
        ("whenNotMatchedBySourceDelete", (), {"condition": None}),
    ]
    # run id reaches the commit through userMetadata, set only while the merge runs
    assert spark.conf.history == [("set", USER_METADATA_CONF, json.dumps({"operation": "MERGE", "run_id": "r9"})),
                                  ("unset", USER_METADATA_CONF)]


def _builder_for(store, log):
    """``store.merge`` without a real DataFrame: skip schema enforcement (covered by the embedded tests)."""
    from jobs.tables.delta_store import MergeBuilder

    return MergeBuilder(store, FINDINGS, _FakeSource(log), FINDINGS.keys, "r9", ())


def test_merge_conflicts_are_retried_then_reported():
    log = []
    conflicts = {"execute": [ConcurrentAppendException("files added"), ConcurrentAppendException("again")]}
    backend = DeltaSparkBackend(_FakeSpark(), commit_retries=1, delta_table_cls=_fake_delta_table(log, conflicts),
                                retry_wait_seconds=0)
    store = DeltaStore(backend.spark, backend, TableLocator("/tables"), tables={FINDINGS.name: FINDINGS})
    with pytest.raises(ConcurrentTableUpdateError, match="merge on table 't_findings' lost the commit race 2 time"):
        _builder_for(store, log).when_not_matched_insert_all().execute()
    assert [c[0] for c in log].count("merge") == 2

    conflicts = {"execute": [ConcurrentAppendException("once")]}
    backend.delta_table = _fake_delta_table(log, conflicts, version=4)
    assert _builder_for(store, log).when_not_matched_insert_all().execute() == 4


def test_non_conflict_errors_are_not_retried():
    log = []
    backend = DeltaSparkBackend(_FakeSpark(), commit_retries=3,
                                delta_table_cls=_fake_delta_table(log, {"execute": [RuntimeError("bad SQL")]}))
    store = DeltaStore(backend.spark, backend, TableLocator("/tables"), tables={FINDINGS.name: FINDINGS})
    with pytest.raises(RuntimeError, match="bad SQL"):
        _builder_for(store, log).when_not_matched_insert_all().execute()
    assert [c[0] for c in log].count("merge") == 1
    assert is_conflict(ConcurrentAppendException()) and not is_conflict(RuntimeError())


def test_replace_slice_is_an_overwrite_with_replace_where():
    log = []
    backend = DeltaSparkBackend(_FakeSpark(), delta_table_cls=_fake_delta_table(log))
    source = _FakeSource(log)
    assert backend.replace_slice(EVENTS, "/tables/t_events", source, {"capture_id": "c'1"}, "r2") == 7
    writes = [c for c in log if c[0] in ("format", "mode", "option", "save", "saveAsTable")]
    assert writes == [
        ("format", ("delta",), {}), ("mode", ("overwrite",), {}),
        ("option", ("replaceWhere", "`capture_id` = 'c\\'1'"), {}),
        ("option", ("userMetadata", json.dumps({"operation": "REPLACE SLICE", "run_id": "r2"})), {}),
        ("save", ("/tables/t_events",), {}),
    ]


def test_append_to_a_catalog_table_and_create_with_the_registry_schema():
    log = []
    spark = _FakeSpark()
    backend = DeltaSparkBackend(spark, delta_table_cls=_fake_delta_table(log))
    backend.append(EVENTS, "main.kr.t_events", _FakeSource(log), "r1")
    # a first run into a new Unity Catalog schema creates it, once
    backend.append(EVENTS, "main.kr.t_events", _FakeSource([]), "r2")
    assert spark.statements == ["CREATE SCHEMA IF NOT EXISTS `main`.`kr`"]
    created = [c for c in log if c[0] in ("tableName", "addColumn", "partitionedBy", "comment")]
    assert created[0] == ("tableName", ("main.kr.t_events",), {})
    assert [c[1][0] for c in created if c[0] == "addColumn"] == list(EVENTS.column_names)
    assert [c[1][1].simpleString() for c in created if c[0] == "addColumn"] == \
        ["string", "string", "bigint", "string", "timestamp", "array<int>"]
    assert ("partitionedBy", ("capture_id",), {}) in created
    writes = [c for c in log if c[0] in ("format", "mode", "saveAsTable")]
    assert writes == [("format", ("delta",), {}), ("mode", ("append",), {}), ("saveAsTable", ("main.kr.t_events",), {})]


def test_read_at_a_version_uses_version_as_of():
    log = []

    class _Spark(_FakeSpark):
        read = _Recorder(log)

    backend = DeltaSparkBackend(_Spark(), delta_table_cls=_fake_delta_table(log))
    backend.read(EVENTS, "/tables/t_events", version=3)
    assert [c for c in log if c[0] in ("format", "option", "load", "select")] == [
        ("format", ("delta",), {}), ("option", ("versionAsOf", 3), {}), ("load", ("/tables/t_events",), {}),
        ("select", EVENTS.column_names, {})]
