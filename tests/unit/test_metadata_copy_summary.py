"""One copy's summary (jobs.ingest.metadata_copies._copy_summary, the applyInArrow function) against values
worked out by hand from the rows: overlapping batches counted once, the first hole, the lowest offset that
differs from the winners, and the snapshot ends."""
from __future__ import annotations

import pyarrow as pa

from jobs.ingest.metadata_copies import _copy_summary

COLUMNS = ("copy_id", "base_offset", "last_offset", "bad", "snapshot_end_offset", "source_kind", "source_broker_id")
TYPES = (pa.string(), pa.int64(), pa.int64(), pa.bool_(), pa.int64(), pa.string(), pa.int32())


def _table(rows):
    return pa.table({name: pa.array([row[i] for row in rows], type_)
                     for i, (name, type_) in enumerate(zip(COLUMNS, TYPES, strict=True))})


def test_overlaps_count_once_and_the_first_hole_and_lowest_difference_are_reported():
    rows = [  # not in offset order, as a group arrives
        ("c1", 10, 19, False, None, "segment", 1),
        ("c1", 0, 9, None, None, "segment", 1),  # no flag: not a difference
        ("c1", 15, 24, True, None, "segment", 1),  # 15-19 held already: 20-24 are new
        ("c1", 30, None, True, None, "segment", 1),  # after a hole at 25-29; no last offset: one record
        ("c1", None, None, None, 99, "snapshot", 1),
        ("c1", None, None, None, 49, "snapshot", None),
        ("c1", None, None, None, 99, "snapshot", 1),
    ]
    got = _copy_summary(_table(rows)).to_pylist()
    assert got == [{"copy_id": "c1", "first_offset": 0, "last_offset": 30, "records": 10 + 10 + 5 + 1,
                    "mismatch_at": 15, "gap_after_offset": 24, "snapshot_end_offset": 99, "snapshot_ends": [49, 99],
                    "record_source_kind": "segment", "record_broker_id": 1}]


def test_a_copy_of_snapshots_only_has_no_offsets_and_no_records():
    got = _copy_summary(_table([("c2", None, None, None, 7, "dump_log_text", None)])).to_pylist()
    assert got == [{"copy_id": "c2", "first_offset": None, "last_offset": None, "records": 0, "mismatch_at": None,
                    "gap_after_offset": None, "snapshot_end_offset": 7, "snapshot_ends": [7],
                    "record_source_kind": "dump_log_text", "record_broker_id": None}]
