"""Log-dir contents: a replica in both JBOD dirs or in the dir the controller does not name (beside -future moves
in progress), entries Kafka refuses (lost+found, backups, hostile names), another cluster's or node's disk, and
assigned replicas missing or renamed -delete by the broker alone. Registered into the one catalogue
(:mod:`.scenarios`)."""
from __future__ import annotations

from typing import Tuple

from udfs import kafka_uuid

from . import codec
from .clock import HOUR, MINUTE, SECOND
from .fleet import Replica
from .image import uid
from .scenarios import everyday_topics, scenario
from .simulation import Layout, Simulation, add_entry, days, hours


@scenario("duplicate-replica-jbod", "JBOD broker 2 holds an orders replica in both log dirs; a -future move on 3 is fine",
          Layout(brokers=4, log_dirs=2, min_log_dirs=2))
def duplicate_replica_jbod(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(6))
    log_dir, replica = _first_replica(sim, 2, "orders")
    other = next(d for d in sim.fleet[2].log_dirs if d is not log_dir)
    copy = Replica(replica.name, replica.topic, replica.partition, replica.topic_id, "partition",
                   sim.now, replica.bytes_per_day, stopped_ms=sim.now + HOUR)
    other.entries[copy.name] = copy
    sim.expect("DUPLICATE_REPLICA", broker_id=2, dir_name=replica.name, topic_name="orders",
               partition=replica.partition, topic_id=uid(replica.topic_id))
    _future_move(sim, 3)
    sim.advance(days(1))
    sim.note(f"Someone copied {replica.name} into broker 2's second log dir (a manual move gone wrong): Kafka would not "
             "start (Duplicate log directories). Broker 3's -future dir is an alter-log-dirs move in progress.")


def _first_replica(sim: Simulation, broker_id: int, topic: str):
    """The broker's replica of ``topic`` with the lowest partition number."""
    found = sorted(((r.partition, d, r) for d, r in sim.fleet[broker_id].replicas() if r.topic == topic),
                   key=lambda t: t[0])
    if not found:
        raise RuntimeError(f"broker {broker_id} holds no replica of {topic}")  # pragma: no cover
    return found[0][1], found[0][2]


def _future_move(sim: Simulation, broker_id: int) -> Tuple[str, int]:
    """An alter-log-dirs move in progress: a -future copy in the destination dir, which the controller already
    records as the replica's directory (AssignReplicasToDirs for the future replica)."""
    broker = sim.fleet[broker_id]
    for log_dir, replica in broker.replicas():
        if replica.topic in ("orders", "payments", "inventory"):
            dest = next(d for d in broker.log_dirs if d is not log_dir)
            future = Replica(codec.future_dir_name(replica.topic, replica.partition, sim.fleet.unique_hex()),
                             replica.topic, replica.partition, replica.topic_id, "future", sim.now,
                             replica.bytes_per_day, lag_ms=HOUR)
            dest.entries[future.name] = future
            sim.kraft.assign_directories([(replica.topic_id, replica.partition, broker_id, dest.directory_id)])
            return replica.topic, replica.partition
    raise RuntimeError("no replica to move")  # pragma: no cover


@scenario("wrong-log-dir", "replica in a log dir other than the one PartitionRecord Directories names (JBOD)",
          Layout(brokers=4, log_dirs=2, min_log_dirs=2))
def wrong_log_dir(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(4))
    log_dir, replica = _first_replica(sim, 2, "payments")
    other = next(d for d in sim.fleet[2].log_dirs if d is not log_dir)
    del log_dir.entries[replica.name]
    other.entries[replica.name] = replica
    sim.expect("WRONG_LOG_DIR", broker_id=2, log_dir=other.name, dir_name=replica.name, topic_name=replica.topic,
               partition=replica.partition, topic_id=uid(replica.topic_id))
    _future_move(sim, 4)
    sim.advance(days(1))
    sim.note(f"{replica.name} sits in broker 2's {other.name} while the controller's Directories entry names "
             f"{log_dir.name}. Broker 4's -future copy moving into its assigned dir is not a finding.")


@scenario("non-kafka-entry", "lost+found and a backup folder inside log dirs (Kafka refuses them); a note file is ignored")
def non_kafka_entry(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(3))
    for broker, name in ((1, "lost+found"), (2, "orders-backup")):
        children = {"00000000000000000000.log": b""} if name == "orders-backup" else {}
        log_dir = add_entry(sim, broker, name, True, b"", children)
        sim.expect("UNKNOWN_LOG_DIR_ENTRY", broker_id=broker, log_dir=log_dir.name, dir_name=name)
    add_entry(sim, 2, "notes.txt", False, b"moved orders-3 here before the disk swap\n")  # files: Kafka ignores them
    add_entry(sim, 3, "remote-log-index-cache", True)  # Kafka's own (tiered storage): not a finding
    sim.advance(days(1))
    sim.note("lost+found (ext4 mount root) and orders-backup make LogManager.loadLogs throw. notes.txt (a file) "
             "and remote-log-index-cache (Kafka's own) are not findings: Kafka ignores files in a log dir.")


@scenario("hostile", "hostile names and contents for report escaping: <script> dir, CSV formula, newline, bad pm")
def hostile(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    long_topic = "x" * 200 + ".long-topic-name-with-dashes-and.dots." + "y" * 11  # 249 chars, Kafka's maximum
    sim.create_topic(long_topic, 1, 3)
    sim.advance(days(2))
    hostile_names = [
        (1, "<script>alert(1)<"),
        (1, '"><img src=x onerror=alert(1)>'),
        (2, '=HYPERLINK("http://evil.example","click")'),
        (3, "line1\nline2\r\tend"),
        (4, "../../etc/passwd"),
    ]
    for broker, name in hostile_names:
        safe_name = name.replace("/", "\u2215")  # a real file name cannot hold '/': the look-alike keeps the intent
        log_dir = add_entry(sim, broker, safe_name, True, b"",
                            {"<img src=x onerror=alert(3)>.txt": b"</td></tr><script>alert(3)</script>"})
        sim.expect("UNKNOWN_LOG_DIR_ENTRY", broker_id=broker, log_dir=log_dir.name, dir_name=safe_name)
    add_entry(sim, 2, "<script>alert('file')<.txt", False, b"<script>alert('content')</script>\n")  # a file: ignored
    broker_id = sim.live_topic("orders").partitions[0].replicas[0]
    log_dir, replica = sim.replica_on(broker_id, "orders", 0)
    replica.pm_content = b"version: 0\ntopic_id: <script>alert(2)</script>"
    sim.expect("CORRUPT_PARTITION_METADATA", broker_id=broker_id, log_dir=log_dir.name, dir_name=replica.name,
               topic_name="orders", partition=0)
    sim.advance(max(0, sim.capture_ms - sim.now - 30 * SECOND))
    sim.delete_topic(long_topic)  # -delete names cut to 255 characters; deleted a moment before the capture
    sim.note("Entry names and file contents carry HTML/JS, a CSV formula, control characters and a path-like "
             "name; a partition.metadata holds a <script> topic id. A 249-char topic was just deleted "
             "(its -delete dirs have Kafka's 255-char capped names, within file.delete.delay.ms).")


@scenario("foreign-log-dir",
          "broker 3 mounted a disk of another cluster (cluster.id), broker 4 a disk of broker 2 (node.id); both down")
def foreign_log_dir(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(5))
    other_cluster = kafka_uuid.to_string(kafka_uuid.random_uuid(sim.rng))
    from .fleet import LogDir

    for broker_id, name, cluster, node in ((3, "kafka-logs-old", other_cluster, 3),
                                           (4, "kafka-logs-moved", sim.cluster_id, 2)):
        sim.stop_broker(broker_id)
        sim.advance(10 * MINUTE)
        foreign = LogDir(name, kafka_uuid.random_uuid(sim.rng), cluster, node, 1, sim.now - days(40),
                         registered=False, holds_background=False, meta_written_ms=sim.now - days(40))
        foreign_id = kafka_uuid.random_uuid(sim.rng)
        for p in range(2):
            replica = Replica(f"telemetry-{p}", "telemetry", p, foreign_id, "partition", sim.now - days(40),
                              50 << 20, stopped_ms=sim.now - days(9))
            foreign.entries[replica.name] = replica
        sim.fleet[broker_id].log_dirs.append(foreign)
    sim.expect("NODE_CLUSTER_ID_MISMATCH", broker_id=3)  # a node's disagreeing dirs: the ensemble finding, once
    sim.expect("NODE_ID_MISMATCH", broker_id=4)
    sim.advance(days(1))
    sim.note("kafka-logs-old (in broker 3's capture) has another cluster's cluster.id; kafka-logs-moved (in broker "
             "4's capture) says node.id=2 and its directory.id is registered by no broker. Both brokers refuse to "
             "start and are down (MetaPropertiesEnsemble.verify): one node-level finding each, which takes "
             "precedence over FOREIGN_LOG_DIR for the odd dir. Replica dirs inside a foreign log dir are not "
             "reconciled.")


@scenario("missing-replica", "broker 2 (running) lacks a replica it is assigned; broker 4's disks were not captured")
def missing_replica(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("shipments", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 1]])
    sim.advance(days(3))
    log_dir, replica = sim.replica_on(2, "shipments", 1)
    del log_dir.entries[replica.name]
    sim.fleet[4].captured = False
    sim.advance(days(1))
    sim.expect("MISSING_REPLICA", broker_id=2, topic_name="shipments", partition=1,
               topic_id=uid(sim.topic_id("shipments")))
    sim.note("Someone removed shipments-1 from broker 2 while it ran. Broker 4 is in metadata but its host was not "
             "reachable (state 'absent'): its replicas cannot be judged and must not be reported missing.")


@scenario("local-delete-without-controller-delete",
          "broker 2 renamed its replica of a live topic to -delete (an operator's rm, a log-dir failure cleanup)")
def local_delete_without_controller_delete(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("shipments", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 1]])
    sim.advance(days(3))
    sim.fleet.broken_delete |= {2}  # its delete task cannot remove the dir: the -delete dir stays
    topic_id = sim.topic_id("shipments")
    sim.fleet.delete_replica(sim.fleet[2], "shipments", 1, topic_id, sim.now)
    log_dir, replica = sim.replica_on(2, "shipments", 1, kinds=("delete",))
    sim.advance(hours(6))
    sim.expect("LOCAL_DELETE_WITHOUT_CONTROLLER_DELETE", broker_id=2, log_dir=log_dir.name, dir_name=replica.name,
               topic_name="shipments", partition=1, topic_id=uid(topic_id))
    sim.note("Broker 2 renamed shipments-1 to -delete 6 hours before the capture although the topic is live and "
             "the controller still assigns partition 1 to broker 2; nothing else changed. The replica is gone from "
             "the broker but counted by the controller.")
