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


# ---------------------------------------------------------------------------------------------- endOffsetFor
# Expected answers are those of Kafka's LeaderEpochFileCacheTest (apache/kafka@1eb7644,
# storage/src/test/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCacheTest.java), whose cases
# follow LeaderEpochFileCache.endOffsetFor's javadoc: the largest epoch <= the requested one, ending where the
# next cached epoch starts, or at the log end offset for the latest epoch.
@pytest.mark.parametrize("cache, requested, leo, answer", [
    # shouldReturnLogEndOffsetIfLatestEpochRequested
    ([(2, 5), (3, 6), (4, 7)], 4, 100, (4, 100)),
    # shouldReturnUndefinedOffsetIfUndefinedEpochRequested
    ([(2, 5)], -1, 100, (-1, -1)),
    # shouldReturnUnsupportedIfNoEpochRecorded
    ([], 0, 100, (-1, -1)),
    # shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch: a cache that lost its older epochs answers with
    # the requested epoch and the start of its first one
    ([(5, 11), (6, 12), (7, 13)], 4, 100, (4, 11)),
    # shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
    ([(0, 10), (2, 13), (4, 17)], 1, 100, (0, 13)),
    ([(0, 10), (2, 13), (4, 17)], 2, 100, (2, 17)),
    ([(0, 10), (2, 13), (4, 17)], 3, 100, (2, 17)),
    # an epoch above every cached one (the cache's javadoc: "should never be hit")
    ([(0, 10), (2, 13)], 5, 100, (-1, -1)),
])
def test_end_offset_for_answers_as_leader_epoch_file_cache(cache, requested, leo, answer):
    assert leader_epochs.end_offset_for(cache, requested, leo) == answer


# ---------------------------------------------------------------------------------------------- truncation
# Each expectation below is worked out by hand from Kafka's code (apache/kafka@1eb7644): the leader's check in
# Partition.readRecords (diverging when its epoch is below the fetched one or its end offset below the fetch
# offset), the follower's AbstractFetcherThread.getOffsetTruncationState, and UnifiedLog.truncateTo (the cache
# drops entries from the truncation offset: LeaderEpochFileCache.truncateFromEnd).

def test_unclean_election_the_returning_replica_truncates_the_epoch_its_leader_never_had():
    # issue 64, observation 1: broker 1 wrote 300-599 in epoch 4; the uncleanly elected leader went 0 -> 6 at 300.
    # Fetch(lastFetchedEpoch=4, offset 600): leader endOffsetFor(4) = (0, 300) (floor 0, next epoch 6 at 300);
    # 0 < 4: diverging. Follower endOffsetFor(0) = (0, 300): same epoch, truncate to min(300, 300, 600).
    t = leader_epochs.follower_truncation([(0, 0), (4, 300)], 600, 600, [(0, 0), (6, 300)], 700, 0)
    assert (t.offset, t.rule, t.epochs) == (300, "epoch_end", (4,))
    assert t.steps == ((4, 0, 300, 300),)


def test_a_follower_lacking_the_leaders_epoch_truncates_in_two_rounds_kip_279():
    # Fetch(3, 400): leader endOffsetFor(3) = (2, 350). Follower endOffsetFor(2) = (1, 300): it never had epoch 2,
    # so it truncates to min(300, 400) and fetches again (truncationCompleted = false). Fetch(1, 300): leader
    # endOffsetFor(1) = (0, 150). Follower endOffsetFor(0) = (0, 100): truncate to min(100, 150, 300) = 100.
    t = leader_epochs.follower_truncation([(0, 0), (1, 100), (3, 300)], 400, 400,
                                          [(0, 0), (2, 150), (4, 350)], 500, 0)
    assert (t.offset, t.epochs) == (100, (1, 3))
    assert t.steps == ((3, 2, 350, 300), (1, 0, 150, 100))


def test_a_leader_that_lost_its_older_epochs_answers_with_its_first_start():
    # leader's log start moved to 500: its cache begins at epoch 3. Fetch(2, 650): floor none, next epoch 3 at
    # 500 -> (2, 500); 500 < 650: diverging. Follower's own epoch 2 is its latest: (2, 650); truncate to 500. The
    # cut records 500-649 were written in the follower's epochs 1 (500-549) and 2.
    t = leader_epochs.follower_truncation([(1, 100), (2, 550)], 650, 640, [(3, 500), (4, 600)], 700, 500)
    assert (t.offset, t.rule, t.epochs) == (500, "epoch_end", (1, 2))


def test_a_follower_without_epochs_truncates_to_its_high_watermark():
    # ReplicaManager.initialFetchOffset: no latest epoch -> the high watermark, state Truncating ->
    # AbstractFetcherThread.truncateToHighWatermark
    t = leader_epochs.follower_truncation([], 500, 420, [(0, 0), (1, 100)], 600, 0)
    assert (t.offset, t.rule) == (420, "high_watermark")
    assert leader_epochs.follower_truncation([], 500, 500, [(0, 0)], 600, 0).rule == "none"


def test_healthy_followers_keep_everything():
    leader = [(0, 0), (1, 100), (2, 200)]
    # caught up in the leader's current epoch (the leader's answer is its own, growing, log end)
    assert leader_epochs.follower_truncation(leader, 450, 450, leader, 400, 0).offset == 450
    # lagging inside an older epoch: endOffsetFor(1) = (1, 200) is not below the fetch offset 150
    t = leader_epochs.follower_truncation([(0, 0), (1, 100)], 150, 150, leader, 400, 0)
    assert (t.offset, t.rule, t.steps) == (150, "none", ())
    # lagging exactly to the end of epoch 1
    assert leader_epochs.follower_truncation([(0, 0), (1, 100)], 200, 200, leader, 400, 0).offset == 200


def test_an_old_leaders_unreplicated_tail_is_cut_at_the_next_epochs_start():
    # the old leader of epoch 1 wrote to 250; the new leader started epoch 2 at 200 (clean election from the ISR)
    t = leader_epochs.follower_truncation([(0, 0), (1, 100)], 250, 180, [(0, 0), (1, 100), (2, 200)], 400, 0)
    assert (t.offset, t.epochs) == (200, (1,))


def test_a_follower_below_the_leaders_log_start_restarts_there_without_a_finding():
    # Partition.readRecords: fetch offset below the log start -> OffsetOutOfRange -> truncateFullyAndStartAt;
    # what the follower drops is what the leader's retention already deleted
    t = leader_epochs.follower_truncation([(0, 0), (1, 100)], 250, 250, [(3, 500), (4, 600)], 700, 500)
    assert (t.offset, t.rule) == (250, "below_leader_log_start")


def test_an_epoch_the_leader_does_not_know_falls_back_to_the_leaders_log_end():
    # follower at epoch 5, leader's latest is 4: endOffsetFor(5) is undefined -> OffsetOutOfRangeException ->
    # fetchOffsetAndApplyTruncateAndBuild cuts to the leader's log end when it is below the follower's
    t = leader_epochs.follower_truncation([(0, 0), (5, 300)], 500, 500, [(0, 0), (4, 200)], 450, 0)
    assert (t.offset, t.rule, t.epochs) == (450, "leader_log_end", (5,))
    assert leader_epochs.follower_truncation([(0, 0), (5, 300)], 500, 500, [(0, 0), (4, 200)], 900, 0).offset == 500


def test_epochs_from_names_the_epochs_of_the_cut_records():
    entries = [(0, 0), (2, 100), (5, 300)]
    assert leader_epochs.epochs_from(entries, 300) == (5,)
    assert leader_epochs.epochs_from(entries, 299) == (2, 5)
    assert leader_epochs.epochs_from(entries, 50) == (0, 2, 5)
