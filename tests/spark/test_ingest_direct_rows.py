"""The first pass writing its bulky tables' Parquet files itself (jobs/ingest/rows_direct.py) commits exactly
the rows the DataFrame route commits: on Kafka's own log dirs, a packed JBOD fleet (two log dirs per broker,
metadata-log copies the second pass folds into bronze_ingest_files) and a ZooKeeper -> KRaft migration capture
(znode dumps, dump-log text, loose files outside any log dir)."""
from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest

from jobs.ingest import run_ingest
from jobs.ingest.rows_direct import DIRECT_TABLES
from jobs.simulate import command
from jobs.simulate.simulation import SimParams
from jobs.tables.delta_store import DeltaStore
from jobs.tables.parquet_files import STAGING_DIR
from tests.settings_from import settings_from

pytestmark = pytest.mark.spark

CAPTURE_TIME = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
# these captures are small (the job would take the DataFrame route); one task per core: packs share tasks
ANY_SIZE = ("ingest.direct_first_pass_min_bytes=0", "ingest.direct_tasks_per_core=1")


def _ingest(spark, tables, capture, *settings):
    s = settings_from(f"storage.root={tables}", "storage.backend=embedded", *settings)
    store = DeltaStore.from_settings(spark, s.storage)
    result = run_ingest(spark, s.ingest, store, [capture], "cap-rows", "run-rows", CAPTURE_TIME, execution=s.spark)
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    rows, writers, leftovers = {}, {}, []
    for table in DIRECT_TABLES:
        rows[table] = sorted(tuple((k, repr(v)) for k, v in sorted(r.asDict().items()))
                             for r in store.read(table).collect())
        writers[table] = {pq.ParquetFile(uri.removeprefix("file://")).metadata.created_by.split(" ")[0]
                          for uri in DeltaTable(store.location(table)).file_uris()}
        leftovers += [f for d, _, fs in os.walk(os.path.join(store.location(table), STAGING_DIR)) for f in fs]
    return result, rows, writers, leftovers


@pytest.fixture(scope="module")
def jbod_fleet(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("rows-jbod") / "capture")
    command.run("healthy", out, SimParams(seed=5, partitions_per_broker=30, log_dirs=2, packed=True))
    return out


@pytest.mark.parametrize("capture", ["devsample", "jbod_fleet", "migration_fleet"])
def test_direct_first_pass_rows_equal_the_dataframe_route(spark, tmp_path, request, devsample_dir, capture):
    root = str(devsample_dir) if capture == "devsample" else request.getfixturevalue(capture)
    _, via_spark, spark_writers, _ = _ingest(spark, tmp_path / "dataframe", root, *ANY_SIZE,
                                             "ingest.direct_first_pass_write=false")
    result, direct, direct_writers, leftovers = _ingest(spark, tmp_path / "direct", root, *ANY_SIZE)
    for table in DIRECT_TABLES:
        assert len(direct[table]) == result.rows_emitted.get(table, 0), table
        assert direct[table] == via_spark[table], table
        assert spark_writers[table] <= {"parquet-mr"}, table  # Spark's Parquet writer only
    # the bulky tables' files are pyarrow's, written in the tasks
    for table in ("bronze_ingest_files", "bronze_dir_entries", "bronze_offset_checkpoints"):
        assert "parquet-cpp-arrow" in direct_writers[table], table
    # every file has its broker, from its log dir's meta.properties, on both routes
    files = [dict(r) for r in direct["bronze_ingest_files"]]
    assert any(f["broker_id"] != "None" for f in files)
    assert leftovers == []
    if capture == "jbod_fleet":  # its packs shared the session's two cores' tasks, several to a task
        assert result.tasks < result.units
    # a re-run replaces the slice: the same rows once
    _, again, _, leftovers = _ingest(spark, tmp_path / "direct", root, *ANY_SIZE)
    assert again == direct and leftovers == []


def test_a_small_capture_takes_the_dataframe_route(spark, tmp_path, devsample_dir):
    """Below ingest.direct_first_pass_min_bytes a table reads faster as Spark's few files than as one per task."""
    _, rows, writers, _ = _ingest(spark, tmp_path / "small", str(devsample_dir))
    assert rows["bronze_ingest_files"]
    assert all(writers[t] <= {"parquet-mr"} for t in DIRECT_TABLES)


def test_a_run_failing_after_the_first_pass_leaves_no_staged_files(spark, tmp_path, devsample_dir, monkeypatch):
    from jobs.ingest import stage

    def broken(self, first):
        assert first.staged  # the tasks did write files
        raise RuntimeError("the copies comparison broke")

    monkeypatch.setattr(stage.IngestSteps, "copies", broken)
    with pytest.raises(RuntimeError, match="copies comparison broke"):
        _ingest(spark, tmp_path / "failed", str(devsample_dir), *ANY_SIZE)
    assert [f for d, _, fs in os.walk(tmp_path / "failed") for f in fs if STAGING_DIR in d] == []
