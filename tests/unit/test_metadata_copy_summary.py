"""One copy's summary (jobs.ingest.metadata_copies._copy_summary, the applyInArrow function) against values
worked out by hand from the rows: overlapping batches counted once, the first hole, the lowest offset that
differs from the winners, the snapshot ends, an offset held twice, and where each file is cut."""
from __future__ import annotations

import pyarrow as pa

from jobs.ingest.metadata_copies import PARTS_DDL, _copy_summary
from jobs.tables.spec import ddl_arrow_schema

BATCH = ("base_offset", "last_offset", "bad", "repeated", "source_kind", "source_broker_id")


def _table(copy_id, batches=(), snapshots=(), grains=()):
    """``batches``: BATCH tuples; ``snapshots``: (end offset, kind, broker, repeated); ``grains``: (file, start,
    end)."""
    rows = [dict(zip(BATCH, b, strict=True), part="batch") for b in batches]
    rows += [{"part": "snapshot", "snapshot_end_offset": end, "source_kind": kind, "source_broker_id": broker,
              "repeated": repeated} for end, kind, broker, repeated in snapshots]
    rows += [{"part": "grain", "source_file": f, "grain_start": start, "grain_end": end} for f, start, end in grains]
    return pa.Table.from_pylist([dict(row, copy_id=copy_id) for row in rows], schema=ddl_arrow_schema(PARTS_DDL))


NOTHING_ELSE = {"repeats_offsets": False, "cut_files": [], "cut_starts": []}


def test_overlaps_count_once_and_the_first_hole_and_lowest_difference_are_reported():
    batches = [  # not in offset order, as a group arrives
        (10, 19, False, False, "segment", 1),
        (0, 9, None, False, "segment", 1),  # no flag: not a difference
        (15, 24, True, False, "segment", 1),  # 15-19 held already: 20-24 are new
        (30, None, True, False, "segment", 1),  # after a hole at 25-29; no last offset: one record
    ]
    snapshots = [(99, "snapshot", 1, False), (49, "snapshot", None, False), (99, "snapshot", 1, False)]
    got = _copy_summary(0, _table("c1", batches, snapshots)).to_pylist()
    assert got == [{"copy_id": "c1", "first_offset": 0, "last_offset": 30, "records": 10 + 10 + 5 + 1,
                    "mismatch_at": 15, "gap_after_offset": 24, "snapshot_end_offset": 99, "snapshot_ends": [49, 99],
                    "record_source_kind": "segment", "record_broker_id": 1, **NOTHING_ELSE}]


def test_a_copy_of_snapshots_only_has_no_offsets_and_no_records():
    got = _copy_summary(0, _table("c2", snapshots=[(7, "dump_log_text", None, False)])).to_pylist()
    assert got == [{"copy_id": "c2", "first_offset": None, "last_offset": None, "records": 0, "mismatch_at": None,
                    "gap_after_offset": None, "snapshot_end_offset": 7, "snapshot_ends": [7],
                    "record_source_kind": "dump_log_text", "record_broker_id": None, **NOTHING_ELSE}]


def test_an_offset_held_twice_in_the_log_or_in_a_snapshot_is_reported():
    log_twice = _table("c", [(0, 4, False, True, "segment", 1)], [(4, "snapshot", 1, False)])
    snapshot_twice = _table("c", [(0, 4, False, False, "segment", 1)], [(4, "snapshot", 1, True)])
    once = _table("c", [(0, 4, False, False, "segment", 1)], [(4, "snapshot", 1, False)])
    assert [_copy_summary(0, t).column("repeats_offsets")[0].as_py() for t in (log_twice, snapshot_twice, once)] == [
        True, True, False]


def test_each_file_is_cut_at_grain_starts_into_equal_parts_only_when_asked():
    # a.log: 1,000 bytes in grains of 100 (chunk 1,600 / 16); 3 parts of at most 400 -> ideal cuts 333 and 666
    grains = [("a.log", start, start + 100) for start in range(0, 1000, 100)] + [("b.log", 0, 90)]
    table = _table("c", [(0, 9, False, False, "segment", 1)], grains=grains)
    got = _copy_summary(400, table).to_pylist()[0]
    assert (got["cut_files"], got["cut_starts"]) == (["a.log", "b.log"], [[0, 300, 700], [0]])
    assert _copy_summary(0, table).to_pylist()[0]["cut_files"] == []
