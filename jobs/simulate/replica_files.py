"""The files of one replica dir and how they reach the disk: segments sized from the replica's write rate (a few
real batches at the head, the rest sparse), producer batches and snapshots, the leader-epoch checkpoint, and
:class:`TreeWriter`, the descriptor-relative writes with simulated mtimes that the whole capture
(:mod:`.writer`) goes through.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from udfs import log_index
from udfs.log_index import OFFSET_ENTRY, TIME_ENTRY, preallocated_size

from . import codec
from .epoch_history import replica_offsets
from .fleet import Replica

SEGMENT_BYTES = 1 << 30  # log.segment.bytes
INDEX_PREALLOC = preallocated_size(OFFSET_ENTRY.size)
TIMEINDEX_PREALLOC = preallocated_size(TIME_ENTRY.size)
LEADER_EPOCH_FILE = "leader-epoch-checkpoint"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def _ns(ms: int) -> int:
    return ms * 1_000_000


class TreeWriter:
    """Small helpers over descriptor-relative writes with simulated mtimes."""

    def __init__(self):
        self.dir_times: List[Tuple[str, int]] = []  # directories get their mtime last (children change it)

    @staticmethod
    def write(dir_fd: int, name: str, data: bytes, mtime_ms: int, size: Optional[int] = None) -> None:
        fd = os.open(name, _FLAGS, 0o644, dir_fd=dir_fd)
        try:
            if data:
                os.write(fd, data)
            if size is not None and size > len(data):
                os.ftruncate(fd, size)
        finally:
            os.close(fd)
        os.utime(name, ns=(_ns(mtime_ms), _ns(mtime_ms)), dir_fd=dir_fd)

    def mkdir(self, path: str, mtime_ms: int) -> int:
        os.makedirs(path, exist_ok=True)
        self.dir_times.append((path, mtime_ms))
        return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))

    def finish(self) -> None:
        """Set the mtimes of the directories made since the last call (their children are all written)."""
        for path, mtime in reversed(self.dir_times):
            os.utime(path, ns=(_ns(mtime), _ns(mtime)))
        self.dir_times.clear()


@dataclass
class Segment:
    base: int
    size: int
    head: bytes
    index: bytes = b""
    timeindex: bytes = b""
    active: bool = False
    mtime_ms: Optional[int] = None  # closed segments: when they rolled; None = the replica's last write


@dataclass
class ReplicaFiles:
    partition_metadata: Optional[bytes]
    segments: List[Segment]
    leader_epochs: bytes
    producer_snapshots: List[Tuple[int, bytes]] = field(default_factory=list)
    log_end: int = 0
    log_start: int = 0


def write_replica(tree: TreeWriter, log_dir_fd: int, name: str, files: ReplicaFiles, created_ms: int,
                  written_ms: int, preallocate: bool) -> None:
    """One replica dir: partition.metadata, segments (sparse), index files, epochs, producer snapshots."""
    os.mkdir(name, 0o755, dir_fd=log_dir_fd)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0), dir_fd=log_dir_fd)
    try:
        if files.partition_metadata is not None:
            tree.write(fd, "partition.metadata", files.partition_metadata, created_ms)
        tree.write(fd, LEADER_EPOCH_FILE, files.leader_epochs, created_ms)
        for seg in files.segments:
            active = seg.active and preallocate
            mtime = written_ms if seg.mtime_ms is None else seg.mtime_ms
            tree.write(fd, codec.segment_name(seg.base, ".log"), seg.head, mtime, seg.size)
            tree.write(fd, codec.segment_name(seg.base, ".index"), seg.index, mtime,
                       INDEX_PREALLOC if active else None)
            tree.write(fd, codec.segment_name(seg.base, ".timeindex"), seg.timeindex, mtime,
                       TIMEINDEX_PREALLOC if active else None)
        for offset, data in files.producer_snapshots:
            tree.write(fd, codec.producer_snapshot_name(offset), data, written_ms)
    finally:
        os.close(fd)
    os.utime(name, ns=(_ns(created_ms), _ns(created_ms)), dir_fd=log_dir_fd)


# ---------------------------------------------------------------------------------------------- scenario replicas

def _values(topic: str, partition: int, first_offset: int, count: int, ts: int) -> List[Tuple[bytes, bytes, int]]:
    return [(f"key-{(first_offset + i) % 97}".encode(),
             json.dumps({"topic": topic, "partition": partition, "seq": first_offset + i}).encode(), ts)
            for i in range(count)]


def with_log_end(head: bytes, base: int, leo: int, topic: str, partition: int, ts: int, leader_epoch: int) -> bytes:
    """The newest segment's bytes ending at ``leo``, as Kafka's readNextOffset reads a real segment: the sparse
    size model writes a 3-record head only, so one more batch at ``leo - 1`` closes the gap (offset gaps are
    normal after compaction) and the checkpoints' offsets agree with the data."""
    if leo - 1 <= base + 2:
        return head
    return head + codec.data_batch(_values(topic, partition, leo - 1, 1, ts), leo - 1, leader_epoch)


def scenario_replica_files(replica: Replica, capture_ms: int, leader_epoch: int,
                           epochs: Optional[List[Tuple[int, int]]] = None) -> ReplicaFiles:
    """Segments sized from the replica's write rate and lifetime; producer batches are real batches.
    ``epochs``: the leader-epoch-checkpoint entries (default: epoch 0 from the log start)."""
    size, log_start, leo = replica_offsets(replica, capture_ms)
    produced = sum(b.count + (1 if b.transactional and b.committed is not None else 0) for b in replica.producer_batches)
    segment_count = max(1, -(-size // SEGMENT_BYTES))
    per_segment = max(1, (leo - log_start) // segment_count)
    written = replica.stopped_ms if replica.stopped_ms is not None else capture_ms
    segments: List[Segment] = []
    for k in range(segment_count):
        base = log_start + k * per_segment
        ts = replica.created_ms + (written - replica.created_ms) * k // segment_count
        head = codec.data_batch(_values(replica.topic, replica.partition, base, 3, ts), base, leader_epoch)
        segments.append(Segment(base, max(len(head), min(SEGMENT_BYTES, size - k * SEGMENT_BYTES)), head))
    last = segments[-1]
    snapshot_entries: Dict[int, dict] = {}
    if replica.producer_batches:
        offset = leo - produced
        chunks = [last.head]
        for batch in replica.producer_batches:
            chunks.append(codec.data_batch(_values(replica.topic, replica.partition, offset, batch.count,
                                                   batch.timestamp_ms), offset, leader_epoch, batch.producer_id,
                                           batch.producer_epoch, batch.base_sequence, batch.transactional))
            first = offset
            offset += batch.count
            entry = {"producer_id": batch.producer_id, "epoch": batch.producer_epoch,
                     "last_sequence": batch.base_sequence + batch.count - 1, "last_offset": offset - 1,
                     "offset_delta": batch.count - 1, "timestamp": batch.timestamp_ms,
                     "coordinator_epoch": -1, "current_txn_first_offset": first if batch.transactional else -1}
            if batch.transactional and batch.committed is not None:
                chunks.append(codec.txn_marker_batch(offset, leader_epoch, batch.timestamp_ms + 40, batch.producer_id,
                                                     batch.producer_epoch, batch.committed, batch.coordinator_epoch))
                offset += 1
                entry["coordinator_epoch"] = batch.coordinator_epoch
                entry["current_txn_first_offset"] = -1
            snapshot_entries[batch.producer_id] = entry
        last.head = b"".join(chunks)
        last.size = max(last.size, len(last.head))
    for k, seg in enumerate(segments):
        rolled = replica.created_ms + (written - replica.created_ms) * (k + 1) // segment_count
        seg.timeindex = codec.time_index([(rolled, 0)])
        seg.mtime_ms = None if seg is last else rolled
    if replica.cut_short_bytes:  # the .log lost its tail after Kafka indexed it
        last.index = log_index.encode_offset_index([(max(1, leo - 1 - last.base), len(last.head) + replica.cut_short_bytes)])
    if not replica.producer_batches:
        last.head = with_log_end(last.head, last.base, leo, replica.topic, replica.partition, written, leader_epoch)
        last.size = max(last.size, len(last.head))
    if replica.cut_short_bytes:
        last.size = len(last.head)
        last.active = False
    else:
        last.active = replica.is_current()
    if replica.epoch_content is not None:
        epoch_file = replica.epoch_content
    else:
        epoch_file = codec.leader_epoch_checkpoint(epochs if epochs is not None else [(0, log_start)])
    files = ReplicaFiles(None, segments, epoch_file, log_end=leo, log_start=log_start)
    if snapshot_entries:
        files.producer_snapshots.append((leo, codec.producer_snapshot(list(snapshot_entries.values()))))
    if replica.pm_content is not None:
        files.partition_metadata = replica.pm_content
    elif not replica.pm_missing and replica.topic_id is not None:
        files.partition_metadata = codec.partition_metadata_file(replica.topic_id)
    return files
