"""The meta_properties and reassignments families on one hand-made capture (real record layouts through
bronze_builders): each fact on its own node or partition, exactly the expected findings, nothing for a healthy
JBOD node, a folder holding several registered nodes, a young or a completed reassignment; FOREIGN_LOG_DIR
leaves out the dirs an ensemble finding explains. The reserved-id expression and the completion rule are
checked against independent oracles (udfs.kafka_uuid, Kafka's PartitionReassignmentReplicas rule)."""
from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest
from bronze_builders import Cluster
from pyspark.sql import functions as F

from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from jobs.reconcile.checks_meta_properties import node_key, reserved_directory_id
from jobs.reconcile.checks_reassignments import blocking_replicas
from udfs import kafka_uuid

pytestmark = pytest.mark.spark


def _id(n: int) -> str:
    """A real (non-reserved) directory id: MSB 1, LSB n."""
    return kafka_uuid.to_string((1).to_bytes(8, "big") + n.to_bytes(8, "big"))


D1A, D1B, D2A, D3A, D4A, D4B, D4X, D5A, D5B, D5X, D7, D8 = (_id(n) for n in range(101, 113))
LOST, RESERVED_99 = "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAYw"
T = {n: _id(200 + i) for i, n in enumerate(("stuck", "young", "done", "quiet"))}
DAY = timedelta(days=1)


def _dir(c: Cluster, log_dir: str, node: int, directory_id: str, cluster_id=None, version: int = 1, host=None):
    c.log_dirs.append({"capture_id": "cap", "run_id": "run", "cluster_id": cluster_id or c.cluster_id,
                       "broker_id": node, "log_dir": log_dir, "directory_id": directory_id, "meta_version": version,
                       "host": host})


def build() -> Cluster:
    c = Cluster()
    regs = {1: [D1A, D1B], 2: [D2A], 3: [D3A], 4: [D4A, D4B], 5: [D5A, D5B], 6: [], 7: [D7], 8: [D8]}
    for b, ids in regs.items():
        c.register(b, log_dirs=ids)
    for b in regs:
        c.fence(b, fenced=False)
    c.fence(5)
    _dir(c, "broker-1/a", 1, D1A)                                # healthy JBOD node
    _dir(c, "broker-1/b", 1, D1B)
    _dir(c, "broker-2/a", 2, D2A)                                # a clone of its own dir
    _dir(c, "broker-2/c", 2, D2A)
    _dir(c, "broker-10/x", 10, D1B)                              # broker 1's dir image on node 10
    _dir(c, "broker-3/a", 3, D3A)
    _dir(c, "broker-3/new", 3, LOST)                             # reserved ids: LOST and the 99th
    _dir(c, "broker-3/tmpl", 3, RESERVED_99)
    _dir(c, "broker-4/a", 4, D4A)                                # a disk of another cluster
    _dir(c, "broker-4/b", 4, D4B)
    _dir(c, "broker-4/x", 4, D4X, cluster_id="OTHER-CLUSTER")
    _dir(c, "broker-5/a", 5, D5A)                                # a disk formatted for node 9
    _dir(c, "broker-5/b", 5, D5B)
    _dir(c, "broker-5/x", 9, D5X)
    _dir(c, "b6.jsonl.gz!/data/a", 6, None, version=1, host="kafka-6")   # versions mixed (a pack: host)
    _dir(c, "b6.jsonl.gz!/data/b", 6, None, version=0, host="kafka-6")
    _dir(c, "cluster-x/n7", 7, D7)                               # two registered nodes side by side
    _dir(c, "cluster-x/n8", 8, D8)
    c.topic("stuck", T["stuck"], {0: [1, 2, 3]})
    c.topic("young", T["young"], {0: [1, 2, 3]})
    c.topic("done", T["done"], {0: [1, 2, 3]})
    c.topic("quiet", T["quiet"], {0: [1, 2, 3]})
    c.advance(DAY)
    c.stuck_start = c.now + c.step
    c.change(T["stuck"], 0, replicas=[1, 2, 5, 3], adding=[5], removing=[3])   # broker 5 is fenced
    c.change(T["done"], 0, replicas=[1, 2, 4, 3], adding=[4], removing=[3])
    c.advance(timedelta(minutes=5))
    c.change(T["done"], 0, isr=[1, 2, 3, 4])
    c.change(T["done"], 0, replicas=[1, 2, 4], isr=[1, 2, 4], adding=[], removing=[])
    c.change(T["stuck"], 0, isr=[1, 2])                          # an ISR change in between: no new start
    c.advance(2 * DAY)
    c.change(T["young"], 0, replicas=[1, 2, 4, 3], adding=[4], removing=[3])
    c.advance(timedelta(hours=1))
    for topic, holders in (("stuck", (1, 2, 5, 3)), ("young", (1, 2, 4, 3)), ("done", (1, 2, 4)),
                           ("quiet", (1, 2, 3))):
        for b in holders:
            c.dir(b, f"{topic}-0", T[topic], log_dir="a")
    return c


EXPECTED = {
    ("DUPLICATE_DIRECTORY_ID", 2, None, None, None),
    ("DUPLICATE_DIRECTORY_ID", None, None, None, None),
    ("RESERVED_DIRECTORY_ID", 3, "new", None, None),
    ("RESERVED_DIRECTORY_ID", 3, "tmpl", None, None),
    ("NODE_CLUSTER_ID_MISMATCH", 4, None, None, None),
    ("NODE_ID_MISMATCH", 5, None, None, None),
    ("META_VERSION_MIXED", 6, None, None, None),
    ("STUCK_REASSIGNMENT", 5, None, "stuck", 0),
}


@pytest.fixture(scope="module")
def cluster():
    return build()


@pytest.fixture(scope="module")
def findings(spark, cluster):
    result = run_reconcile(spark, default_catalogue(), cluster.bronze(spark), "cap-e1", "run-e1", cluster.now)
    return [r.asDict() for r in result.findings.collect()]


def test_exactly_the_expected_findings(findings):
    """Nothing for broker 1 (JBOD), cluster-x (nodes 7 and 8, each registered and active), the young or the
    completed reassignment; no FOREIGN_LOG_DIR for broker-10/x, broker-3's reserved dirs, broker-4/x or
    broker-5/x, which the controller does not know but an ensemble finding explains."""
    got = {(f["check_id"], f["broker_id"], f["log_dir"], f["topic_name"], f["partition"]) for f in findings}
    assert len(got) == len(findings), "two findings share their keys"
    assert got == EXPECTED


def test_ensemble_findings_name_the_dirs_and_kafkas_consequence(findings):
    by = {(f["check_id"], f["broker_id"], f["log_dir"]): f for f in findings}
    same = by[("DUPLICATE_DIRECTORY_ID", 2, None)]
    assert same["severity"] == "critical" and D2A in same["message"] and "broker-2/a (node.id 2)" in same["message"]
    assert "broker-2/c (node.id 2)" in same["message"] and "Duplicate directory ID" in same["message"]
    cross = by[("DUPLICATE_DIRECTORY_ID", None, None)]
    assert "on nodes 1, 10" in cross["message"] and "already registered with directory" in cross["message"]
    assert [d["path"] for d in json.loads(cross["evidence"])["dirs"]] == ["broker-1/b", "broker-10/x"]
    lost = by[("RESERVED_DIRECTORY_ID", 3, "new")]
    assert "(LOST)" in lost["message"] and lost["severity"] == "critical"
    assert "first 100 ids" in by[("RESERVED_DIRECTORY_ID", 3, "tmpl")]["message"]
    other = by[("NODE_CLUSTER_ID_MISMATCH", 4, None)]
    assert "OTHER-CLUSTER" in other["message"] and "Node broker-4 " in other["message"]
    moved = by[("NODE_ID_MISMATCH", 5, None)]
    assert "node.ids 5, 9" in moved["message"] and "broker-5/x (node.id 9)" in moved["message"]
    mixed = by[("META_VERSION_MIXED", 6, None)]
    # a v0 dir next to KRaft records: the job reads the cluster as migrating, where Kafka accepts both versions
    assert mixed["severity"] == "warning" and "Node host kafka-6" in mixed["message"]
    assert "versions 0 and 1" in mixed["message"]


def test_stuck_reassignment_says_since_when_and_what_blocks_it(findings, cluster):
    f = next(f for f in findings if f["check_id"] == "STUCK_REASSIGNMENT")
    assert f["since"].replace(tzinfo=None) == cluster.stuck_start.replace(tzinfo=None)
    assert f["severity"] == "warning" and f["topic_id"] == T["stuck"]
    assert "adding [5], removing [3], replicas [1, 2, 5, 3], ISR [1, 2]" in f["message"]
    assert "target replica(s) [5] not in the ISR: 5 (fenced, its disks are in the capture)" in f["message"]
    assert "Broker 5 is fenced at capture time." in f["message"]
    ev = json.loads(f["evidence"])
    assert ev["target"] == [1, 2, 5] and ev["not_in_isr"] == [5] and ev["threshold_ms"] == 86_400_000


def test_reserved_directory_id_matches_kafkas_rule(spark):
    """DirectoryId.reserved (MSB 0, signed LSB < 100) on the text, against udfs.kafka_uuid's byte-level oracle."""
    rng = random.Random(5)
    raws = [bytes(8) + n.to_bytes(8, "big", signed=True) for n in (0, 1, 2, 50, 99, 100, 101, 255, -1, -(1 << 63))]
    raws += [bytes([0] * 7 + [1]) + bytes(8), bytes(15) + b"\x63", bytes(16)]
    raws += [rng.randbytes(16) for _ in range(40)] + [bytes(8) + rng.randbytes(8) for _ in range(40)]
    texts = [kafka_uuid.to_string(r) for r in raws] + ["not-a-uuid", None]
    df = spark.createDataFrame([(t,) for t in texts], "d string").select(
        "d", reserved_directory_id(F.col("d")).alias("r"))
    got = {r["d"]: r["r"] for r in df.collect()}
    for raw in raws:
        assert got[kafka_uuid.to_string(raw)] == kafka_uuid.is_reserved_directory_id(raw), raw.hex()
    assert got["not-a-uuid"] is False and got[None] is False


def _completes(replicas, removing, isr) -> bool:
    """Kafka's PartitionReassignmentReplicas.maybeCompleteReassignment, written from its source."""
    new_isr, target = list(isr), list(replicas)
    if removing:
        new_isr = [r for r in isr if r not in removing]
        if not new_isr:
            return False
        target = [r for r in replicas if r not in removing]
        if not target:
            return False
    return all(r in new_isr for r in target)


def test_blocking_replicas_is_kafkas_completion_rule(spark):
    """No blocking replica (and an ISR left after removing) exactly when Kafka would complete the reassignment."""
    rng = random.Random(11)
    cases = []
    for _ in range(300):
        brokers = rng.sample(range(1, 8), rng.randint(2, 6))
        removing = [b for b in brokers if rng.random() < 0.3]
        isr = [b for b in brokers if rng.random() < 0.6]
        cases.append((brokers, removing, isr))
    df = spark.createDataFrame(cases, "replicas array<int>, removing array<int>, isr array<int>")
    out = df.select("replicas", "removing", "isr",
                    blocking_replicas(F.col("replicas"), F.col("removing"), F.col("isr")).alias("b")).collect()
    for row in out:
        left = [r for r in row["isr"] if r not in row["removing"]]
        ours = not row["b"] and bool(left) and bool([r for r in row["replicas"] if r not in row["removing"]])
        assert ours == _completes(row["replicas"], row["removing"], row["isr"]), row


def test_node_key_is_the_pack_or_the_folder(spark):
    paths = {"broker-2/kafka-logs-a": "folder:broker-2", "P1/broker-4/b": "folder:P1/broker-4",
             "h1.jsonl.gz!/data/a": "pack:h1.jsonl.gz", "packs/h2.jsonl.gz!/var/kafka/b/": "pack:packs/h2.jsonl.gz",
             "kafka-logs": "dir:kafka-logs", "/abs/root/broker-1/kafka-logs/": "folder:/abs/root/broker-1"}
    df = spark.createDataFrame([(p,) for p in paths], "p string").select("p", node_key(F.col("p")).alias("k"))
    assert {r["p"]: r["k"] for r in df.collect()} == paths
