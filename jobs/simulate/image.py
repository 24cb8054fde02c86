"""The KRaft controller's in-memory image (topics, partitions, brokers, producer ids), as Kafka replays it.

Only the scenario's own topics live here; the scale "background" topics are a pure function of the seed
(:mod:`jobs.simulate.background`) and are added to snapshots lazily, so memory does not grow with size.
``snapshot_records`` follows ``MetadataImage.write`` order: features, cluster, topics, configs, producer ids.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from udfs import kafka_uuid

Record = Tuple[str, int, dict]  # (record type, version, data with Kafka's JSON keys; uuids as 16 raw bytes)

# server-common/.../MetadataVersion.java feature levels of the releases we simulate (each release's last level:
# IBP_4_0_IV3(25), IBP_4_1_IV1(27), IBP_4_2_IV1(29), IBP_4_3_IV0(30))
METADATA_VERSION_LEVEL = {(3, 4): 8, (3, 5): 11, (3, 6): 14, (3, 7): 19, (3, 8): 20, (3, 9): 21,
                          (4, 0): 25, (4, 1): 27, (4, 2): 29, (4, 3): 30}
KAFKA_VERSIONS = tuple(METADATA_VERSION_LEVEL)  # the simulator's kafka_version knob takes one of these
DIRECTORY_ASSIGNMENT_LEVEL = 17  # 3.7-IV2: PartitionRecord v1 (Directories), RegisterBrokerRecord v3
CORDONED_LOG_DIRS_LEVEL = 30  # 4.3-IV0 (KIP-1066): RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3
KRAFT_VERSION_FEATURE_LEVEL = 21  # brokers advertise kraft.version from 3.9 (KIP-853)

MIGRATING_DIR = kafka_uuid.ZERO  # DirectoryId.MIGRATING
UNASSIGNED_DIR = kafka_uuid.ONE  # DirectoryId.UNASSIGNED
LOST_DIR = bytes(15) + b"\x02"  # DirectoryId.LOST


def uid(raw: bytes) -> str:
    return kafka_uuid.to_string(raw)


@dataclass
class PartitionState:
    replicas: List[int]
    isr: List[int]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    directories: List[bytes] = field(default_factory=list)  # one per replica (v1+)
    adding: List[int] = field(default_factory=list)
    removing: List[int] = field(default_factory=list)

    def directory_of(self, broker_id: int) -> Optional[bytes]:
        if broker_id in self.replicas and len(self.directories) == len(self.replicas):
            return self.directories[self.replicas.index(broker_id)]
        return None


@dataclass
class TopicState:
    name: str
    topic_id: bytes
    partitions: Dict[int, PartitionState] = field(default_factory=dict)
    configs: Dict[str, str] = field(default_factory=dict)
    created_ms: int = 0


@dataclass
class BrokerRegistration:
    broker_id: int
    epoch: int
    incarnation_id: bytes
    log_dirs: List[bytes]
    rack: Optional[str]
    host: str
    port: int = 9092
    fenced: bool = True
    in_controlled_shutdown: bool = False
    migrating_zk_broker: bool = False
    registered_ms: int = 0
    cordoned_dirs: List[bytes] = field(default_factory=list)  # KIP-1066 (4.3): CordonedLogDirs


@dataclass
class KraftImage:
    """What a replay of the metadata log up to some offset yields (the scenario's part of it)."""

    metadata_version: int
    topics: Dict[bytes, TopicState] = field(default_factory=dict)
    ids_by_name: Dict[str, bytes] = field(default_factory=dict)
    brokers: Dict[int, BrokerRegistration] = field(default_factory=dict)
    controllers: Dict[int, dict] = field(default_factory=dict)  # RegisterControllerRecord data by controller id
    next_producer_id: int = -1
    broker_configs: Dict[Tuple[str, str], str] = field(default_factory=dict)  # (resourceName, name) -> value
    zk_migration_state: Optional[int] = 0

    def clone(self) -> "KraftImage":
        return copy.deepcopy(self)

    @property
    def uses_directories(self) -> bool:
        return self.metadata_version >= DIRECTORY_ASSIGNMENT_LEVEL

    def topic(self, name: str) -> TopicState:
        return self.topics[self.ids_by_name[name]]

    # ---- record rendering (Kafka's JSON field names; versions as the MetadataVersion writes them) ----

    def register_broker_version(self) -> int:
        if self.metadata_version >= CORDONED_LOG_DIRS_LEVEL:
            return 4  # CordonedLogDirs (null when no dir is cordoned: not written)
        if self.metadata_version >= DIRECTORY_ASSIGNMENT_LEVEL:
            return 3
        return 2 if self.metadata_version >= 8 else 1

    def registration_change_version(self) -> int:
        """The BrokerRegistrationChangeRecord version of a LogDirs change (2: LogDirs; 3 from 4.3: CordonedLogDirs,
        null and so not written when the cordons do not change)."""
        return 3 if self.metadata_version >= CORDONED_LOG_DIRS_LEVEL else 2

    def partition_record_version(self) -> int:
        return 1 if self.uses_directories else 0

    def register_broker_record(self, reg: BrokerRegistration) -> Record:
        version = self.register_broker_version()
        data = {
            "brokerId": reg.broker_id,
            "isMigratingZkBroker": reg.migrating_zk_broker,
            "incarnationId": reg.incarnation_id,
            "brokerEpoch": reg.epoch,
            "endPoints": [{"name": "PLAINTEXT", "host": reg.host, "port": reg.port, "securityProtocol": 0}],
            "features": ([{"name": "kraft.version", "minSupportedVersion": 0, "maxSupportedVersion": 1}]
                         if self.metadata_version >= KRAFT_VERSION_FEATURE_LEVEL else []) + [
                {"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": self.metadata_version},
            ],
            "rack": reg.rack,
            "fenced": reg.fenced,
            "inControlledShutdown": reg.in_controlled_shutdown,
        }
        if version >= 3:
            data["logDirs"] = list(reg.log_dirs)
        if version >= 4 and reg.cordoned_dirs:
            data["cordonedLogDirs"] = list(reg.cordoned_dirs)
        if version < 2:
            del data["isMigratingZkBroker"]
        return ("RegisterBrokerRecord", version, data)

    def partition_record(self, topic: TopicState, pid: int, part: PartitionState) -> Record:
        data = {
            "partitionId": pid,
            "topicId": topic.topic_id,
            "replicas": list(part.replicas),
            "isr": list(part.isr),
            "removingReplicas": list(part.removing),
            "addingReplicas": list(part.adding),
            "leader": part.leader,
            "leaderEpoch": part.leader_epoch,
            "partitionEpoch": part.partition_epoch,
        }
        version = self.partition_record_version()
        if version >= 1:
            data["directories"] = list(part.directories)
        return ("PartitionRecord", version, data)

    def topic_records(self, topic: TopicState) -> Iterator[Record]:
        yield ("TopicRecord", 0, {"name": topic.name, "topicId": topic.topic_id})
        for pid in sorted(topic.partitions):
            yield self.partition_record(topic, pid, topic.partitions[pid])

    def feature_records(self) -> Iterator[Record]:
        yield ("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": self.metadata_version})
        if self.zk_migration_state is not None and self.metadata_version >= 8:
            yield ("ZkMigrationStateRecord", 0, {"zkMigrationState": self.zk_migration_state})

    def config_records(self) -> Iterator[Record]:
        for (resource, name), value in sorted(self.broker_configs.items()):
            yield ("ConfigRecord", 0, {"resourceType": 4, "resourceName": resource, "name": name, "value": value})
        for topic in self.topics.values():
            for name, value in sorted(topic.configs.items()):
                yield ("ConfigRecord", 0, {"resourceType": 2, "resourceName": topic.name, "name": name, "value": value})

    def snapshot_records(self, extra_topics: Iterable[Record] = ()) -> Iterator[Record]:
        """The image as ``MetadataImage.write`` lays it out in a snapshot; ``extra_topics`` adds background topics."""
        yield from self.feature_records()
        for broker_id in sorted(self.brokers):
            yield self.register_broker_record(self.brokers[broker_id])
        for controller_id in sorted(self.controllers):  # ClusterImage writes controllers after brokers
            yield ("RegisterControllerRecord", 0, self.controllers[controller_id])
        yield from extra_topics
        for topic in self.topics.values():
            yield from self.topic_records(topic)
        yield from self.config_records()
        if self.next_producer_id >= 0:
            yield ("ProducerIdsRecord", 0, {"brokerId": -1, "brokerEpoch": -1, "nextProducerId": self.next_producer_id})
