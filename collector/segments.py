"""Segment summaries: the log end, transaction markers and last index entry of a data segment, read from its
61-byte batch headers only (never its records)."""
from __future__ import annotations

import struct
from typing import Any, Dict, Iterable, Optional, Tuple

from .filesystem import oserror_text
from .pack_format import _DATA_SEGMENT, _PRODUCER_SNAPSHOT, DEFAULT_SEGMENT_SCAN_BYTES, MAX_SUMMARY_MARKERS

# Kafka's magic-2 batch header (DefaultRecordBatch): baseOffset, length, partitionLeaderEpoch, magic, crc,
# attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, count.
_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
_LOG_OVERHEAD = 12           # baseOffset + length: every magic's entry starts with them
_V2_MIN_LENGTH = _BATCH_HEADER.size - _LOG_OVERHEAD
_LEGACY_MIN_LENGTH = 14      # LegacyRecord.RECORD_OVERHEAD_V0
_ATTR_TRANSACTIONAL, _ATTR_CONTROL = 0x10, 0x20
_INDEX_ENTRY = struct.Struct(">ii")  # OffsetIndex entry: relative offset, physical position
_INDEX_HEAD_SLOTS = 512               # one 4 KiB read
_UNUSED_SLOT = bytes(_INDEX_ENTRY.size)


def last_index_entry(read_at: Any, size: int) -> Optional[Tuple[int, int]]:
    """The last used entry of an offset index (``[relative offset, position]``), or None when it has none.

    A running broker pre-allocates the active segment's index (10 MiB of zeros by default); used entries are a
    prefix, and no used entry is ``(0, 0)`` (the first entry follows ``index.interval.bytes`` of data), so a
    binary search over 8-byte slots finds the end in ~20 reads instead of reading the file.
    """
    slots = size // _INDEX_ENTRY.size
    if slots <= 0:
        return None

    def slot(i: int) -> Tuple[int, int]:
        data = read_at(i * _INDEX_ENTRY.size, _INDEX_ENTRY.size)
        return _INDEX_ENTRY.unpack(data) if len(data) == _INDEX_ENTRY.size else (0, 0)

    last = slot(slots - 1)
    if last != (0, 0):
        return last
    # most active segments hold few entries: the first block usually holds the end (one read)
    head = read_at(0, min(slots, _INDEX_HEAD_SLOTS) * _INDEX_ENTRY.size)
    full = len(head) // _INDEX_ENTRY.size
    end = head.find(_UNUSED_SLOT)
    while end != -1 and end % _INDEX_ENTRY.size:  # zero bytes straddling two used entries
        end = head.find(_UNUSED_SLOT, end + 1)
    if end != -1 and end // _INDEX_ENTRY.size < full:
        return _INDEX_ENTRY.unpack_from(head, end - _INDEX_ENTRY.size) if end else None
    lo, hi = full, slots - 1  # invariant: slots < lo are used, slots >= hi are unused
    while lo < hi:
        mid = (lo + hi) // 2
        if slot(mid) != (0, 0):
            lo = mid + 1
        else:
            hi = mid
    return slot(lo - 1) if lo > 0 else None


def summarize_segment(read_at: Any, size: int, scan_bytes: int = DEFAULT_SEGMENT_SCAN_BYTES) -> Dict[str, Any]:
    """What a data segment says about the partition's end, from batch headers only (records never read).

    ``next_offset`` is the offset after the last batch that frames; ``markers`` the last transaction marker
    (control batch) per producer id. The scan stops at the end of the file, at a zero tail (a pre-allocated
    segment), at a batch that cannot be framed (Kafka's recovery would truncate there), or after
    ``scan_bytes``.
    """
    position, batches, next_offset, end = 0, 0, None, "eof"
    markers: Dict[int, Tuple[int, int]] = {}
    while position + _LOG_OVERHEAD <= size:
        if position >= scan_bytes:
            end = "cap"
            break
        head = read_at(position, _BATCH_HEADER.size)
        if len(head) < _LOG_OVERHEAD:
            end = "corrupt"
            break
        base_offset, length = struct.unpack_from(">qi", head)
        if base_offset == 0 and length == 0:
            end = "zeros"
            break
        magic = head[16] if len(head) > 16 else -1
        minimum = _V2_MIN_LENGTH if magic >= 2 else _LEGACY_MIN_LENGTH
        if length < minimum or position + _LOG_OVERHEAD + length > size or magic < 0 or magic > 2:
            end = "corrupt"
            break
        if magic == 2:
            if len(head) < _BATCH_HEADER.size:
                end = "corrupt"
                break
            values = _BATCH_HEADER.unpack(head)
            attributes, last_delta, producer_id, producer_epoch = values[5], values[6], values[9], values[10]
            next_offset = base_offset + last_delta + 1
            if attributes & _ATTR_CONTROL and attributes & _ATTR_TRANSACTIONAL and producer_id >= 0:
                markers[producer_id] = (producer_epoch, base_offset)
        else:
            next_offset = base_offset + 1  # a legacy entry's offset is its last (inner) offset
        batches += 1
        position += _LOG_OVERHEAD + length
    listed = sorted(markers.items())[-MAX_SUMMARY_MARKERS:]
    return {"next_offset": next_offset, "batches": batches, "valid_bytes": position, "end": end,
            "markers": [[pid, epoch, offset] for pid, (epoch, offset) in listed], "index_last": None, "error": None}


def summary_targets(names: Iterable[str]) -> Tuple[int, ...]:
    """Base offsets of the data segments worth a summary: the newest, and every one from the segment holding
    the newest producer-state snapshot's offset on (transaction markers after that snapshot live there)."""
    bases = sorted(int(n[:20]) for n in names if _DATA_SEGMENT.match(n))
    if not bases:
        return ()
    snapshots = [int(n[:20]) for n in names if _PRODUCER_SNAPSHOT.match(n)]
    first = bases[-1]
    if snapshots:
        newest = max(snapshots)
        holding = [b for b in bases if b <= newest]
        first = holding[-1] if holding else bases[0]
    return tuple(b for b in bases if b >= first)


def segment_summary(fs: Any, handle: Any, name: str, size: Optional[int], index_size: Optional[int],
                    scan_bytes: int) -> Dict[str, Any]:
    """``summarize_segment`` of one file through the filesystem adapter; trouble becomes ``end: unreadable``."""
    opener = getattr(fs, "open_random", None)
    if opener is None:
        return _unread_summary("the filesystem adapter cannot read at offsets")
    try:
        reader = opener(handle, name)
        try:
            summary = summarize_segment(reader.read_at, reader.size, scan_bytes)
        finally:
            reader.close()
        if index_size:
            index = opener(handle, name[:-len(".log")] + ".index")
            try:
                found = last_index_entry(index.read_at, index.size)
            finally:
                index.close()
            summary["index_last"] = list(found) if found is not None else None
    except OSError as exc:
        return _unread_summary(oserror_text(exc))
    return summary


def _unread_summary(error: str) -> Dict[str, Any]:
    return {"next_offset": None, "batches": 0, "valid_bytes": 0, "end": "unreadable", "markers": [],
            "index_last": None, "error": error}
