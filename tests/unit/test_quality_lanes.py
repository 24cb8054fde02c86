"""How the quality stage splits its suites over driver threads (``jobs.quality.lanes.suite_lanes``)."""
from __future__ import annotations

import random

from jobs.quality.lanes import suite_lanes


def test_one_lane_holds_every_table_in_name_order():
    assert suite_lanes({"b": 3, "a": 1, "c": 2}, 1) == [["a", "b", "c"]]


def test_two_lanes_balance_the_expectations():
    weights = {"gold_findings": 16, "silver_replicas": 15, "bronze_dir_entries": 12, "bronze_zk_events": 9,
               "bronze_ingest_files": 8, "silver_brokers": 5, "silver_log_dirs": 6, "gold_run_summary": 7}
    lanes = suite_lanes(weights, 2)
    assert sorted(t for lane in lanes for t in lane) == sorted(weights)
    loads = sorted(sum(weights[t] for t in lane) for lane in lanes)
    assert loads == [39, 39]
    assert all(lane == sorted(lane) for lane in lanes)


def test_never_more_lanes_than_tables_and_none_empty():
    assert suite_lanes({"a": 4}, 3) == [["a"]]
    assert suite_lanes({}, 2) == []
    assert len(suite_lanes({"a": 1, "b": 1, "c": 1}, 8)) == 3


def test_the_split_depends_only_on_the_weights():
    rng = random.Random(7)
    weights = {f"t{i}": rng.randint(1, 20) for i in range(20)}
    shuffled = dict(sorted(weights.items(), key=lambda kv: rng.random()))
    lanes = suite_lanes(weights, 2)
    assert suite_lanes(shuffled, 2) == lanes
    heaviest = max(weights.values())
    loads = [sum(weights[t] for t in lane) for lane in lanes]
    assert max(loads) - min(loads) <= heaviest


def test_without_cloneable_sessions_every_table_goes_to_one_lane():
    """A runtime whose sessions have no classic JVM side (no ``_jsparkSession``) validates one suite at a time."""
    from jobs.quality.lanes import frames_by_lane

    class Frame:
        sparkSession = object()

    tables = {"a": Frame(), "b": Frame(), "c": Frame()}
    lanes = frames_by_lane(tables, [["a", "c"], ["b"]], spark=object())
    assert lanes == [{"a": tables["a"], "c": tables["c"], "b": tables["b"]}]
    assert frames_by_lane(tables, [], spark=object()) == []
