"""Every simulated scenario, decoded and reconciled by the real pipeline code, gives exactly its
expected_findings.json: precision = recall = 1 per check, the healthy ones nothing.

Ingest and reconcile run in memory (no Delta writes) to keep the catalogue affordable in CI; the demo fleet
and the devsample go through the full nightly job in their own tests.
"""
from __future__ import annotations

import json
from datetime import datetime

import pytest

from jobs.simulate.command import main as simulate
from jobs.simulate.scenarios import names
from tests.integration.findings_match import compare

SCENARIOS = [n for n in names() if n != "demo"]  # demo: tests/integration/conftest.py demo_run


def _findings_of(spark, capture, cfg):
    from jobs.ingest.stage import run_ingest
    from jobs.reconcile.run import run_reconcile

    record = json.loads((capture / "capture.json").read_text())
    when = datetime.fromisoformat(record["capture_time"].replace("Z", "+00:00"))
    ingest = run_ingest(spark, cfg, None, [str(capture)], "cap-test", "run-test", when)
    result = run_reconcile(spark, cfg, ingest.tables, "cap-test", "run-test", when)
    rows = [r.asDict() for r in result.findings.select(
        "check_id", "severity", "broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition",
        "message", "remediation").collect()]
    ingest.release()
    return rows


@pytest.fixture(scope="module")
def cfg():
    from jobs.config import load_config

    return load_config(env={})


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_gives_exactly_its_expected_findings(scenario, spark, cfg, tmp_path):
    capture = tmp_path / scenario
    assert simulate(["--scenario", scenario, "--out", str(capture), "--seed", "11"]) == 0
    expected = json.loads((capture / "expected_findings.json").read_text())["findings"]
    actual = _findings_of(spark, capture, cfg)
    missing, extra = compare(expected, actual)
    assert not missing and not extra, f"missing={missing}\nextra={extra}"
    if scenario in ("healthy", "zk-healthy", "delete-create-in-snapshot"):
        assert actual == []
    for row in actual:  # every finding says what is wrong and what to do
        assert row["message"] and row["remediation"] and row["severity"] in ("critical", "warning", "info")


def test_demo_fleet_gives_exactly_its_expected_findings(demo_run):
    import csv

    with (demo_run["report"] / "findings.csv").open() as fh:
        actual = [r for r in csv.DictReader(fh) if r["status"] == "open"]
    missing, extra = compare(demo_run["expected"]["findings"], actual)
    assert not missing and not extra, f"missing={missing}\nextra={extra}"
    assert demo_run["exit_code"] == 10  # --fail-on warning and the demo has critical findings
