"""ZooKeeper-mode checks on one hand-made capture: a halted delete (like the real Z2 capture), a topic
without topic_id whose replicas disagree, an id rewritten without a delete (KAFKA-12835), a re-created
topic, a completed delete a broker missed, and producer-id blocks from the znode and controller.log."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from bronze_builders import Cluster
from epoch_files import epoch_files_as_written, epoch_rows

from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from tests.settings_from import settings_from

H1, H2 = "d" * 32, "e" * 32


def _topic(c: Cluster, name: str, partitions: dict, topic_id=None) -> None:
    data = {"partitions": {str(p): r for p, r in partitions.items()}, "adding_replicas": {}, "removing_replicas": {},
            "version": 3}
    if topic_id:
        data["topic_id"] = topic_id
    c.zk(event_type="topic_znode", zk_path=f"/brokers/topics/{name}", topic_name=name, topic_id=topic_id,
         payload_json=json.dumps(data))


def _line(c: Cluster, event_type: str, kind: str = "controller_log", **values) -> None:
    c.zk(source_kind=kind, source_file=f"server-logs/broker-2/{kind.replace('_log', '')}.log", event_type=event_type,
         message=values.pop("message", event_type), **values)


def build() -> Cluster:
    c = Cluster(cluster_id="ZK-CLUSTER")
    for b in (1, 2, 3):
        c.broker(b, meta_version=0, log_dirs=("kafka-logs", "kafka-logs-2") if b == 1 else ("kafka-logs",))
    c.zk(event_type="cluster_id", zk_path="/cluster/id", payload_json='{"version":"1","id":"ZK-CLUSTER"}')
    _line(c, "producer_id_block_acquired", broker_id=2, block_start=0, block_end=999)
    _line(c, "topic_created", topic_name="clicks", topic_id="CLICKSOLD____________A")
    c.advance(timedelta(hours=1))
    _line(c, "producer_id_block_acquired", broker_id=1, block_start=1000, block_end=1999)
    _line(c, "topic_deletion_completed", topic_name="logs", message="Deletion of topic logs successfully completed")
    _line(c, "topic_deletion_completed", topic_name="clicks", message="Deletion of topic clicks successfully completed")
    c.advance(timedelta(minutes=5))
    _line(c, "topic_created", topic_name="clicks", topic_id="CLICKSNEW____________A")
    _line(c, "producer_id_block_acquired", broker_id=3, block_start=2000, block_end=2999)
    c.advance(timedelta(hours=1))
    c.zk(event_type="broker_registration", zk_path="/brokers/ids/1", broker_id=1)
    c.zk(event_type="broker_registration", zk_path="/brokers/ids/2", broker_id=2)
    c.zk(event_type="producer_id_block", zk_path="/latest_producer_id_block", broker_id=3, block_start=2000,
         block_end=2999, payload_json='{"version":1,"broker":3,"block_start":"2000","block_end":"2999"}')
    _topic(c, "orders", {0: [1, 2, 3]}, "ORDERS_______________A")
    _topic(c, "legacy", {0: [1, 2]})                                   # IBP < 2.8: no topic_id
    _topic(c, "payments", {0: [1, 2]}, "PAYMENTSNEW__________A")     # rewritten: new id, no delete
    _topic(c, "clicks", {0: [1, 2]}, "CLICKSNEW____________A")
    _topic(c, "audit", {0: [1, 2]}, "AUDIT________________A")
    _topic(c, "archive", {0: [1]})                                   # no topic_id, and two copies on broker 1
    c.zk(event_type="delete_marker", zk_path="/admin/delete_topics/orders", topic_name="orders")
    _line(c, "topic_deletion_started", topic_name="orders", message="Deletion of topic orders (re)started")
    _line(c, "topic_deletion_halted", topic_name="orders",
          message="[Topic Deletion Manager 2] Halted deletion of topics orders due to offline replicas")
    c.advance(timedelta(seconds=5))
    for b, h in ((1, H1), (2, H2)):
        _line(c, "log_renamed_for_delete", kind="server_log", broker_id=b, topic_name="orders", partition=0,
              payload_json=json.dumps({"dir": f"/var/kafka/orders-0.{h}-delete"}))
        c.dir(b, f"orders-0.{h}-delete", "ORDERS_______________A")
    c.dir(3, "orders-0", "ORDERS_______________A")                     # broker 3 is down: not deleted yet
    c.dir(1, "legacy-0", "LEGACYONE____________A")
    c.dir(2, "legacy-0", "LEGACYTWO____________A")
    c.dir(1, "payments-0", "PAYMENTSOLD__________A")
    c.dir(2, "payments-0", "PAYMENTSNEW__________A")
    c.dir(1, "clicks-0", "CLICKSOLD____________A")
    c.dir(2, "clicks-0", "CLICKSNEW____________A")
    c.dir(1, "audit-0", "AUDIT________________A")
    c.dir(2, "audit-0", None, pm_status="missing")                     # normal for a ZooKeeper broker
    c.dir(2, "logs-0", "LOGS_________________A", bytes=4242)
    c.dir(1, "archive-0", None, pm_status="missing")
    c.dir(1, "archive-0", None, log_dir="kafka-logs-2", pm_status="missing", bytes=77)
    c.producer(1, "audit-0", 1500)
    c.advance(timedelta(seconds=10))
    return c


EXPECTED = {
    ("ZK_DELETE_STUCK", None, None, "orders", None),
    ("TOPIC_ID_DIVERGENCE", None, None, "legacy", 0),
    ("TOPIC_ID_CHANGED_WITHOUT_DELETE", None, None, "payments", None),
    ("STALE_TOPIC_ID", 1, "clicks-0", "clicks", 0),
    ("DELETE_INCOMPLETE", 2, None, "logs", None),
    ("DUPLICATE_REPLICA", 1, "archive-0", "archive", 0),   # duplicates are found without topic ids too
}


@pytest.fixture(scope="module")
def result(spark):
    c = build()
    return run_reconcile(spark, default_catalogue(), c.bronze(spark), "cap-z1", "run-z1", c.now)


@pytest.mark.spark
def test_zk_findings_are_exactly_the_expected_ones(result):
    findings = [r.asDict() for r in result.findings.collect()]
    got = {(f["check_id"], f["broker_id"], f["dir_name"], f["topic_name"], f["partition"]) for f in findings}
    assert result.mode == "zookeeper" and result.cluster_id == "ZK-CLUSTER"
    assert got == EXPECTED
    stuck = next(f for f in findings if f["check_id"] == "ZK_DELETE_STUCK")
    assert stuck["topic_id"] == "ORDERS_______________A" and "Halted deletion" in stuck["message"]
    assert json.loads(stuck["evidence"])["offline_brokers"] == [3]
    changed = next(f for f in findings if f["check_id"] == "TOPIC_ID_CHANGED_WITHOUT_DELETE")
    assert changed["topic_id"] == "PAYMENTSNEW__________A" and "PAYMENTSOLD__________A" in changed["message"]
    incomplete = next(f for f in findings if f["check_id"] == "DELETE_INCOMPLETE")
    assert incomplete["bytes"] == 4242 and incomplete["topic_id"] == "LOGS_________________A"
    duplicate = next(f for f in findings if f["check_id"] == "DUPLICATE_REPLICA")
    assert duplicate["topic_id"] is None and duplicate["log_dir"] == "kafka-logs-2" and duplicate["bytes"] == 77


@pytest.mark.spark
def test_zk_silver(result):
    s = result.silver
    states = {r["broker_id"]: r["state"] for r in s["silver_brokers"].collect()}
    assert states == {1: "active", 2: "active", 3: "absent"}
    blocks = sorted((r["source"], r["first_producer_id"], r["last_producer_id"], r["broker_id"], r["is_allocation"])
                    for r in s["silver_producer_id_blocks"].collect())
    assert blocks == [("zk_log", 0, 999, 2, True), ("zk_log", 1000, 1999, 1, True), ("zk_log", 2000, 2999, 3, True),
                      ("zk_znode", 2000, 2999, 3, True)]
    asg = {(r["topic_name"], r["partition"]): r for r in s["silver_partition_assignments"].collect()}
    assert asg[("orders", 0)]["replicas"] == [1, 2, 3] and asg[("orders", 0)]["marked_for_deletion"]
    assert asg[("legacy", 0)]["topic_id"] is None
    reps = {(r["broker_id"], r["dir_name"]): r["classification"] for r in s["silver_replicas"].collect()}
    assert reps[(3, "orders-0")] == "valid" and reps[(2, "audit-0")] == "valid"
    assert reps[(1, "payments-0")] == "topic_id_changed" and reps[(2, "logs-0")] == "deleted"
    inc = {(r["topic_name"], r["topic_id"]): r for r in s["silver_topic_incarnations"].collect()}
    assert inc[("clicks", "CLICKSOLD____________A")]["deleted"]
    assert inc[("orders", "ORDERS_______________A")]["delete_pending"]
    assert inc[("logs", None)]["deleted"] and inc[("logs", None)]["source"] == "zookeeper"


# ------------------------------------------------------------------ the real Z2 capture (ZooKeeper 3.9 cluster)

@pytest.mark.spark
def test_real_z2_capture_gives_only_the_stuck_delete(spark, tmp_path, fixtures_dir):
    import tarfile

    from jobs.ingest.stage import run_ingest

    with tarfile.open(fixtures_dir / "kafka-zk-sample" / "Z2.tar.gz") as tar:
        members = [m for m in tar.getmembers() if not m.name.endswith((".index", ".timeindex"))]
        tar.extractall(tmp_path, members=members, filter="data")
    s = settings_from()
    ingest = run_ingest(spark, s.ingest, None, str(tmp_path / "Z2"), "z2", "run-z2", execution=s.spark)
    try:
        result = run_reconcile(spark, s.catalogue, ingest.tables, "z2", "run-z2", ingest.capture_time)
        findings = [r.asDict() for r in result.findings.collect()]
        states = {r["broker_id"]: r["state"] for r in result.silver["silver_brokers"].collect()}
        epochs = [r.asDict() for r in ingest.tables["bronze_leader_epochs"].collect()]
        partition_epochs = {(r["topic_name"], r["partition"]): r["leader_epoch"]
                            for r in result.silver["silver_partition_assignments"].collect()}
    finally:
        ingest.release()
    written = epoch_files_as_written(tmp_path / "Z2")
    assert written and epoch_rows(epochs) == written and len(epochs) == len(written)
    # the state znodes' leader_epoch (zk-znodes.jsonl): orders went 0 -> 3 as its replicas went offline
    assert partition_epochs[("orders", 0)] == 3 and partition_epochs[("audit", 0)] == 0
    assert partition_epochs[("payments", 1)] == 1
    assert [(f["check_id"], f["topic_name"], f["topic_id"]) for f in findings] == [
        ("ZK_DELETE_STUCK", "orders", "jk6zGe0fSeuuEFT6wo3IpA")]
    assert "Halted deletion of topics orders due to offline replicas" in findings[0]["message"]
    assert states == {1: "active", 2: "active", 3: "absent"}
