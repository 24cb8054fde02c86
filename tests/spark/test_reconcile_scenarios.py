"""Every simulator scenario end to end: simulate -> ingest -> reconcile must give exactly its
expected_findings.json (precision = recall = 1 per check), the healthy ones none.

Slow (one simulate + ingest + reconcile per scenario): ``make test-slow`` runs it. The ``demo`` scenario is
proven through the whole nightly job instead (tests/integration/test_scenarios.py), not a second time here.

The selected scenarios run two at a time on the shared Spark session (:func:`runs`): one small reconcile is
mostly the driver planning one query after another and keeps ~1.3 of the 2 cores busy, so two at once finish a
batch ~1.35x sooner (docs/benchmarks.md), where two processes only contended. Each test still checks its own
scenario's findings and fails on its own.
"""
from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Dict, Tuple

import pytest

from jobs.reconcile import run_reconcile
from jobs.reconcile.expected import MATCH_KEYS, compare
from jobs.simulate.scenarios import names
from tests.settings_from import settings_from

pytestmark = [pytest.mark.slow, pytest.mark.spark]

RUNS_AT_ONCE = 2  # three at once was slower than two on this 2-core machine (docs/benchmarks.md)
PACKED_TEST = "test_packed_capture_gives_the_same_findings"


def _run(spark, out, scenario: str, packed: bool):
    """Simulate one scenario (raw tree or the brokers' packs), ingest and reconcile it: (expected, actual)."""
    from jobs.ingest.stage import run_ingest
    from jobs.simulate.command import run as simulate
    from jobs.simulate.simulation import SimParams

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


@pytest.fixture(scope="module")
def runs(request, spark, tmp_path_factory) -> Dict[Tuple[str, bool], Future]:
    """(scenario, packed) -> the future of its ``_run``, for every test of this module pytest selected, submitted
    in the order the tests run so the first results come first. A scenario's error is raised by its own test."""
    wanted = [(item.callspec.params["scenario"], item.originalname == PACKED_TEST)
              for item in request.session.items
              if getattr(item, "module", None) is request.module and hasattr(item, "callspec")]
    pool = ThreadPoolExecutor(max_workers=RUNS_AT_ONCE, thread_name_prefix="scenario")
    futures = {}
    for scenario, packed in wanted:
        out = tmp_path_factory.mktemp(f"{scenario}-packed" if packed else scenario) / scenario
        futures[(scenario, packed)] = pool.submit(_run, spark, out, scenario, packed)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def _assert_exact(expected, actual) -> None:
    outcome = compare(expected, actual)
    detail = {"missing": outcome.missing,
              "unexpected": [{k: a[k] for k in ("check_id", *MATCH_KEYS, "message")} for a in outcome.unexpected]}
    assert outcome.ok, json.dumps(detail, indent=1, default=str)


@pytest.mark.parametrize("scenario", [n for n in names() if n != "demo"])
def test_scenario_gives_exactly_its_expected_findings(runs, scenario):
    expected, actual = runs[(scenario, False)].result()
    _assert_exact(expected, actual)
    if scenario in ("healthy", "zk-healthy"):
        assert actual == []


@pytest.mark.parametrize("scenario", ["restart-hazards", "hanging-transaction"])
def test_packed_capture_gives_the_same_findings(runs, scenario):
    """The brokers' packs (the collector's segment summaries, no data segment bytes) decide the restart-hazard
    and transaction checks exactly as the raw tree does."""
    _assert_exact(*runs[(scenario, True)].result())
