"""The authoritative copy and per-copy divergence, decided from batch summaries of small hand-made copies."""
from __future__ import annotations

import pytest

from jobs.ingest.metadata_copies import Authoritative, compute_copies, flag_sequence

BATCH_DDL = ("copy_id string, source_broker_id int, source_kind string, section string, snapshot_end_offset long, "
             "base_offset long, last_offset long, leader_epoch int, crc long, crc_valid boolean")


def _log(copy, broker, batches, kind="segment"):
    """``batches``: (base, last, epoch, crc) per batch of one copy's log."""
    return [(copy, broker, kind, "log", None, b, last, epoch, crc, True) for b, last, epoch, crc in batches]


def _snap(copy, broker, end):
    return [(copy, broker, "snapshot", "snapshot", end, 0, 0, 1, 7, True)]


def _run(spark, rows, facts):
    comparison = compute_copies(spark.createDataFrame(rows, BATCH_DDL), facts)
    return {r["copy_id"]: r.asDict() for r in comparison.table.collect()}, comparison.auth


@pytest.mark.spark
def test_longest_consistent_copy_wins_and_lagging_copy_does_not_diverge(spark):
    full = [(0, 1, 1, 100), (2, 3, 1, 102), (4, 5, 1, 104)]
    rows = (_log("b1", 1, full) + _log("b2", 2, full[:2]) + _log("b3", 3, full[:1] + [(2, 3, 1, 999), (4, 5, 1, 104)])
            + _snap("b1", 1, 4))
    facts = [("b1", 1, "broker-1/logs"), ("b2", 2, "broker-2/logs"), ("b3", 3, "broker-3/logs"), ("b4", 4, "b4/logs")]
    copies, auth = _run(spark, rows, facts)
    assert auth == Authoritative("b1", None)  # log starts at 0: no snapshot needed
    assert copies["b1"]["is_authoritative"] and not copies["b2"]["is_authoritative"]
    assert copies["b1"]["last_offset"] == 5 and copies["b2"]["last_offset"] == 3
    assert copies["b1"]["records"] == 6 and copies["b2"]["records"] == 4
    assert copies["b2"]["diverges_at_offset"] is None  # lagging, not diverging
    assert copies["b3"]["diverges_at_offset"] == 2      # same offsets, another CRC: another record
    assert copies["b1"]["snapshot_end_offset"] == 4
    assert copies["b1"]["sequence_snapshot_end_offset"] is None
    assert copies["b4"]["records"] == 0 and copies["b4"]["last_offset"] is None and copies["b4"]["log_dir"] == "b4/logs"


@pytest.mark.spark
def test_gap_newer_epoch_corrupt_batch_and_snapshot_start(spark):
    # c1 reaches furthest but has a hole; c2's tail was overwritten by a newer leader (epoch 2) held by c3;
    # c4 holds c3's batches but one of them fails its CRC check
    c1 = [(10, 10, 1, 10), (11, 11, 1, 11), (13, 15, 1, 13)]
    c2 = [(10, 10, 1, 10), (11, 11, 1, 11), (12, 12, 1, 512)]
    c3 = [(10, 10, 1, 10), (11, 11, 1, 11), (12, 12, 2, 612), (13, 13, 2, 13)]
    rows = (_log("c1", 1, c1) + _log("c2", 2, c2) + _log("c3", 3, c3) + _snap("c3", 3, 8) + _snap("c3", 3, 11)
            + _snap("c3", 3, 5))
    rows += [("c4", 4, "segment", "log", None, b, last, e, crc, b != 12) for b, last, e, crc in c3]
    copies, auth = _run(spark, rows, [])
    assert copies["c1"]["gap_after_offset"] == 11
    assert auth == Authoritative("c3", 11)  # the oldest snapshot the log (from 10) continues
    assert copies["c3"]["is_authoritative"] and copies["c3"]["sequence_snapshot_end_offset"] == 11
    assert copies["c2"]["diverges_at_offset"] == 12
    assert copies["c4"]["diverges_at_offset"] == 12 and not copies["c4"]["is_authoritative"]
    assert copies["c3"]["snapshot_end_offset"] == 11


@pytest.mark.spark
def test_same_batch_in_two_files_of_one_copy_counts_once(spark):
    batches = [(0, 0, 1, 1), (1, 1, 1, 2)]
    rows = _log("d", None, batches, kind="dump_log_text") + _log("d", None, batches, kind="dump_log_text")
    copies, auth = _run(spark, rows, [])
    assert copies["d"]["records"] == 2 and copies["d"]["is_authoritative"] and auth.copy_id == "d"
    assert copies["d"]["source_kind"] == "dump_log_text" and copies["d"]["diverges_at_offset"] is None


@pytest.mark.spark
def test_flag_sequence_marks_the_log_from_the_snapshot_and_that_snapshot_once(spark):
    rows = [("c", "log", None, o, f) for o in (9, 10, 11) for f in ("a.log",)]
    rows += [("c", "log", None, 11, "b.log")]                   # the same offset in a second file
    rows += [("c", "snapshot", 10, 0, "s10"), ("c", "snapshot", 5, 0, "s5"), ("boot", "bootstrap", None, 0, "bc")]
    records = spark.createDataFrame(rows, "copy_id string, section string, snapshot_end_offset long, offset long, "
                                          "source_file string")
    flagged = flag_sequence(records, Authoritative("c", 10))
    got = sorted((r["section"], r["offset"], r["source_file"]) for r in flagged.where("in_authoritative_sequence").collect())
    assert got == [("log", 10, "a.log"), ("log", 11, "a.log"), ("snapshot", 0, "s10")]
    assert flagged.count() == len(rows)


@pytest.mark.spark
def test_the_comparison_says_whether_the_authoritative_copy_holds_an_offset_twice(spark):
    once = _log("c", 1, [(0, 4, 1, 10), (5, 9, 1, 11)]) + _snap("c", 1, 5) + _log("o", 2, [(0, 4, 1, 10)])
    log_twice = once + [("c", 1, "dump_log_text", "log", None, 5, 9, 1, 11, True)]
    snapshot_twice = once + _snap("c", 1, 5)
    other_twice = once + _log("o", 2, [(0, 4, 1, 10)])
    found = {name: compute_copies(spark.createDataFrame(rows, BATCH_DDL), [])
             for name, rows in (("once", once), ("log", log_twice), ("snapshot", snapshot_twice),
                                ("other", other_twice))}
    assert {name: c.auth.copy_id for name, c in found.items()} == dict.fromkeys(found, "c")
    assert {name: c.repeats_offsets for name, c in found.items()} == {
        "once": False, "log": True, "snapshot": True, "other": False}  # another copy's repeats do not count
    assert found["once"].other_log_copies == 1 and found["once"].cuts == {}


@pytest.mark.spark
def test_one_copy_has_no_other_log_copy_and_a_snapshot_only_copy_is_not_one(spark):
    rows = _log("c", 1, [(0, 4, 1, 10)]) + _snap("s", 2, 4)
    comparison = compute_copies(spark.createDataFrame(rows, BATCH_DDL), [("f", 3, "broker-3/logs")])
    assert comparison.auth.copy_id == "c" and comparison.other_log_copies == 0


@pytest.mark.spark
def test_without_overlapping_files_the_sequence_needs_no_window_and_flags_the_same(spark):
    auth = Authoritative("c", 5)
    rows = [("c", "log", None, o, "a.log" if o < 5 else "b.log") for o in range(10)] + [("c", "snapshot", 5, 0, "s")]
    records = spark.createDataFrame(rows, "copy_id string, section string, snapshot_end_offset long, offset long, "
                                          "source_file string")
    fast = {(r["section"], r["offset"]) for r in flag_sequence(records, auth, overlapping=False)
            .where("in_authoritative_sequence").collect()}
    slow = {(r["section"], r["offset"]) for r in flag_sequence(records, auth).where("in_authoritative_sequence").collect()}
    assert fast == slow == {("log", o) for o in range(5, 10)} | {("snapshot", 0)}


@pytest.mark.spark
def test_the_comparison_cuts_every_copys_files_at_batch_starts_into_equal_parts(spark):
    ddl = BATCH_DDL + ", source_file string, position long, size_bytes int"
    full = [(b, b, 1, 100 + b) for b in range(8)]
    rows = [r + ("a.log", 100 * r[5], 100) for r in _log("c", 1, full)]  # 8 batches of 100 bytes: 800 bytes
    rows += [r + ("b.log", 50 * r[5], 50) for r in _log("o", 2, full[:4])]  # 200 bytes: one part
    rows += [("o", 2, "segment", "log", None, None, None, None, None, None, "b.log", 200, None)]  # unframed tail
    comparison = compute_copies(spark.createDataFrame(rows, ddl), [], chunk_bytes=400)
    assert comparison.cuts == {"a.log": [0, 400], "b.log": [0]}
    assert compute_copies(spark.createDataFrame(rows, ddl), [], chunk_bytes=250).cuts["a.log"] == [0, 200, 400, 600]  # 4 parts


@pytest.mark.spark
def test_reconciles_question_counts_an_offset_held_twice_as_the_comparison_does(spark):
    from jobs.ingest.metadata_copies import batch_overlap

    ddl = BATCH_DDL + ", source_file string"
    segments = [r + ("a.log" if r[5] < 5 else "b.log",) for r in _log("c", 1, [(0, 4, 1, 10), (5, 9, 1, 11)])]
    cases = {"once": segments, "two files": segments + [segments[1][:-1] + ("c.txt",)],
             "one file twice": segments + [segments[1]]}
    got = {name: (batch_overlap(spark.createDataFrame(rows, ddl), "c"),
                  compute_copies(spark.createDataFrame(rows, ddl), []).repeats_offsets) for name, rows in cases.items()}
    assert got == {"once": ((2, False), False), "two files": ((3, True), True), "one file twice": ((3, True), True)}
