"""LeaderEpochFileCache's load of a leader-epoch-checkpoint (udfs.leader_epochs) and the simulator's epoch
histories. Expected caches are the ones Kafka's own LeaderEpochFileCacheTest asserts (apache/kafka@1eb7644,
core/src/test/scala/unit/kafka/server/epoch/LeaderEpochFileCacheTest.scala), replayed from a file."""
from __future__ import annotations

import pytest

from jobs.simulate.epoch_history import partition_history, replica_history
from udfs import leader_epochs
from udfs.properties_files import parse_leader_epoch_checkpoint, write_leader_epoch_checkpoint


def kept(entries):
    result = leader_epochs.load(entries)
    assert result.error is None
    return [e for e, k in zip(entries, result.kept, strict=True) if k]


@pytest.mark.parametrize("entries, cache", [
    # a file Kafka wrote: everything is kept
    ([(0, 0), (1, 4338), (3, 4989)], [(0, 0), (1, 4338), (3, 4989)]),
    # shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned: the same epoch again is ignored
    ([(2, 6), (2, 10)], [(2, 6)]),
    # shouldEnforceMonotonicallyIncreasingStartOffsets: same start, newer epoch: the older one goes
    ([(2, 9), (3, 9)], [(3, 9)]),
    # shouldTruncateIfMatchingEpochButEarlierStartingOffset
    ([(5, 11), (6, 12), (7, 13), (7, 12)], [(5, 11), (7, 12)]),
    # shouldEnforceMonotonicallyIncreasingEpochs: an older epoch removes every newer one
    ([(1, 5), (2, 6), (1, 7)], [(1, 7)]),
    # shouldEnforceOffsetsIncreaseMonotonically: the last assignment wins
    ([(2, 6), (3, 5)], [(3, 5)]),
    ([], []),
])
def test_load_keeps_what_kafkas_cache_keeps(entries, cache):
    assert kept(entries) == cache


def test_a_negative_entry_fails_the_load_with_kafkas_message_and_its_line():
    data = write_leader_epoch_checkpoint([(0, 0), (3, -1)])
    parsed = parse_leader_epoch_checkpoint(data)
    assert parsed.ok
    result = leader_epochs.load([(e.epoch, e.start_offset) for e in parsed.entries])
    assert result.error.message == ("Received invalid partition leader epoch entry "
                                    "EpochEntry(epoch=3, startOffset=-1)")
    assert result.error.line == 4 and not any(result.kept)


def test_partition_history_keeps_only_epochs_with_data_and_the_current_one():
    assert partition_history(0, 1000) == [(0, 0)]
    assert partition_history(3, 1000) == [(0, 0), (1, 250), (2, 500), (3, 750)]
    # offsets too few for every epoch: an epoch sharing its start with the next one is dropped
    assert partition_history(5, 3) == [(1, 0), (3, 1), (5, 2)]
    assert kept(partition_history(5, 3)) == partition_history(5, 3)


def test_replica_history_truncates_from_the_log_start_and_lacks_epochs_beyond_its_end():
    history = [(2, 6), (3, 8), (4, 11)]
    # shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest: truncateFromStart(9)
    assert replica_history(history, 9, 20) == [(3, 9), (4, 11)]
    # shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset: truncateFromStart(15)
    assert replica_history(history, 15, 20) == [(4, 15)]
    # shouldRetainLatestEpochOnClearAllEarliest: truncateFromStart(11)
    assert replica_history(history, 11, 20) == [(4, 11)]
    # a follower whose log ends at 10 has not seen epoch 4 yet
    assert replica_history(history, 0, 10) == [(2, 6), (3, 8)]
