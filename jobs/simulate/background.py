"""Scale "background" topics: a healthy fleet computed from the seed, never held in memory.

Topic ``i`` (name, id, partition count, replica placement, directory, size) is a pure function of
``(seed, i)``, and a partition's state at any point is a replay of the few broker up/down events and
ISR-flap rounds that happened before it. So the metadata log, the snapshots and the replica dirs can each
iterate the background independently, in one streaming pass, whatever the size.

Background names always contain a ``.`` and a 5-digit index; scenario topics never do, so they never clash.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Dict, Iterator, List, Sequence, Tuple

from udfs import kafka_uuid

from . import partition_rules
from .image import UNASSIGNED_DIR, PartitionState

DOMAINS = ("billing", "catalog", "checkout", "fraud", "inventory", "logistics", "marketing", "orders",
           "payments", "pricing", "search", "shipping", "users", "warehouse")
ENTITIES = ("events", "commands", "changelog", "audit", "metrics", "clicks", "updates", "snapshots")
PARTITION_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
PARTITION_WEIGHTS = (3, 3, 6, 4, 8, 8, 8, 6, 4, 3, 2, 1)
MEAN_RECORD_BYTES = 900


@dataclass(frozen=True)
class BackgroundTopic:
    index: int
    name: str
    topic_id: bytes
    partitions: int
    first_replica: int  # AdminUtils-style placement: start index
    shift: int
    mu: float  # log of the median partition size in bytes


@dataclass(frozen=True)
class BrokerEvent:
    """A broker went down (``up`` False) or came back; background partitions replay these in order."""

    broker: int
    up: bool


@dataclass(frozen=True)
class FlapRounds:
    """ISR flaps ``first`` .. ``first + count - 1`` (round-robin over all background partitions)."""

    first: int
    count: int


class Background:
    """The background fleet of one simulation."""

    def __init__(self, seed: int, broker_ids: Sequence[int], dirs_per_broker: Dict[int, List[bytes]],
                 replicas_per_broker: int, rf: int):
        self.seed = seed
        self.broker_ids = list(broker_ids)
        self.dirs = dirs_per_broker
        self.rf = max(1, min(rf, len(self.broker_ids)))
        total_replicas = len(self.broker_ids) * max(0, replicas_per_broker)
        self.total_partitions = math.ceil(total_replicas / self.rf) if total_replicas else 0
        self.ops: List[object] = []  # BrokerEvent / FlapRounds, in the order the controller applied them
        self.flap_rounds = 0  # ISR flaps applied so far (padding), round-robin over all partitions

    # ---- topics and placement ----

    def topics(self) -> Iterator[BackgroundTopic]:
        remaining = self.total_partitions
        index = 0
        n = len(self.broker_ids)
        while remaining > 0:
            rng = random.Random(f"{self.seed}:background:{index}")
            count = min(remaining, rng.choices(PARTITION_COUNTS, PARTITION_WEIGHTS)[0])
            name = f"{rng.choice(DOMAINS)}.{rng.choice(ENTITIES)}.{index:05d}"
            topic_id = kafka_uuid.random_uuid(rng)
            yield BackgroundTopic(index, name, topic_id, count, rng.randrange(n), rng.randrange(max(1, n - 1)),
                                  mu=rng.uniform(math.log(8 << 20), math.log(512 << 20)))
            remaining -= count
            index += 1

    def replicas(self, topic: BackgroundTopic, partition: int) -> List[int]:
        """Rack-unaware round-robin placement with a shift, as ``AdminUtils.assignReplicasToBrokers`` does."""
        n = len(self.broker_ids)
        first = (topic.first_replica + partition) % n
        out = [self.broker_ids[first]]
        if n > 1:
            shift = (topic.shift + partition // n) % (n - 1) + 1
            for j in range(self.rf - 1):
                out.append(self.broker_ids[(first + 1 + (shift + j) % (n - 1)) % n])
        return out

    def directory(self, topic: BackgroundTopic, partition: int, broker: int) -> Tuple[int, bytes]:
        """(index, id) of the log dir the broker put this replica in."""
        dirs = self.dirs[broker]
        index = (topic.index * 31 + partition * 7 + broker) % len(dirs)
        return index, dirs[index]

    def default_directory(self, broker: int) -> bytes:
        """``ClusterControlManager.defaultDir``: the only dir, else UNASSIGNED until the broker assigns one."""
        dirs = self.dirs[broker]
        return dirs[0] if len(dirs) == 1 else UNASSIGNED_DIR

    def needs_assignment(self, replicas: Sequence[int]) -> bool:
        return any(len(self.dirs[b]) > 1 for b in replicas)

    def partition_size(self, topic: BackgroundTopic, partition: int) -> int:
        rng = random.Random(topic.index * 1_000_003 + partition * 7919 + self.seed)
        return int(min(math.exp(rng.gauss(topic.mu, 0.8)), 3 << 30))

    # ---- partition state (replayed, never stored) ----

    def initial_state(self, topic: BackgroundTopic, partition: int, uses_directories: bool) -> PartitionState:
        replicas = self.replicas(topic, partition)
        dirs = [self.default_directory(b) for b in replicas] if uses_directories else []
        return PartitionState(replicas=replicas, isr=list(replicas), leader=replicas[0], directories=dirs)

    def flaps_for(self, op: "FlapRounds", flat_index: int) -> int:
        """How many of the rounds in ``op`` hit the partition at ``flat_index``."""
        total = self.total_partitions
        if not total:
            return 0
        start, end = op.first, op.first + op.count  # round r hits flat index r % total
        return _count_congruent(start, end, flat_index, total)

    def state(self, topic: BackgroundTopic, partition: int, uses_directories: bool,
              ops_upto: int, flat_index: int) -> PartitionState:
        """State after creation, directory assignment and the first ``ops_upto`` background ops."""
        part = self.initial_state(topic, partition, uses_directories)
        if uses_directories and self.needs_assignment(part.replicas):
            part.directories = [self.directory(topic, partition, b)[1] for b in part.replicas]
            part.partition_epoch += 1
        down: set = set()
        for op in self.ops[:ops_upto]:
            apply_op(self, part, op, down, flat_index)
        return part

    def partitions(self) -> Iterator[Tuple[BackgroundTopic, int, int]]:
        """(topic, partition, flat index) over the whole background, in creation order."""
        flat = 0
        for topic in self.topics():
            for p in range(topic.partitions):
                yield topic, p, flat
                flat += 1


def _count_congruent(start: int, end: int, residue: int, modulus: int) -> int:
    """Number of integers r in [start, end) with r % modulus == residue."""
    def upto(x: int) -> int:  # count in [0, x)
        return x // modulus + (1 if residue < x % modulus else 0)
    return upto(end) - upto(start)


def apply_op(background: Background, part: PartitionState, op: object, down: set, flat_index: int) -> List[dict]:
    """Apply one background op to a partition; returns the PartitionChangeRecord changes it caused."""
    if isinstance(op, BrokerEvent):
        if op.broker not in part.replicas:
            if op.up:
                down.discard(op.broker)
            else:
                down.add(op.broker)
            return []
        if op.up:
            down.discard(op.broker)
            return partition_rules.broker_up(part, op.broker)
        down.add(op.broker)
        change = partition_rules.broker_down(part, op.broker, down)
        return [change] if change else []
    changes: List[dict] = []
    for _ in range(background.flaps_for(op, flat_index)):
        changes.extend(partition_rules.isr_flap(part))
    return changes
