"""The simulated KRaft controller: turns operations into the metadata records Kafka's QuorumController writes.

Rules followed (apache/kafka@1eb7644, metadata/src/main/java/org/apache/kafka/controller/):
- topic ids are ``Uuid.randomUuid()``; a create is one batch ``TopicRecord``, topic ``ConfigRecord``s, one
  ``PartitionRecord`` per partition (placed on unfenced brokers only); ``Directories`` comes from
  ``ClusterControlManager.defaultDir`` (the broker's only dir, else UNASSIGNED until the broker sends
  AssignReplicasToDirs, which becomes a ``PartitionChangeRecord`` with the full ``directories`` list);
- a broker's epoch is the offset of its ``RegisterBrokerRecord``; it registers fenced and is unfenced by a
  ``BrokerRegistrationChangeRecord`` (fenced -1), fenced again with fenced 1;
- ``ProducerIdsRecord`` hands out blocks of 1000; ``NextProducerId`` is the end of the block just given;
- a delete is a single ``RemoveTopicRecord``; a reassignment is three ``PartitionChangeRecord``s (start with
  adding/removing, ISR catch-up, completion); CreatePartitions appends ``PartitionRecord``s to a live topic.
Every change is also returned as a :class:`Delta` so the simulated brokers can react like Kafka's do.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from udfs import kafka_uuid

from . import partition_rules
from .background import Background, BrokerEvent, FlapRounds, apply_op
from .clock import Clock
from .image import (
    CORDONED_LOG_DIRS_LEVEL,
    METADATA_VERSION_LEVEL,
    UNASSIGNED_DIR,
    BrokerRegistration,
    KraftImage,
    PartitionState,
    Record,
    TopicState,
)
from .metalog import MetadataLog

PRODUCER_ID_BLOCK_SIZE = 1000


@dataclass
class Delta:
    """Something brokers react to: ``assign``/``unassign`` one replica, or ``remove_topic``."""

    kind: str
    topic: str
    topic_id: bytes
    partition: int = -1
    broker: int = -1
    directory: Optional[bytes] = None
    replicas: Tuple[int, ...] = ()


@dataclass
class ProducerIdBlock:
    broker_id: int
    first: int
    size: int
    source: str  # kraft | zk | migration
    time_ms: int
    offset: Optional[int] = None  # metadata log offset of the record that handed it out

    @property
    def last(self) -> int:
        return self.first + self.size - 1


class KraftController:
    def __init__(self, log: MetadataLog, clock: Clock, rng: random.Random, version: Tuple[int, int],
                 voters: Sequence[int], background: Optional[Background] = None, migration_state: int = 0):
        self.log = log
        self.clock = clock
        self.rng = rng
        self.version = version
        self.voters = list(voters)
        self.image = KraftImage(METADATA_VERSION_LEVEL[version], zk_migration_state=migration_state)
        self.background = background
        self.blocks: List[ProducerIdBlock] = []
        self.removed: Dict[bytes, Tuple[str, int, int]] = {}  # topic id -> (name, offset, time) of RemoveTopicRecord
        self.created: Dict[bytes, Tuple[str, int, int]] = {}  # topic id -> (name, offset, time) of TopicRecord
        self.partition_increases: List[Tuple[str, bytes, int, int, int]] = []  # name, id, from, to, time

    # ---- plumbing ----

    def _append(self, records: List[Record]) -> int:
        return self.log.append(records, self.clock.tick())

    @property
    def now(self) -> int:
        return self.clock.now

    def live_brokers(self) -> List[int]:
        return sorted(b for b, reg in self.image.brokers.items() if not reg.fenced)

    # ---- quorum and bootstrap ----

    def elect_leader(self, leader_id: int) -> None:
        self.log.leader_change(leader_id, self.voters, self.clock.tick())

    def bootstrap(self) -> None:
        """The records ``kafka-storage format`` bootstraps the first active controller with."""
        self._append([
            ("BeginTransactionRecord", 0, {"name": "Bootstrap records"}),
            ("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": self.image.metadata_version}),
            *([("ZkMigrationStateRecord", 0, {"zkMigrationState": self.image.zk_migration_state})]
              if self.image.metadata_version >= 8 else []),
            ("EndTransactionRecord", 0, {}),
        ])

    def set_broker_config(self, resource: str, name: str, value: str) -> None:
        self.image.broker_configs[(resource, name)] = value
        self._append([("ConfigRecord", 0, {"resourceType": 4, "resourceName": resource, "name": name, "value": value})])

    # ---- brokers ----

    def register(self, broker_id: int, log_dirs: List[bytes], rack: Optional[str], host: str,
                 migrating_zk: bool = False) -> int:
        """RegisterBrokerRecord (fenced); the broker epoch is the record's offset."""
        epoch = self.log.next_offset
        reg = BrokerRegistration(broker_id, epoch, kafka_uuid.random_uuid(self.rng), list(log_dirs), rack, host,
                                 fenced=True, migrating_zk_broker=migrating_zk, registered_ms=self.now)
        self.image.brokers[broker_id] = reg
        self._append([self.image.register_broker_record(reg)])
        return epoch

    def register_controller(self, controller_id: int, host: str) -> None:
        """RegisterControllerRecord (KIP-919): what a dedicated controller writes when it joins the quorum."""
        data = {
            "controllerId": controller_id, "incarnationId": kafka_uuid.random_uuid(self.rng),
            "zkMigrationReady": False,
            "endPoints": [{"name": "CONTROLLER", "host": host, "port": 9093, "securityProtocol": 0}],
            "features": [{"name": "metadata.version", "minSupportedVersion": 1,
                          "maxSupportedVersion": self.image.metadata_version}]}
        self.image.controllers[controller_id] = data  # snapshots carry it too, as Kafka's do
        self._append([("RegisterControllerRecord", 0, data)])

    def log_dir_offline(self, broker_id: int, directory_id: bytes, remaining: List[bytes]) -> None:
        """A broker reported a failed dir (heartbeat OfflineLogDirs): leadership and ISR move off the partitions
        assigned to it (handleDirectoriesOffline), and the registration's LogDirs lose it."""
        reg = self.image.brokers[broker_id]
        down = {b for b, r in self.image.brokers.items() if r.fenced}
        records: List[Record] = []
        for topic in self.image.topics.values():
            for pid in sorted(topic.partitions):
                part = topic.partitions[pid]
                if part.directory_of(broker_id) != directory_id:
                    continue
                change = partition_rules.broker_down(part, broker_id, down)
                if change:
                    records.append(self._change_record(topic.topic_id, pid, change))
        reg.log_dirs = list(remaining)
        records.append(("BrokerRegistrationChangeRecord", self.image.registration_change_version(),
                        {"brokerId": broker_id, "brokerEpoch": reg.epoch, "logDirs": list(remaining)}))
        self._append(records)

    def cordon(self, broker_id: int, cordoned: List[bytes], paths: str) -> None:
        """``cordoned.log.dirs`` set on a running 4.3 broker (KIP-1066): the broker config (ConfigRecord), then the
        broker reports the dirs and the controller records them (BrokerRegistrationChangeRecord v3
        CordonedLogDirs, the whole current list)."""
        if self.image.metadata_version < CORDONED_LOG_DIRS_LEVEL:
            raise ValueError("cordoning log dirs needs Kafka 4.3 (metadata.version 4.3-IV0)")
        reg = self.image.brokers[broker_id]
        reg.cordoned_dirs = list(cordoned)
        self.set_broker_config(str(broker_id), "cordoned.log.dirs", paths)
        self._append([("BrokerRegistrationChangeRecord", self.image.registration_change_version(),
                       {"brokerId": broker_id, "brokerEpoch": reg.epoch, "cordonedLogDirs": list(cordoned)})])

    def unregister(self, broker_id: int) -> None:
        """UnregisterBrokerRecord: the broker leaves the cluster's registrations (kafka-cluster remove)."""
        reg = self.image.brokers.pop(broker_id)
        self._append([("UnregisterBrokerRecord", 0, {"brokerId": broker_id, "brokerEpoch": reg.epoch})])

    def unfence(self, broker_id: int) -> None:
        reg = self.image.brokers[broker_id]
        reg.fenced = False
        self._append([("BrokerRegistrationChangeRecord", 0,
                       {"brokerId": broker_id, "brokerEpoch": reg.epoch, "fenced": -1})])

    def fence(self, broker_id: int) -> None:
        reg = self.image.brokers[broker_id]
        reg.fenced = True
        self._append([("BrokerRegistrationChangeRecord", 0,
                       {"brokerId": broker_id, "brokerEpoch": reg.epoch, "fenced": 1})])

    def broker_lost(self, broker_id: int) -> None:
        """A broker stopped: leadership and ISR move off it (scenario and background partitions), then fenced."""
        down = {b for b, reg in self.image.brokers.items() if reg.fenced} | {broker_id}
        records: List[Record] = []
        for topic in self.image.topics.values():
            for pid in sorted(topic.partitions):
                change = partition_rules.broker_down(topic.partitions[pid], broker_id, down)
                if change:
                    records.append(self._change_record(topic.topic_id, pid, change))
        self._append_stream(itertools.chain(records, self._background_changes(BrokerEvent(broker_id, up=False))))
        self.fence(broker_id)

    def broker_back(self, broker_id: int, log_dirs: List[bytes], rack: Optional[str], host: str) -> int:
        """A restarted broker registers (new epoch), is unfenced once caught up, rejoins ISRs and leads again."""
        epoch = self.register(broker_id, log_dirs, rack, host)
        self.unfence(broker_id)
        records: List[Record] = []
        for topic in self.image.topics.values():
            for pid in sorted(topic.partitions):
                for change in partition_rules.broker_up(topic.partitions[pid], broker_id):
                    records.append(self._change_record(topic.topic_id, pid, change))
        self._append_stream(itertools.chain(records, self._background_changes(BrokerEvent(broker_id, up=True))))
        return epoch

    def _append_stream(self, records: Iterable[Record], chunk: int = 10_000) -> int:
        """Append a long run of records in batches without holding them all (background changes at scale)."""
        buffer: List[Record] = []
        written = 0
        for record in records:
            buffer.append(record)
            if len(buffer) >= chunk:
                self._append(buffer)
                written += len(buffer)
                buffer = []
        if buffer:
            self._append(buffer)
            written += len(buffer)
        return written

    def _background_changes(self, op: object) -> Iterator[Record]:
        """Apply one op to every background partition (state replayed) and yield the change records.

        The op joins the background's history once every partition has been visited.
        """
        bg = self.background
        if bg is None or not bg.total_partitions:
            if bg is not None:
                bg.ops.append(op)
            return
        upto = len(bg.ops)
        down_before = self._down_before(upto)
        uses_dirs = self.image.uses_directories
        for topic, p, flat in bg.partitions():
            if isinstance(op, BrokerEvent) and op.broker not in bg.replicas(topic, p):
                continue
            part = bg.state(topic, p, uses_dirs, upto, flat)
            for change in apply_op(bg, part, op, set(down_before), flat):
                yield self._change_record(topic.topic_id, p, change)
        bg.ops.append(op)

    def _down_before(self, upto: int) -> set:
        down: set = set()
        for op in self.background.ops[:upto]:
            if isinstance(op, BrokerEvent):
                (down.discard if op.up else down.add)(op.broker)
        return down

    def isr_flaps(self, rounds: int) -> int:
        """Padding that changes nothing lasting: ``rounds`` ISR shrink+expand pairs on background partitions."""
        bg = self.background
        if bg is None or not bg.total_partitions or rounds <= 0:
            return 0
        op = FlapRounds(bg.flap_rounds, rounds)
        written = self._append_stream(self._background_changes(op))
        bg.flap_rounds += rounds
        return written

    def noops(self, count: int) -> None:
        """NoOpRecords (written every metadata.max.idle.interval.ms when nothing else happens)."""
        for start in range(0, count, 2000):
            self._append([("NoOpRecord", 0, {})] * min(2000, count - start))

    # ---- topics ----

    def _change_record(self, topic_id: bytes, pid: int, change: dict) -> Record:
        data: dict = {"partitionId": pid, "topicId": topic_id}
        data.update(change)
        if "directories" in data:
            data["directories"] = list(data["directories"])
        return ("PartitionChangeRecord", self.image.partition_record_version(), data)

    def default_dir(self, broker_id: int) -> bytes:
        reg = self.image.brokers.get(broker_id)
        if reg is None:
            return UNASSIGNED_DIR
        if not reg.log_dirs:
            return kafka_uuid.ZERO  # MIGRATING
        return reg.log_dirs[0] if len(reg.log_dirs) == 1 else UNASSIGNED_DIR

    def place(self, partitions: int, rf: int, first_partition: int = 0) -> List[List[int]]:
        """Striped placement over unfenced brokers (StripedReplicaPlacer, rack-unaware)."""
        live = self.live_brokers()
        if len(live) < rf:
            raise ValueError(f"cannot place replication factor {rf} on {len(live)} unfenced broker(s)")
        start = self.rng.randrange(len(live))
        out = []
        for p in range(first_partition, first_partition + partitions):
            out.append([live[(start + p + j) % len(live)] for j in range(rf)])
        return out

    def create_topic(self, name: str, partitions: int = 1, rf: int = 3, replicas: Optional[List[List[int]]] = None,
                     configs: Optional[Dict[str, str]] = None, topic_id: Optional[bytes] = None
                     ) -> Tuple[TopicState, List[Delta]]:
        if name in self.image.ids_by_name:
            raise ValueError(f"topic {name!r} already exists")
        assignment = replicas if replicas is not None else self.place(partitions, rf)
        topic = TopicState(name, topic_id or kafka_uuid.random_uuid(self.rng), configs=dict(configs or {}),
                           created_ms=self.now)
        records: List[Record] = [("TopicRecord", 0, {"name": name, "topicId": topic.topic_id})]
        for key, value in sorted(topic.configs.items()):
            records.append(("ConfigRecord", 0, {"resourceType": 2, "resourceName": name, "name": key, "value": value}))
        deltas: List[Delta] = []
        for pid, reps in enumerate(assignment):
            part = PartitionState(list(reps), list(reps), reps[0],
                                  directories=[self.default_dir(b) for b in reps] if self.image.uses_directories else [])
            topic.partitions[pid] = part
            records.append(self.image.partition_record(topic, pid, part))
            deltas += [Delta("assign", name, topic.topic_id, pid, b, part.directory_of(b)) for b in reps]
        offset = self._append(records)
        self.image.topics[topic.topic_id] = topic
        self.image.ids_by_name[name] = topic.topic_id
        self.created[topic.topic_id] = (name, offset, self.log.last_ts)
        return topic, deltas

    def assign_directories(self, assignments: List[Tuple[bytes, int, int, bytes]]) -> None:
        """AssignReplicasToDirs from brokers: (topic id, partition, broker, directory id) -> change records."""
        records: List[Record] = []
        touched: Dict[Tuple[bytes, int], PartitionState] = {}
        for topic_id, pid, broker, directory in assignments:
            topic = self.image.topics.get(topic_id)
            if topic is None or pid not in topic.partitions or not self.image.uses_directories:
                continue
            part = topic.partitions[pid]
            if broker in part.replicas and part.directories[part.replicas.index(broker)] != directory:
                part.directories[part.replicas.index(broker)] = directory
                touched[(topic_id, pid)] = part
        for (topic_id, pid), part in touched.items():
            part.partition_epoch += 1
            records.append(self._change_record(topic_id, pid, {"directories": list(part.directories)}))
        if records:
            self._append(records)

    def delete_topic(self, name: str) -> List[Delta]:
        topic_id = self.image.ids_by_name.pop(name)
        topic = self.image.topics.pop(topic_id)
        offset = self._append([("RemoveTopicRecord", 0, {"topicId": topic_id})])
        self.removed[topic_id] = (name, offset, self.log.last_ts)
        return [Delta("remove_topic", name, topic_id, pid, b) for pid, part in topic.partitions.items()
                for b in part.replicas]

    def remove_unknown_topic_id(self, topic_id: bytes) -> int:
        """A RemoveTopicRecord for an id that was never created (a diverged/corrupted history)."""
        offset = self._append([("RemoveTopicRecord", 0, {"topicId": topic_id})])
        self.removed[topic_id] = ("", offset, self.log.last_ts)
        return offset

    def reassign(self, name: str, pid: int, target: List[int]) -> List[Delta]:
        """KIP-455 in KRaft: start (replicas = target + removing), adding catch up, completion."""
        topic = self.image.topic(name)
        part = topic.partitions[pid]
        current = list(part.replicas)
        adding = [b for b in target if b not in current]
        removing = [b for b in current if b not in target]
        merged = list(target) + removing
        dirs = self.image.uses_directories

        def dirs_for(replicas: List[int]) -> List[bytes]:
            return [part.directory_of(b) or self.default_dir(b) for b in replicas]

        start: dict = {"replicas": merged, "removingReplicas": removing, "addingReplicas": adding}
        if dirs:
            start["directories"] = dirs_for(merged)
        part.replicas, part.removing, part.adding = merged, removing, adding
        if dirs:
            part.directories = start["directories"]
        part.partition_epoch += 1
        deltas = [Delta("assign", name, topic.topic_id, pid, b, part.directory_of(b)) for b in adding]
        self._append([self._change_record(topic.topic_id, pid, dict(start))])
        self._pending = (name, pid, target, removing)
        return deltas

    def complete_reassignment(self, name: str, pid: int, target: List[int], removing: List[int]) -> List[Delta]:
        topic = self.image.topic(name)
        part = topic.partitions[pid]
        records: List[Record] = []
        caught_up = [r for r in part.replicas if r in part.isr or r in part.adding]
        if caught_up != part.isr:
            part.isr = caught_up
            part.partition_epoch += 1
            records.append(self._change_record(topic.topic_id, pid, {"isr": list(caught_up)}))
        final: dict = {"replicas": list(target), "isr": [r for r in target if r in part.isr],
                       "removingReplicas": [], "addingReplicas": []}
        if part.leader not in target:
            final["leader"] = final["isr"][0]
            part.leader = final["leader"]
            part.leader_epoch += 1
        if self.image.uses_directories:
            final["directories"] = [part.directory_of(b) or self.default_dir(b) for b in target]
            part.directories = list(final["directories"])
        part.replicas, part.isr, part.removing, part.adding = list(target), list(final["isr"]), [], []
        part.partition_epoch += 1
        records.append(self._change_record(topic.topic_id, pid, final))
        self._append(records)
        return [Delta("unassign", name, topic.topic_id, pid, b) for b in removing]

    def add_partitions(self, name: str, new_count: int) -> List[Delta]:
        """CreatePartitions: PartitionRecords for the new partitions of a live topic (KIP-253 hazard)."""
        topic = self.image.topic(name)
        old = len(topic.partitions)
        rf = len(topic.partitions[0].replicas)
        assignment = self.place(new_count - old, rf, first_partition=old)
        records: List[Record] = []
        deltas: List[Delta] = []
        for i, reps in enumerate(assignment):
            pid = old + i
            part = PartitionState(list(reps), list(reps), reps[0],
                                  directories=[self.default_dir(b) for b in reps] if self.image.uses_directories else [])
            topic.partitions[pid] = part
            records.append(self.image.partition_record(topic, pid, part))
            deltas += [Delta("assign", name, topic.topic_id, pid, b, part.directory_of(b)) for b in reps]
        self._append(records)
        self.partition_increases.append((name, topic.topic_id, old, new_count, self.log.last_ts))
        return deltas

    # ---- producer ids ----

    def allocate_producer_ids(self, broker_id: int) -> ProducerIdBlock:
        """ProducerIdControlManager.generateNextProducerId: block starts at the current NextProducerId."""
        reg = self.image.brokers[broker_id]
        first = max(0, self.image.next_producer_id)
        block = ProducerIdBlock(broker_id, first, PRODUCER_ID_BLOCK_SIZE, "kraft", self.now)
        block.offset = self._append([("ProducerIdsRecord", 0, {"brokerId": broker_id, "brokerEpoch": reg.epoch,
                                                               "nextProducerId": first + PRODUCER_ID_BLOCK_SIZE})])
        self.image.next_producer_id = first + PRODUCER_ID_BLOCK_SIZE
        self.blocks.append(block)
        return block

    def write_producer_ids_record(self, broker_id: int, broker_epoch: int, next_producer_id: int,
                                  source: str = "kraft") -> ProducerIdBlock:
        """A ProducerIdsRecord with an arbitrary NextProducerId (migration, or a corrupted/diverged history)."""
        block = ProducerIdBlock(broker_id, next_producer_id - PRODUCER_ID_BLOCK_SIZE, PRODUCER_ID_BLOCK_SIZE,
                                source, self.now)
        block.offset = self._append([("ProducerIdsRecord", 0, {"brokerId": broker_id, "brokerEpoch": broker_epoch,
                                                               "nextProducerId": next_producer_id})])
        self.image.next_producer_id = next_producer_id
        self.blocks.append(block)
        return block

    # ---- snapshots ----

    def snapshot_source(self):
        """A frozen view of the image now, rendered as snapshot records later (background replayed lazily)."""
        image = self.image.clone()
        bg = self.background
        upto = len(bg.ops) if bg is not None else 0

        def records() -> Iterator[Record]:
            return image.snapshot_records(self._background_records(image, upto))
        return records

    def _background_records(self, image: KraftImage, upto: int) -> Iterator[Record]:
        bg = self.background
        if bg is None:
            return
        current = None
        for topic, p, flat in bg.partitions():
            if topic is not current:
                current = topic
                yield ("TopicRecord", 0, {"name": topic.name, "topicId": topic.topic_id})
            part = bg.state(topic, p, image.uses_directories, upto, flat)
            yield image.partition_record(TopicState(topic.name, topic.topic_id), p, part)

    def background_creation(self, topics_per_batch: int = 1) -> Iterator[int]:
        """Create the background topics (one batch per topic, as CreateTopics does), then assign directories.

        Yields the number of records written per topic so callers can spread creation over time.
        """
        bg = self.background
        if bg is None:
            return
        uses_dirs = self.image.uses_directories
        for topic in bg.topics():
            records: List[Record] = [("TopicRecord", 0, {"name": topic.name, "topicId": topic.topic_id})]
            assign: List[Record] = []
            state = TopicState(topic.name, topic.topic_id)
            for p in range(topic.partitions):
                part = bg.initial_state(topic, p, uses_dirs)
                records.append(self.image.partition_record(state, p, part))
                if uses_dirs and bg.needs_assignment(part.replicas):
                    dirs = [bg.directory(topic, p, b)[1] for b in part.replicas]
                    assign.append(self._change_record(topic.topic_id, p, {"directories": dirs}))
            self._append(records)
            if assign:
                self._append(assign)
            yield len(records) + len(assign)
