"""The simulator's metadata-log retention, as KafkaRaftLog.maybeClean applies it (Kafka's source is the oracle:
``cleanSnapshotsRetentionSize`` deletes the oldest snapshot while the log's segments plus every snapshot exceed
``metadata.max.retention.bytes``, ``cleanSnapshotsRetentionMs`` one whose last record is older than
``metadata.max.retention.ms``; each deletion moves the log start to the next snapshot, deletes the segments
wholly below it, and never touches the newest snapshot or the last segment)."""
from __future__ import annotations

import pytest

from jobs.simulate import metalog
from jobs.simulate.clock import DAY

NOOP = ("NO_OP_RECORD", 0, {})


@pytest.fixture
def log(tmp_path):
    """Three segments (offsets 0-9, 10-19, 20-29, one a day) and a snapshot at the end of each."""
    log = metalog.MetadataLog(str(tmp_path), segment_ms=DAY)
    for day in range(3):
        for i in range(10):
            log.append([NOOP], day * DAY + i)
        log.take_snapshot(day * DAY + 100, lambda: iter(()))
    log.close()
    assert [s.base_offset for s in log.segments] == [0, 10, 20]
    assert [p.end_offset for p in log.snapshots] == [10, 20, 30]
    return log


def sizes(plan):
    return sum(size for _, size in plan.segments)


def test_snapshots_past_the_size_limit_go_oldest_first_with_the_segments_below_the_new_log_start(log, monkeypatch):
    segment_bytes = sum(s.size for s in log.segments)
    size = {10: 1000, 20: 1000, 30: 1000}.get
    monkeypatch.setattr(metalog, "RETENTION_BYTES", segment_bytes + 3000 - 1)  # one byte too many
    plan = log.plan_copy(30, 3 * DAY, lambda p: size(p.end_offset))
    # deleting snapshot 10 moves the log start to 20: segments 0-9 and 10-19 (next base <= 20) go with it
    assert [p.end_offset for p in plan.snapshots] == [20, 30] and plan.log_start == 20
    assert [s.base_offset for s, _ in plan.segments] == [20]
    assert sizes(plan) + 2000 <= metalog.RETENTION_BYTES

    monkeypatch.setattr(metalog, "RETENTION_BYTES", 1)  # the newest snapshot and the last segment stay
    plan = log.plan_copy(30, 3 * DAY, lambda p: size(p.end_offset))
    assert [p.end_offset for p in plan.snapshots] == [30] and plan.log_start == 30
    assert [s.base_offset for s, _ in plan.segments] == [20]


def test_within_the_size_limit_or_without_sizes_only_time_retention_applies(log):
    kept = log.plan_copy(30, 3 * DAY, lambda p: 1000)
    assert [p.end_offset for p in kept.snapshots] == [10, 20, 30] and kept.log_start == 0
    assert [s.base_offset for s, _ in kept.segments] == [0, 10, 20]
    unsized = log.plan_copy(30, 3 * DAY)
    assert unsized.snapshots == kept.snapshots and unsized.segments == kept.segments
    # eight days on, the snapshots whose last record is over 7 days old and have a newer one are gone
    later = log.plan_copy(30, 9 * DAY + 50, lambda p: 1000)
    assert [p.end_offset for p in later.snapshots] == [30] and later.log_start == 30


def kafka_order(log, end, now, size, limit):
    """KafkaRaftLog.maybeClean written out from Kafka's source, independently of the simulator: the size rule
    over every snapshot first, then the time rule over those left; (snapshot end offsets kept, log start)."""
    points = [p for p in log.snapshots if p.end_offset <= end and p.taken_ms <= now]
    bases = [s.base_offset for s in log.segments if s.base_offset < end]
    full = {s.base_offset: s.size for s in log.segments}

    def log_size(start):  # segments not wholly below the log start (the last always); ``end`` is the log's end
        return sum(full[b] for i, b in enumerate(bases) if i == len(bases) - 1 or bases[i + 1] > start)

    start, total, i = 0, sum(size(p) for p in points), 0
    while i < len(points) - 1 and log_size(start) + total > limit:
        total -= size(points[i])
        start, i = points[i + 1].end_offset, i + 1
    while i < len(points) - 1 and now - points[i].last_ts > metalog.RETENTION_MS:
        start, i = points[i + 1].end_offset, i + 1
    return [p.end_offset for p in points[i:]], start


def test_time_then_size_keeps_what_kafkas_size_then_time_keeps(log, monkeypatch):
    """Kafka checks size first; the simulator checks time first so it asks the size of retained snapshots only.
    Both rules delete the oldest, and what a copy holds only shrinks, so the two orders keep the same files."""
    sizes_by_end = {10: 500, 20: 3000, 30: 1000}
    size = lambda p: sizes_by_end[p.end_offset]  # noqa: E731
    segment_bytes, last = sum(s.size for s in log.segments), log.segments[-1].size
    seen = set()
    limits = [segment_bytes + slack for slack in (-10_000, -3000, -1, 0, 1000, 1499, 1500, 2500, 4500, 10_000)]
    limits += [last + kept + d for kept in (1000, 4000) for d in (-1, 0, 1, 499, 500)]  # around each deletion
    for limit in limits:
        monkeypatch.setattr(metalog, "RETENTION_BYTES", limit)
        for now in (3 * DAY, 8 * DAY, 8 * DAY + 1, 9 * DAY + 9, 9 * DAY + 10, 30 * DAY):
            plan = log.plan_copy(30, now, size)
            ours = ([p.end_offset for p in plan.snapshots], plan.log_start)
            assert ours == kafka_order(log, 30, now, size, limit), (limit, now)
            held = [s.base_offset for s, _ in plan.segments]
            assert held[-1] == 20 and all(after > plan.log_start for after in held[1:])  # none wholly below
            seen.add((tuple(ours[0]), ours[1]))
    assert len(seen) >= 3  # the grid reaches several different outcomes
