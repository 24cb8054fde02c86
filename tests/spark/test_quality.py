"""Great Expectations on Spark DataFrames: suites catch bad bronze rows, the gold invariants hold for the
devsample findings, results land in gold_dq_results (Delta), Data Docs are built and load nothing remotely."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from jobs.quality import dq_results_frame, run_quality
from jobs.tables.registry import spec
from tests.settings_from import settings_from
from tests.table_rows import as_timestamp, frame

QUALITY = settings_from().quality

pytestmark = pytest.mark.spark

SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "report"
CAPTURE = "devsample-2025-02-01"
RUN = "run-2025-02-01"
LOGS_103 = "/data/captures/devsample-2025-02-01/broker-103/kafka-logs"
WHEN = as_timestamp("2025-02-01T01:02:00Z")  # the evaluation time of the runs that are compared row for row


_ts, _frame = as_timestamp, frame


def _entry(name, kind, topic, partition, topic_id, **extra):
    row = {"capture_id": CAPTURE, "run_id": RUN, "cluster_id": "EKJ41Lv86vWjqGSh58Dg2w", "broker_id": 103,
           "log_dir": LOGS_103, "directory_id": "lN3lRvnfkq_EW15qh9aZEA", "entry_name": name, "entry_kind": kind,
           "is_dir": True, "topic": topic, "partition": partition, "bytes": 4430, "pm_status": "ok",
           "topic_id": topic_id}
    row.update(extra)
    return row


def bronze_dir_entries(spark):
    """broker 103 of the devsample (real names and ids) plus five broken rows."""
    rows = [
        _entry("clicks-0", "partition", "clicks", 0, "A4HaLNH_zheTrtxgg-IBNA"),
        _entry("inventory-0", "partition", "inventory", 0, "xWt6cg-LDx4r6BAz2rYsCg"),
        _entry("events-1", "partition", "events", 1, "7G5NPAb1tNLhoqkWDdmzGg"),
        _entry("__cluster_metadata-0", "metadata", "__cluster_metadata", 0, "AAAAAAAAAAAAAAAAAAAAAQ",
               pm_status="not_applicable"),
        # broken: negative partition, reserved ids, a malformed id, no capture, an unknown kind, a duplicate
        _entry("orders--1", "partition", "orders", -1, "AAAAAAAAAAAAAAAAAAAAAA"),
        _entry("payments-0", "partition", "payments", 0, "AAAAAAAAAAAAAAAAAAAAAQ"),
        _entry("weird-0", "partition", "weird", 0, "<script>window.PWNED=1</script>"),
        _entry("lost-0", "mystery", "lost", 0, None, capture_id=None),
        _entry("clicks-0", "partition", "clicks", 0, "A4HaLNH_zheTrtxgg-IBNA"),
    ]
    return _frame(spark, "bronze_dir_entries", rows)


@pytest.fixture(scope="module")
def dq(spark, tmp_path_factory):
    doc = json.loads((SCENARIOS / "devsample_scenario.json").read_text())
    tables = {
        "bronze_dir_entries": bronze_dir_entries(spark),
        "gold_findings": _frame(spark, "gold_findings", doc["findings"]),
        "gold_run_summary": _frame(spark, "gold_run_summary", [doc["run_summary"]]),
    }
    out = tmp_path_factory.mktemp("dq-out")
    # two suites at a time and the Data Docs on their own thread, as the nightly validates a small capture's tables
    result = run_quality(spark, QUALITY, tables, run_id=RUN, capture_id=CAPTURE, docs_dir=out / "dq",
                         evaluated_at=_ts("2025-02-01T01:02:00Z"), suites_at_once=2, docs_in_background=True)
    result.wait_for_docs()
    return result, out


def test_bronze_suite_finds_each_broken_row(dq):
    result, _ = dq
    got = [(r["expectation"], r["column_name"], r["success"], r["unexpected_count"])
           for r in result.rows if r["table_name"] == "bronze_dir_entries"]
    assert got == [
        ("expect_column_values_to_not_be_null", "capture_id", False, 1),
        ("expect_column_values_to_not_be_null", "run_id", True, 0),
        ("expect_column_values_to_match_regex", "topic_id", False, 1),
        ("expect_column_values_to_match_regex", "directory_id", True, 0),
        ("unexpected_rows_expectation", "topic_id:reserved", False, 2),
        ("expect_column_values_to_match_regex", "suffix_id", True, 0),
        ("expect_column_values_to_be_between", "partition", False, 1),
        ("expect_column_values_to_be_between", "broker_id", True, 0),
        ("expect_column_values_to_be_between", "bytes", True, 0),
        ("expect_compound_columns_to_be_unique", "capture_id,log_dir,entry_name", False, 2),
        ("expect_column_values_to_be_in_set", "entry_kind", False, 1),
        ("expect_column_values_to_be_in_set", "pm_status", True, 0),
    ]
    regex = next(r for r in result.rows if r["column_name"] == "topic_id" and r["table_name"] == "bronze_dir_entries"
                 and r["expectation"] == "expect_column_values_to_match_regex")
    assert json.loads(regex["unexpected_sample"]) == ["<script>window.PWNED=1</script>"]
    assert regex["element_count"] == 9


def test_gold_invariants_hold_for_the_devsample_run(dq):
    result, _ = dq
    gold = [r for r in result.rows if r["table_name"].startswith("gold_")]
    assert {r["suite"] for r in gold} == {"kafka_recon.gold_findings", "kafka_recon.gold_run_summary"}
    assert [(r["column_name"], r["success"]) for r in gold if r["success"] is not True] == []
    assert len(gold) == 16 + 7
    assert result.summary["by_suite"] == {
        "kafka_recon.bronze_dir_entries": {"table": "bronze_dir_entries", "expectations": 12, "failed": 6,
                                           "skipped": 0},
        "kafka_recon.gold_findings": {"table": "gold_findings", "expectations": 16, "failed": 0, "skipped": 0},
        "kafka_recon.gold_run_summary": {"table": "gold_run_summary", "expectations": 7, "failed": 0, "skipped": 0},
    }
    assert (result.summary["success"], result.summary["failed"]) == (False, 6)


def _tables_covering_every_expectation_type():
    """The fewest registered tables (greedily) whose suites hold every expectation type any suite holds."""
    from jobs.quality.suites import build_suite
    from jobs.tables.registry import TABLES

    types = {name: {r.expectation_type for r in build_suite(name, t.spark_schema().fieldNames()).rules}
             for name, t in TABLES.items()}
    left, chosen = set().union(*types.values()), []
    while left:
        best = max(sorted(types), key=lambda name: len(types[name] & left))
        chosen.append(best)
        left -= types[best]
    return chosen


def test_empty_tables_screened_give_the_rows_gx_gives_on_no_rows(spark):
    """On a table without rows GX counts differently by expectation type (flatten.EMPTY_TABLE_COUNTS): the screen's
    rows for empty tables, covering every expectation type the suites use, must be GX's own detailed ones."""
    from jobs.quality.flatten import EMPTY_TABLE_COUNTS

    names = _tables_covering_every_expectation_type()
    tables = {name: _frame(spark, name, []) for name in names}
    runs = {details: run_quality(spark, replace(QUALITY, details=details), tables, run_id=RUN, capture_id=CAPTURE,
                                 evaluated_at=WHEN, suites_at_once=1).rows
            for details in ("all", "failed")}
    assert runs["failed"] == runs["all"]
    assert {r["expectation"] for r in runs["all"]} == set(EMPTY_TABLE_COUNTS)
    assert {r["table_name"] for r in runs["all"]} == set(names)


def test_failed_only_details_give_the_rows_gx_gives_with_every_detail(dq, spark):
    """``quality.details: failed`` decides each expectation with the screen (one aggregate query) and runs only
    the failed ones in GX with the detailed format; every row (counts, samples, success) must be what GX's
    detailed format gives for every expectation. The tables hold passing and failing map expectations, unexpected-rows queries, a row
    count, and an empty table (which keeps the detailed format throughout)."""
    result, _ = dq
    doc = json.loads((SCENARIOS / "devsample_scenario.json").read_text())
    tables = {
        "bronze_dir_entries": bronze_dir_entries(spark),
        "gold_findings": _frame(spark, "gold_findings", doc["findings"]),
        "gold_run_summary": _frame(spark, "gold_run_summary", [doc["run_summary"]]),
        "bronze_zk_events": _frame(spark, "bronze_zk_events", []),
    }
    runs = {details: run_quality(spark, replace(QUALITY, details=details), tables, run_id=RUN, capture_id=CAPTURE,
                                 evaluated_at=_ts("2025-02-01T01:02:00Z"), suites_at_once=1).rows
            for details in ("all", "failed")}
    assert runs["failed"] == runs["all"]
    assert [r for r in runs["all"] if r["table_name"] != "bronze_zk_events"] == result.rows
    assert {r["element_count"] for r in runs["all"] if r["table_name"] == "bronze_zk_events"} >= {0}
    assert sum(r["success"] is False for r in runs["all"]) == 6
    assert sum(1 for r in runs["all"] if r["unexpected_count"] == 0 and r["element_count"]) > 20


def test_suites_at_once_give_the_rows_one_at_a_time_gives(spark):
    """Two and three lanes (each in its own cloned session, so GX's ``tmp_view`` of one table is never another
    lane's) give exactly the rows of one lane; here every table holds unexpected-rows queries, two of them with
    a different number of unexpected rows."""
    doc = json.loads((SCENARIOS / "devsample_scenario.json").read_text())
    bad_summary = dict(doc["run_summary"], status="ok", files_seen=doc["run_summary"]["files_seen"] + 3)
    tables = {
        "bronze_dir_entries": bronze_dir_entries(spark),
        "gold_findings": _frame(spark, "gold_findings", doc["findings"]),
        "gold_run_summary": _frame(spark, "gold_run_summary", [bad_summary]),
    }
    runs = {n: run_quality(spark, QUALITY, tables, run_id=RUN, capture_id=CAPTURE,
                           evaluated_at=_ts("2025-02-01T01:02:00Z"), suites_at_once=n).rows for n in (1, 2, 3)}
    assert runs[2] == runs[1] and runs[3] == runs[1]
    failed = {(r["table_name"], r["column_name"]): r["unexpected_count"] for r in runs[1] if r["success"] is False}
    assert failed[("bronze_dir_entries", "topic_id:reserved")] == 2
    assert failed[("gold_run_summary", "files_seen:ok_plus_quarantined")] == 1
    assert ("gold_run_summary", "status:ok_means_no_findings") in failed


def test_a_lane_session_keeps_its_own_temp_views_and_the_callers_settings(spark):
    from jobs.quality.lanes import bound_to, cloned_session

    spark.conf.set("spark.sql.shuffle.partitions", "3")
    try:
        lane = cloned_session(spark)
        assert lane is not spark and lane.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        spark.conf.unset("spark.sql.shuffle.partitions")
    mine = bronze_dir_entries(spark)
    theirs = bound_to(mine, lane)
    assert theirs.sparkSession is lane and bound_to(mine, spark) is mine
    theirs.createOrReplaceTempView("kr_lane_view")
    assert lane.sql("SELECT count(*) AS n FROM kr_lane_view").first()["n"] == 9
    assert not spark.catalog.tableExists("kr_lane_view")
    assert sorted(map(repr, theirs.collect())) == sorted(map(repr, mine.collect()))


def test_results_land_in_gold_dq_results(dq, spark, tmp_path):
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    result, _ = dq
    table = spec("gold_dq_results")
    frame = dq_results_frame(spark, result.rows)
    # the registry's columns and types (a local relation's columns are nullable; the store enforces NOT NULL)
    assert [(f.name, f.dataType) for f in frame.schema.fields] == \
        [(f.name, f.dataType) for f in table.spark_schema().fields]
    arrow = frame.toArrow()
    arrow = pa.Table.from_batches(arrow.to_batches(), schema=arrow.schema).cast(table.arrow_schema())
    write_deltalake(str(tmp_path / "gold_dq_results"), arrow, mode="overwrite")
    back = DeltaTable(str(tmp_path / "gold_dq_results")).to_pyarrow_table().to_pylist()
    assert len(back) == len(result.rows) == 35
    keys = {(r["run_id"], r["suite"], r["expectation"], r["column_name"]) for r in back}
    assert len(keys) == len(back)
    assert {r["run_id"] for r in back} == {RUN} and {r["capture_id"] for r in back} == {CAPTURE}
    assert {str(r["evaluated_at"]) for r in back} == {"2025-02-01 01:02:00+00:00"}


def _local_refs(page: Path):
    text = page.read_text(encoding="utf-8")
    tags = re.findall(r"<(?:script|link|img)\b[^>]*>", text, re.I)
    refs = [m for t in tags for m in re.findall(r"""\s(?:src|href)\s*=\s*["']([^"']*)["']""", t)]
    css = re.findall(r"url\(\s*['\"]?([^)'\"]+)", text)
    return refs, css


def test_a_data_docs_build_that_fails_on_its_thread_fails_the_wait_for_it(spark, tmp_path, monkeypatch):
    import jobs.quality.runner as runner

    def broken(docs_dir):
        raise OSError(f"disk full writing {docs_dir}")

    monkeypatch.setattr(runner, "make_offline", broken)
    result = run_quality(spark, QUALITY, {"bronze_dir_entries": bronze_dir_entries(spark)}, run_id="run-docs",
                         capture_id=CAPTURE, docs_dir=tmp_path / "dq", docs_in_background=True)
    assert result.rows  # the results do not wait for the site
    with pytest.raises(RuntimeError, match="building the Data Docs failed: disk full writing"):
        result.wait_for_docs()


def test_data_docs_exist_and_load_nothing_from_the_network(dq):
    result, out = dq
    site = out / "dq"
    assert result.docs_index == site / "index.html" and result.docs_index.is_file()
    pages = [p for p in site.rglob("*.html") if "static" not in p.relative_to(site).parts]
    assert len(pages) == 1 + 3 + 3  # index, one suite page and one validation page per table
    assert sorted(set(result.removed_urls)) == ["https://cdn.jsdelivr.net/npm/vega-embed@6",
                                                "https://cdn.jsdelivr.net/npm/vega-lite@5",
                                                "https://cdn.jsdelivr.net/npm/vega@5"]
    for page in pages:
        refs, css = _local_refs(page)
        assert refs, page
        for ref in refs + [c for c in css if not c.startswith("data:")]:
            assert not re.match(r"^(https?:)?//", ref), (page, ref)
            assert (page.parent / ref.split("?")[0]).resolve().is_file(), (page, ref)
        text = page.read_text(encoding="utf-8")
        assert "integrity=" not in text and "crossorigin" not in text
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "static/vendor/bootstrap-4.3.1/bootstrap.min.css" in index
    assert "static/vendor/jquery-3.7.1/jquery.min.js" in index


def test_each_stored_validation_holds_every_rule_of_its_suite_in_order_with_its_own_id(dq):
    """The rules GX validated and those the screen passed (joined bare, stored with the suite in one write) are one
    validation per table in the suite's order, each expectation with an id of its own, as the Data Docs show them."""
    result, out = dq
    stored = {}
    for path in (out / "dq" / "validations_store").rglob("*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        stored[doc["suite_name"]] = doc
    assert sorted(stored) == sorted({r["suite"] for r in result.rows})
    for suite, doc in stored.items():
        configs = [r["expectation_config"] for r in doc["results"]]
        rows = [r for r in result.rows if r["suite"] == suite]
        assert [c["type"] for c in configs] == [r["expectation"] for r in rows], suite
        assert [r["success"] for r in doc["results"]] == [r["success"] for r in rows], suite
        ids = [c.get("id") for c in configs]
        assert all(ids) and len(set(ids)) == len(ids), suite
        assert doc["statistics"]["evaluated_expectations"] == len(rows)


def test_data_docs_keep_every_run_and_name_each_table(spark, tmp_path):
    """Validation results live under the docs folder, so a second run into the same output keeps the first run's
    pages; every validation page names its table; no page links out."""
    site = tmp_path / "dq"
    for n in (1, 2):
        run_quality(spark, QUALITY, {"bronze_dir_entries": bronze_dir_entries(spark)}, run_id=f"run-{n}",
                    capture_id=CAPTURE, docs_dir=site)
    pages = sorted(site.glob("validations/**/*.html"))
    assert [p.relative_to(site).parts[3] for p in pages] == ["run-1", "run-2"]
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "run-1" in index and "run-2" in index
    for page in pages:
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))
        assert "Data asset: bronze_dir_entries" in text, page
    for page in site.rglob("*.html"):
        if "static" not in page.relative_to(site).parts:
            assert not re.search(r"""<a\b[^>]*href\s*=\s*["'](https?:)?//""", page.read_text(encoding="utf-8"), re.I), page


def test_the_validated_tables_are_not_left_cached(spark):
    """GX's Spark datasource persists every batch it validates; a notebook session that runs the stage nightly
    would keep each run's tables cached unless the runner releases them."""
    doc = json.loads((SCENARIOS / "devsample_scenario.json").read_text())
    tables = {"bronze_dir_entries": bronze_dir_entries(spark),
              "gold_findings": _frame(spark, "gold_findings", doc["findings"])}
    run_quality(spark, QUALITY, tables, run_id="run-cache", capture_id=CAPTURE, suites_at_once=2)
    for df in tables.values():  # the second lane's plan was validated in a cloned session: released all the same
        level = df.storageLevel
        assert not (level.useMemory or level.useDisk), level
    # a table the caller cached stays cached: the runner releases only what GX persisted
    mine = bronze_dir_entries(spark).cache()
    run_quality(spark, QUALITY, {"bronze_dir_entries": mine, "gold_findings": tables["gold_findings"]},
                run_id="run-cache-2", capture_id=CAPTURE, suites_at_once=2)
    assert mine.storageLevel.useMemory
    mine.unpersist()


def _scenario_tables(spark):
    doc = json.loads((SCENARIOS / "devsample_scenario.json").read_text())
    bad_summary = dict(doc["run_summary"], status="ok", files_seen=doc["run_summary"]["files_seen"] + 3)
    return {"bronze_dir_entries": bronze_dir_entries(spark),
            "gold_findings": _frame(spark, "gold_findings", doc["findings"]),
            "gold_run_summary": _frame(spark, "gold_run_summary", [bad_summary])}


@pytest.fixture(scope="module")
def one_run(spark, tmp_path_factory):
    """The scenario tables validated as one run, a suite at a time, with its Data Docs: what a run validated in
    parts must equal. Returns (result, docs folder)."""
    docs = tmp_path_factory.mktemp("one-run") / "docs"
    return run_quality(spark, QUALITY, _scenario_tables(spark), run_id=RUN, capture_id=CAPTURE, evaluated_at=WHEN,
                       suites_at_once=1, docs_dir=docs), docs


def test_a_run_validated_in_parts_gives_the_rows_of_one_run(spark, tmp_path, one_run):
    """The nightly validates a small capture's bronze tables on a thread while reconcile runs, the rest after it:
    the rows, the summary and the Data Docs are those of one run over every table."""
    from jobs.quality.runner import QualityRun

    whole, whole_docs = one_run
    tables = _scenario_tables(spark)
    parts = QualityRun(spark, QUALITY, RUN, CAPTURE, docs_dir=tmp_path / "parts", evaluated_at=WHEN)
    parts.validate_in_background({"bronze_dir_entries": tables["bronze_dir_entries"]})
    dq = parts.finish({name: df for name, df in tables.items() if name != "bronze_dir_entries"})
    assert dq.rows == whole.rows
    assert {k: v for k, v in dq.summary.items() if k != "data_docs_index"} == \
        {k: v for k, v in whole.summary.items() if k != "data_docs_index"}
    assert any(r["table_name"] == "bronze_dir_entries" and r["success"] is False for r in dq.rows)
    def pages(site):  # suite, run and time of each validation page (its file is named for the lane's datasource)
        return sorted(p.relative_to(site).parts[:5] for p in site.glob("validations/**/*.html"))

    assert pages(tmp_path / "parts") == pages(whole_docs) and len(pages(tmp_path / "parts")) == 3
    for df in tables.values():  # validated in a clone of the session, released all the same
        assert not (df.storageLevel.useMemory or df.storageLevel.useDisk)


def test_a_failure_in_the_background_part_fails_the_run_and_a_table_is_validated_once(spark):
    from pyspark.sql import functions as F

    from jobs.quality.runner import QualityRun

    tables = _scenario_tables(spark)
    run = QualityRun(spark, QUALITY, RUN, CAPTURE)
    # GX reports a failing query as an expectation's exception; this one fails the stage's own row count
    broken = tables["bronze_dir_entries"].where(F.expr("raise_error('disk went away') IS NULL"))
    run.validate_in_background({"bronze_dir_entries": broken})
    with pytest.raises(RuntimeError, match="validating the early tables failed: .*disk went away"):
        run.finish({"gold_findings": tables["gold_findings"]})
    again = QualityRun(spark, QUALITY, RUN, CAPTURE)
    again.validate({"gold_findings": tables["gold_findings"]})
    with pytest.raises(ValueError, match=r"validated twice in one run: \['gold_findings'\]"):
        again.finish({"gold_findings": tables["gold_findings"]})


def test_without_a_session_clone_the_background_part_is_validated_on_the_callers_thread(spark, monkeypatch, one_run):
    """A runtime whose sessions cannot be cloned: the part is validated at once, and the run's rows are the same."""
    from jobs.quality import runner
    from jobs.quality.runner import QualityRun

    whole, _ = one_run
    tables = _scenario_tables(spark)

    def no_clone(_):
        raise RuntimeError("no classic session here")

    monkeypatch.setattr(runner, "cloned_session", no_clone)
    parts = QualityRun(spark, QUALITY, RUN, CAPTURE, evaluated_at=WHEN)
    parts.validate_in_background({"bronze_dir_entries": tables["bronze_dir_entries"]}, label="kafka-recon quality")
    assert not parts._background and "bronze_dir_entries" in parts._validated  # no thread: validated already
    dq = parts.finish({name: df for name, df in tables.items() if name != "bronze_dir_entries"})
    assert dq.rows == whole.rows
