"""The authoritative metadata sequence and per-copy divergence, on small hand-made copies."""
from __future__ import annotations

import pytest

from jobs.ingest.metadata_copies import compute_copies


def _log(copy, broker, entries, kind="segment", file="f.log"):
    return [(copy, broker, file, kind, "log", None, off, epoch, h, False, "X", None) for off, epoch, h in entries]


def _snap(copy, broker, end, hashes):
    return [(copy, broker, f"{end}.checkpoint", "snapshot", "snapshot", end, i, 1, h, False, "X", None)
            for i, h in enumerate(hashes)]


def _run(spark, rows, facts):
    records = spark.createDataFrame(rows, "copy_id string, source_broker_id int, source_file string, "
                                    "source_kind string, section string, snapshot_end_offset long, offset long, "
                                    "leader_epoch int, record_hash string, is_control boolean, record_type string, "
                                    "in_authoritative_sequence boolean")
    copies, flagged = compute_copies(records, facts)
    by_id = {r["copy_id"]: r.asDict() for r in copies.collect()}
    seq = sorted((r["copy_id"], r["section"], r["offset"]) for r in flagged.where("in_authoritative_sequence").collect())
    return by_id, seq, flagged.count()


@pytest.mark.spark
def test_longest_consistent_copy_wins_and_lagging_copy_does_not_diverge(spark):
    full = [(o, 1, f"h{o}") for o in range(0, 6)]
    rows = (_log("b1", 1, full) + _log("b2", 2, full[:4]) + _log("b3", 3, full[:3] + [(3, 1, "other"), (4, 1, "h4")])
            + _snap("b1", 1, 4, ["s0", "s1"]))
    facts = [("b1", 1, "broker-1/logs"), ("b2", 2, "broker-2/logs"), ("b3", 3, "broker-3/logs"), ("b4", 4, "b4/logs")]
    copies, seq, total = _run(spark, rows, facts)
    assert copies["b1"]["is_authoritative"] and not copies["b2"]["is_authoritative"]
    assert copies["b1"]["last_offset"] == 5 and copies["b2"]["last_offset"] == 3
    assert copies["b2"]["diverges_at_offset"] is None  # lagging, not diverging
    assert copies["b3"]["diverges_at_offset"] == 3
    assert copies["b1"]["snapshot_end_offset"] == 4
    assert copies["b1"]["sequence_snapshot_end_offset"] is None  # log starts at 0: no snapshot needed
    assert copies["b4"]["records"] == 0 and copies["b4"]["last_offset"] is None and copies["b4"]["log_dir"] == "b4/logs"
    assert seq == [("b1", "log", o) for o in range(6)]
    assert total == len(rows)


@pytest.mark.spark
def test_gap_and_higher_epoch_and_snapshot_start(spark):
    # c1 reaches furthest but has a hole; c2's tail was overwritten by a newer leader (epoch 2) held by c3
    c1 = [(o, 1, f"h{o}") for o in (10, 11, 13, 14, 15)]
    c2 = [(10, 1, "h10"), (11, 1, "h11"), (12, 1, "old12")]
    c3 = [(10, 1, "h10"), (11, 1, "h11"), (12, 2, "new12"), (13, 2, "h13")]
    rows = (_log("c1", 1, c1) + _log("c2", 2, c2) + _log("c3", 3, c3) + _snap("c3", 3, 8, ["a", "b"])
            + _snap("c3", 3, 11, ["x", "y", "z"]) + _snap("c3", 3, 5, ["p"]))
    copies, seq, _ = _run(spark, rows, [])
    assert copies["c1"]["gap_after_offset"] == 11
    assert copies["c3"]["is_authoritative"]
    assert copies["c2"]["diverges_at_offset"] == 12
    assert copies["c3"]["snapshot_end_offset"] == 11
    assert copies["c3"]["sequence_snapshot_end_offset"] == 11  # the oldest snapshot the log (from 10) continues
    assert seq == [("c3", "log", 11), ("c3", "log", 12), ("c3", "log", 13),
                   ("c3", "snapshot", 0), ("c3", "snapshot", 1), ("c3", "snapshot", 2)]


@pytest.mark.spark
def test_duplicate_files_in_one_copy_flag_each_offset_once(spark):
    entries = [(0, 1, "h0"), (1, 1, "h1")]
    rows = _log("d", None, entries, kind="dump_log_text", file="a.txt") + _log("d", None, entries, kind="dump_log_text",
                                                                                file="b.txt")
    # the --skip-record-metadata form prints control records as empty lines: no type, never a divergence
    rows.append(("d", None, "c.txt", "dump_log_text", "log", None, 0, 1, "untyped", True, None, None))
    copies, seq, _ = _run(spark, rows, [])
    assert copies["d"]["records"] == 2 and copies["d"]["is_authoritative"]
    assert copies["d"]["source_kind"] == "dump_log_text"
    assert seq == [("d", "log", 0), ("d", "log", 1)]
