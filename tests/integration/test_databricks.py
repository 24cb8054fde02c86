"""Databricks artefacts run and hold together locally: every notebook cell executes against the demo
fleet with a local session (no dbutils: widget defaults/values apply), dashboard SQL runs on the demo tables,
and the asset bundle's structure is valid."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import notebook_cells

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
NIGHTLY = "01_nightly_run.py"


def test_every_notebook_is_in_databricks_source_format():
    assert len(NOTEBOOKS) == 4
    for nb in NOTEBOOKS:
        cells = list(notebook_cells(nb))
        assert cells, nb
        body = nb.read_text()
        assert "# MAGIC %md" in body
        assert "def " not in body, f"{nb.name}: notebooks call jobs/ code, they define no logic"


def _run_cells(notebook: str, widgets: dict, spark) -> dict:
    namespace = {"_widget_values": widgets, "spark": spark, "__name__": "__notebook__"}
    for cell in notebook_cells(ROOT / "notebooks" / notebook):
        exec(compile(cell, f"{notebook}", "exec"), namespace)  # noqa: S102 - our own notebook sources
    return namespace


@pytest.mark.slow  # the whole job on the demo capture: slow tier (`make test-slow`)
def test_the_nightly_notebook_runs_the_job_and_finds_the_demos_truth(demo_capture, spark, tmp_path):
    """01_nightly_run on the simulated demo capture, into tables of its own: as many open findings as the
    simulator's ground truth lists (the demo's exact findings are proven through the CLI in test_scenarios)."""
    expected = json.loads((demo_capture / "expected_findings.json").read_text())["findings"]
    widgets = {"captures": str(demo_capture), "output_dir": str(tmp_path / "out"),
               "storage_root": str(tmp_path / "tables"), "fail_on": "never"}
    namespace = _run_cells(NIGHTLY, widgets, spark)
    assert namespace["exit_code"] == 0  # fail_on never
    assert namespace["summary"]["findings_open"] == len(expected) > 0


@pytest.mark.parametrize("notebook", [p.name for p in NOTEBOOKS if p.name != NIGHTLY])
def test_notebook_cells_run_locally_on_the_demo_tables(notebook, demo_run, spark, capsys):
    widgets = {"captures": str(demo_run["capture"]), "output_dir": str(demo_run["base"] / f"nb-{notebook}"),
               "storage_root": str(demo_run["tables"]), "fail_on": "never", "topic": "clicks", "broker_id": "4"}
    namespace = _run_cells(notebook, widgets, spark)
    out = capsys.readouterr().out
    if notebook.startswith("02"):
        assert set(namespace["views"]) == {"incarnations", "assignments", "replica_dirs", "findings",
                                           "metadata_history"}
        # clicks was deleted and re-created while broker 4 was down: two incarnations, four stale dirs
        assert namespace["views"]["incarnations"].count() == 2
        stale = namespace["views"]["findings"].where("check_id = 'STALE_TOPIC_ID'").count()
        assert stale == 4
    if notebook.startswith("03"):
        assert namespace["broker_id"] == 4
    if notebook.startswith("04"):
        assert set(namespace["results"]) >= {"bytes_reclaimable_by_broker", "critical_findings_now"}
        assert "#" in out  # text bars drawn


def test_dashboard_sql_agrees_with_the_run_summary(demo_run, spark):
    from jobs.dashboards import DASHBOARD_QUERIES, run_query
    from jobs.tables.delta_store import DeltaStore
    from tests.settings_from import settings_from

    store = DeltaStore.from_settings(spark, settings_from(f"storage.root={demo_run['tables']}").storage)
    assert set(DASHBOARD_QUERIES) == {"open_findings_by_severity_over_time", "bytes_reclaimable_by_broker",
                                      "critical_findings_now", "data_quality_results", "open_findings_by_family",
                                      "open_findings_by_family_over_time", "new_vs_resolved_per_run",
                                      "time_to_resolve", "data_quality_pass_rate_over_time", "freshness_per_cluster",
                                      "alert_new_critical_findings", "alert_no_successful_run"}
    for name in DASHBOARD_QUERIES:  # every dashboard and alert query runs on the run's tables
        run_query(spark, store, name).collect()
    assert [r["new_critical"] for r in run_query(spark, store, "alert_new_critical_findings").collect()] == \
        [demo_run["summary"]["counts"]["by_severity"]["critical"]]  # one run: every critical finding is new
    (fresh,) = run_query(spark, store, "freshness_per_cluster").collect()
    assert fresh["hours_since_success"] < 26
    over_time = {}
    for r in run_query(spark, store, "open_findings_by_family_over_time").collect():
        over_time[r["family"]] = over_time.get(r["family"], 0) + r["open_findings"]
    by_sev = {r["severity"]: r["open_findings"]
              for r in run_query(spark, store, "open_findings_by_severity_over_time").collect()}
    assert by_sev == demo_run["summary"]["counts"]["by_severity"]
    crit = run_query(spark, store, "critical_findings_now").count()
    assert crit == demo_run["summary"]["counts"]["by_severity"]["critical"]
    # one definition of reclaimable bytes: the dashboard, summary.json and gold_run_summary give the same figure
    reclaim = demo_run["summary"]["bytes_reclaimable"]
    brokers = {str(r["broker_id"]): r["bytes_reclaimable"]
               for r in run_query(spark, store, "bytes_reclaimable_by_broker").collect() if r["bytes_reclaimable"]}
    assert brokers == reclaim["by_broker"] and sum(brokers.values()) == reclaim["total"] > 0
    run_row = store.read("gold_run_summary").where(f"run_id = '{demo_run['summary']['run_id']}'").collect()
    assert [r["bytes_reclaimable"] for r in run_row] == [reclaim["total"]]
    from jobs.reconcile.catalogue import default_catalogue

    catalogue = default_catalogue()
    by_family = {}
    for check_id, count in demo_run["summary"]["counts"]["by_check"].items():
        by_family[catalogue[check_id].family] = by_family.get(catalogue[check_id].family, 0) + count
    families = {}
    for r in run_query(spark, store, "open_findings_by_family").collect():
        families[r["family"]] = families.get(r["family"], 0) + r["open_findings"]
    assert families == by_family == over_time and "other" not in families
    dq = run_query(spark, store, "data_quality_results").collect()
    assert dq and all(r["failed"] == 0 for r in dq)
    assert sum(r["expectations"] for r in dq) == demo_run["summary"]["dq"]["expectations"]
    assert sum(r["skipped"] for r in dq) == demo_run["summary"]["dq"]["skipped"]
