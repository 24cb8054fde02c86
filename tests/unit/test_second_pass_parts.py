"""The second pass's parts: a large metadata file cut at batch starts into equal parts, and decoding with the
garbage collector's first generation raised only while a task runs."""
from __future__ import annotations

import gc
import random

import pytest

from jobs.ingest.metadata_sequence import balanced_cuts
from jobs.ingest.task_gc import DECODE_THRESHOLDS, fewer_collections


def _grains(batch_starts, size, grain):
    """What chunk_starts' query returns for a file: per grain, its first batch start and last batch end."""
    spans = {}
    ends = batch_starts[1:] + [size]
    for start, end in zip(batch_starts, ends, strict=True):
        first, last = spans.get(start // grain, (start, end))
        spans[start // grain] = (min(first, start), max(last, end))
    return sorted(spans.values())


@pytest.mark.parametrize("seed", range(20))
def test_parts_are_batch_starts_of_about_equal_size_and_at_most_the_chunk(seed):
    rng = random.Random(seed)
    starts, pos = [], 0
    for _ in range(rng.randint(1, 3000)):
        starts.append(pos)
        pos += rng.randint(50, 200_000)
    size, chunk = pos, rng.choice([1 << 20, 4 << 20, 16 << 20])
    grain = chunk // 16
    cuts = balanced_cuts(_grains(starts, size, grain), chunk)
    assert cuts[0] == 0 and cuts == sorted(set(cuts)) and set(cuts) <= set(starts)
    bounds = cuts + [size]
    parts = [b - a for a, b in zip(bounds, bounds[1:], strict=False)]
    expected = -(-size // chunk)
    assert len(parts) <= expected  # never more parts than the chunk size calls for
    # each boundary sits within a grain (plus one batch) of its ideal place
    slack = grain + 200_000
    assert len(parts) == expected or len(starts) < expected * 16
    assert all(abs(p - size / len(parts)) <= 2 * slack for p in parts)


def test_the_real_1m_log_shape_gives_four_equal_parts_not_three_large_and_one_small():
    """55 MB of ~65 KB batches with 16 MiB chunks: cutting every 16 MiB gave 16, 16, 16 and 5 MB."""
    starts = list(range(0, 55_272_685 - 65_000, 65_000))
    cuts = balanced_cuts(_grains(starts, 55_272_685, (16 << 20) // 16), 16 << 20)
    parts = [b - a for a, b in zip(cuts, cuts[1:] + [55_272_685], strict=False)]
    assert len(parts) == 4 and max(parts) - min(parts) <= 2 * (1 << 20)


def test_a_file_smaller_than_one_chunk_is_one_part():
    assert balanced_cuts([(0, 900)], 1 << 20) == [0]


def test_collections_are_rarer_only_inside_and_restored_after_a_failure():
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == DECODE_THRESHOLDS
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("a task failing half way")
    assert gc.get_threshold() == before


def test_a_task_iterator_closed_early_restores_the_thresholds():
    before = gc.get_threshold()

    def task():
        with fewer_collections():
            yield from range(10)

    it = task()
    next(it)
    assert gc.get_threshold() == DECODE_THRESHOLDS
    it.close()  # Spark stops reading a partition (e.g. a limit)
    assert gc.get_threshold() == before
