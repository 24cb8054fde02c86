"""Every simulator scenario end to end: simulate -> ingest -> reconcile must give exactly its
expected_findings.json (precision = recall = 1 per check), the healthy ones none.

Slow (one simulate + ingest + reconcile per scenario): ``make test-slow`` runs it. The ``demo`` scenario is
proven through the whole nightly job instead (tests/integration/test_scenarios.py), not a second time here.
"""
from __future__ import annotations

import json

import pytest

from jobs.reconcile import run_reconcile
from jobs.reconcile.expected import MATCH_KEYS, compare
from jobs.simulate.scenarios import names
from tests.settings_from import settings_from

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def _run(spark, tmp_path, scenario: str, packed: bool):
    """Simulate one scenario (raw tree or the brokers' packs), ingest and reconcile it: (expected, actual)."""
    from jobs.ingest.stage import run_ingest
    from jobs.simulate.command import run as simulate
    from jobs.simulate.simulation import SimParams

    out = tmp_path / scenario
    simulate(scenario, str(out), SimParams(42, None, None, 1, None, packed))
    if packed:
        assert list(out.rglob("*.jsonl.gz")) and not list(out.rglob("*.log"))
    s = settings_from()
    ingest = run_ingest(spark, s.ingest, None, [str(out)], f"cap-{scenario}", "run-1", execution=s.spark)
    try:
        result = run_reconcile(spark, s.catalogue, ingest.tables, f"cap-{scenario}", "run-1", ingest.capture_time)
        actual = [r.asDict() for r in result.findings.collect()]
    finally:
        ingest.release()
    return json.loads((out / "expected_findings.json").read_text())["findings"], actual


def _assert_exact(expected, actual) -> None:
    outcome = compare(expected, actual)
    detail = {"missing": outcome.missing,
              "unexpected": [{k: a[k] for k in ("check_id", *MATCH_KEYS, "message")} for a in outcome.unexpected]}
    assert outcome.ok, json.dumps(detail, indent=1, default=str)


@pytest.mark.parametrize("scenario", [n for n in names() if n != "demo"])
def test_scenario_gives_exactly_its_expected_findings(spark, tmp_path, scenario):
    expected, actual = _run(spark, tmp_path, scenario, packed=False)
    _assert_exact(expected, actual)
    if scenario in ("healthy", "zk-healthy"):
        assert actual == []


@pytest.mark.parametrize("scenario", ["restart-hazards", "hanging-transaction"])
def test_packed_capture_gives_the_same_findings(spark, tmp_path, scenario):
    """The brokers' packs (the collector's segment summaries, no data segment bytes) decide the restart-hazard
    and transaction checks exactly as the raw tree does."""
    _assert_exact(*_run(spark, tmp_path, scenario, packed=True))
