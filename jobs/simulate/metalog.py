"""The master copy of ``__cluster_metadata-0`` and the per-broker copies cut from it.

The controller appends batches here as they happen (segments roll every ``metadata.log.segment.ms``, 7 days).
Snapshots are recorded as *points* (end offset, epoch, last contained timestamp, a frozen image) and only
those some broker still retains are encoded at the end. Each broker's copy is the master up to the offset it
had replicated when it went down (running brokers: all of it), with Kafka's snapshot retention applied at
that broker's "now" (KafkaRaftLog.maybeClean, Kafka's order: first ``metadata.max.retention.bytes``, the
oldest snapshot deleted while the copy's segments and snapshots together are larger; then
``metadata.max.retention.ms``, a snapshot older than that with a newer one after it deleted; each deletion
moves the log start offset to the next snapshot and deletes the segments wholly below it; the active segment
and the newest snapshot never are).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from . import codec
from .clock import DAY
from .image import Record

SEGMENT_MS = 7 * DAY  # metadata.log.segment.ms (LogConfig.DEFAULT_SEGMENT_MS)
SEGMENT_BYTES = 1 << 30  # metadata.log.segment.bytes
RETENTION_MS = 7 * DAY  # metadata.max.retention.ms
RETENTION_BYTES = 100 * 1024 * 1024  # metadata.max.retention.bytes (MetadataLogConfig's default)
INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes
MAX_RECORDS_PER_BATCH = 2000


@dataclass
class BatchInfo:
    base_offset: int
    last_offset: int
    epoch: int
    timestamp: int
    segment: int
    position: int
    size: int


@dataclass
class Segment:
    base_offset: int
    path: str
    size: int = 0
    first_ts: Optional[int] = None
    batches: int = 0


@dataclass
class SnapshotPoint:
    end_offset: int
    epoch: int
    last_ts: int  # lastContainedLogTimestamp: append time of the last record it contains
    taken_ms: int
    records: Callable[[], Iterator[Record]]  # the image at that point, produced on demand


@dataclass
class CopyPlan:
    """What one broker's ``__cluster_metadata-0`` holds."""

    end_offset: int  # exclusive
    now_ms: int
    snapshots: List[SnapshotPoint]
    log_start: int
    segments: List[Tuple[Segment, int]]  # (segment, bytes of it this copy holds)
    extra_batches: List[bytes] = field(default_factory=list)  # a diverged tail appended after end_offset


class MetadataLog:
    def __init__(self, work_dir: str, segment_ms: int = SEGMENT_MS):
        self.work_dir = work_dir
        self.segment_ms = segment_ms
        os.makedirs(work_dir, exist_ok=True)
        self.next_offset = 0
        self.epoch = 0
        self.leader_id = -1
        self.epochs: List[Tuple[int, int]] = []  # (epoch, start offset): leader-epoch-checkpoint
        self.leaders: Dict[int, int] = {}  # epoch -> leader id
        self.segments: List[Segment] = []
        self.batches: List[BatchInfo] = []
        self.snapshots: List[SnapshotPoint] = []
        self.last_ts = 0
        self.record_count = 0
        self.records_since_snapshot = 0
        self._out = None
        self._by_segment: Dict[int, List[BatchInfo]] = {}
        self._indexed_batches = -1

    # ---- appending ----

    def _segment_for(self, base_offset: int, ts: int, size: int) -> Segment:
        current = self.segments[-1] if self.segments else None
        if current is None or (current.batches and (ts - current.first_ts >= self.segment_ms
                                                     or current.size + size > SEGMENT_BYTES)):
            if self._out is not None:
                self._out.close()
            current = Segment(base_offset, os.path.join(self.work_dir, codec.segment_name(base_offset, ".log")))
            self.segments.append(current)
            self._out = open(current.path, "wb")
        return current

    def _write(self, data: bytes, base: int, last: int, ts: int) -> BatchInfo:
        if ts < self.last_ts:
            raise ValueError(f"append time went backwards: {ts} < {self.last_ts}")
        segment = self._segment_for(base, ts, len(data))
        if segment.first_ts is None:
            segment.first_ts = ts
        info = BatchInfo(base, last, self.epoch, ts, len(self.segments) - 1, segment.size, len(data))
        self._out.write(data)
        segment.size += len(data)
        segment.batches += 1
        self.batches.append(info)
        self.next_offset = last + 1
        self.last_ts = ts
        return info

    def leader_change(self, leader_id: int, voters: Sequence[int], ts: int) -> None:
        """A new raft epoch: the new leader writes a LEADER_CHANGE control batch first (LeaderState.java)."""
        self.epoch += 1
        self.leader_id = leader_id
        self.leaders[self.epoch] = leader_id
        self.epochs.append((self.epoch, self.next_offset))
        data = codec.leader_change_batch(self.next_offset, self.epoch, ts, leader_id, voters)
        self._write(data, self.next_offset, self.next_offset, ts)

    def append(self, records: Sequence[Record], ts: int) -> int:
        """Append records as one or more batches (one controller event); returns the first offset."""
        first = self.next_offset
        for start in range(0, len(records), MAX_RECORDS_PER_BATCH):
            chunk = records[start:start + MAX_RECORDS_PER_BATCH]
            base = self.next_offset
            self._write(codec.metadata_batch(chunk, base, self.epoch, ts), base, base + len(chunk) - 1, ts)
        self.record_count += len(records)
        self.records_since_snapshot += len(records)
        return first

    def flush(self) -> None:
        if self._out is not None:
            self._out.flush()

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    # ---- snapshots ----

    def take_snapshot(self, now_ms: int, records: Callable[[], Iterator[Record]]) -> Optional[SnapshotPoint]:
        """Record a snapshot point at the current end of the log (skipped when nothing new was committed)."""
        if self.records_since_snapshot == 0 or self.next_offset == 0:
            return None
        point = SnapshotPoint(self.next_offset, self.epoch, self.last_ts, now_ms, records)
        self.snapshots.append(point)
        self.records_since_snapshot = 0
        return point

    # ---- copies ----

    def offset_at(self, ts: int) -> int:
        """End offset (exclusive) of what was appended up to and including time ``ts``."""
        end = 0
        for info in self.batches:
            if info.timestamp > ts:
                break
            end = info.last_offset + 1
        return end

    def plan_copy(self, end_offset: int, now_ms: int,
                  snapshot_size: Optional[Callable[[SnapshotPoint], int]] = None) -> CopyPlan:
        """A broker's copy: the master up to ``end_offset``, snapshots it took, retention at ``now_ms``.

        ``snapshot_size`` gives a snapshot file's size in bytes (the writer encodes it to know); without it the
        size rule is not applied (callers that only ask which offsets a copy holds)."""
        points = [p for p in self.snapshots if p.end_offset <= end_offset and p.taken_ms <= now_ms]
        log_start = 0
        # Kafka applies the size rule first; each rule deletes oldest snapshots, and what the copy holds only
        # shrinks with each deletion, so time first gives the same copy and asks the size of retained ones only
        while len(points) >= 2 and now_ms - points[0].last_ts > RETENTION_MS:  # cleanSnapshotsRetentionMs
            log_start = points[1].end_offset
            points = points[1:]
        if snapshot_size is not None:  # cleanSnapshotsRetentionSize
            snapshot_bytes = sum(snapshot_size(p) for p in points)
            while len(points) >= 2 and (sum(size for _, size in self._held_segments(end_offset, log_start))
                                        + snapshot_bytes > RETENTION_BYTES):
                snapshot_bytes -= snapshot_size(points[0])
                log_start = points[1].end_offset
                points = points[1:]
        return CopyPlan(end_offset, now_ms, points, log_start, self._held_segments(end_offset, log_start))

    def _held_segments(self, end_offset: int, log_start: int) -> List[Tuple[Segment, int]]:
        """``(segment, bytes of it held)`` of a copy ending at ``end_offset`` whose log starts at ``log_start``:
        a segment wholly below the log start is deleted (UnifiedLog.deleteOldSegments), the last never."""
        segments: List[Tuple[Segment, int]] = []
        held = [s for s in self.segments if s.base_offset < end_offset]
        for i, seg in enumerate(held):
            next_base = held[i + 1].base_offset if i + 1 < len(held) else None
            is_last = i == len(held) - 1
            if not is_last and next_base is not None and next_base <= log_start:
                continue  # wholly below the log start offset: deleted
            size = seg.size
            if is_last:
                size = self._bytes_upto(self.segments.index(seg), end_offset)
            segments.append((seg, size))
        return segments

    def _segment_batches(self, segment_index: int) -> List[BatchInfo]:
        """The batches of one segment (indexed once; copies of many brokers ask again and again)."""
        if self._indexed_batches != len(self.batches):
            self._by_segment = {}
            for info in self.batches:
                self._by_segment.setdefault(info.segment, []).append(info)
            self._indexed_batches = len(self.batches)
        return self._by_segment.get(segment_index, [])

    def _bytes_upto(self, segment_index: int, end_offset: int) -> int:
        size = 0
        for info in self._segment_batches(segment_index):
            if info.last_offset < end_offset:
                size = info.position + info.size
        return size

    def batches_in(self, segment_index: int, upto_bytes: int) -> Iterator[BatchInfo]:
        for info in self._segment_batches(segment_index):
            if info.position + info.size <= upto_bytes:
                yield info

    def epochs_upto(self, end_offset: int, log_start: int) -> List[Tuple[int, int]]:
        """leader-epoch-checkpoint entries of a copy (epochs starting before the end, cut at the log start)."""
        entries = [(e, o) for e, o in self.epochs if o < end_offset]
        kept = [(e, max(o, log_start)) for i, (e, o) in enumerate(entries)
                if i + 1 >= len(entries) or entries[i + 1][1] > log_start]
        return kept

    def last_epoch_before(self, end_offset: int) -> Tuple[int, int]:
        """(epoch, leader id) a copy ending at ``end_offset`` last knew."""
        epoch = 0
        for e, o in self.epochs:
            if o < end_offset:
                epoch = e
        return epoch, self.leaders.get(epoch, -1)


def snapshot_parts(point: SnapshotPoint, create_ms: int) -> Iterator[bytes]:
    """The snapshot file in pieces (header batch, data batches, footer), memory flat in its size."""
    return codec.snapshot_parts(point.records(), point.epoch, point.last_ts, create_ms)


def index_entries(batches: Sequence[BatchInfo], base_offset: int) -> Tuple[List[Tuple[int, int]], List[Tuple[int, int]]]:
    """Offset- and time-index entries as ``LogSegment.append`` adds them (every index.interval.bytes)."""
    offsets: List[Tuple[int, int]] = []
    times: List[Tuple[int, int]] = []
    since = 0
    max_ts, max_ts_offset = -1, base_offset
    for info in batches:
        if info.timestamp > max_ts:
            max_ts, max_ts_offset = info.timestamp, info.last_offset
        if since > INDEX_INTERVAL_BYTES:
            offsets.append((info.last_offset - base_offset, info.position))
            if not times or max_ts > times[-1][0]:
                times.append((max_ts, max_ts_offset - base_offset))
            since = 0
        since += info.size
    return offsets, times


def final_time_entry(batches: Sequence[BatchInfo], base_offset: int) -> Optional[Tuple[int, int]]:
    """The time-index entry ``LogSegment.onBecomeInactiveSegment`` / close appends (max timestamp so far)."""
    max_ts, max_off = -1, None
    for info in batches:
        if info.timestamp > max_ts:
            max_ts, max_off = info.timestamp, info.last_offset
    if max_off is None:
        return None
    return max_ts, max_off - base_offset
