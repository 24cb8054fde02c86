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


def test_demo_run_validates_its_inputs_volume_and_its_run_summary(demo_run, spark):
    """The quality stage of a whole run checks the capture's volume and the run's own gold_run_summary row."""
    from deltalake import DeltaTable

    run_id = demo_run["summary"]["run_id"]
    rows = [r for r in DeltaTable(str(demo_run["tables"] / "gold_dq_results")).to_pyarrow_table().to_pylist()
            if r["run_id"] == run_id]
    by_key = {(r["suite"], r["expectation"], r["column_name"]): r["success"] for r in rows}
    # bronze validated while reconcile ran (a small capture), silver and gold after it: one run's rows
    suites = {k[0] for k in by_key}
    assert {"kafka_recon.bronze_log_dirs", "kafka_recon.silver_replicas", "kafka_recon.gold_findings"} <= suites
    assert len({(r["suite"], r["expectation"], r["column_name"]) for r in rows}) == len(rows)
    for table in ("bronze_ingest_files", "bronze_log_dirs"):
        assert by_key[(f"kafka_recon.{table}", "expect_table_row_count_to_be_between", "table:row_count")] is True
    assert {k for k in by_key if k[0] == "kafka_recon.gold_run_summary"}
    assert all(ok for k, ok in by_key.items() if k[0] == "kafka_recon.gold_run_summary")
    assert demo_run["summary"]["status"] == "findings" and demo_run["summary"]["inputs"]["complete"] is True
