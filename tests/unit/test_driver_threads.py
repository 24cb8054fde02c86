"""jobs.driver_threads.map_at_once (table writes, reconcile's actions) and how many actions a capture runs at once."""
from __future__ import annotations

import threading

import pytest

from jobs.driver_threads import map_at_once
from jobs.spark_session import actions_at_once
from tests.settings_from import settings_from


def test_two_at_once_really_overlap_and_results_keep_the_callers_order():
    second_started = threading.Event()

    def work(item):
        if item == "first":  # finishes only once the second call is running at the same time
            assert second_started.wait(timeout=10)
        else:
            second_started.set()
        return item.upper()

    assert map_at_once(work, ["first", "second"], at_once=2) == ["FIRST", "SECOND"]


def test_one_at_a_time_runs_in_the_callers_thread_in_order():
    seen = []
    assert map_at_once(lambda i: seen.append((i, threading.current_thread())) or i * 2, [1, 2, 3], 1) == [2, 4, 6]
    assert seen == [(1, threading.current_thread()), (2, threading.current_thread()),
                    (3, threading.current_thread())]


@pytest.mark.parametrize("at_once", [1, 3])
def test_every_call_runs_and_the_first_failure_in_order_is_raised(at_once):
    ran = []

    def work(item):
        ran.append(item)
        if item in ("b", "d"):
            raise ValueError(f"failed on {item}")
        return item

    with pytest.raises(ValueError, match="failed on b"):
        map_at_once(work, ["a", "b", "c", "d", "e"], at_once)
    assert sorted(ran) == (["a", "b"] if at_once == 1 else ["a", "b", "c", "d", "e"])


def test_only_the_small_capture_profile_runs_actions_at_once():
    spark = settings_from(spark={"small_capture_actions_at_once": 3}).spark
    assert actions_at_once(spark, "interpreted") == 3
    for mode in ("compiled", "configured", "unchanged"):  # large captures and sessions the job did not tune
        assert actions_at_once(spark, mode) == 1
    assert actions_at_once(settings_from(spark={"small_capture_actions_at_once": 0}).spark, "interpreted") == 1
    assert actions_at_once(settings_from().spark, "interpreted") == 2  # the shipped default
