"""The second pass writing bronze_metadata_records' Parquet files itself (jobs/ingest/records_direct.py)
commits exactly the rows the DataFrame route commits, on Kafka's own log dirs and on a simulated fleet whose
sequence starts from a snapshot (several copies, the log cut into many tasks)."""
from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest

from jobs.ingest import run_ingest
from jobs.simulate import command
from jobs.simulate.simulation import SimParams
from jobs.tables.delta_store import DeltaStore
from jobs.tables.parquet_files import STAGING_DIR
from tests.settings_from import settings_from

pytestmark = pytest.mark.spark

CAPTURE_TIME = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
RECORDS = "bronze_metadata_records"


def _ingest(spark, tables, capture, *settings):
    s = settings_from(f"storage.root={tables}", "storage.backend=embedded", *settings)
    store = DeltaStore.from_settings(spark, s.storage)
    result = run_ingest(spark, s.ingest, store, [capture], "cap-direct", "run-direct", CAPTURE_TIME, execution=s.spark)
    rows = sorted(tuple((k, repr(v)) for k, v in sorted(r.asDict().items())) for r in store.read(RECORDS).collect())
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    writers = {pq.ParquetFile(uri.removeprefix("file://")).metadata.created_by.split(" ")[0]
               for uri in DeltaTable(store.location(RECORDS)).file_uris()}
    leftovers = [f for d, _, fs in os.walk(os.path.join(store.location(RECORDS), STAGING_DIR)) for f in fs]
    return result, rows, writers, leftovers


@pytest.fixture(scope="module")
def snapshot_fleet(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("direct") / "capture")
    command.run("delete-create-in-snapshot", out, SimParams(seed=4, partitions_per_broker=20, metadata_records=3000,
                                                            packed=True))
    return out


@pytest.mark.parametrize("capture", ["devsample", "snapshot_fleet", "migration_fleet"])
def test_direct_records_equal_the_dataframe_route(spark, tmp_path, request, devsample_dir, capture):
    root = str(devsample_dir) if capture == "devsample" else request.getfixturevalue(capture)
    small_parts = "ingest.metadata_chunk_bytes=2000"  # many second-pass tasks, so many files
    _, via_spark, spark_writers, _ = _ingest(spark, tmp_path / "dataframe", root, small_parts,
                                           "ingest.direct_records_write=false")
    result, direct, direct_writers, leftovers = _ingest(spark, tmp_path / "direct", root, small_parts)
    assert len(direct) == result.rows_emitted[RECORDS] > 0
    assert direct == via_spark
    assert spark_writers == {"parquet-mr"}  # Spark's Parquet writer
    assert "parquet-cpp-arrow" in direct_writers  # pyarrow's, in the tasks (plus Spark's for bootstrap records)
    assert leftovers == []
    flags = {dict(r)["in_authoritative_sequence"] for r in direct}
    if capture == "snapshot_fleet":  # records below the sequence snapshot are decoded but not in the sequence
        assert flags == {"True", "False"}
    # a re-run replaces the slice: the same rows once
    _, again, _, leftovers = _ingest(spark, tmp_path / "direct", root, small_parts)
    assert again == direct and leftovers == []
