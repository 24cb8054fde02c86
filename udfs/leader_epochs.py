"""What Kafka does with a ``leader-epoch-checkpoint`` it has read: the load step after the file parses.

``LeaderEpochFileCache``'s constructor (storage/.../epoch/LeaderEpochFileCache.java, apache/kafka@1eb7644)
replays the file's entries through ``assign(EpochEntry)``, one by one:

- ``epoch < 0`` or ``startOffset < 0``: ``IllegalArgumentException("Received invalid partition leader epoch
  entry EpochEntry(epoch=E, startOffset=O)")``; nothing catches it, so the log does not load.
- ``isUpdateNeeded``: an entry with the latest epoch and a start offset not below the latest one is ignored.
- otherwise ``maybeTruncateNonMonotonicEntries`` first removes, newest first, every cached entry whose epoch
  is >= the new epoch or whose start offset is >= the new start offset, then adds the new entry. The removal
  is logged at WARN ("caused truncation of conflicting entries") unless it is the trivial case of one entry
  with the same start offset (an epoch that never got data).

Kafka writes the file from the cache, whose epochs and start offsets both increase strictly, so a file that
needs more than the trivial removal was not written by a healthy broker. :func:`load` replays the same rules
and says which entries the cache keeps.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from .errors import DecodeError


@dataclass(frozen=True)
class EpochLoad:
    """``kept[i]``: entry i is in the cache after the load. ``error``: the IllegalArgumentException that
    stops the load (no cache at all)."""

    kept: Tuple[bool, ...]
    error: Optional[DecodeError] = None


def invalid_entry_message(epoch: int, start_offset: int) -> str:
    return f"Received invalid partition leader epoch entry EpochEntry(epoch={epoch}, startOffset={start_offset})"


def load(entries: Sequence[Tuple[int, int]]) -> EpochLoad:
    """Replay ``entries`` (epoch, start offset) as ``LeaderEpochFileCache(...)`` does on a broker start."""
    cache: List[Tuple[int, int, int]] = []  # (epoch, start offset, index in the file), ascending
    for index, (epoch, start) in enumerate(entries):
        if epoch < 0 or start < 0:
            return EpochLoad(tuple(False for _ in entries),
                             DecodeError("malformed_line", invalid_entry_message(epoch, start), line=index + 3))
        if cache and epoch == cache[-1][0] and start >= cache[-1][1]:
            continue  # isUpdateNeeded is false: the entry is ignored
        while cache and (cache[-1][0] >= epoch or cache[-1][1] >= start):
            cache.pop()  # maybeTruncateNonMonotonicEntries
        cache.append((epoch, start, index))
    kept_at = {index for _, _, index in cache}
    return EpochLoad(tuple(i in kept_at for i in range(len(entries))))


__all__ = ["EpochLoad", "invalid_entry_message", "load"]
