"""Two writers on one table (embedded backend): the table layer notices that the table moved between its
read and its commit, re-runs from a fresh read or fails with ConcurrentTableUpdateError, and the table
always ends up consistent (never two copies of a slice, never a lost update)."""
import threading

import pytest
from delta_store_helpers import EVENTS, FINDINGS, active_paths, assert_df, make_store, orphan_files, ts

from jobs.tables.delta_store import ConcurrentTableUpdateError

pytestmark = pytest.mark.spark


def events(spark, rows):
    return spark.createDataFrame(rows, EVENTS.spark_schema())


def findings(spark, rows):
    return spark.createDataFrame(rows, FINDINGS.spark_schema())


def interfere_before_commit(monkeypatch, store, times, other_write):
    """Let ``other_write`` commit just before ``store``'s next ``times`` commits: a writer that always wins."""
    backend = store.backend
    original = backend._commit
    calls = {"n": 0}

    def commit(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] <= times:
            other_write(calls["n"])
        return original(*args, **kwargs)

    monkeypatch.setattr(backend, "_commit", commit)
    return calls


def test_stale_slice_replace_is_retried_so_a_concurrent_append_cannot_leave_a_second_copy(
        spark, tmp_path, monkeypatch):
    store = make_store(spark, tmp_path, retries=3)
    other = make_store(spark, tmp_path)
    store.append("t_events", events(spark, [("c1", "r1", 1, "old", None, None), ("c2", "r1", 1, "keep", None, None)]))
    late_rows = events(spark, [("c1", "r1", 2, "late copy of the old run", None, None)])
    calls = interfere_before_commit(monkeypatch, store, 1, lambda n: other.append("t_events", late_rows))

    new = [("c1", "r2", 1, "new", None, None)]
    version = store.replace_slice("t_events", events(spark, new), slice={"capture_id": "c1"}, run_id="r2")

    assert calls["n"] == 2  # first commit lost the race, the re-run from a fresh read won
    assert version == 3
    # delta-rs alone would have committed the stale remove over the append, leaving "late copy" in c1
    assert_df(store.read("t_events"), EVENTS, new + [("c2", "r1", 1, "keep", None, None)])
    assert [(h["version"], h["operation"], h["read_version"]) for h in store.history("t_events", limit=2)] == [
        (3, "REPLACE SLICE", 2), (2, "APPEND", 1)]
    assert orphan_files(store.location("t_events")) == []


def test_merge_is_rerun_from_a_fresh_read_when_the_table_moved(spark, tmp_path, monkeypatch):
    store = make_store(spark, tmp_path, retries=2)
    other = make_store(spark, tmp_path)
    store.append("t_findings", findings(spark, [("f1", "open", 1, None, None, "r1")]))
    sneaked_in = findings(spark, [("f2", "open", 2, None, None, "rX")])
    interfere_before_commit(monkeypatch, store, 1, lambda n: other.append("t_findings", sneaked_in))

    (store.merge("t_findings", findings(spark, [("f3", "open", 3, None, None, "r2")]), run_id="r2")
     .when_not_matched_insert_all()
     .when_not_matched_by_source_update(set={"status": "'resolved'"}, condition="t.status = 'open'")
     .execute())

    # the row another writer added meanwhile is judged too: it is not in the source, so it is resolved
    assert_df(store.read("t_findings"), FINDINGS, [
        ("f1", "resolved", 1, None, None, "r1"), ("f2", "resolved", 2, None, None, "rX"),
        ("f3", "open", 3, None, None, "r2")])
    assert store.version("t_findings") == 3
    assert orphan_files(store.location("t_findings")) == []


def test_out_of_retries_raises_a_clear_conflict_and_commits_nothing(spark, tmp_path, monkeypatch):
    store = make_store(spark, tmp_path, retries=1)
    other = make_store(spark, tmp_path)
    store.append("t_events", events(spark, [("c1", "r1", 1, "old", None, None)]))
    interfere_before_commit(monkeypatch, store, 2, lambda n: other.append(
        "t_events", events(spark, [("c9", "rX", n, "other writer", None, None)])))

    with pytest.raises(ConcurrentTableUpdateError) as err:
        store.replace_slice("t_events", events(spark, [("c1", "r2", 1, "new", None, None)]), slice={"capture_id": "c1"})

    assert "replace_slice on table 't_events' lost the commit race 2 time(s)" in str(err.value)
    assert "read at version 2, table was at version 3" in str(err.value)
    assert (err.value.read_version, err.value.found_version) == (2, 3)
    # exactly what the other writer left; none of our files are visible or left on disk
    assert_df(store.read("t_events"), EVENTS, [("c1", "r1", 1, "old", None, None),
                                               ("c9", "rX", 1, "other writer", None, None),
                                               ("c9", "rX", 2, "other writer", None, None)])
    assert orphan_files(store.location("t_events")) == []


def test_append_is_recommitted_without_rewriting_its_files(spark, tmp_path, monkeypatch):
    store = make_store(spark, tmp_path, retries=1)
    other = make_store(spark, tmp_path)
    store.create("t_events")
    interfere_before_commit(monkeypatch, store, 1, lambda n: other.append(
        "t_events", events(spark, [("c2", "rX", 1, "other", None, None)])))
    assert store.append("t_events", events(spark, [("c1", "r1", 1, "mine", None, None)])) == 2
    assert_df(store.read("t_events"), EVENTS, [("c1", "r1", 1, "mine", None, None), ("c2", "rX", 1, "other", None, None)])
    assert len(active_paths(store.location("t_events"))) == 2


def test_two_threads_racing_on_one_table_end_consistent(spark, tmp_path):
    seed = make_store(spark, tmp_path)
    seed.append("t_findings", findings(spark, [("f0", "open", 0, ts(2024, 1, 1), None, "r0")]))
    outcomes = {}
    start = threading.Barrier(2)

    def writer(run_id, finding):
        store = make_store(spark, tmp_path, retries=3)  # an independent writer (own backend, own snapshots)
        source = findings(spark, [(finding, "open", 1, ts(2024, 1, 2), None, run_id)])
        start.wait()
        try:
            (store.merge("t_findings", source, run_id=run_id)
             .when_matched_update_all().when_not_matched_insert_all().execute())
            outcomes[run_id] = "committed"
        except ConcurrentTableUpdateError:
            outcomes[run_id] = "conflict"

    threads = [threading.Thread(target=writer, args=(f"r{i}", f"f{i}")) for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)

    assert set(outcomes) == {"r1", "r2"} and "committed" in outcomes.values()
    winners = sorted(r for r, o in outcomes.items() if o == "committed")
    expected = [("f0", "open", 0, ts(2024, 1, 1), None, "r0")] + [
        (f"f{r[1]}", "open", 1, ts(2024, 1, 2), None, r) for r in winners]
    assert_df(seed.read("t_findings"), FINDINGS, expected)
    assert seed.version("t_findings") == 1 + len(winners)
    assert sorted(h["run_id"] for h in seed.history("t_findings") if h["operation"] == "MERGE") == winners
    assert orphan_files(seed.location("t_findings")) == []
