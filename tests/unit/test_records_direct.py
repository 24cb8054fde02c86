"""DirectRecords turns second-pass record blocks into bronze_metadata_records file rows: the run columns,
the copy's broker and the authoritative-sequence flag as the DataFrame route computes them (SQL null logic)."""
from __future__ import annotations

import itertools

import pyarrow as pa

from jobs.ingest.metadata_files import RECORDS_STRUCT
from jobs.ingest.records_direct import DirectRecords
from jobs.tables import bronze
from jobs.tables.parquet_files import StagedParquet

FILE_SCHEMA = pa.schema([f for f in bronze.METADATA_RECORDS.arrow_schema() if f.name != "capture_id"])


def _block(rows):
    """A struct block with the given fields set and every other field null."""
    arrays = [pa.array([r.get(f.name) for r in rows], f.type) for f in RECORDS_STRUCT]
    return pa.StructArray.from_arrays(arrays, fields=list(RECORDS_STRUCT))


def _expected_flag(row, copy_id, snap):
    """flag_sequence's formula for non-overlapping copies, spelled out."""
    if row["copy_id"] != copy_id or row["copy_id"] is None:
        return False
    if row["section"] == "log":
        return snap is None or (row["offset"] is not None and row["offset"] >= snap)
    if row["section"] == "snapshot":
        return snap is not None and row["snapshot_end_offset"] == snap
    return False


def test_rows_fill_run_columns_brokers_and_the_sequence_flag():
    rows = [{"copy_id": c, "section": s, "offset": o, "snapshot_end_offset": e, "record_type": "TOPIC_RECORD"}
            for c, s, o, e in itertools.product(["auth", "other", None], ["log", "snapshot", "bootstrap", None],
                                                 [None, 5, 10, 20], [None, 10, 11])]
    for snap in (None, 10):
        direct = DirectRecords(StagedParquet("bronze_metadata_records", "/nowhere", "_kr_staging/x", "capture_id=c",
                                             FILE_SCHEMA), "run-7", {"auth": 3, "other": None}, "auth", snap)
        batch = direct.rows(_block(rows))
        assert batch.schema == FILE_SCHEMA and batch.num_rows == len(rows)
        got = batch.to_pylist()
        assert {g["run_id"] for g in got} == {"run-7"}
        assert [g["source_broker_id"] for g in got] == [3 if r["copy_id"] == "auth" else None for r in rows]
        assert [g["in_authoritative_sequence"] for g in got] == [_expected_flag(r, "auth", snap) for r in rows]
        assert [g["record_type"] for g in got] == ["TOPIC_RECORD"] * len(rows)
