"""meta.properties ensembles and stuck reassignments (issue #21, items 4 and 5): disks cloned, hand-written or
moved between nodes (Kafka's MetaPropertiesEnsemble.verify refuses to start such a node, so it is down in each
story), and reassignments (KIP-455) whose target broker died before catching up, next to young ones that are
simply in progress. Registered into the one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from typing import List, Optional

from udfs import kafka_uuid

from .clock import MINUTE
from .fleet import Broker, LogDir
from .image import LOST_DIR
from .scenarios import everyday_topics, scenario
from .simulation import Layout, Simulation, days, hours

JBOD = Layout(brokers=4, log_dirs=2, min_log_dirs=2)


def extra_log_dir(sim: Simulation, broker_id: int, name: str, directory_id: Optional[bytes],
                  node_id: Optional[int] = None, cluster_id: Optional[str] = None,
                  meta_version: int = 1) -> LogDir:
    """A disk added to a node by hand (a clone, a moved or templated disk): only its meta.properties and empty
    checkpoints, not in any registration, never holding replicas."""
    log_dir = LogDir(name, directory_id, cluster_id or sim.cluster_id, broker_id if node_id is None else node_id,
                     meta_version, sim.now, registered=False, holds_background=False, meta_written_ms=sim.now)
    sim.fleet[broker_id].log_dirs.append(log_dir)
    return log_dir


def _partition_without(sim: Simulation, topic: str, broker_id: int) -> int:
    parts = sim.live_topic(topic).partitions if sim.kraft is not None else sim.zk.topics[topic].partitions
    return next(p for p in sorted(parts) if broker_id not in parts[p].replicas)


def _replicas(sim: Simulation, topic: str, partition: int) -> List[int]:
    if sim.kraft is not None:
        return list(sim.live_topic(topic).partitions[partition].replicas)
    return list(sim.zk.topics[topic].partitions[partition].replicas)


@scenario("meta-cloned-disks",
          "a disk cloned on broker 3 (two dirs, one directory.id) and broker 1's disk image reused on broker 4 with "
          "node.id fixed but directory.id kept: both refuse to come up", JBOD)
def meta_cloned_disks(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(2))
    sim.stop_broker(3)
    source = sim.fleet[3].log_dirs[0]
    extra_log_dir(sim, 3, "kafka-logs-c", source.directory_id)
    sim.stop_broker(4)
    other = sim.fleet[1].log_dirs[0]
    extra_log_dir(sim, 4, "kafka-logs-c", other.directory_id)
    sim.advance(hours(6))
    sim.expect("DUPLICATE_DIRECTORY_ID", broker_id=3)
    sim.expect("DUPLICATE_DIRECTORY_ID")
    sim.note(f"Broker 3 got a third disk cloned from its {source.name} (same meta.properties): "
             "MetaPropertiesEnsemble.verify stops it ('Duplicate directory ID'). Broker 4 got a disk made from broker "
             f"1's {other.name} image with node.id rewritten to 4 but directory.id kept: the controller rejects its "
             "registration ('Broker 1 is already registered with directory ...'). One finding per directory.id; "
             "broker 4's copy, which no broker registered, is not also a FOREIGN_LOG_DIR.")


@scenario("meta-reserved-directory-id",
          "a hand-written meta.properties on broker 2's new disk names the reserved directory.id LOST", JBOD)
def meta_reserved_directory_id(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(1))
    sim.stop_broker(2)
    extra_log_dir(sim, 2, "kafka-logs-c", LOST_DIR)
    sim.advance(hours(3))
    sim.expect("RESERVED_DIRECTORY_ID", broker_id=2, log_dir="kafka-logs-c")
    sim.note("Broker 2's new disk got a templated meta.properties with directory.id AAAAAAAAAAAAAAAAAAAAAg "
             "(DirectoryId.LOST): Kafka 3.7+ refuses to start ('Invalid resrved directory ID'). It is reported once, "
             "not also as a foreign dir.")


@scenario("meta-node-ensemble",
          "broker 2 mounts another cluster's disk, broker 3 a disk of node 7: each node's dirs disagree; a spare "
          "host holds only that other cluster's disk", JBOD)
def meta_node_ensemble(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(1))
    foreign_cluster = kafka_uuid.to_string(kafka_uuid.random_uuid(sim.rng))
    sim.stop_broker(2)
    extra_log_dir(sim, 2, "kafka-logs-c", kafka_uuid.random_uuid(sim.rng), cluster_id=foreign_cluster)
    sim.stop_broker(3)
    extra_log_dir(sim, 3, "kafka-logs-c", kafka_uuid.random_uuid(sim.rng), node_id=7)
    spare = LogDir("kafka-logs", kafka_uuid.random_uuid(sim.rng), foreign_cluster, 7, 1, sim.now - days(90),
                   registered=False, holds_background=False, meta_written_ms=sim.now - days(90))
    sim.fleet.add(Broker(7, "kafka-7.sim.example", None, sim.version, "kraft", [spare], running=False,
                         down_since_ms=sim.now - days(60)))
    sim.advance(hours(2))
    sim.expect("NODE_CLUSTER_ID_MISMATCH", broker_id=2)
    sim.expect("NODE_ID_MISMATCH", broker_id=3)
    sim.expect("FOREIGN_LOG_DIR", broker_id=7, log_dir="kafka-logs")
    sim.note(f"Broker 2 mounted a disk of cluster {foreign_cluster} ('Invalid cluster.id in ...'), broker 3 one "
             "formatted for node 7 ('Stored node id 7 doesn't match previous node id 3'): both are stopped and "
             "each gets one node-level finding, not a FOREIGN_LOG_DIR for the odd disk. A spare host (node 7, never "
             "registered) captured with only that cluster's disk is a FOREIGN_LOG_DIR: its dirs agree.")


@scenario("zk-meta-version-mixed",
          "ZooKeeper broker 2 gets a disk formatted with kafka-storage (meta.properties v1) next to its v0 dir",
          Layout(brokers=4, log_dirs=2, min_log_dirs=2, partitions_per_broker=0), mode="zk")
def zk_meta_version_mixed(sim: Simulation) -> None:
    sim.start_zk_cluster()
    everyday_topics(sim, producers=False)
    sim.advance_to_before_capture(days(1))
    sim.stop_broker(2)
    second = sim.fleet[2].log_dirs[1]
    second.meta_version, second.directory_id, second.meta_written_ms = 1, kafka_uuid.random_uuid(sim.rng), sim.now
    sim.advance(hours(1))
    sim.expect("META_VERSION_MIXED", broker_id=2)
    sim.note(f"Broker 2's {second.name} was re-formatted with kafka-storage (version=1, node.id, directory.id) "
             "while the cluster runs ZooKeeper without migration: KafkaServer verifies with REQUIRE_V0 and the "
             "broker does not start ('Found unexpected version ...').")


def _stuck_story(sim: Simulation) -> None:
    """orders: one partition reassigned onto broker 4, which dies 10 minutes later, 2 days before the capture;
    payments: a reassignment onto broker 3 started 20 minutes before the capture, still copying; inventory: one
    that completed."""
    everyday_topics(sim, producers=sim.kraft is not None)
    sim.advance_to_before_capture(days(2))
    stuck = _partition_without(sim, "orders", 4)
    current = _replicas(sim, "orders", stuck)
    sim.start_reassignment("orders", stuck, current[:-1] + [4])
    sim.advance(10 * MINUTE)
    sim.stop_broker(4)
    if sim.kraft is not None:
        done = _partition_without(sim, "inventory", 4)
        now = _replicas(sim, "inventory", done)
        spare = next(b for b in sim.broker_ids if b not in now and b != 4)
        sim.reassign("inventory", done, now[:-1] + [spare])
    sim.advance_to_before_capture(20 * MINUTE)
    young = _partition_without(sim, "payments", 3)
    replicas = _replicas(sim, "payments", young)
    leaving = 4 if 4 in replicas else replicas[-1]
    sim.start_reassignment("payments", young, [3 if b == leaving else b for b in replicas])
    sim.expect("STUCK_REASSIGNMENT", topic_name="orders", partition=stuck, broker_id=4)
    sim.note(f"orders-{stuck} was being reassigned from {current} to {current[:-1] + [4]} when broker 4 crashed 10 "
             "minutes in, 2 days before the capture: broker 4 never joins the ISR, so the reassignment stays open "
             f"(reconcile.reassignment_stuck_ms is a day). payments-{young} is being reassigned onto broker 3 since 20 "
             "minutes: in progress, not a finding.")


@scenario("reassignment-stuck",
          "KRaft: a reassignment onto broker 4 stuck for 2 days (broker 4 died mid-copy), a young one in progress")
def reassignment_stuck(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    _stuck_story(sim)


@scenario("zk-reassignment-stuck",
          "ZooKeeper: a reassignment onto broker 4 stuck for 2 days (broker 4 died mid-copy), a young one in progress",
          Layout(brokers=4, partitions_per_broker=0), mode="zk")
def zk_reassignment_stuck(sim: Simulation) -> None:
    sim.start_zk_cluster()
    _stuck_story(sim)
