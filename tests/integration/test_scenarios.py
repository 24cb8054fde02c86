"""The demo fleet (what `make demo` runs) through the full nightly job gives exactly its expected findings.
(The rest of the scenario catalogue: tests/spark/test_reconcile_scenarios.py.)"""
from __future__ import annotations

import csv

from jobs.reconcile.expected import compare


def test_demo_fleet_gives_exactly_its_expected_findings(demo_run):
    with (demo_run["report"] / "findings.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "open"]
    actual = [{k: (int(v) if k in ("broker_id", "partition") and v else (v or None)) for k, v in r.items()}
              for r in rows]
    outcome = compare(demo_run["expected"]["findings"], actual)
    assert outcome.ok, f"missing={outcome.missing}\nunexpected={outcome.unexpected}"
    assert demo_run["exit_code"] == 10  # --fail-on warning and the demo has critical findings
