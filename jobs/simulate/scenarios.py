"""The scenario catalogue: each one a short story of a cluster's life with the findings it must produce.

A scenario scripts a :class:`~jobs.simulate.simulation.Simulation` (Kafka's rules do the rest) and declares
``expect(...)`` entries: the ground truth written to ``expected_findings.json`` (docs/CONTRACTS.md). Keys
named in an expectation are the ones that are unambiguous for that check; the reconcile stage matches on
exactly those. Scenarios never depend on the scale flags: background topics only add healthy load.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from udfs import kafka_uuid, partition_metadata

from . import codec
from .clock import DAY, HOUR, MINUTE, SECOND
from .fleet import Replica
from .image import uid
from .simulation import Layout, Simulation, add_entry, days, hours


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str  # one line for the README / --list
    build: Callable[[Simulation], None]
    layout: Layout = field(default_factory=Layout)
    mode: str = "kraft"
    version: Tuple[int, int] = (3, 9)
    age_days: int = 30
    metadata_segment_ms: int = 7 * DAY


CATALOGUE: Dict[str, Scenario] = {}


def scenario(name: str, summary: str, layout: Optional[Layout] = None, mode: str = "kraft",
             version: Tuple[int, int] = (3, 9), age_days: int = 30, metadata_segment_ms: int = 7 * DAY):
    def register(build: Callable[[Simulation], None]) -> Callable[[Simulation], None]:
        CATALOGUE[name] = Scenario(name, summary, build, layout or Layout(), mode, version, age_days,
                                   metadata_segment_ms)
        return build
    return register


# ------------------------------------------------------------------------------------------- shared pieces

def everyday_topics(sim: Simulation, producers: bool = True) -> None:
    """A normal cluster's first days: a few topics, producer-id blocks, idempotent producers writing."""
    sim.create_topic("orders", 6, 3)
    sim.create_topic("payments", 3, 3, configs={"min.insync.replicas": "2"})
    sim.create_topic("inventory", 3, 2, configs={"cleanup.policy": "compact"})
    sim.advance(hours(2))
    if producers:
        block = sim.allocate_producer_ids(sim.broker_ids[0])
        sim.produce("orders", 0, block.first, 12)
        sim.produce("orders", 3, block.first + 1, 7)
        sim.produce("payments", 1, block.first + 2, 5, transactional=True, committed=True)
    sim.advance(days(1))


def expect_replica(sim: Simulation, check: str, broker: int, topic: str, partition: int, topic_id: Optional[bytes],
                   kinds=("partition",), with_topic_id: bool = True) -> Replica:
    log_dir, replica = sim.replica_on(broker, topic, partition, kinds)
    sim.expect(check, broker_id=broker, log_dir=log_dir.name, dir_name=replica.name, topic_name=topic,
               partition=partition, topic_id=uid(topic_id) if (topic_id is not None and with_topic_id) else None)
    return replica


# ------------------------------------------------------------------------------------------- healthy

@scenario("healthy", "4 KRaft brokers, everyday topics, producers, snapshots with retention: no findings")
def healthy(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(10))
    block = sim.allocate_producer_ids(sim.broker_ids[1])
    sim.produce("orders", 2, block.first, 20)
    sim.advance(days(12))
    sim.create_topic("audit", 1, 3)
    sim.advance(hours(6))
    sim.note("Healthy cluster: topics created on day 0 exist only in the metadata snapshot (older segments "
             "were deleted by retention); every replica is where the controller says.")


@scenario("zk-healthy", "3 ZooKeeper-mode brokers (3.9), topics and producer-id blocks: no findings",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="zk")
def zk_healthy(sim: Simulation) -> None:
    sim.start_zk_cluster(controller_id=2)
    for broker in (2, 1, 3):
        sim.allocate_producer_ids(broker)
        sim.advance(30 * SECOND)
    sim.create_topic("orders", 3, 3)
    sim.create_topic("payments", 2, 2)
    sim.create_topic("audit", 1, 2)
    sim.produce("orders", 0, 1, 10)
    sim.advance(days(2))


# ------------------------------------------------------------------------------------------- stale replicas

def _recreate_while_down(sim: Simulation, down: int = 3, also_reassign: bool = False) -> Tuple[bytes, List[int]]:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("clicks", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 1]])
    if also_reassign:
        sim.create_topic("ledger", 2, 3, replicas=[[1, 2, 3], [2, 4, 1]])
    sim.advance_to_before_capture(days(5))  # incidents inside the retained metadata log
    sim.stop_broker(down)
    sim.advance(hours(1))
    if also_reassign:
        sim.reassign("ledger", 0, [1, 2, 4])
    old_id = sim.delete_topic("clicks")
    sim.advance(10 * MINUTE)
    sim.create_topic("clicks", 3, 3)  # placed on unfenced brokers only: never on the down broker
    sim.advance(days(3))
    return old_id, [0, 1, 2]


@scenario("topic-recreated-while-down",
          "topic deleted and re-created while broker 3 was down; broker 3 (still down) keeps the old incarnation")
def topic_recreated_while_down(sim: Simulation) -> None:
    old_id, partitions = _recreate_while_down(sim)
    for p in partitions:
        expect_replica(sim, "STALE_TOPIC_ID", 3, "clicks", p, old_id)
    sim.note("Broker 3 went down before 'clicks' was deleted and re-created with a new topic id; it never saw the "
             "RemoveTopicRecord, so clicks-0/1/2 on its disk hold the old id. Its metadata-log copy stops where it "
             "went down (a valid prefix, not a divergence).")


@scenario("reassigned-while-down",
          "partitions reassigned away from broker 3 while it was down; broker 3 keeps replicas it no longer hosts")
def reassigned_while_down(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("ledger", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 1]])
    sim.advance_to_before_capture(days(5))
    sim.stop_broker(3)
    sim.advance(hours(2))
    sim.reassign("ledger", 0, [1, 2, 4])
    sim.reassign("ledger", 2, [4, 1, 2])
    sim.advance(days(2))
    topic_id = sim.topic_id("ledger")
    for p in (0, 2):
        expect_replica(sim, "STRAY_NOT_ASSIGNED", 3, "ledger", p, topic_id)
    sim.note("ledger-0 and ledger-2 were reassigned off broker 3 while it was down; its copies carry the live id "
             "but broker 3 is no longer a replica. ledger-1 still lists broker 3: a lagging, valid replica.")


@scenario("stray-dirs",
          "broker 3 restarted on 3.9 after a re-create and a reassignment it missed: Kafka renamed 4 dirs -stray")
def stray_dirs(sim: Simulation) -> None:
    _recreate_while_down(sim, also_reassign=True)
    sim.start_broker(3)
    sim.advance(days(1))
    for log_dir, replica in sim.fleet[3].replicas(kinds=("stray",)):
        sim.expect("STRAY_DIR", broker_id=3, log_dir=log_dir.name, dir_name=replica.name, topic_name=replica.topic,
                   partition=replica.partition, topic_id=uid(replica.topic_id))
    sim.note("On restart (3.9) broker 3 found clicks-0/1/2 whose topic id no longer exists and ledger-0 that was "
             "reassigned off it, and renamed them <topic>-<p>.<32hex>-stray (LogManager.isStrayKraftReplica); "
             "Kafka never deletes -stray dirs. The re-created clicks is not assigned to broker 3.")


@scenario("deleted-topic-leftovers",
          "a replica of a topic deleted long ago (beyond metadata retention) restored from a backup: id unknown")
def deleted_topic_leftovers(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("legacy-events", 2, 3, replicas=[[1, 2, 3], [2, 3, 4]])
    sim.advance(days(2))
    _, backup = sim.replica_on(2, "legacy-events", 0)
    old_id = sim.delete_topic("legacy-events")
    sim.advance(days(20))
    # An operator restores broker 2's log dir from a day-3 backup: legacy-events-0 comes back.
    log_dir = sim.fleet[2].log_dirs[0]
    restored = Replica("legacy-events-0", "legacy-events", 0, old_id, "partition", backup.created_ms,
                       backup.bytes_per_day, stopped_ms=backup.created_ms + days(2))
    log_dir.entries[restored.name] = restored
    sim.advance(days(3))
    sim.expect("ORPHAN_REPLICA", broker_id=2, log_dir=log_dir.name, dir_name="legacy-events-0",
               topic_name="legacy-events", partition=0, topic_id=uid(old_id))
    sim.note("legacy-events was created and deleted 3 weeks before the capture; both records fell out of the "
             "retained metadata log and no snapshot holds the topic, so its id is unknown to the controller.")


@scenario("delete-incomplete",
          "topic deleted while broker 4 was down (delete in the retained log); broker 4 still holds its replicas")
def delete_incomplete(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("sessions", 3, 3, replicas=[[1, 2, 4], [2, 4, 3], [4, 3, 1]])
    sim.advance_to_before_capture(days(3))
    sim.stop_broker(4)
    sim.advance(hours(3))
    topic_id = sim.delete_topic("sessions")
    sim.advance(days(2))
    sim.expect("DELETE_INCOMPLETE", broker_id=4, topic_name="sessions", topic_id=uid(topic_id))
    sim.note("RemoveTopicRecord for sessions is in the retained log (2 days before capture); brokers 1-3 renamed "
             "their replicas -delete and removed them 60 s later; broker 4 (down) keeps sessions-0/1/2.")


@scenario("delete-dirs-past-delay",
          "-delete dirs: lingering 3 days on broker 2 (flagged), re-armed by a restart on 3, and fresh ones (not)")
def delete_dirs_past_delay(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("tmp-exports", 2, 3, replicas=[[1, 2, 3], [2, 3, 4]])
    sim.create_topic("tmp-imports", 2, 3, replicas=[[3, 1, 4], [4, 3, 1]])
    sim.create_topic("scratch", 1, 3, replicas=[[1, 2, 4]])
    sim.advance_to_before_capture(days(3))
    sim.fleet.broken_delete |= {2, 3}  # their delete tasks fail (a permission problem): -delete dirs stay
    sim.delete_topic("tmp-exports")
    sim.delete_topic("tmp-imports")
    sim.advance(sim.capture_ms - 5 * MINUTE - sim.now)
    sim.stop_broker(3)
    sim.advance(sim.capture_ms - 30 * SECOND - sim.now)
    sim.start_broker(3)  # fixed by the restart, which re-arms file.delete.delay.ms; the capture is 30 s later
    sim.advance(sim.capture_ms - 20 * SECOND - sim.now)
    sim.delete_topic("scratch")  # 20 s before the capture: within file.delete.delay.ms everywhere
    for log_dir, replica in sim.fleet[2].replicas(kinds=("delete",)):
        if replica.topic == "tmp-exports":
            sim.expect("LINGERING_DELETE_DIR", broker_id=2, log_dir=log_dir.name, dir_name=replica.name,
                       topic_name=replica.topic, partition=replica.partition)
    sim.note("tmp-exports was deleted 3 days before the capture and broker 2 never removed its -delete dirs "
             "(flagged). Broker 3 still has tmp-exports/tmp-imports -delete dirs but restarted 30 s before the "
             "capture, which re-arms file.delete.delay.ms (not flagged). 'scratch' was deleted 20 s before it.")


@scenario("missing-partition-metadata", "a replica dir without partition.metadata on a running 3.9 broker")
def missing_partition_metadata(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("events", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 2]])
    sim.advance(days(5))
    _, replica = sim.replica_on(2, "events", 1)
    replica.pm_missing = True
    sim.advance(days(1))
    expect_replica(sim, "MISSING_PARTITION_METADATA", 2, "events", 1, None)
    sim.note("events-1 on broker 2 lost its partition.metadata; since KAFKA-16814 the next start renames it -stray.")


# (label, file bytes, Kafka's outcome) — the readers' outcomes are asserted in tests with udfs.partition_metadata
def corrupt_variants(topic_id: str) -> List[Tuple[str, bytes, str]]:
    return [
        ("truncated", b"version: 0\ntopic_id: ", partition_metadata.LOG_DIR_OFFLINE),
        ("negative-version", f"version: -1\ntopic_id: {topic_id}".encode(), partition_metadata.LOG_DIR_OFFLINE),
        ("zero-id", b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", partition_metadata.LOG_DIR_OFFLINE),
        ("version-trailing-space", f"version: 0 \ntopic_id: {topic_id}".encode(), partition_metadata.LOG_DIR_OFFLINE),
        ("not-utf8", b"version: 0\ntopic_id: \xff\xfe" + topic_id.encode()[2:], partition_metadata.LOG_DIR_OFFLINE),
        ("empty", b"", partition_metadata.BROKER_START_FAILS),
        ("one-line", b"version: 0\n", partition_metadata.BROKER_START_FAILS),
        ("bad-base64", b"version: 0\ntopic_id: not+a/valid=id!!", partition_metadata.BROKER_START_FAILS),
    ]


def accepted_variants(topic_id: str) -> List[Tuple[str, bytes, str]]:
    """Odd but valid to Kafka: must NOT be flagged."""
    return [
        ("trailing-newline", f"version: 0\ntopic_id: {topic_id}\n".encode(), partition_metadata.OK),
        ("future-version", f"version: 3\ntopic_id: {topic_id}".encode(), partition_metadata.OK),
        ("other-keys", f"v:  0\nid:\t{topic_id}".encode(), partition_metadata.OK),
    ]


@scenario("corrupt-partition-metadata",
          "every partition.metadata corruption Kafka treats differently (log dir offline vs start fails) + accepted odd ones",
          Layout(brokers=4, partitions_per_broker=4))
def corrupt_partition_metadata(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("metrics", 11, 1, replicas=[[1 + i % 4] for i in range(11)])
    sim.advance(days(3))
    topic_id = sim.topic_id("metrics")
    text_id = uid(topic_id)
    variants = corrupt_variants(text_id) + accepted_variants(text_id)
    for p, (label, data, outcome) in enumerate(variants):
        broker = 1 + p % 4
        log_dir, replica = sim.replica_on(broker, "metrics", p)
        replica.pm_content = data
        sim.decode_outcomes.append({"broker_id": broker, "log_dir": log_dir.name, "dir_name": replica.name,
                                    "variant": label, "outcome": outcome})
        if outcome != partition_metadata.OK:
            sim.expect("CORRUPT_PARTITION_METADATA", broker_id=broker, log_dir=log_dir.name, dir_name=replica.name,
                       topic_name="metrics", partition=p)
    sim.advance(days(1))
    sim.note("metrics-0..10 (RF 1) each carry one partition.metadata variant: IOExceptions take the log dir "
             "offline, a NullPointerException / IllegalArgumentException stops the broker; trailing newline, "
             "version 3 and unusual key text are accepted by Kafka and must not be flagged.")


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


# ------------------------------------------------------------------------------------------- producer ids

@scenario("pid-block-overlap", "a ProducerIdsRecord whose block overlaps the previous one (NextProducerId +400)")
def pid_block_overlap(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(4))
    second = sim.allocate_producer_ids(2)
    sim.produce("orders", 1, second.first + 5, 10)
    sim.advance(days(1))
    reg = sim.kraft.image.brokers[3]
    overlapping = sim.kraft.write_producer_ids_record(3, reg.epoch, second.first + 1000 + 400)
    sim.produce("payments", 2, overlapping.first + 605, 10)  # same id as broker 2's block range
    sim.advance(hours(6))
    sim.allocate_producer_ids(1)
    sim.advance(days(1))
    sim.expect("PID_BLOCK_OVERLAP")
    sim.note(f"NextProducerId went {second.first + 1000} -> {overlapping.first + 1000}: still increasing (Kafka's "
             f"replay accepts it) but the implied block {overlapping.first}-{overlapping.last} overlaps broker 2's "
             f"{second.first}-{second.last}. Rule: a record whose NextProducerId rises by less than 1000 overlaps.")


@scenario("pid-regression", "NextProducerId goes backwards (5000 -> 3000)")
def pid_regression(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(4))
    for broker in (2, 3, 4, 1):
        sim.allocate_producer_ids(broker)
        sim.advance(hours(5))
    high = sim.kraft.image.next_producer_id
    reg = sim.kraft.image.brokers[2]
    sim.kraft.write_producer_ids_record(2, reg.epoch, high - 2000)
    sim.advance(days(1))
    sim.expect("PID_BLOCK_REGRESSION")
    sim.expect("PID_BLOCK_OVERLAP", broker_id=2)  # the regressed block is one another broker already holds
    sim.note(f"NextProducerId {high} -> {high - 2000}: the controller would re-issue ids already handed out "
             "(Kafka's replay rejects it; it got into the log through a corrupted/diverged history). The block "
             "it implies is one broker 3 was given before, so it is also an overlap with another owner.")


@scenario("pid-outside-blocks", "a producer id in use (batches + producer snapshot) above every allocated block",
          Layout(brokers=4))
def pid_outside_blocks(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)  # the first block (0..999) is later only visible through the snapshot's NextProducerId
    sim.create_topic("imports", 1, 1, replicas=[[2]])
    sim.advance(days(12))
    block = sim.allocate_producer_ids(3)
    sim.produce("orders", 4, block.first + 3, 6)
    sim.produce("imports", 0, 987654, 25)
    sim.advance(days(10))
    sim.expect("PID_OUTSIDE_BLOCKS", topic_name="imports", partition=0)
    sim.note("imports-0 (RF 1, broker 2) holds batches and producer state of producer id 987654, far above the "
             "allocator's high-water: data copied in from another cluster. Producer ids 0-2 on orders come from a "
             "block whose ProducerIdsRecord is only in the snapshot: not a finding.")


@scenario("pid-migration-reuse",
          "ZooKeeper->KRaft migration on 3.6.0 hands out the last ZooKeeper producer-id block again (KAFKA-15552)",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="migration", version=(3, 6))
def pid_migration_reuse(sim: Simulation) -> None:
    from .migration import migrate

    sim.start_zk_cluster(controller_id=1)
    sim.create_topic("orders", 3, 3)
    sim.create_topic("payments", 2, 2)
    blocks = []
    for broker in (1, 2, 3, 1, 2, 3, 2):
        blocks.append(sim.allocate_producer_ids(broker))
        sim.advance(hours(7))
    last_zk = blocks[-1]
    sim.produce("orders", 0, last_zk.first + 1, 15)
    sim.advance_to_before_capture(days(3))  # the migration's records stay in the retained log
    kraft_block = migrate(sim, buggy=True, allocate_to=1)
    sim.produce("payments", 0, kraft_block.first + 1, 8)
    sim.advance(days(1))
    sim.expect("PID_MIGRATION_REUSE", broker_id=1)
    sim.note(f"The migration wrote NextProducerId = {last_zk.first} (the first id of the last ZooKeeper block, "
             f"{last_zk.first}-{last_zk.last} of broker {last_zk.broker_id}) instead of {last_zk.last + 1}; the KRaft "
             f"controller then gave broker 1 the same block. Producer id {last_zk.first + 1} is in use under both.")


# ------------------------------------------------------------------------------------------- deletes and history

@scenario("delete-create-in-snapshot",
          "deletes whose create is only in the snapshot, or gone with deleted segments: none may be flagged")
def delete_create_in_snapshot(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("archive", 2, 3)
    sim.create_topic("staging", 2, 3)
    sim.advance(sim.capture_ms - sim.now - days(7) - hours(20))
    sim.delete_topic("staging")  # retained segment, but below the log start offset (its create is nowhere)
    sim.advance(days(5))
    sim.delete_topic("archive")  # retained log; its TopicRecord exists only in the snapshot
    sim.advance(days(1))
    sim.note("archive's TopicRecord is only in the snapshot, its RemoveTopicRecord in the log. staging's "
             "RemoveTopicRecord sits in a retained segment below the log start offset and its create is in no "
             "retained file: history is not fully retained, so neither is DELETE_WITHOUT_CREATE.")


@scenario("delete-without-create", "a RemoveTopicRecord for a topic id created nowhere in a fully retained log",
          age_days=5)
def delete_without_create(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(2))
    ghost = kafka_uuid.random_uuid(sim.rng)
    sim.kraft.remove_unknown_topic_id(ghost)
    sim.advance(days(1))
    sim.expect("DELETE_WITHOUT_CREATE", topic_id=uid(ghost))
    sim.note("The cluster is 5 days old: the metadata log is retained from offset 0, so every create is visible. "
             "A RemoveTopicRecord deletes an id no TopicRecord ever created.")


@scenario("zk-delete-stuck", "ZooKeeper delete halted: broker 3 down, /admin/delete_topics/orders stays (Z2 story)",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="zk")
def zk_delete_stuck(sim: Simulation) -> None:
    sim.start_zk_cluster(controller_id=2)
    for broker in (2, 1, 3):
        sim.allocate_producer_ids(broker)
        sim.advance(30 * SECOND)
    sim.create_topic("orders", 3, 3, replicas=[[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    sim.create_topic("payments", 2, 2, replicas=[[2, 3], [3, 1]])
    sim.create_topic("audit", 1, 2, replicas=[[1, 2]])
    sim.produce("orders", 0, 1, 50)
    sim.advance(days(3))
    sim.stop_broker(3)
    sim.advance(3 * SECOND)
    topic_id = sim.delete_topic("orders")
    sim.advance(hours(3))
    sim.expect("ZK_DELETE_STUCK", topic_name="orders", topic_id=uid(topic_id))
    sim.note("Broker 3 stopped, then orders was deleted: the controller halted the deletion (offline replicas); "
             "brokers 1 and 2 removed their -delete dirs a minute later; broker 3 keeps orders-0/1/2 and "
             "/admin/delete_topics/orders and /brokers/topics/orders remain.")


@scenario("topic-id-divergence-disks-only",
          "a capture of the brokers' data dirs only (no metadata log): replicas of clicks disagree on the topic id")
def topic_id_divergence_disks_only(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("clicks", 2, 3, replicas=[[1, 2, 4], [2, 3, 4]])
    old_id = sim.topic_id("clicks")
    sim.advance(days(2))
    sim.stop_broker(4)
    sim.advance(hours(1))
    sim.delete_topic("clicks")
    sim.advance(hours(1))
    sim.create_topic("clicks", 2, 3, replicas=[[1, 2, 4], [2, 3, 4]])
    sim.advance(days(1))
    sim.capture_metadata_log = False  # the copy excluded __cluster_metadata-0: no controller view at all
    for p in (0, 1):
        sim.replica_on(4, "clicks", p)  # still the old incarnation (broker 4 is down)
        sim.expect("TOPIC_ID_DIVERGENCE", topic_name="clicks", partition=p)
    sim.note(f"Broker 4 was down while clicks was deleted and re-created; it keeps id {uid(old_id)} for clicks-0/1, "
             "brokers 1-3 hold the new id. The capture has the data dirs only (no __cluster_metadata-0, no "
             "ZooKeeper), so nothing says which id is current: only the disagreement can be reported.")


@scenario("zk-topic-id-changed",
          "an old tool rewrote /brokers/topics/orders without topic_id; after failover the controller gave a new id",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="zk")
def zk_topic_id_changed(sim: Simulation) -> None:
    sim.start_zk_cluster(controller_id=1)
    sim.allocate_producer_ids(2)
    sim.create_topic("orders", 3, 3, replicas=[[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    sim.create_topic("payments", 2, 2, replicas=[[2, 3], [3, 1]])
    sim.advance(days(4))
    sim.zk.rewrite_without_topic_id("orders")
    sim.advance(hours(2))
    sim.zk.failover(2)
    new_id = sim.topic_id("orders")
    sim.advance(days(1))
    sim.expect("TOPIC_ID_CHANGED_WITHOUT_DELETE", topic_name="orders", topic_id=uid(new_id))
    sim.note("KAFKA-14190 / KAFKA-12835: the topic znode lost its topic_id (v2 format written by a pre-2.8 tool); "
             "the next controller generated a new id. Brokers keep the old id in partition.metadata and answer "
             "INCONSISTENT_TOPIC_ID (state-change.log ERROR). The replicas are live data, not stale.")


@scenario("partition-count-increase", "partitions added to a live keyed topic (KIP-253), in the retained log")
def partition_count_increase(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("clicks", 4, 3)
    sim.advance_to_before_capture(days(2))
    sim.add_partitions("clicks", 8)
    sim.advance(days(1))
    sim.expect("PARTITION_COUNT_CHANGED", topic_name="clicks", topic_id=uid(sim.topic_id("clicks")))
    sim.note("clicks went from 4 to 8 partitions two days before the capture: keyed records now map elsewhere.")


# ------------------------------------------------------------------------------------------- metadata log copies

@scenario("metadata-log-divergence",
          "broker 5's metadata-log copy holds an uncommitted tail of an old epoch; broker 4's is a lagging prefix",
          Layout(brokers=5, min_brokers=5))
def metadata_log_divergence(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(4))
    sim.stop_broker(4)  # lagging copy: a prefix, not a divergence
    sim.advance(days(1))
    # The leader (epoch E) appends two records and loses leadership before they commit; broker 5 had fetched
    # them and dies before it learns of epoch E+1, whose leader starts its epoch at the same offset.
    cut = sim.log.next_offset
    topic = sim.live_topic("orders")
    stale = [("PartitionChangeRecord", sim.kraft.image.partition_record_version(),
              {"partitionId": p, "topicId": uid(topic.topic_id), "isr": [topic.partitions[p].leader]})
             for p in (0, 1)]
    sim.diverged[5] = [(cut + len(stale) - 1, codec.metadata_batch(stale, cut, sim.log.epoch, sim.now + 5))]
    others = [v for v in sim.voters if sim.fleet[v].running and v != sim.log.leader_id]
    sim.clock.tick(3000)
    sim.kraft.elect_leader(others[0])
    sim.stop_broker(5)
    sim.fleet[5].metadata_cut = cut
    sim.advance(days(1))
    sim.expect("METADATA_LOG_DIVERGENCE", broker_id=5)
    sim.note("Broker 5's copy has two PartitionChangeRecords of epoch E at offsets where the others have the new "
             "leader's LeaderChange (epoch E+1). Broker 4 stopped earlier: its copy is shorter, not different.")


@scenario("metadata-log-gap", "broker 4's metadata-log copy lost a middle segment (segments roll every 2 days)",
          Layout(brokers=4), metadata_segment_ms=2 * DAY)
def metadata_log_gap(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(20))
    sim.create_topic("alerts", 2, 3)
    sim.advance(days(5))
    sim.gap_segments[4] = "middle"
    sim.expect("METADATA_LOG_GAP", broker_id=4)
    sim.note("metadata.log.segment.ms is 2 days here; an operator removed one middle segment of broker 4's "
             "__cluster_metadata-0 (a disk clean-up gone wrong). The other copies are complete.")


# ------------------------------------------------------------------------------------------- the demo fleet

@scenario("demo", "6 brokers (2 JBOD), ~10 topics, a handful of findings of every severity: what `make demo` runs",
          Layout(brokers=6, log_dirs=2, partitions_per_broker=8, min_brokers=6, jbod_brokers=(5, 6)))
def demo(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("clicks", 4, 3, replicas=[[1, 4, 5], [2, 4, 6], [3, 4, 1], [4, 5, 6]])
    sim.create_topic("shipments", 3, 3)
    sim.create_topic("ledger", 3, 3, replicas=[[5, 1, 2], [6, 2, 3], [5, 3, 1]])
    sim.create_topic("tmp-exports", 2, 3, replicas=[[1, 2, 3], [2, 3, 6]])
    sim.create_topic("notifications", 6, 2)
    sim.create_topic("user-profiles", 3, 3, replicas=[[1, 2, 3], [2, 3, 6], [3, 1, 5]],
                     configs={"cleanup.policy": "compact"})
    sim.advance_to_before_capture(days(5))  # the incidents stay inside the retained metadata log
    block = sim.allocate_producer_ids(2)
    sim.produce("shipments", 0, block.first + 1, 10)
    # broker 4 goes down; clicks is deleted and re-created meanwhile -> STALE_TOPIC_ID x4 on broker 4
    sim.stop_broker(4)
    sim.advance(hours(1))
    old_clicks = sim.delete_topic("clicks")
    sim.create_topic("clicks", 4, 3)
    # broker 5 goes down; ledger-0 is moved off it; it restarts on 3.9 -> STRAY_DIR
    sim.advance(hours(3))
    sim.stop_broker(5)
    sim.reassign("ledger", 0, [1, 2, 6])
    sim.advance(hours(2))
    sim.start_broker(5)
    sim.advance(hours(20))
    # tmp-exports deleted; broker 2's delete task fails -> LINGERING_DELETE_DIR
    sim.fleet.broken_delete.add(2)  # broker 2's delete task fails: its -delete dirs stay
    sim.delete_topic("tmp-exports")
    sim.advance(hours(16))
    # an overlapping producer-id block
    reg = sim.kraft.image.brokers[3]
    sim.kraft.write_producer_ids_record(3, reg.epoch, sim.kraft.image.next_producer_id + 500)
    sim.advance(hours(16))
    sim.add_partitions("notifications", 8)  # PARTITION_COUNT_CHANGED (info)
    _, replica = sim.replica_on(1, "user-profiles", next(p for p, part in
                                                         sim.live_topic("user-profiles").partitions.items()
                                                         if 1 in part.replicas))
    replica.pm_missing = True
    lost = add_entry(sim, 3, "lost+found", True)
    sim.advance(hours(16))
    for p in range(4):
        if sim.fleet[4].find("clicks", p):
            expect_replica(sim, "STALE_TOPIC_ID", 4, "clicks", p, old_clicks)
    for log_dir, stray in sim.fleet[5].replicas(kinds=("stray",)):
        sim.expect("STRAY_DIR", broker_id=5, log_dir=log_dir.name, dir_name=stray.name, topic_name=stray.topic,
                   partition=stray.partition, topic_id=uid(stray.topic_id))
    for log_dir, gone in sim.fleet[2].replicas(kinds=("delete",)):
        if gone.topic == "tmp-exports":
            sim.expect("LINGERING_DELETE_DIR", broker_id=2, log_dir=log_dir.name, dir_name=gone.name,
                       topic_name="tmp-exports", partition=gone.partition)
    sim.expect("PID_BLOCK_OVERLAP")
    sim.expect("PARTITION_COUNT_CHANGED", topic_name="notifications", topic_id=uid(sim.topic_id("notifications")))
    for log_dir, r in sim.fleet[1].replicas():
        if r is replica:
            sim.expect("MISSING_PARTITION_METADATA", broker_id=1, log_dir=log_dir.name, dir_name=r.name,
                       topic_name=r.topic, partition=r.partition)
    sim.expect("UNKNOWN_LOG_DIR_ENTRY", broker_id=3, log_dir=lost.name, dir_name="lost+found")
    sim.note("Broker 4 is down since clicks was re-created (stale replicas); broker 5 restarted after ledger-0 "
             "moved off it (-stray); broker 2 failed to remove tmp-exports' -delete dirs; a producer-id block "
             "overlaps; notifications grew from 6 to 8 partitions; a user-profiles replica lost partition.metadata; "
             "broker 3 has lost+found in its log dir.")


def names() -> List[str]:
    return list(CATALOGUE)


# registers the production-topology, meta.properties, reassignment, restart-hazard, transaction and
# leader-epoch scenarios
from . import scenarios_ensemble, scenarios_epochs, scenarios_hazards, scenarios_topologies  # noqa: E402,F401
