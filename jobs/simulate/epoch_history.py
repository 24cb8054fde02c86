"""Each replica's ``leader-epoch-checkpoint`` as Kafka leaves it, from one history per partition.

Facts (apache/kafka@1eb7644): a new leader records (its epoch, its log end offset) at once
(Partition.makeLeader -> UnifiedLog.maybeAssignEpochStartOffset); followers record an epoch where its first
batch lands in their log (UnifiedLog.append), so every replica holds the same entries for the epochs it has,
and a lagging follower simply lacks the newest. An epoch that got no data before the next one started
shares its start offset with it, and LeaderEpochFileCache.assign drops it (maybeTruncateNonMonotonicEntries).
When retention (or DeleteRecords) moves the log start, truncateFromStart removes the entries before it and
rewrites the last removed one's start offset to the new log start.

The simulator does not track offsets per leader change, so a partition's epochs 0..N (N = the controller's
current leader epoch) start at evenly spaced offsets of its longest replica's log.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .fleet import Replica, replica_size

Entry = Tuple[int, int]


def replica_offsets(replica: Replica, capture_ms: int) -> Tuple[int, int, int]:
    """(bytes on disk, log start offset, log end offset) as the writer lays the replica out."""
    size, log_start, leo = replica_size(replica, capture_ms)
    produced = sum(b.count + (1 if b.transactional and b.committed is not None else 0) for b in replica.producer_batches)
    return size, log_start, max(leo, log_start + produced + 3)


def partition_history(leader_epoch: int, reference_leo: int) -> List[Entry]:
    """Epochs 0..leader_epoch at evenly spaced start offsets below ``reference_leo``; an epoch sharing its
    start offset with the next one never got data and is not kept (as LeaderEpochFileCache.assign does)."""
    entries: List[Entry] = []
    for epoch in range(max(0, leader_epoch) + 1):
        start = reference_leo * epoch // (leader_epoch + 1) if leader_epoch > 0 else 0
        if entries and entries[-1][1] == start:
            entries[-1] = (epoch, start)
        else:
            entries.append((epoch, start))
    return entries


def replica_history(history: List[Entry], log_start: int, leo: int) -> List[Entry]:
    """What one replica holds: the epochs that start inside its log, truncated from its log start."""
    held = [e for e in history if e[1] < leo] or history[:1]
    removed = [e for e in held if e[1] <= log_start]
    kept = [e for e in held if e[1] > log_start]
    if removed:
        kept.insert(0, (removed[-1][0], log_start))
    return kept


def current_leader_epoch(sim, replica: Replica) -> int:
    """The controller's leader epoch of the replica's partition when the replica is of the live incarnation,
    else the replica's own (a stale incarnation kept what it had)."""
    if sim.kraft is not None and replica.topic_id in sim.kraft.image.topics:
        part = sim.kraft.image.topics[replica.topic_id].partitions.get(replica.partition)
        if part is not None:
            return part.leader_epoch
    if sim.kraft is None and sim.zk is not None:
        topic = sim.zk.topics.get(replica.topic)
        if topic is not None and topic.topic_id == replica.topic_id and replica.partition in topic.partitions:
            return topic.partitions[replica.partition].leader_epoch
    return replica.leader_epoch


class EpochHistories:
    """Partition histories of one capture, keyed by topic id and partition (computed once per partition)."""

    def __init__(self, sim):
        self.sim = sim
        self._reference: Optional[Dict[Tuple[Optional[bytes], int], int]] = None

    def _references(self) -> Dict[Tuple[Optional[bytes], int], int]:
        if self._reference is None:
            ref: Dict[Tuple[Optional[bytes], int], int] = {}
            for broker in self.sim.fleet.brokers.values():
                for _, replica in broker.replicas():
                    key = (replica.topic_id, replica.partition)
                    ref[key] = max(ref.get(key, 0), replica_offsets(replica, self.sim.capture_ms)[2])
            self._reference = ref
        return self._reference

    def partition(self, replica: Replica) -> List[Entry]:
        reference = self._references().get((replica.topic_id, replica.partition), 0)
        return partition_history(current_leader_epoch(self.sim, replica), reference)

    def of(self, replica: Replica) -> List[Entry]:
        """The entries of the replica's file (before any scenario override)."""
        _, log_start, leo = replica_offsets(replica, self.sim.capture_ms)
        return replica_history(self.partition(replica), log_start, leo)
