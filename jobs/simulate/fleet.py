"""Brokers and their log dirs as Kafka leaves them: what each broker's disk holds at any simulated moment.

A running broker follows the controller at once (creates replica dirs it is assigned, renames removed ones
``<topic>-<p>.<32hex>-delete`` and deletes them ``file.delete.delay.ms`` later). A down broker misses all of
that: its disk keeps the old dirs until it restarts, and on restart it does what its Kafka version does
(kafka-formats.md §8): KRaft >= 3.7 renames stray replicas ``-stray`` and keeps them forever, KRaft < 3.7
deletes them, ZooKeeper brokers do nothing by themselves. Only scenario topics live here; background
replicas are streamed by the writer.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from . import codec
from .clock import DAY, MINUTE

FILE_DELETE_DELAY_MS = 60_000  # file.delete.delay.ms default


@dataclass
class ProducerBatch:
    """A real record batch with a producer id that the writer encodes into the replica's last segment."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int
    timestamp_ms: int
    transactional: bool = False
    committed: Optional[bool] = None  # transactional: COMMIT / ABORT marker after it, None = still open
    coordinator_epoch: int = 0


@dataclass
class Replica:
    """One replica directory (normal, ``-delete``, ``-stray`` or ``-future``) of a scenario topic."""

    name: str
    topic: str
    partition: int
    topic_id: Optional[bytes]
    kind: str  # partition | delete | stray | future
    created_ms: int
    bytes_per_day: int
    stopped_ms: Optional[int] = None  # stopped receiving data (deleted, renamed, broker down, reassigned away)
    renamed_ms: Optional[int] = None
    delete_due_ms: Optional[int] = None  # for -delete dirs: when the broker's delete task would run
    pm_content: Optional[bytes] = None  # partition.metadata bytes when not the normal ones (corrupt variants)
    pm_missing: bool = False
    producer_batches: List[ProducerBatch] = field(default_factory=list)
    leader_epoch: int = 0
    lag_ms: int = 0  # a lagging follower is this far behind the leader
    # restart hazards written on purpose: checkpoint name -> offset relative to the log end (log-start /
    # recovery-point entries of this dir), and a newest segment cut short of its index by this many bytes
    checkpoint_offsets: Dict[str, int] = field(default_factory=dict)
    cut_short_bytes: int = 0
    epoch_content: Optional[bytes] = None  # leader-epoch-checkpoint bytes when not the partition's history

    def is_current(self) -> bool:
        return self.kind == "partition"


@dataclass
class OtherEntry:
    """Anything in a log dir that Kafka did not put there (or a file Kafka ignores)."""

    name: str
    is_dir: bool
    content: bytes = b""
    mtime_ms: int = 0
    children: Dict[str, bytes] = field(default_factory=dict)


Entry = Union[Replica, OtherEntry]


@dataclass
class LogDir:
    name: str  # basename in the capture, e.g. kafka-logs-a
    directory_id: Optional[bytes]
    cluster_id: str
    node_id: int
    meta_version: int
    created_ms: int
    entries: Dict[str, Entry] = field(default_factory=dict)
    registered: bool = True  # part of the broker's registration (LogDirs)
    holds_background: bool = True
    holds_metadata_log: bool = False
    meta_written_ms: int = 0
    dead: bool = False  # the disk failed: Kafka cannot read it, its entries stay frozen; a 0-byte file in the capture
    extra_checkpoint_entries: List[Tuple[str, str, int, int]] = field(default_factory=list)  # (file, topic, p, offset)
    # when LogManager last wrote the offset checkpoints (None: the broker's last write); a broker captured within
    # log.flush.offset.checkpoint.interval.ms of its start still has the files of its previous run
    checkpoints_written_ms: Optional[int] = None


@dataclass
class Broker:
    broker_id: int
    host: str
    rack: Optional[str]
    version: Tuple[int, int]
    mode: str  # kraft | zk | migration
    log_dirs: List[LogDir]
    is_voter: bool = False
    running: bool = True
    captured: bool = True  # False: "absent", its disks are not in the capture
    down_since_ms: Optional[int] = None
    registered_ms: int = 0
    epoch: int = -1
    metadata_cut: Optional[int] = None  # offset its metadata log copy ends at (down brokers)
    clean_shutdown: bool = True
    notes: List[str] = field(default_factory=list)
    role: str = "broker"  # broker | controller (a dedicated controller: one metadata dir, no replicas)
    unregistered: bool = False  # decommissioned: UnregisterBrokerRecord written, its disks left as they were

    @property
    def folder(self) -> str:
        """The node's folder in a capture: broker-<id> or controller-<id>."""
        return f"{'controller' if self.role == 'controller' else 'broker'}-{self.broker_id}"

    def dir_by_id(self, directory_id: bytes) -> Optional[LogDir]:
        return next((d for d in self.log_dirs if d.directory_id == directory_id), None)

    def readable_dirs(self) -> List[LogDir]:
        """The dirs Kafka can see (a failed disk's dir is offline)."""
        return [d for d in self.log_dirs if not d.dead]

    def registered_dirs(self) -> List[LogDir]:
        return [d for d in self.log_dirs if d.registered]

    def find(self, topic: str, partition: int, kinds=("partition",)) -> List[Tuple[LogDir, Replica]]:
        out = []
        for d in self.readable_dirs():
            for entry in d.entries.values():
                if isinstance(entry, Replica) and entry.topic == topic and entry.partition == partition \
                        and entry.kind in kinds:
                    out.append((d, entry))
        return out

    def replicas(self, kinds=("partition",)) -> List[Tuple[LogDir, Replica]]:
        return [(d, e) for d in self.readable_dirs() for e in list(d.entries.values())
                if isinstance(e, Replica) and e.kind in kinds]


class Fleet:
    """All brokers' disks; the controllers call these hooks as Kafka's brokers would react."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.brokers: Dict[int, Broker] = {}
        self.broken_delete: set = set()  # brokers whose delete task fails (e.g. permissions): -delete dirs stay

    def add(self, broker: Broker) -> Broker:
        self.brokers[broker.broker_id] = broker
        return broker

    def __getitem__(self, broker_id: int) -> Broker:
        return self.brokers[broker_id]

    def running(self) -> List[Broker]:
        return [b for b in self.brokers.values() if b.running]

    def unique_hex(self) -> str:
        """``UUID.randomUUID().toString().replace("-", "")``, from the simulation's seed."""
        return codec.new_unique_id(self.rng)

    # ---- replica lifecycle on one broker ----

    def create_replica(self, broker: Broker, topic: str, partition: int, topic_id: Optional[bytes], now: int,
                       bytes_per_day: int, directory_id: Optional[bytes] = None) -> Optional[Tuple[LogDir, Replica]]:
        """``LogManager.getOrCreateLog``: in the assigned dir if it names one, else the least-loaded dir; None
        when the assigned dir is offline ("Skipping creation of log because there are potentially offline log
        directories")."""
        existing = broker.find(topic, partition)
        if existing:
            return existing[0]
        target = broker.dir_by_id(directory_id) if directory_id is not None else None
        if target is not None and target.dead:
            return None
        if target is None:
            candidates = broker.registered_dirs() or broker.log_dirs
            target = min(candidates, key=lambda d: (sum(isinstance(e, Replica) for e in d.entries.values()),
                                                    candidates.index(d)))
        name = codec.partition_dir_name(topic, partition)
        replica = Replica(name, topic, partition, topic_id, "partition", now, bytes_per_day)
        target.entries[name] = replica
        return target, replica

    def rename(self, log_dir: LogDir, replica: Replica, kind: str, now: int) -> Replica:
        """Rename a replica dir to ``-delete`` / ``-stray`` / ``-future`` (Kafka's names, 255-char cap)."""
        del log_dir.entries[replica.name]
        unique = self.unique_hex()
        if kind == "delete":
            replica.name = codec.delete_dir_name(replica.topic, replica.partition, unique)
            replica.delete_due_ms = now + FILE_DELETE_DELAY_MS
        elif kind == "stray":
            replica.name = codec.stray_dir_name(replica.topic, replica.partition, unique)
        elif kind == "future":
            replica.name = codec.future_dir_name(replica.topic, replica.partition, unique)
        else:  # pragma: no cover - programming error
            raise ValueError(f"unknown rename kind {kind!r}")
        replica.kind = kind
        replica.renamed_ms = now
        if replica.stopped_ms is None:
            replica.stopped_ms = now
        log_dir.entries[replica.name] = replica
        return replica

    def delete_replica(self, broker: Broker, topic: str, partition: int, topic_id: Optional[bytes], now: int) -> None:
        """``ReplicaManager`` stop-replica with delete: rename ``-delete`` (only the replica with that id)."""
        for log_dir, replica in broker.find(topic, partition, kinds=("partition", "future")):
            if topic_id is None or replica.topic_id == topic_id:
                self.rename(log_dir, replica, "delete", now)

    def run_delete_tasks(self, now: int) -> None:
        """Running brokers delete their ``-delete`` dirs once ``file.delete.delay.ms`` passed."""
        for broker in self.brokers.values():
            if not broker.running or broker.broker_id in self.broken_delete:
                continue
            for log_dir in broker.log_dirs:
                for name, entry in list(log_dir.entries.items()):
                    if isinstance(entry, Replica) and entry.kind == "delete" and entry.delete_due_ms is not None \
                            and entry.delete_due_ms <= now:
                        del log_dir.entries[name]

    def next_delete_due(self) -> Optional[int]:
        """When the next ``-delete`` dir of a running broker comes due (None if none will)."""
        due = [e.delete_due_ms for b in self.brokers.values() if b.running and b.broker_id not in self.broken_delete
               for d in b.log_dirs for e in d.entries.values()
               if isinstance(e, Replica) and e.kind == "delete" and e.delete_due_ms is not None]
        return min(due) if due else None

    def stop(self, broker: Broker, now: int, clean: bool = True) -> None:
        broker.running = False
        broker.down_since_ms = now
        broker.clean_shutdown = clean
        for _, replica in broker.replicas(kinds=("partition", "future")):
            if replica.stopped_ms is None:
                replica.stopped_ms = now

    def resume_data(self, broker: Broker, now: int) -> None:
        """A restarted broker's replicas catch up and grow again (modelled as a restart of their clock)."""
        for _, replica in broker.replicas(kinds=("partition", "future")):
            if replica.stopped_ms is not None:
                replica.lag_ms = 0
                replica.stopped_ms = None

    def restart_delete_timers(self, broker: Broker, now: int) -> None:
        """``LogManager.loadLogs`` re-schedules every ``-delete`` dir ``file.delete.delay.ms`` after start."""
        for _, replica in broker.replicas(kinds=("delete",)):
            replica.delete_due_ms = now + FILE_DELETE_DELAY_MS


def default_bytes_per_day(rng: random.Random) -> int:
    """A scenario topic's write rate per partition (bytes/day): 10 MiB .. 512 MiB, log-uniform."""
    return int(math.exp(rng.uniform(math.log(10 << 20), math.log(512 << 20))))


def replica_size(replica: Replica, capture_ms: int, retention_ms: int = 7 * DAY) -> Tuple[int, int, int]:
    """(bytes on disk, log start offset, log end offset) at capture time, from its write rate and lifetime."""
    end = replica.stopped_ms if replica.stopped_ms is not None else capture_ms
    end = max(replica.created_ms, end - replica.lag_ms)
    lived = max(0, end - replica.created_ms)
    written = replica.bytes_per_day * lived // DAY
    kept = replica.bytes_per_day * min(lived, retention_ms) // DAY
    per_record = 900
    leo = written // per_record + len(replica.producer_batches) * 8
    log_start = (written - kept) // per_record
    if lived < 10 * MINUTE:
        kept = min(kept, 64 << 10)
    return kept, log_start, leo
