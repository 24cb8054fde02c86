"""The real kafka-devsample capture (Kafka-written, 4 KRaft nodes): its ground truth must come out exactly —
stale clicks-0 on fenced broker 103, the missing and the corrupt partition.metadata, the -stray dir, the
producer id outside every block — and nothing for the lagging replicas of 103, the -future move on 102 or
the replicas outside the ISR."""
from __future__ import annotations

import json

import pytest
from bronze_builders import devsample_bronze

from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from tests import devsample_truth
from tests.settings_from import settings_from


@pytest.fixture(scope="module", params=["interpreted", pytest.param("compiled", marks=pytest.mark.slow)])
def result(request, spark, devsample_dir):
    """The real capture's truth must come out the same whether Spark compiles the plans (large captures) or
    interprets them (small ones: jobs.spark_session.fit_execution_to_size). The compiled run is in the slow
    tier (``make test-all``, CI): the loop runs the mode its small captures run in."""
    from datetime import datetime, timezone

    from jobs.spark_session import CODEGEN_MODE_KEY, fit_execution_to_size

    before = spark.conf.get(CODEGEN_MODE_KEY)
    limit = {"interpreted": 10**9, "compiled": 0}[request.param]
    assert fit_execution_to_size(spark, settings_from(spark={"interpreted_below_rows": limit}).spark,
                                 1000) == request.param
    try:  # run_reconcile computes its silver tables and findings here, in the mode just set
        bronze = devsample_bronze(spark, devsample_dir / "expected.json")
        yield run_reconcile(spark, default_catalogue(), bronze, "dev", "dev-run", datetime(2026, 11, 23, tzinfo=timezone.utc))
    finally:
        spark.conf.set(CODEGEN_MODE_KEY, before)


@pytest.mark.spark
def test_devsample_ground_truth(result):
    findings = [r.asDict() for r in result.findings.collect()]
    assert devsample_truth.from_rows(findings) == devsample_truth.FINDINGS
    stale = next(f for f in findings if f["check_id"] == "STALE_TOPIC_ID")
    assert stale["broker_state"] == "fenced" and "OgLh3kIiODWuf2JCQPKw4w" in stale["message"]
    assert stale["since"].replace(tzinfo=None).isoformat() == "2025-02-01T00:00:04.500000"  # RemoveTopicRecord at 51
    pid = next(f for f in findings if f["check_id"] == "PID_OUTSIDE_BLOCKS")
    assert pid["topic_name"] == "events" and pid["partition"] == 1
    assert json.loads(pid["evidence"])["producer_id"] == 9999


@pytest.mark.spark
def test_devsample_silver(result, devsample_dir):
    truth = json.loads((devsample_dir / "expected.json").read_text())
    s = result.silver
    assert result.mode == "kraft" and result.cluster_id == truth["clusterId"]
    states = {r["broker_id"]: r["state"] for r in s["silver_brokers"].collect()}
    assert states == {101: "active", 102: "active", 103: "fenced", 104: "active"}
    inc = {r["topic_id"]: r for r in s["silver_topic_incarnations"].collect()}
    live = {r["topic_name"]: r["topic_id"] for r in inc.values() if r["is_live"]}
    assert live == truth["topics"]["currentNameToId"]
    deleted = inc["A4HaLNH_zheTrtxgg-IBNA"]
    assert deleted["deleted"] and deleted["deleted_offset"] == 51 and deleted["created_offset"] == 20
    assert inc["OgLh3kIiODWuf2JCQPKw4w"]["created_offset"] == 52
    asg = {(r["topic_name"], r["partition"]): r for r in s["silver_partition_assignments"].collect()}
    assert asg[("inventory", 2)]["replicas"] == [103, 101, 102]
    assert asg[("inventory", 2)]["directories"] == ["lN3lRvnfkq_EW15qh9aZEA", "dY8vSxKUoccnQSccqw4OyQ",
                                                    "Pt-uz-EuG-YYlKGr7dcT1Q"]
    assert asg[("inventory", 1)]["isr"] == [104] and asg[("inventory", 1)]["leader"] == 104
    # leader epoch: the PartitionRecord's LeaderEpoch + 1 per PartitionChangeRecord that sets Leader (the whole log)
    epochs = {}
    for r in sorted(truth["metadataLog"]["records"], key=lambda r: r["offset"]):
        key = (r["data"].get("topicId"), r["data"].get("partitionId"))
        if r["type"] == "PARTITION_RECORD":
            epochs[key] = r["data"]["leaderEpoch"]
        elif r["type"] == "PARTITION_CHANGE_RECORD" and "leader" in r["data"]:
            epochs[key] += 1
    got = {(r["topic_id"], r["partition"]): r["leader_epoch"] for r in asg.values()}
    assert got == {k: epochs[k] for k in got} and got[(live["inventory"], 1)] == 2
    assert asg[("events", 1)]["directories"][0] == "Pt-uz-EuG-YYlKGr7dcT1Q"
    blocks = sorted((r["first_producer_id"], r["last_producer_id"], r["broker_id"])
                    for r in s["silver_producer_id_blocks"].filter("is_allocation").collect())
    assert blocks == sorted((b["firstProducerId"], b["lastProducerId"], b["brokerId"])
                            for b in truth["producerIds"]["blocks"])
    reps = {(r["broker_id"], r["dir_name"]): r for r in s["silver_replicas"].collect()}
    for r in truth["replicas"]:
        if r["status"] in ("live", "live_lagging", "live_out_of_isr"):
            assert reps[(r["broker"], r["path"].rsplit("/", 1)[1])]["classification"] == "valid", r["path"]
