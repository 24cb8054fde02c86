"""Segment index files: ``<base>.index`` (offset index) and ``<base>.timeindex`` (time index); read and write.

Layouts (storage/src/main/java/org/apache/kafka/storage/internals/log/OffsetIndex.java, TimeIndex.java,
apache/kafka@1eb7644; big-endian):

- offset index entry, 8 bytes: ``relativeOffset int32`` (offset - segment base), ``position int32`` (byte
  position of the batch in the .log file);
- time index entry, 12 bytes: ``timestamp int64``, ``relativeOffset int32``.

A running broker pre-allocates the active segment's index files (``segment.index.bytes``, 10 MiB; the time
index rounded down to a multiple of 12), so a zero tail is normal: reading stops at the first all-zero entry
after the first one (an entry (0, 0) can only be the first offset-index entry).
"""
from __future__ import annotations

import struct
from typing import Iterator, List, Sequence, Tuple

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")
DEFAULT_MAX_INDEX_BYTES = 10 * 1024 * 1024  # segment.index.bytes


def preallocated_size(entry_size: int, max_bytes: int = DEFAULT_MAX_INDEX_BYTES) -> int:
    """``AbstractIndex``: the file length is rounded down to a multiple of the entry size."""
    return max_bytes - max_bytes % entry_size


def encode_offset_index(entries: Sequence[Tuple[int, int]]) -> bytes:
    """``[(relative_offset, position), ...]`` -> bytes."""
    return b"".join(OFFSET_ENTRY.pack(rel, pos) for rel, pos in entries)


def encode_time_index(entries: Sequence[Tuple[int, int]]) -> bytes:
    """``[(timestamp_ms, relative_offset), ...]`` -> bytes."""
    return b"".join(TIME_ENTRY.pack(ts, rel) for ts, rel in entries)


def iter_offset_index(data) -> Iterator[Tuple[int, int]]:
    """Entries of an offset index, stopping at the pre-allocated zero tail or a partial entry."""
    view = memoryview(bytes(data))
    for pos in range(0, len(view) - OFFSET_ENTRY.size + 1, OFFSET_ENTRY.size):
        rel, position = OFFSET_ENTRY.unpack_from(view, pos)
        if pos and rel == 0 and position == 0:
            return
        yield rel, position


def iter_time_index(data) -> Iterator[Tuple[int, int]]:
    """Entries of a time index, stopping at the pre-allocated zero tail or a partial entry."""
    view = memoryview(bytes(data))
    for pos in range(0, len(view) - TIME_ENTRY.size + 1, TIME_ENTRY.size):
        ts, rel = TIME_ENTRY.unpack_from(view, pos)
        if ts == 0 and rel == 0:
            return
        yield ts, rel


def read_offset_index(data) -> List[Tuple[int, int]]:
    return list(iter_offset_index(data))


def read_time_index(data) -> List[Tuple[int, int]]:
    return list(iter_time_index(data))
