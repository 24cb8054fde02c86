"""The leader_epochs checks on one hand-made KRaft capture: what is legitimate (a first entry moved up to the log
start by truncateFromStart, a follower lacking newer epochs, a compacted topic, a capture read failure) gives
nothing; a true divergence, an out-of-order file, an epoch ahead of the controller and a file Kafka cannot
load each give exactly their finding, with the epochs and offsets in details."""
from __future__ import annotations

import json

import pytest
from bronze_builders import Cluster, to_frames

from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from udfs import leader_epochs

T1, T2 = "LEDGER_______________A", "PROFILES_____________A"


def _epochs(broker: int, dir_name: str, topic_id: str, entries) -> list:
    kept = leader_epochs.load(entries).kept
    topic, partition = dir_name.rsplit("-", 1)
    return [{"capture_id": "cap", "run_id": "run", "broker_id": broker, "log_dir": f"broker-{broker}/kafka-logs",
             "entry_name": dir_name, "topic": topic, "partition": int(partition), "topic_id": topic_id,
             "position": i, "epoch": e, "start_offset": s, "kafka_keeps": kept[i],
             "source_file": f"broker-{broker}/kafka-logs/{dir_name}/leader-epoch-checkpoint"}
            for i, (e, s) in enumerate(entries)]


def _quarantined(broker: int, dir_name: str, kind: str, message: str) -> dict:
    return {"capture_id": "cap", "run_id": "run", "broker_id": broker, "log_dir": f"broker-{broker}/kafka-logs",
            "path": f"broker-{broker}/kafka-logs/{dir_name}/leader-epoch-checkpoint", "file_kind": "checkpoint",
            "bytes": 20, "status": "quarantined", "error_kind": kind, "error_message": message, "error_line": 3,
            "rows_produced": 0}


def build():
    c = Cluster()
    for b in (1, 2):
        c.broker(b)
        c.register(b)
    c.topic("ledger", T1, {p: [1, 2] for p in range(8)})
    c.topic("profiles", T2, {0: [1, 2]})
    c.append(("CONFIG_RECORD", {"resourceType": 2, "resourceName": "profiles", "name": "cleanup.policy",
                                "value": "compact"}))
    for p in (0, 1, 2, 3, 5):  # leadership moves to broker 2 and back: leader epoch 2
        c.change(T1, p, leader=2)
        c.change(T1, p, isr=[1])  # an ISR change alone does not bump the leader epoch
        c.change(T1, p, leader=1)
    c.change(T1, 4, leader=2)  # ledger-4 is at leader epoch 1
    c.change(T2, 0, leader=2)
    for b in (1, 2):
        for p in range(8):
            c.dir(b, f"ledger-{p}", T1)
        c.dir(b, "profiles-0", T2)
    histories = {
        # a true divergence: both entries of epoch 2 are second entries of their files
        (1, "ledger-0"): [(0, 0), (1, 100), (2, 200)], (2, "ledger-0"): [(0, 0), (1, 100), (2, 150)],
        # broker 1's log start moved to 500: its first entry was rewritten upward (truncateFromStart)
        (1, "ledger-1"): [(1, 500), (2, 600)], (2, "ledger-1"): [(0, 0), (1, 100), (2, 600)],
        # a first entry that starts before the other replica's start of that epoch: no log start explains it
        (1, "ledger-2"): [(1, 50), (2, 600)], (2, "ledger-2"): [(0, 0), (1, 100), (2, 600)],
        # broker 2 lags: it has not seen epoch 2
        (1, "ledger-3"): [(0, 0), (1, 100), (2, 200)], (2, "ledger-3"): [(0, 0), (1, 100)],
        # broker 1 knows epoch 3, the controller is at 1
        (1, "ledger-4"): [(0, 0), (3, 40)], (2, "ledger-4"): [(0, 0), (1, 30)],
        # out of order: Kafka drops epoch 2 when it meets epoch 1 after it
        (2, "ledger-5"): [(0, 0), (2, 200), (1, 100)], (1, "ledger-5"): [(0, 0), (1, 100)],
        # compacted: a replica copied after the cleaner removed epoch 1's first batches
        (1, "profiles-0"): [(0, 0), (1, 100)], (2, "profiles-0"): [(0, 0), (1, 130)],
    }
    tables = c.tables()
    tables["bronze_leader_epochs"] = [row for (b, d), entries in histories.items()
                                      for row in _epochs(b, d, T2 if d.startswith("profiles") else T1, entries)]
    tables["bronze_ingest_files"] = [
        _quarantined(1, "ledger-6", "malformed_line", 'For input string: "x"'),
        _quarantined(2, "ledger-6", "bad_version", "Unrecognised version:1, expected version: 0 in checkpoint "
                                                   "file at: /var/lib/kafka/ledger-6/leader-epoch-checkpoint"),
        _quarantined(1, "ledger-7", "io_error", "vanished: No such file or directory"),  # the capture, not Kafka
    ]
    return c, tables


@pytest.fixture(scope="module")
def findings(spark):
    c, tables = build()
    result = run_reconcile(spark, default_catalogue(), to_frames(spark, tables), "cap", "run", c.now)
    asg = {r["partition"]: r["leader_epoch"] for r in result.silver["silver_partition_assignments"].collect()
           if r["topic_name"] == "ledger"}
    assert asg[3] == 2 and asg[4] == 1 and asg[6] == 0
    return [r.asDict() for r in result.findings.collect() if r["check_id"].startswith("LEADER_EPOCH_")]


@pytest.mark.spark
def test_exactly_the_leader_epoch_findings(findings):
    got = sorted((f["check_id"], f["broker_id"], f["dir_name"], f["topic_name"], f["partition"]) for f in findings)
    assert got == sorted([
        ("LEADER_EPOCH_DIVERGENCE", None, None, "ledger", 0),
        ("LEADER_EPOCH_DIVERGENCE", None, None, "ledger", 2),
        ("LEADER_EPOCH_AHEAD_OF_METADATA", 1, "ledger-4", "ledger", 4),
        ("LEADER_EPOCH_NOT_MONOTONIC", 2, "ledger-5", "ledger", 5),
        ("LEADER_EPOCH_CHECKPOINT_UNREADABLE", 1, "ledger-6", "ledger", 6),
        ("LEADER_EPOCH_CHECKPOINT_UNREADABLE", 2, "ledger-6", "ledger", 6),
    ])


@pytest.mark.spark
def test_messages_and_evidence_carry_the_epochs_and_offsets(findings):
    by = {(f["check_id"], f["partition"], f["broker_id"]): f for f in findings}
    div = by[("LEADER_EPOCH_DIVERGENCE", 0, None)]
    assert div["severity"] == "critical" and ("disagree on leader epoch 2: broker 1 starts it at offset 200, broker 2 "
                                              "at offset 150") in div["message"]
    assert "The records from offset 150 to 200 differ" in div["message"]
    assert json.loads(div["evidence"])["diverging_entries"] == [
        {"epoch": 2, "broker_a": 1, "log_dir_a": "broker-1/kafka-logs", "start_offset_a": 200, "broker_b": 2,
         "log_dir_b": "broker-2/kafka-logs", "start_offset_b": 150}]
    first = by[("LEADER_EPOCH_DIVERGENCE", 2, None)]
    assert "leader epoch 1: broker 1 starts it at offset 50, broker 2 at offset 100" in first["message"]
    ahead = by[("LEADER_EPOCH_AHEAD_OF_METADATA", 4, 1)]
    assert ("records leader epoch 3 (from offset 40) but the KRaft metadata image says the current leader epoch of "
            "'ledger'-4 is 1 (leader 2)") in ahead["message"]
    assert json.loads(ahead["evidence"])["controller_leader_epoch"] == 1 and ahead["severity"] == "warning"
    order = by[("LEADER_EPOCH_NOT_MONOTONIC", 5, 2)]
    assert ("(line 5: epoch 1 at offset 100 after epoch 2 at offset 200). On load Kafka drops epoch 2 at offset "
            "200 and keeps epoch 0 at offset 0, epoch 1 at offset 100.") in order["message"]
    broken = by[("LEADER_EPOCH_CHECKPOINT_UNREADABLE", 6, 1)]
    assert 'line 3): "For input string: "x""' in broken["message"] and "does not load" in broken["message"]
    offline = by[("LEADER_EPOCH_CHECKPOINT_UNREADABLE", 6, 2)]
    assert "Unrecognised version:1" in offline["message"] and "offline" in offline["message"]
