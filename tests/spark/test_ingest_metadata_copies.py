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
    batches = spark.createDataFrame(rows, BATCH_DDL)
    copies, auth = compute_copies(batches, facts)
    return {r["copy_id"]: r.asDict() for r in copies.collect()}, auth


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
def test_without_overlapping_files_the_sequence_needs_no_window_and_flags_the_same(spark):
    from jobs.ingest.metadata_copies import copy_files_overlap

    segments = _log("c", 1, [(0, 4, 1, 10), (5, 9, 1, 11)])
    twice = segments + [("c", 1, "dump_log_text", "log", None, 5, 9, 1, 11, True)]
    auth = Authoritative("c", 5)
    assert not copy_files_overlap(spark.createDataFrame([r[:5] + ("a.log" if r[5] == 0 else "b.log",) + r[5:]
                                                         for r in segments], BATCH_DDL_FILES), auth)
    assert copy_files_overlap(spark.createDataFrame([r[:5] + (f"f{i}",) + r[5:] for i, r in enumerate(twice)],
                                                    BATCH_DDL_FILES), auth)
    rows = [("c", "log", None, o, "a.log" if o < 5 else "b.log") for o in range(10)] + [("c", "snapshot", 5, 0, "s")]
    records = spark.createDataFrame(rows, "copy_id string, section string, snapshot_end_offset long, offset long, "
                                          "source_file string")
    fast = {(r["section"], r["offset"]) for r in flag_sequence(records, auth, overlapping=False)
            .where("in_authoritative_sequence").collect()}
    slow = {(r["section"], r["offset"]) for r in flag_sequence(records, auth).where("in_authoritative_sequence").collect()}
    assert fast == slow == {("log", o) for o in range(5, 10)} | {("snapshot", 0)}


BATCH_DDL_FILES = BATCH_DDL.replace("snapshot_end_offset long, ", "snapshot_end_offset long, source_file string, ")
