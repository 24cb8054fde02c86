"""The bundle's dashboard and SQL alerts come from the one SQL source (notebooks/sql): the deployed
dashboard file is what jobs/lakeview.py builds from it, each dataset is a query file as it is, each widget
reads columns its query returns, and each alert's query_text is its alert_*.sql file."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import yaml

from jobs.dashboards import SQL_DIR, family_over_time_query
from jobs.lakeview import DASHBOARD_FILE, WIDGETS, alert_queries, dashboard_queries, dashboard_text
from jobs.reconcile.catalogue import CHECK_IDS, default_catalogue
from tests.unit.test_databricks_bundle import BUNDLE, SCHEMA

ROOT = Path(__file__).resolve().parents[2]


def test_the_bundle_deploys_the_dashboard_and_both_alerts_and_validates():
    jsonschema.validate(BUNDLE, SCHEMA)
    (dash,) = BUNDLE["resources"]["dashboards"].values()
    assert (ROOT / dash["file_path"]).resolve() == DASHBOARD_FILE
    assert dash["warehouse_id"] == "${var.warehouse_id}" and dash["dataset_schema"] == "${var.schema}"
    assert set(BUNDLE["resources"]["alerts"]) == {"kafka_recon_new_critical_finding", "kafka_recon_no_successful_run"}


def test_the_dashboard_file_is_built_from_the_sql_files():
    assert DASHBOARD_FILE.read_text() == dashboard_text()  # regenerate: python -m jobs.dashboards
    board = json.loads(DASHBOARD_FILE.read_text())
    files = {p.stem: p.read_text() for p in SQL_DIR.glob("*.sql") if not p.stem.startswith("alert_")}
    assert {d["name"]: "".join(d["queryLines"]) for d in board["datasets"]} == files == dashboard_queries()


def _output_columns(sql: str) -> set:
    main = list(re.finditer(r"^SELECT\b", sql, re.M))[-1]  # the outer query (subqueries and CTEs are indented)
    select = re.split(r"\bFROM\b", sql[main.end():], maxsplit=1)[0]
    named = set(re.findall(r"\bAS\s+([a-z_]+)\b", select))
    bare = {m.split(".")[-1] for m in re.findall(r"^\s*([a-z_.]+),?\s*$", select, re.M)}
    bare |= {m.split(".")[-1] for m in re.findall(r"(?:^|,)\s*([a-z_.]+)(?=\s*(?:,|$))", select.replace("\n", " "))}
    return named | bare


def test_every_widget_reads_columns_its_query_returns():
    queries = dashboard_queries()
    board = json.loads(DASHBOARD_FILE.read_text())
    assert len(board["pages"][0]["layout"]) == len(WIDGETS)
    for query, title, kind, x, y, colour, *_ in WIDGETS:
        columns = _output_columns(queries[query])
        wanted = {c for c in (x, y, colour) if c} if kind != "table" else set()
        assert wanted <= columns, (title, wanted - columns)
    for item in board["pages"][0]["layout"]:
        position = item["position"]
        assert 0 <= position["x"] and position["x"] + position["width"] <= 6


def test_the_issue_s_views_are_all_on_the_dashboard():
    titles = " | ".join(w[1] for w in WIDGETS).lower()
    for view in ("family over time", "severity over time", "new findings", "resolved findings", "bytes reclaimable",
                 "time to resolve", "pass rate", "freshness"):
        assert view in titles, view


def test_alerts_run_their_sql_files_and_watch_a_column_they_return():
    alerts = BUNDLE["resources"]["alerts"]
    files = alert_queries()
    by_file = {"kafka_recon_new_critical_finding": "alert_new_critical_findings",
               "kafka_recon_no_successful_run": "alert_no_successful_run"}
    for key, name in by_file.items():
        alert = alerts[key]
        assert alert["query_text"] == files[name]
        assert alert["evaluation"]["source"]["name"] in _output_columns(files[name])
        assert alert["evaluation"]["notification"]["subscriptions"] == [{"user_email": "${var.notify}"}]
    assert alerts["kafka_recon_no_successful_run"]["evaluation"]["threshold"]["value"]["double_value"] == 26
    assert alerts["kafka_recon_no_successful_run"]["evaluation"]["empty_result_state"] == "TRIGGERED"


def test_family_over_time_sql_is_the_catalogue_families():
    catalogue = default_catalogue()
    assert (SQL_DIR / "open_findings_by_family_over_time.sql").read_text() == \
        family_over_time_query([catalogue[c] for c in CHECK_IDS])


def test_bundle_yaml_is_plain_yaml():
    assert yaml.safe_load((ROOT / "databricks.yml").read_text()) == BUNDLE
