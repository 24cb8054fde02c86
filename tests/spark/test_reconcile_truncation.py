"""Kafka's follower truncation as a check, and checkpoint entries judged per incarnation, on one hand-made KRaft
capture.

The oracle is Kafka's behaviour, worked out by hand in each case's comment (apache/kafka@1eb7644): the leader's
LeaderEpochFileCache.endOffsetFor for the follower's latest epoch (Partition.readRecords), the follower's
AbstractFetcherThread.getOffsetTruncationState and UnifiedLog.truncateTo; for the checkpoints, OffsetCheckpointFile
naming ``topic partition`` and LogManager rewriting them from the logs it holds at the next flush."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from bronze_builders import Cluster, to_frames

from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from udfs import leader_epochs

T1, T2 = "LEDGER_______________A", "EVENTS_______________B"
RECOVERY, HW = "recovery-point-offset-checkpoint", "replication-offset-checkpoint"
STRAY = "events-0.0123456789abcdef0123456789abcdef-stray"
CHECK_IDS = ("REPLICA_TRUNCATION_ACKNOWLEDGED", "REPLICA_TRUNCATION_UNACKNOWLEDGED", "RECOVERY_POINT_BEYOND_LOG_END",
             "CHECKPOINT_OF_PREVIOUS_INCARNATION", "LOG_START_BEYOND_LOG_END", "LEADER_EPOCH_DIVERGENCE",
             "LEADER_EPOCH_AHEAD_OF_METADATA")


def _lead(c: Cluster, partition: int, epoch: int, leader: int) -> None:
    """Leader changes until the controller's leader epoch of ``partition`` is ``epoch`` with ``leader`` leading."""
    for e in range(1, epoch + 1):
        c.change(T1, partition, leader=leader if (epoch - e) % 2 == 0 else 3 - leader)


def build():
    c = Cluster()
    for b in (1, 2, 3):
        c.broker(b)
        c.register(b)
    c.topic("ledger", T1, {p: [1, 2] for p in range(5)})
    _lead(c, 0, 6, 2)
    for p in (1, 2, 3):
        _lead(c, p, 2, 2)
    c.change(T1, 4, leader=2)
    c.topic("events", T2, {0: [3], 1: [3], 2: [3]})
    created = c.now
    epochs, files, checkpoints = [], [], []

    def replica(broker, name, topic_id, entries, leo, hw=None, first_written=None):
        c.dir(broker, name, topic_id)
        c.entries[-1].update(log_end_offset=leo, first_written=first_written or created)
        log_dir = f"broker-{broker}/kafka-logs"
        path = f"{log_dir}/{name}/leader-epoch-checkpoint"
        kept = leader_epochs.load(entries).kept
        topic, partition = name.split(".")[0].rsplit("-", 1)
        epochs.extend({"capture_id": "cap", "run_id": "run", "broker_id": broker, "log_dir": log_dir,
                       "entry_name": name, "topic": topic, "partition": int(partition), "topic_id": topic_id,
                       "position": i, "epoch": e, "start_offset": s, "kafka_keeps": kept[i], "source_file": path}
                      for i, (e, s) in enumerate(entries))
        files.append({"capture_id": "cap", "run_id": "run", "path": path, "file_kind": "checkpoint",
                      "broker_id": broker, "log_dir": log_dir, "bytes": 20, "status": "ok", "rows_produced": 1})
        if hw is not None:
            checkpoint(broker, HW, topic, int(partition), hw)

    def checkpoint(broker, name, topic, partition, offset):
        checkpoints.append({"capture_id": "cap", "run_id": "run", "log_dir": f"broker-{broker}/kafka-logs",
                            "checkpoint": name, "topic": topic, "partition": partition, "offset": offset,
                            "source_file": f"broker-{broker}/kafka-logs/{name}"})

    # ledger-0, issue 64's unclean election: broker 1 wrote 300-599 in epoch 4 and its high watermark reached 600;
    # the leader elected uncleanly on broker 2 went from epoch 0 to 6 at offset 300. endOffsetFor(4) on the leader
    # = (0, 300); the follower's own endOffsetFor(0) = (0, 300): it truncates to 300, 300 acknowledged records.
    replica(2, "ledger-0", T1, [(0, 0), (6, 300)], 700, hw=650)
    replica(1, "ledger-0", T1, [(0, 0), (4, 300)], 600, hw=600)
    # ledger-1, the old leader's unreplicated tail: epoch 2 started at 200 on the new leader; broker 1 wrote to 250
    # in epoch 1 with its high watermark at 180 -> endOffsetFor(1) = (1, 200): truncate to 200, nothing acknowledged
    replica(2, "ledger-1", T1, [(0, 0), (1, 100), (2, 200)], 400, hw=400)
    replica(1, "ledger-1", T1, [(0, 0), (1, 100)], 250, hw=180)
    # ledger-2, a lagging follower: endOffsetFor(1) = (1, 200) is not below its fetch offset 150: nothing
    replica(2, "ledger-2", T1, [(0, 0), (1, 100), (2, 200)], 400, hw=400)
    replica(1, "ledger-2", T1, [(0, 0), (1, 100)], 150, hw=150)
    # ledger-3, a follower in the leader's current epoch, captured after the leader (its log end is ahead): the
    # leader would answer with its own log end, which only grows: nothing
    replica(2, "ledger-3", T1, [(0, 0), (2, 200)], 450, hw=450)
    replica(1, "ledger-3", T1, [(0, 0), (2, 200)], 500, hw=480)
    # ledger-4, the follower's high watermark entry is of a previous incarnation (written before the dir existed):
    # it is not evidence, so the cut (endOffsetFor(0) = (0, 90): truncate to 90) counts as unacknowledged
    replica(2, "ledger-4", T1, [(0, 0), (1, 90)], 300, hw=300)
    replica(1, "ledger-4", T1, [(0, 0)], 120, hw=None, first_written=created + timedelta(minutes=5))
    checkpoint(1, HW, "ledger", 4, 120)
    # events-0 on broker 3: deleted and re-created while broker 3 was down; at its start Kafka renamed the old
    # replica -stray and created the new one; recovery-point-offset-checkpoint (last written when broker 3 went
    # down) still holds the old incarnation's 287
    down, restarted = created - timedelta(hours=2), created + timedelta(minutes=1)
    replica(3, "events-0", T2, [(0, 0)], 0, first_written=restarted)
    c.dir(3, STRAY, None)
    c.entries[-1].update(log_end_offset=400)
    checkpoint(3, RECOVERY, "events", 0, 287)
    # events-1: same file, but the dir existed when it was written: flushed data is really gone (a true warning)
    replica(3, "events-1", T2, [(0, 0)], 40, first_written=down - timedelta(days=1))
    checkpoint(3, RECOVERY, "events", 1, 386)
    # events-2: the dir existed, but a -delete dir of the same name holds the offsets the entry describes
    replica(3, "events-2", T2, [(0, 0)], 10, first_written=down - timedelta(days=1))
    c.dir(3, "events-2.fedcba9876543210fedcba9876543210-delete", None)
    c.entries[-1].update(log_end_offset=225)
    checkpoint(3, RECOVERY, "events", 2, 225)
    # the checkpoint files' mtimes: broker 1's replication-offset-checkpoint was written before ledger-4 existed
    for b, name, when in ((1, RECOVERY, c.now), (1, HW, created), (2, RECOVERY, c.now), (2, HW, c.now),
                          (3, RECOVERY, down), (3, HW, down)):
        c.entries.append({"capture_id": "cap", "run_id": "run", "cluster_id": c.cluster_id, "broker_id": b,
                          "log_dir": f"broker-{b}/kafka-logs", "entry_name": name, "entry_kind": "top_file",
                          "is_dir": False, "bytes": 40, "newest_mtime": when, "pm_status": "not_applicable"})
    tables = c.tables()
    tables["bronze_leader_epochs"] = epochs
    tables["bronze_ingest_files"] = files
    tables["bronze_offset_checkpoints"] = checkpoints
    return c, tables


@pytest.fixture(scope="module")
def findings(spark):
    c, tables = build()
    result = run_reconcile(spark, default_catalogue(), to_frames(spark, tables), "cap", "run", c.now)
    asg = {(r["topic_name"], r["partition"]): (r["leader"], r["leader_epoch"])
           for r in result.silver["silver_partition_assignments"].collect()}
    assert asg[("ledger", 0)] == (2, 6) and asg[("ledger", 1)] == (2, 2) and asg[("ledger", 4)] == (2, 1)
    return [r.asDict() for r in result.findings.collect() if r["check_id"] in CHECK_IDS]


@pytest.mark.spark
def test_exactly_the_truncation_and_checkpoint_findings(findings):
    got = sorted((f["check_id"], f["broker_id"], f["dir_name"]) for f in findings)
    assert got == sorted([
        ("REPLICA_TRUNCATION_ACKNOWLEDGED", 1, "ledger-0"),
        ("REPLICA_TRUNCATION_UNACKNOWLEDGED", 1, "ledger-1"),
        ("REPLICA_TRUNCATION_UNACKNOWLEDGED", 1, "ledger-4"),
        ("CHECKPOINT_OF_PREVIOUS_INCARNATION", 3, "events-0"),
        ("RECOVERY_POINT_BEYOND_LOG_END", 3, "events-1"),
        ("CHECKPOINT_OF_PREVIOUS_INCARNATION", 3, "events-2"),
    ])


@pytest.mark.spark
def test_the_unclean_election_loss_names_records_epochs_and_broker(findings):
    by = {(f["check_id"], f["dir_name"]): f for f in findings}
    lost = by[("REPLICA_TRUNCATION_ACKNOWLEDGED", "ledger-0")]
    assert lost["severity"] == "critical"
    assert ("will truncate to offset 300 when it follows leader 2: 300 records (offsets 300-599, epochs 4) are lost, "
            "300 of them below its high watermark 600") in lost["message"]
    ev = json.loads(lost["evidence"])
    assert ev["rounds"] == [[4, 0, 300, 300]] and ev["leader_epochs"] == [{"epoch": 0, "start_offset": 0},
                                                                          {"epoch": 6, "start_offset": 300}]
    tail = by[("REPLICA_TRUNCATION_UNACKNOWLEDGED", "ledger-1")]
    assert tail["severity"] == "warning" and "50 records (offsets 200-249, epochs 1)" in tail["message"]
    stale_hw = by[("REPLICA_TRUNCATION_UNACKNOWLEDGED", "ledger-4")]
    assert "(high watermark not recorded)" in stale_hw["message"]


@pytest.mark.spark
def test_checkpoint_entries_of_a_previous_incarnation_are_info_with_the_reason(findings):
    by = {(f["check_id"], f["dir_name"]): f for f in findings}
    recreated = by[("CHECKPOINT_OF_PREVIOUS_INCARNATION", "events-0")]
    assert recreated["severity"] == "info"
    assert "before events-0 existed" in recreated["message"] and "offset 287" in recreated["message"]
    deleted = by[("CHECKPOINT_OF_PREVIOUS_INCARNATION", "events-2")]
    assert "events-2.fedcba9876543210fedcba9876543210-delete" in deleted["message"]
    assert by[("RECOVERY_POINT_BEYOND_LOG_END", "events-1")]["severity"] == "warning"
