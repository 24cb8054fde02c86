"""Suites as data, result flattening and the offline Data Docs rewrite — without Spark or a GX run."""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from jobs.quality.flatten import suite_rows
from jobs.quality.offline_docs import VENDOR_DIR, OfflineResult, local_for, rewrite_page
from jobs.quality.suites import META_KEY, Rule, Suite, build_suite
from jobs.tables.registry import spec

WHEN = datetime(2025, 2, 1, 1, 2, tzinfo=timezone.utc)


def test_column_rules_follow_the_columns_a_table_has():
    suite = build_suite("bronze_zk_events", spec("bronze_zk_events").column_names)
    assert [(r.expectation_type, r.column_key) for r in suite.rules] == [
        ("expect_column_values_to_not_be_null", "capture_id"),
        ("expect_column_values_to_not_be_null", "run_id"),
        ("expect_column_values_to_match_regex", "topic_id"),
        ("unexpected_rows_expectation", "topic_id:reserved"),
        ("expect_column_values_to_be_between", "partition"),
        ("expect_column_values_to_be_between", "broker_id"),
        ("expect_column_pair_values_a_to_be_greater_than_b", "block_start,block_end"),
        ("expect_column_values_to_be_between", "block_start"),
        ("expect_compound_columns_to_be_unique", "capture_id,source_file,seq"),
    ]
    pair = suite.rules[6]
    assert pair.kwargs == {"column_A": "block_end", "column_B": "block_start", "or_equal": True,
                           "ignore_row_if": "either_value_is_missing"}
    assert suite.rules[5].kwargs == {"column": "broker_id", "min_value": -1}


def test_producer_id_blocks_check_allocations_only():
    suite = build_suite("silver_producer_id_blocks", spec("silver_producer_id_blocks").column_names)
    queries = {r.column_key: r.kwargs.get("unexpected_rows_query") for r in suite.rules}
    assert queries["first_producer_id:start_le_end"] == (
        "SELECT * FROM {batch} WHERE coalesce(is_allocation, true) AND first_producer_id > last_producer_id")
    assert "capture_id,source,seq" in queries


def test_every_registered_table_gets_a_valid_suite():
    from jobs.tables.registry import TABLES

    for name, table in TABLES.items():
        suite = build_suite(name, table.column_names)
        assert suite.rules or name == "gold_dq_results", name
        assert suite.skipped == (), (name, suite.skipped)


def test_reserved_topic_ids_allow_only_the_metadata_topic():
    rule = next(r for r in build_suite("bronze_metadata_records", spec("bronze_metadata_records").column_names).rules
                if r.column_key == "topic_id:reserved")
    assert rule.kwargs["unexpected_rows_query"] == (
        "SELECT * FROM {batch} WHERE topic_id = 'AAAAAAAAAAAAAAAAAAAAAA' OR (topic_id = 'AAAAAAAAAAAAAAAAAAAAAQ' "
        "AND coalesce(topic_name, '') <> '__cluster_metadata')")


def test_table_rules_on_missing_columns_are_skipped_not_dropped():
    suite = build_suite("gold_run_summary", ["run_id", "status"])
    assert [r.column_key for r in suite.rules] == ["run_id", "status"]
    assert [(r.column_key, missing) for r, missing in suite.skipped][:2] == [
        ("files_seen:ok_plus_quarantined", ("files_seen", "files_ok", "files_quarantined")),
        ("open_findings:sum_of_severities", ("open_findings", "critical", "warning", "info"))]


def test_two_rules_with_one_result_key_are_refused():
    rule = Rule("UnexpectedRowsExpectation", {"unexpected_rows_query": "SELECT 1"}, ("a",), key="k")
    with pytest.raises(ValueError, match="share the result key"):
        Suite("s", "t", (rule, rule))


def _result(rule, success, result, exception=None):
    config = SimpleNamespace(type=rule.expectation_type, kwargs={**rule.kwargs, "batch_id": "b"},
                             meta={META_KEY: rule.column_key})
    return SimpleNamespace(expectation_config=config, success=success, result=result,
                           exception_info=exception or {"raised_exception": False})


def test_flatten_matches_results_to_rules_and_records_errors():
    suite = build_suite("gold_run_summary", ["run_id", "status", "files_seen"])
    unique, in_set = suite.rules
    results = [
        _result(in_set, True, {"element_count": 3, "unexpected_count": 0, "partial_unexpected_list": []}),
        _result(unique, False, {}, {"raised_exception": True, "exception_message": "boom <b>"}),
    ]
    rows = suite_rows(suite, results, "r1", "c1", WHEN)
    assert [(r["expectation"], r["column_name"], r["success"], r["unexpected_count"], r["unexpected_sample"])
            for r in rows] == [
        ("expect_column_values_to_be_unique", "run_id", False, None, json.dumps({"error": "boom <b>"})),
        ("expect_column_values_to_be_in_set", "status", True, 0, None),
        ("unexpected_rows_expectation", "files_seen:ok_plus_quarantined", None, None,
         json.dumps({"columns": ["files_ok", "files_quarantined"], "skipped": "missing columns"})),
        ("unexpected_rows_expectation", "open_findings:sum_of_severities", None, None,
         json.dumps({"columns": ["open_findings", "critical", "warning", "info"], "skipped": "missing columns"})),
        ("unexpected_rows_expectation", "status:ok_means_no_findings", None, None,
         json.dumps({"columns": ["open_findings"], "skipped": "missing columns"})),
        ("expect_column_pair_values_a_to_be_greater_than_b", "started_at,finished_at", None, None,
         json.dumps({"columns": ["started_at", "finished_at"], "skipped": "missing columns"})),
        ("expect_column_values_to_be_between", "bytes_reclaimable", None, None,
         json.dumps({"columns": ["bytes_reclaimable"], "skipped": "missing columns"})),
    ]
    assert set(rows[0]) == set(spec("gold_dq_results").column_names)
    assert json.loads(rows[1]["kwargs_json"]) == {"column": "status", "value_set": ["error", "findings", "incomplete", "ok"]}


def test_flatten_refuses_a_missing_result():
    suite = build_suite("gold_run_summary", ["run_id"])
    with pytest.raises(ValueError, match="no result for expect_column_values_to_be_unique"):
        suite_rows(suite, [], "r1", "c1", WHEN)


GX_HEAD = """<head>
<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css"/>
<script src="https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.12.9/umd/popper.min.js" integrity="sha384-x" crossorigin="anonymous"></script>
<script src="https://cdn.jsdelivr.net/npm/vega@5"></script>
<link rel="shortcut icon" href="../static/images/favicon.ico" type="image/x-icon"/>
<style>.navbar-brand a { background: url('https://great-expectations-web-assets.s3.us-east-2.amazonaws.com/full_logo_dark.png') 0 0; }</style>
</head><body><img class="NO-CACHE" src="https://great-expectations-web-assets.s3.us-east-2.amazonaws.com/logo-long.png?d=20250201T010200Z" alt="Great Expectations"/>
<a href="https://greatexpectations.io">Great Expectations</a></body>"""


def test_offline_rewrite_points_every_load_at_a_local_copy():
    result = OfflineResult()
    page = rewrite_page(GX_HEAD, "../../..", result)
    assert page == """<head>
<link rel="stylesheet" href="../../../static/vendor/bootstrap-4.3.1/bootstrap.min.css"/>
<script src="../../../static/vendor/popper.js-1.12.9/popper.min.js"></script>

<link rel="shortcut icon" href="../../../static/images/favicon.ico" type="image/x-icon"/>
<style>.navbar-brand a { background: url('../../../static/images/logo-long.png') 0 0; }</style>
</head><body><img class="NO-CACHE" src="../../../static/images/logo-long.png" alt="Great Expectations"/>
<a>Great Expectations</a></body>"""
    assert result.removed == ["https://cdn.jsdelivr.net/npm/vega@5"]
    assert result.rewritten == 4 and result.unlinked == 1  # an outside link becomes plain text


def test_every_cdn_file_of_the_gx_templates_has_a_local_copy():
    import great_expectations

    templates = Path(great_expectations.__file__).parent / "render" / "view" / "templates"
    urls = set()
    for template in templates.glob("*.j2"):
        text = template.read_text(encoding="utf-8")
        for tag in re.findall(r"<(?:script|link)\b[^>]*>", text):
            urls.update(re.findall(r"""(?:src|href)="(https://[^"]+)\"""", tag))
    assert urls, "GX templates moved: update offline_docs.CDN_MAP"

    missing = sorted(u for u in urls if local_for(u) is None and "vega" not in u)
    assert missing == []
    for local in filter(None, map(local_for, urls)):
        assert (VENDOR_DIR / local.removeprefix("static/vendor/")).is_file(), local


def test_the_screen_decides_every_rule_of_every_table_but_grouped_queries():
    """Every rule the suites give a registered table is decided by the quality screen's one aggregate query
    (jobs/quality/screen.py), except a grouped unexpected-rows query, which only GX can run; what the screen
    cannot read (``mostly``, an unknown keyword, a name needing quotes) is left to GX, never guessed."""
    from jobs.quality.screen import violations_sql
    from jobs.tables.registry import TABLES

    left = sorted({(rule.expectation, rule.column_key) for table in TABLES.values()
                   for rule in build_suite(table.name, table.column_names).rules if violations_sql(rule) is None})
    assert left == [("UnexpectedRowsExpectation", "is_authoritative:one_per_capture")]
    regex = Rule("ExpectColumnValuesToMatchRegex", {"column": "topic_id", "regex": "^[a-z']+$"}, ("topic_id",))
    assert violations_sql(regex) == r"count_if(`topic_id` IS NOT NULL AND NOT (`topic_id` RLIKE '^[a-z\']+$'))"
    for rule in (Rule("ExpectColumnValuesToNotBeNull", {"column": "a", "mostly": 0.9}, ("a",)),
                 Rule("ExpectColumnValuesToNotBeNull", {"column": "a b"}, ("a b",)),
                 Rule("ExpectColumnValuesToBeInSet", {"column": "a", "value_set": []}, ("a",)),
                 Rule("ExpectColumnValuesToBeBetween", {"column": "a", "min_value": 0, "strict_min": True}, ("a",)),
                 Rule("ExpectColumnMeanToBeBetween", {"column": "a", "min_value": 0}, ("a",))):
        assert violations_sql(rule) is None, rule
