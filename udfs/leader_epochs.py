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

:func:`end_offset_for` and :func:`follower_truncation` answer the other question a history is read for: where a
follower's log is cut when it fetches from its leader (KIP-101, KIP-279, KIP-320). See :func:`follower_truncation`.
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


UNDEFINED_EPOCH = -1  # EpochEndOffset.UNDEFINED_EPOCH
UNDEFINED_EPOCH_OFFSET = -1  # EpochEndOffset.UNDEFINED_EPOCH_OFFSET

Entry = Tuple[int, int]


def end_offset_for(entries: Sequence[Entry], requested_epoch: int, log_end_offset: int) -> Entry:
    """``LeaderEpochFileCache.endOffsetFor(requestedEpoch, logEndOffset)`` over a loaded cache (``entries``
    ascending, as :func:`load` keeps them): (epoch, end offset).

    - the undefined epoch, or an epoch above every cached one: (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
    - the latest cached epoch: (it, the log end offset);
    - otherwise the largest cached epoch <= the requested one and the start offset of the first cached epoch
      above it; when no cached epoch is <= the requested one (the cache lost its older epochs to
      truncateFromStart), the requested epoch itself with that start offset.
    """
    if requested_epoch == UNDEFINED_EPOCH:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if entries and entries[-1][0] == requested_epoch:
        return requested_epoch, log_end_offset
    higher = next((e for e in entries if e[0] > requested_epoch), None)
    if higher is None:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    floor = [e for e in entries if e[0] <= requested_epoch]
    return (floor[-1][0] if floor else requested_epoch), higher[1]


@dataclass(frozen=True)
class Truncation:
    """Where a follower's log ends after it has reconciled its history with the leader's.

    ``offset``: the follower's log end after truncation (its log end offset when nothing is cut). ``rule``: which
    of Kafka's branches decided it. ``steps``: one (epoch the follower fetched with, the leader's diverging epoch,
    its end offset, offset truncated to) per round. ``epochs``: the follower's epochs whose records lie at or above
    ``offset`` (the epochs the cut records were written in)."""

    offset: int
    rule: str
    steps: Tuple[Tuple[int, int, int, int], ...] = ()
    epochs: Tuple[int, ...] = ()


def _cut(entries: List[Entry], offset: int) -> List[Entry]:
    """LeaderEpochFileCache.truncateFromEnd: drop the entries starting at or after ``offset``."""
    return [e for e in entries if e[1] < offset]


def follower_truncation(follower: Sequence[Entry], follower_leo: int, follower_hw: Optional[int],
                        leader: Sequence[Entry], leader_leo: int, leader_log_start: int) -> Truncation:
    """The offset a follower truncates its log to when it (re)starts fetching from ``leader``, as a broker on
    Kafka 2.7+ does (truncation on fetch, KIP-320; every KRaft broker), apache/kafka@1eb7644:

    1. A follower with no epoch in its cache starts in the Truncating state at its high watermark
       (ReplicaManager.initialFetchOffset, AbstractFetcherThread.partitionFetchState) and truncates to it
       (AbstractFetcherThread.truncateToHighWatermark): ``rule="high_watermark"``.
    2. Otherwise it fetches from its log end offset with lastFetchedEpoch = its latest epoch. The leader
       (Partition.readRecords) looks the epoch up in its own cache (Partition.lastOffsetForLeaderEpoch ->
       UnifiedLog.endOffsetForEpoch -> :func:`end_offset_for` with its log end offset); an undefined answer is an
       OffsetOutOfRangeException, and the follower then cuts to the leader's log end offset if that is below its
       own (AbstractFetcherThread.fetchOffsetAndApplyTruncateAndBuild): ``rule="leader_log_end"``. When the
       leader's epoch is below the fetched one or its end offset below the fetch offset, the fetch returns that
       diverging epoch and the follower truncates (AbstractFetcherThread.truncateOnFetchResponse ->
       getOffsetTruncationState): it looks the leader's epoch up in its own cache; without an answer it cuts to
       the leader's end offset (``rule="leader_offset"``); with another epoch (it never had the leader's) it
       cuts to the end of that epoch and fetches again with its new latest epoch (KIP-279); with the same epoch it
       cuts to min(its end of that epoch, the leader's end offset, its log end offset) (``rule="epoch_end"``).
       UnifiedLog.truncateTo then drops the cache entries from that offset (truncateFromEnd).
    3. A fetch offset below the leader's log start is out of range too: the follower then starts again at the
       leader's log start (truncateFullyAndStartAt); the records it drops are ones the leader's retention already
       deleted, so the result is its log end offset with ``rule="below_leader_log_start"``.

    When the fetched epoch is the leader's latest, the leader answers with its own log end offset, which only
    grows while it leads: every record of that epoch came from this leader, so nothing diverges. ``leader_leo``
    is therefore used only for the undefined answer (``rule="leader_log_end"``).
    """
    cache = list(follower)
    end = follower_leo
    if not cache:
        if follower_hw is None or follower_hw >= end:
            return Truncation(end, "none")
        return Truncation(max(follower_hw, 0), "high_watermark", epochs=())
    steps: List[Tuple[int, int, int, int]] = []
    rule = "none"
    for _ in range(len(follower) + 1):
        if not cache:
            break  # no epoch left: the next fetch carries no lastFetchedEpoch, nothing more is checked
        if end < leader_log_start:
            rule = "below_leader_log_start" if not steps else rule
            break
        fetch_epoch = cache[-1][0]
        if leader and leader[-1][0] == fetch_epoch:
            break  # the leader's current epoch: its answer is its own growing log end
        leader_epoch, leader_end = end_offset_for(leader, fetch_epoch, leader_leo)
        if leader_epoch == UNDEFINED_EPOCH or leader_end == UNDEFINED_EPOCH_OFFSET:
            if leader_leo < end:
                steps.append((fetch_epoch, leader_epoch, leader_end, leader_leo))
                end, cache, rule = leader_leo, _cut(cache, leader_leo), "leader_log_end"
            break
        if not (leader_epoch < fetch_epoch or leader_end < end):
            break
        own_epoch, own_end = end_offset_for(cache, leader_epoch, end)
        if own_end == UNDEFINED_EPOCH_OFFSET:
            target, done, branch = min(leader_end, end), True, "leader_offset"
        elif own_epoch != leader_epoch:
            target, done, branch = min(own_end, end), False, "epoch_end"
        else:
            target, done, branch = min(own_end, leader_end, end), True, "epoch_end"
        steps.append((fetch_epoch, leader_epoch, leader_end, target))
        if target < end:
            rule = branch
        end, cache = target, _cut(cache, target)
        if done:
            break
    if end >= follower_leo:
        return Truncation(follower_leo, rule if rule == "below_leader_log_start" else "none", tuple(steps))
    return Truncation(end, rule, tuple(steps), epochs_from(follower, end))


def epochs_from(entries: Sequence[Entry], offset: int) -> Tuple[int, ...]:
    """The epochs of ``entries`` (ascending) that hold records at or above ``offset``: an entry covers the
    offsets from its start to the next entry's start (the last one: to the log end)."""
    return tuple(epoch for i, (epoch, _) in enumerate(entries)
                 if i + 1 == len(entries) or entries[i + 1][1] > offset)


__all__ = ["EpochLoad", "Truncation", "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "end_offset_for",
           "follower_truncation", "invalid_entry_message", "load"]
