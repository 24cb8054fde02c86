"""Table layer on the embedded backend: create, append, slice replace, MERGE, schema enforcement,
time travel, and that the tables are real Delta tables (read back with deltalake and Polars)."""
import json
import os
from urllib.parse import unquote

import pyarrow as pa
import pytest
from delta_store_helpers import (
    EVENTS,
    FINDINGS,
    UTC,
    active_paths,
    assert_df,
    log_actions,
    make_store,
    norm,
    orphan_files,
    sorted_rows,
    ts,
)
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.tables.delta_store import (
    DuplicateSourceRowsError,
    NullConstraintError,
    SchemaMismatchError,
    SliceMismatchError,
    TableMissingError,
)
from jobs.tables.spec import Column, TableSpec

pytestmark = pytest.mark.spark

EVENT_ROWS = [
    ("c1", "r1", 1, "one", ts(2024, 1, 1, 0, 0, 0, 123456), [1, 2]),
    ("c1", "r1", 2, None, None, None),
    ("a:b/c d%e", "r1", 3, "odd capture id", ts(2024, 2, 29, 23, 59, 59, 999999), []),
    ("ünï{x}[y]", "r1", 4, "non-ascii", ts(1999, 12, 31), [None]),
    (None, "r1", 5, "no capture", None, [7]),
]


@pytest.fixture
def store(spark, tmp_path):
    return make_store(spark, tmp_path)


def events(spark, rows):
    return spark.createDataFrame(rows, EVENTS.spark_schema())


def findings(spark, rows):
    return spark.createDataFrame(rows, FINDINGS.spark_schema())


# --------------------------------------------------------------------------- create / append / read back

def test_create_makes_an_empty_delta_table_at_version_0(store):
    from deltalake import DeltaTable

    assert not store.exists("t_events")
    assert store.create("t_events") == 0
    assert store.create("t_events") == 0  # idempotent
    assert store.exists("t_events")
    assert_df(store.read("t_events"), EVENTS, [])
    table = DeltaTable(store.location("t_events"))
    assert (table.protocol().min_reader_version, table.protocol().min_writer_version) == (1, 2)
    assert table.metadata().partition_columns == ["capture_id"]
    assert [(f.name, str(f.type)) for f in table.schema().fields] == [
        ("capture_id", 'PrimitiveType("string")'), ("run_id", 'PrimitiveType("string")'),
        ("k", 'PrimitiveType("long")'), ("v", 'PrimitiveType("string")'), ("ts", 'PrimitiveType("timestamp")'),
        ("ids", 'ArrayType(PrimitiveType("integer"), contains_null=True)')]


def test_append_reads_back_identically_in_spark_deltalake_and_polars(spark, store):
    import polars as pl
    from deltalake import DeltaTable

    assert store.append("t_events", events(spark, EVENT_ROWS), run_id="r1") == 1
    assert_df(store.read("t_events"), EVENTS, EVENT_ROWS)

    path = store.location("t_events")
    table = DeltaTable(path)
    arrow = table.to_pyarrow_table()
    assert arrow.schema.names == list(EVENTS.column_names)
    assert [arrow.schema.field(n).type for n in ("k", "ts", "ids")] == \
        [pa.int64(), pa.timestamp("us", tz="UTC"), pa.list_(pa.field("element", pa.int32()))]
    assert pa.types.is_string(arrow.schema.field("v").type) or pa.types.is_large_string(arrow.schema.field("v").type)
    assert sorted_rows(tuple(r.values()) for r in arrow.to_pylist()) == sorted_rows(EVENT_ROWS)
    partitions = {row["partition.capture_id"] for row in pa.table(table.get_add_actions(flatten=True)).to_pylist()}
    assert partitions == {"c1", "a:b/c d%e", "ünï{x}[y]", None}
    # timestamps stay plain Delta 'timestamp' (UTC): protocol stays reader 1 / writer 2
    assert (table.protocol().min_reader_version, table.protocol().min_writer_version) == (1, 2)

    frame = pl.read_delta(path)
    assert dict(frame.schema) == {"capture_id": pl.String, "run_id": pl.String, "k": pl.Int64, "v": pl.String,
                                  "ts": pl.Datetime("us", "UTC"), "ids": pl.List(pl.Int32)}
    assert sorted_rows(frame.select(list(EVENTS.column_names)).rows()) == sorted_rows(EVENT_ROWS)


def test_add_actions_carry_raw_paths_partition_values_sizes_and_stats(spark, store):
    store.append("t_events", events(spark, EVENT_ROWS[:2]), run_id="r1")
    adds = [a["add"] for a in log_actions(store.location("t_events")) if "add" in a]
    assert len(adds) >= 1
    for add in adds:
        assert add["partitionValues"] == {"capture_id": "c1"}
        assert add["path"].startswith("capture_id=c1/part-") and add["path"].endswith(".parquet")
        assert add["size"] == os.path.getsize(os.path.join(store.location("t_events"), add["path"]))
    stats = [json.loads(a["stats"]) for a in adds]
    assert sum(s["numRecords"] for s in stats) == 2
    merged_min = min(s["minValues"]["k"] for s in stats)
    merged_max = max(s["maxValues"]["k"] for s in stats)
    assert (merged_min, merged_max) == (1, 2)
    assert sum(s["nullCount"]["v"] for s in stats) == 1
    ts_bounds = [(s["minValues"].get("ts"), s["maxValues"].get("ts")) for s in stats if "ts" in s["minValues"]]
    assert ts_bounds == [("2024-01-01T00:00:00.123Z", "2024-01-01T00:00:00.124Z")]


def test_odd_partition_values_are_stored_encoded_once(spark, store):
    store.append("t_events", events(spark, [EVENT_ROWS[2]]), run_id="r1")
    (add,) = [a["add"] for a in log_actions(store.location("t_events")) if "add" in a]
    # on disk: Spark's escaping; in the log: that path URI-encoded exactly once by delta-rs
    assert add["path"].startswith("capture_id=a%253Ab%252Fc%20d%2525e/part-")
    assert add["partitionValues"] == {"capture_id": "a:b/c d%e"}
    assert active_paths(store.location("t_events"))[0].startswith("capture_id=a%3Ab%2Fc d%25e/")


def test_partition_values_that_look_like_other_types_stay_text(spark, store):
    ids = ["001", "2024-01-01", "1e3", "true", "NaN", " 7 ", "2024-01-01 00:00:00", "null"]
    rows = [(c, "r1", i, None, None, None) for i, c in enumerate(ids)]
    store.append("t_events", events(spark, rows))
    assert_df(store.read("t_events"), EVENTS, rows)


def test_empty_append_commits_nothing(spark, store):
    store.create("t_events")
    assert store.append("t_events", events(spark, []), run_id="r1") == 0


# --------------------------------------------------------------------------- replace one slice

def test_replace_slice_twice_leaves_exactly_one_copy(spark, store):
    store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    rerun = [("c1", "r2", 1, "one again", None, [3]), ("c1", "r2", 9, "new", None, None)]
    first = store.replace_slice("t_events", events(spark, rerun), slice={"capture_id": "c1"}, run_id="r2")
    after_first = active_paths(store.location("t_events"))
    second = store.replace_slice("t_events", events(spark, rerun), slice={"capture_id": "c1"}, run_id="r2")
    assert (first, second) == (2, 3)
    expected = [r for r in EVENT_ROWS if r[0] != "c1"] + rerun
    assert_df(store.read("t_events"), EVENTS, expected)
    assert_df(store.read("t_events", version=first), EVENTS, expected)
    # the second run swapped the slice's files, other captures' files are untouched
    after_second = active_paths(store.location("t_events"))
    assert [p for p in after_second if not p.startswith("capture_id=c1/")] == \
        [p for p in after_first if not p.startswith("capture_id=c1/")]
    assert set(p for p in after_second if p.startswith("capture_id=c1/")).isdisjoint(after_first)


def test_replace_slice_of_the_null_capture(spark, store):
    store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    store.replace_slice("t_events", events(spark, [(None, "r2", 50, "x", None, None)]), slice={"capture_id": None})
    assert_df(store.read("t_events"), EVENTS, EVENT_ROWS[:4] + [(None, "r2", 50, "x", None, None)])


def test_replace_slice_on_unpartitioned_table_rewrites_only_files_holding_the_slice(spark, store):
    run1 = [("f1", "open", 10, ts(2024, 1, 1), None, "r1"), ("f2", "open", 20, ts(2024, 1, 1), None, "r1")]
    run2 = [("f3", "open", 30, ts(2024, 1, 2), None, "r2")]
    store.append("t_findings", findings(spark, run1), run_id="r1")
    store.append("t_findings", findings(spark, run2), run_id="r2")
    before = active_paths(store.location("t_findings"))
    rerun1 = [("f1", "open", 11, ts(2024, 1, 3), None, "r1")]
    for _ in range(2):
        store.replace_slice("t_findings", findings(spark, rerun1), slice={"run_id": "r1"}, run_id="r1")
    assert_df(store.read("t_findings"), FINDINGS, rerun1 + run2)
    after = active_paths(store.location("t_findings"))
    run2_files = [p for p in before if p not in active_paths_at(store, "t_findings", 1)]
    assert run2_files and set(run2_files) <= set(after)  # r2's file never rewritten


def active_paths_at(store, name, version):
    from deltalake import DeltaTable

    table = DeltaTable(store.location(name), version=version)
    return [unquote(p) for p in pa.table(table.get_add_actions(flatten=True)).column("path").to_pylist()]


def test_replace_slice_on_unpartitioned_table_mixing_slices_in_one_file(spark, store):
    mixed = [("f1", "open", 1, None, None, "r1"), ("f2", "open", 2, None, None, "r2"),
             ("f3", "open", 3, None, None, None)]
    store.append("t_findings", findings(spark, mixed).coalesce(1), run_id="r1")
    store.replace_slice("t_findings", findings(spark, [("f9", "open", 9, None, None, "r1")]), slice={"run_id": "r1"})
    assert_df(store.read("t_findings"), FINDINGS, mixed[1:] + [("f9", "open", 9, None, None, "r1")])


@pytest.mark.parametrize("name, rows, where", [
    ("t_events", [("c1", "r1", 1, "in", None, None), ("c2", "r1", 2, "out", None, None)], {"capture_id": "c1"}),
    ("t_findings", [("f1", "open", 1, None, None, "r1"), ("f2", "open", 2, None, None, "r9")], {"run_id": "r1"}),
])
def test_replace_slice_refuses_rows_outside_the_slice(spark, store, name, rows, where):
    spec = {"t_events": EVENTS, "t_findings": FINDINGS}[name]
    store.create(name)
    with pytest.raises(SliceMismatchError, match="outside the slice|do not have"):
        store.replace_slice(name, spark.createDataFrame(rows, spec.spark_schema()), slice=where)
    assert store.version(name) == 0
    assert orphan_files(store.location(name)) == []


def test_replace_slice_with_no_rows_empties_the_slice(spark, store):
    store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    store.replace_slice("t_events", events(spark, []), slice={"capture_id": "c1"})
    assert_df(store.read("t_events"), EVENTS, [r for r in EVENT_ROWS if r[0] != "c1"])


def test_replacing_a_slice_with_rows_known_empty_runs_no_spark_job(spark, store):
    """A frame the optimizer knows is empty (an ingest table no task emitted a row of) is not written by a
    Spark job: the commit alone empties the slice."""
    from jobs.engine.local_frames import local_frame

    store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup
    before = len(jobs(None))
    version = store.replace_slice("t_events", local_frame(spark, [], EVENTS.spark_schema()), slice={"capture_id": "c1"})
    assert len(jobs(None)) == before
    assert version == 2
    assert_df(store.read("t_events"), EVENTS, [r for r in EVENT_ROWS if r[0] != "c1"])


def test_reading_a_table_without_files_runs_no_job_and_empties_what_it_feeds(spark, store):
    """A table with no data file (an empty bronze table of a small capture) reads as a local relation: no Python
    task unpickles an empty list at every query that touches it, and the optimizer drops the joins it feeds."""
    from jobs.engine.local_frames import is_empty_local

    store.create("t_events")
    empty = store.read("t_events")
    other = events(spark, EVENT_ROWS)
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup
    before = len(jobs(None))
    assert empty.collect() == [] and empty.where(F.col("k") > 1).collect() == []
    assert is_empty_local(other.join(empty, "k"))
    assert len(jobs(None)) == before
    assert [f.name for f in empty.schema.fields] == list(EVENTS.column_names)
    assert [f.dataType for f in empty.schema.fields] == [f.dataType for f in EVENTS.spark_schema().fields]


def test_slice_arguments_are_validated(spark, store):
    df = events(spark, [])
    with pytest.raises(ValueError, match="not a column"):
        store.replace_slice("t_events", df, slice={"capture": "c1"})
    with pytest.raises(ValueError, match="non-empty dict"):
        store.replace_slice("t_events", df, slice={})
    with pytest.raises(TypeError, match=r"'capture_id' \(string\) is 1.5 \(float\); expected str or None"):
        store.replace_slice("t_events", df, slice={"capture_id": 1.5})
    with pytest.raises(TypeError, match="expected int"):
        store.replace_slice("t_events", df, slice={"k": True})
    with pytest.raises(ValueError, match="has type timestamp"):
        store.replace_slice("t_events", df, slice={"ts": None})
    with pytest.raises(ValueError, match="empty partition value"):
        store.replace_slice("t_events", df, slice={"capture_id": ""})


# --------------------------------------------------------------------------- MERGE

BASE_FINDINGS = [
    ("f1", "open", 100, ts(2024, 1, 1), None, "r1"),
    ("f2", "open", 200, ts(2024, 1, 1), None, "r1"),
    ("f3", "resolved", 300, ts(2023, 12, 1), ts(2023, 12, 2), "r0"),
]


def test_merge_inserts_updates_and_marks_missing_rows(spark, store):
    store.append("t_findings", findings(spark, BASE_FINDINGS), run_id="r1")
    source = findings(spark, [
        ("f1", "open", 111, ts(2024, 1, 2), None, "r2"),   # still there: update
        ("f4", "open", 400, ts(2024, 1, 2), None, "r2"),   # new: insert
    ])
    version = (store.merge("t_findings", source, run_id="r2")
               .when_matched_update(set={"bytes": "s.bytes", "last_seen": "s.last_seen", "run_id": "s.run_id"})
               .when_not_matched_insert_all()
               .when_not_matched_by_source_update(
                   set={"status": "'resolved'", "resolved_at": "timestamp'2024-01-02 00:00:00'", "run_id": "'r2'"},
                   condition="status = 'open'")  # unqualified: only the target is in scope here
               .execute())
    assert version == 2
    assert_df(store.read("t_findings"), FINDINGS, [
        ("f1", "open", 111, ts(2024, 1, 2), None, "r2"),
        ("f2", "resolved", 200, ts(2024, 1, 1), ts(2024, 1, 2), "r2"),   # gone from the source: resolved
        ("f3", "resolved", 300, ts(2023, 12, 1), ts(2023, 12, 2), "r0"),  # already resolved: untouched
        ("f4", "open", 400, ts(2024, 1, 2), None, "r2"),
    ])
    assert_df(store.read("t_findings", version=1), FINDINGS, BASE_FINDINGS)
    (last,) = store.history("t_findings", limit=1)
    assert (last["version"], last["operation"], last["run_id"], last["read_version"]) == (2, "MERGE", "r2", 1)
    # what a Delta reader's DESCRIBE HISTORY shows: the log's own commitInfo, not our normalised view
    raw, added, removed = delta_log_commit(store.location("t_findings"), 2)
    assert raw["operation"] == "MERGE" and json.loads(raw["userMetadata"])["run_id"] == "r2"
    assert raw["operationParameters"]["predicate"] == "t.`finding_id` <=> s.`finding_id`"
    m = {k: int(v) for k, v in raw["operationMetrics"].items()}
    # Delta's MERGE metrics (delta-spark MergeIntoCommand): f1 updated, f4 inserted, f2 resolved by source;
    # f3 is copied when it shares a rewritten file; output = inserted + updated + copied = rows of the new files
    assert (m["numSourceRows"], m["numTargetRowsInserted"], m["numTargetRowsMatchedUpdated"],
            m["numTargetRowsNotMatchedBySourceUpdated"], m["numTargetRowsUpdated"], m["numTargetRowsDeleted"]) == \
        (2, 1, 1, 1, 2, 0)
    assert m["numOutputRows"] == m["numTargetRowsInserted"] + m["numTargetRowsUpdated"] + m["numTargetRowsCopied"]
    assert m["numOutputRows"] == sum(json.loads(a["stats"])["numRecords"] for a in added)
    assert (m["numTargetFilesAdded"], m["numTargetFilesRemoved"]) == (len(added), len(removed))
    assert m["numTargetBytesAdded"] == sum(a["size"] for a in added)


def test_merge_runs_the_first_clause_whose_condition_holds(spark, store):
    store.append("t_findings", findings(spark, BASE_FINDINGS), run_id="r1")
    source = findings(spark, [
        ("f1", "open", 0, None, None, "r2"),     # bytes 0 -> delete
        ("f2", "open", 222, None, None, "r2"),   # -> update all
        ("f5", "open", 5, None, None, "r2"),     # small -> not inserted
        ("f6", "open", 600, None, None, "r2"),   # -> insert with values
    ])
    (store.merge("t_findings", source)
     .when_matched_delete(condition="s.bytes = 0")
     .when_matched_update_all()
     .when_not_matched_insert(values={"finding_id": "s.finding_id", "status": "'new'", "bytes": "s.bytes * 2"},
                              condition="s.bytes > 10")
     .when_not_matched_by_source_delete(condition="t.status = 'resolved'")
     .execute())
    assert_df(store.read("t_findings"), FINDINGS, [
        ("f2", "open", 222, None, None, "r2"),
        ("f6", "new", 1200, None, None, None),
    ])
    raw, _, _ = delta_log_commit(store.location("t_findings"), 2)
    m = {k: int(v) for k, v in raw["operationMetrics"].items()}
    assert raw["operation"] == "MERGE"
    assert (m["numSourceRows"], m["numTargetRowsMatchedDeleted"], m["numTargetRowsMatchedUpdated"],
            m["numTargetRowsInserted"], m["numTargetRowsNotMatchedBySourceDeleted"], m["numTargetRowsDeleted"]) == \
        (4, 1, 1, 1, 1, 2)  # f1 deleted, f2 updated, f6 inserted (f5 is not), resolved f3 deleted
    assert json.loads(raw["operationParameters"]["matchedPredicates"]) == [
        {"actionType": "delete", "predicate": "s.bytes = 0"}, {"actionType": "update"}]


def delta_log_commit(location, version):
    """The commitInfo, add and remove actions of one commit file of the table's _delta_log, read as JSON."""
    with open(os.path.join(location, "_delta_log", f"{version:020d}.json"), encoding="utf-8") as handle:
        actions = [json.loads(line) for line in handle if line.strip()]
    (info,) = [a["commitInfo"] for a in actions if "commitInfo" in a]
    return info, [a["add"] for a in actions if "add" in a], [a["remove"] for a in actions if "remove" in a]


def test_merge_commits_are_merge_in_delta_rs_history(spark, store):
    """delta-rs' own ``DeltaTable.history()`` (DESCRIBE HISTORY) reads MERGE, and the table stays readable
    by delta-rs and by a second MERGE built on it."""
    from deltalake import DeltaTable

    store.append("t_findings", findings(spark, BASE_FINDINGS), run_id="r1")
    for run in ("r2", "r3"):
        source = findings(spark, [("f1", "open", 1 if run == "r2" else 2, ts(2024, 1, 2), None, run)])
        store.merge("t_findings", source, run_id=run).when_matched_update_all().execute()
    history = DeltaTable(store.location("t_findings")).history()
    assert [h["operation"] for h in history][:2] == ["MERGE", "MERGE"]
    assert [json.loads(h["userMetadata"])["run_id"] for h in history[:2]] == ["r3", "r2"]
    rows = sorted(DeltaTable(store.location("t_findings")).to_pyarrow_table().to_pylist(),
                  key=lambda r: r["finding_id"])
    assert [(r["finding_id"], r["bytes"]) for r in rows] == [("f1", 2), ("f2", 200), ("f3", 300)]


def test_merge_into_a_missing_table_creates_it(spark, store):
    store.merge("t_findings", findings(spark, BASE_FINDINGS[:1])).when_not_matched_insert_all().execute()
    assert_df(store.read("t_findings"), FINDINGS, BASE_FINDINGS[:1])
    assert store.version("t_findings") == 1


def test_merge_that_changes_nothing_does_not_commit(spark, store):
    store.append("t_findings", findings(spark, BASE_FINDINGS), run_id="r1")
    v = store.merge("t_findings", findings(spark, BASE_FINDINGS)).when_not_matched_insert_all().execute()
    assert v == 1 and store.version("t_findings") == 1


def test_merge_on_partitioned_table_rewrites_only_touched_files(spark, store):
    store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    before = active_paths(store.location("t_events"))
    source = events(spark, [("c1", "r2", 2, "now set", None, None), ("c1", "r2", 6, "added", None, None)])
    store.merge("t_events", source).when_matched_update_all().when_not_matched_insert_all().execute()
    expected = [r for r in EVENT_ROWS if r[2] != 2] + [("c1", "r2", 2, "now set", None, None),
                                                      ("c1", "r2", 6, "added", None, None)]
    assert_df(store.read("t_events"), EVENTS, expected)
    after = active_paths(store.location("t_events"))
    untouched = [p for p in before if not p.startswith("capture_id=c1/")]
    assert untouched and set(untouched) <= set(after)


def _numbered_findings(spark, ids, status, run_id):
    return spark.range(*ids).select(
        F.format_string("f%05d", "id").alias("finding_id"), F.lit(status).alias("status"),
        F.col("id").alias("bytes"), F.lit(None).cast("timestamp").alias("last_seen"),
        F.lit(None).cast("timestamp").alias("resolved_at"), F.lit(run_id).alias("run_id"))


def test_merge_over_many_files_matches_the_same_merge_done_with_plain_spark(spark, store):
    store.append("t_findings", _numbered_findings(spark, (0, 3000), "open", "r1").repartition(4), run_id="r1")
    source = _numbered_findings(spark, (1500, 4000), "open", "r2")   # 1500..2999 again, 3000..3999 new
    (store.merge("t_findings", source.repartition(3))
     .when_matched_update(set={"run_id": "s.run_id"})
     .when_not_matched_insert_all()
     .when_not_matched_by_source_update(set={"status": "'resolved'"})
     .execute())
    expected = (_numbered_findings(spark, (0, 1500), "resolved", "r1")
                .unionByName(_numbered_findings(spark, (1500, 4000), "open", "r2")))
    got = store.read("t_findings")
    assert [(f.name, f.dataType) for f in got.schema] == [(f.name, f.dataType) for f in expected.schema]
    assert got.exceptAll(expected).count() == 0 and expected.exceptAll(got).count() == 0


def test_merge_refuses_two_source_rows_for_one_target_row(spark, store):
    store.append("t_findings", findings(spark, BASE_FINDINGS), run_id="r1")
    source = findings(spark, [("f1", "open", 1, None, None, "r2"), ("f1", "open", 2, None, None, "r2")])
    with pytest.raises(DuplicateSourceRowsError, match="several source rows match the same target row"):
        store.merge("t_findings", source).when_matched_update_all().execute()
    assert store.version("t_findings") == 1
    assert orphan_files(store.location("t_findings")) == []


def test_target_rows_matched_by_several_source_rows_that_no_clause_acts_on_stay_single(spark, store):
    store.append("t_findings", findings(spark, BASE_FINDINGS).coalesce(1), run_id="r1")
    source = findings(spark, [("f1", "open", 1, None, None, "r2"), ("f1", "open", 2, None, None, "r2")])
    (store.merge("t_findings", source)
     .when_matched_update_all(condition="s.bytes > 1000")   # acts on neither f1 copy
     .when_not_matched_by_source_update(set={"status": "'resolved'"}, condition="t.status = 'open'")
     .execute())
    assert_df(store.read("t_findings"), FINDINGS, [
        BASE_FINDINGS[0], ("f2", "resolved", 200, ts(2024, 1, 1), None, "r1"), BASE_FINDINGS[2]])


def test_merge_builder_records_and_runs_nothing_until_execute(spark, store):
    builder = store.merge("t_findings", findings(spark, BASE_FINDINGS)).when_not_matched_insert_all()
    assert not store.exists("t_findings")
    assert [(c.kind, c.action) for c in builder.clauses] == [("not_matched", "insert")]
    with pytest.raises(ValueError, match="no clauses"):
        store.merge("t_findings", findings(spark, [])).execute()
    with pytest.raises(ValueError, match="merge key 'nope'"):
        store.merge("t_findings", findings(spark, []), on=["nope"])


# --------------------------------------------------------------------------- schema enforcement

def test_wrong_schema_is_rejected_naming_every_column(spark, store):
    schema = T.StructType([
        T.StructField("finding_id", T.StringType()),
        T.StructField("status", T.IntegerType()),             # wrong type
        T.StructField("bytes", T.LongType()),
        T.StructField("last_seen", T.TimestampNTZType()),     # the protocol-raising trap
        T.StructField("run_id", T.StringType()),
        T.StructField("extra", T.StringType()),               # not in the table
    ])                                                        # resolved_at missing
    df = spark.createDataFrame([], schema)
    with pytest.raises(SchemaMismatchError) as err:
        store.append("t_findings", df)
    message = str(err.value)
    assert isinstance(err.value, ValueError)
    assert err.value.problems == (
        "column 'status': expected string, found int",
        "column 'last_seen': expected timestamp, found timestamp_ntz (use TimestampType: UTC instants; "
        "TIMESTAMP_NTZ would raise the Delta protocol to reader 3 / writer 7)",
        "missing column 'resolved_at': expected timestamp",
        "unexpected column 'extra' (string): not in the table's schema",
    )
    assert "t_findings" in message and "4 problem(s)" in message
    assert not store.exists("t_findings")


def test_column_order_and_nullability_differences_are_accepted(spark, store):
    strict = T.StructType([T.StructField(f.name, f.dataType, False) for f in reversed(FINDINGS.spark_schema().fields)])
    df = spark.createDataFrame([("r1", ts(2024, 1, 1), ts(2024, 1, 1), 1, "open", "f1")], strict)
    store.append("t_findings", df)
    assert_df(store.read("t_findings"), FINDINGS, [("f1", "open", 1, ts(2024, 1, 1), ts(2024, 1, 1), "r1")])


def test_existing_table_with_another_schema_is_refused(store):
    from deltalake import DeltaTable, Schema

    other = pa.schema([("finding_id", pa.string()), ("status", pa.int32())])
    DeltaTable.create(store.location("t_findings"), Schema.from_arrow(other))
    with pytest.raises(SchemaMismatchError, match="existing table"):
        store.create("t_findings")


def test_not_null_columns_are_enforced_before_commit(spark, tmp_path):
    strict = TableSpec(name="t_strict", layer="silver", keys=("k",),
                       columns=(Column("k", "long"), Column("v", "string", "never null", nullable=False)))
    store = make_store(spark, tmp_path, specs=(strict,))
    store.append("t_strict", spark.createDataFrame([(1, "x")], "k long, v string"))
    with pytest.raises(NullConstraintError, match="'v' is NOT NULL"):
        store.append("t_strict", spark.createDataFrame([(2, "y"), (3, None)], "k long, v string"))
    assert store.version("t_strict") == 1
    assert orphan_files(store.location("t_strict")) == []
    assert sorted_rows(store.read("t_strict").collect()) == [(1, "x")]


# --------------------------------------------------------------------------- versions and history

def test_read_at_each_version_and_history(spark, store):
    v1 = store.append("t_events", events(spark, EVENT_ROWS[:2]), run_id="r1")
    v2 = store.append("t_events", events(spark, EVENT_ROWS[2:]), run_id="r2")
    v3 = store.replace_slice("t_events", events(spark, []), slice={"capture_id": "c1"}, run_id="r3")
    assert (v1, v2, v3) == (1, 2, 3)
    assert_df(store.read("t_events", version=0), EVENTS, [])
    assert_df(store.read("t_events", version=1), EVENTS, EVENT_ROWS[:2])
    assert_df(store.read("t_events", version=2), EVENTS, EVENT_ROWS)
    assert_df(store.read("t_events"), EVENTS, EVENT_ROWS[2:])
    assert [(h["version"], h["operation"], h["run_id"]) for h in store.history("t_events")] == [
        (3, "REPLACE SLICE", "r3"), (2, "APPEND", "r2"), (1, "APPEND", "r1"), (0, "CREATE TABLE", None)]
    assert all(h["timestamp"].tzinfo is not None for h in store.history("t_events"))
    with pytest.raises(TableMissingError, match="no version 9"):
        store.read("t_events", version=9)
    with pytest.raises(TableMissingError):
        store.read("t_findings")
    with pytest.raises(TypeError, match="version"):
        store.read("t_events", version="1")


def test_timestamps_keep_microseconds_through_every_reader(spark, store):
    from deltalake import DeltaTable

    moment = ts(2024, 5, 6, 7, 8, 9, 654321)
    store.append("t_findings", findings(spark, [("f1", "open", 1, moment, None, "r1")]))
    assert store.read("t_findings").collect()[0]["last_seen"] == norm(moment)
    (row,) = DeltaTable(store.location("t_findings")).to_pyarrow_table().to_pylist()
    assert row["last_seen"] == moment.astimezone(UTC)


# --------------------------------------------------------------------------- failures leave no trace

def _fails_on_bad(df):
    @F.udf("string")
    def explode_on_bad(value):
        if value == "bad":
            raise ValueError("boom: bad row")
        return value

    return df.withColumn("v", explode_on_bad("v"))


def test_write_failing_half_way_leaves_the_previous_version(spark, store):
    store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    path = store.location("t_events")
    good_then_bad = events(spark, [("c1", "r2", 10 + i, "ok", None, None) for i in range(20)]
                           + [("c1", "r2", 99, "bad", None, None)]).repartition(2)
    with pytest.raises(Exception, match="boom: bad row"):
        store.append("t_events", _fails_on_bad(good_then_bad), run_id="r2")
    with pytest.raises(Exception, match="boom: bad row"):
        store.replace_slice("t_events", _fails_on_bad(good_then_bad), slice={"capture_id": "c1"})
    with pytest.raises(Exception, match="boom: bad row"):
        store.merge("t_events", _fails_on_bad(good_then_bad)).when_not_matched_insert_all().execute()
    assert store.version("t_events") == 1
    assert_df(store.read("t_events"), EVENTS, EVENT_ROWS)
    assert orphan_files(path) == []
    assert not os.listdir(os.path.join(path, "_kr_staging"))


# --------------------------------------------------------------------------- files staged by executors

def _stage(staged, name, rows, schema=None):
    """Write ``rows`` (tuples of the file columns) as one staged file, as an executor would."""
    import pyarrow.parquet as pq

    schema = schema or staged.schema
    filesystem, folder = staged.folder()
    filesystem.create_dir(folder, recursive=True)
    table = pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema)
    pq.write_table(table, f"{folder}/{name}", filesystem=filesystem)
    return f"{folder}/{name}"


def _staging_leftovers(store, name):
    from jobs.tables.parquet_files import STAGING_DIR

    folder = os.path.join(store.location(name), STAGING_DIR)
    return [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files] if os.path.isdir(folder) else []


def test_staged_files_commit_with_the_dataframe_rows_in_one_commit(spark, store):
    before = store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    staged = store.staged_parquet("t_events", {"capture_id": "c1"})
    assert staged.partition == "capture_id=c1" and staged.schema.names == ["run_id", "k", "v", "ts", "ids"]
    _stage(staged, "part-00000.parquet", [("r2", 10, "from executor 0", ts(2025, 1, 2, 3, 4, 5, 6), [1])])
    _stage(staged, "part-00001.parquet", [("r2", 11, None, None, None), ("r2", 12, "x", None, [])])
    _stage(staged, ".part-00002-attempt-0.tmp", [("r2", 99, "half-written, never committed", None, None)])
    version = store.replace_slice("t_events", events(spark, [("c1", "r2", 13, "from spark", None, None)]),
                                  slice={"capture_id": "c1"}, run_id="r2", staged=staged)
    assert version == before + 1
    expected = [r for r in EVENT_ROWS if r[0] != "c1"] + [
        ("c1", "r2", 10, "from executor 0", ts(2025, 1, 2, 3, 4, 5, 6), [1]), ("c1", "r2", 11, None, None, None),
        ("c1", "r2", 12, "x", None, []), ("c1", "r2", 13, "from spark", None, None)]
    assert_df(store.read("t_events"), EVENTS, expected)
    with open(os.path.join(store.location("t_events"), "_delta_log", f"{version:020d}.json")) as f:
        adds = [a["add"] for a in map(json.loads, f) if "add" in a]
    assert len(adds) == 3 and all(a["partitionValues"] == {"capture_id": "c1"} for a in adds)
    assert all(json.loads(a["stats"])["numRecords"] in (1, 2) for a in adds)
    assert _staging_leftovers(store, "t_events") == []


def test_staged_files_with_a_wrong_schema_or_outside_the_slice_commit_nothing(spark, store):
    before = store.append("t_events", events(spark, EVENT_ROWS), run_id="r1")
    staged = store.staged_parquet("t_events", {"capture_id": "c1"})
    wrong = pa.schema([("run_id", pa.string()), ("k", pa.int32()), ("v", pa.string())])
    _stage(staged, "part-00000.parquet", [("r2", 10, "k is int32 and ts/ids are missing")], wrong)
    with pytest.raises(SchemaMismatchError, match="k"):
        store.replace_slice("t_events", events(spark, []), slice={"capture_id": "c1"}, run_id="r2", staged=staged)
    other = store.staged_parquet("t_events", {"capture_id": "c2"})
    _stage(other, "part-00000.parquet", [("r2", 10, "belongs to c2", None, None)])
    with pytest.raises(SliceMismatchError):
        store.replace_slice("t_events", events(spark, []), slice={"capture_id": "c1"}, run_id="r2", staged=other)
    assert store.version("t_events") == before
    assert_df(store.read("t_events"), EVENTS, EVENT_ROWS)
    assert _staging_leftovers(store, "t_events") == []
    with pytest.raises(ValueError, match="t_events"):
        store.replace_slice("t_findings", findings(spark, []), slice={"run_id": "r1"}, staged=staged)
    assert store.staged_parquet("t_findings", {"run_id": "r1"}) is None  # not a partition slice
