"""The nightly job end to end on the real Kafka-written devsample: ground truth, exit codes, history.

Two captures of the same cluster: the real one, then the same tree a day later with the -stray dir removed
by an operator. Finding ids must stay stable, the removed problem must be marked resolved, and re-running
a capture must not duplicate anything.
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from jobs import nightly
from tests import devsample_truth

pytestmark = pytest.mark.slow  # several whole nightly runs (re-runs, day 2): `make test-slow`


def _findings(out: Path):
    with (out / "findings.csv").open() as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory, devsample_dir):
    base = tmp_path_factory.mktemp("nightly")
    day2 = base / "day2"
    shutil.copytree(devsample_dir, day2, ignore=shutil.ignore_patterns("tool-output", "expected.json"))
    shutil.rmtree(day2 / "broker-104/kafka-logs/inventory-2.89dae8f0999baf24f653d531c05f9ed6-stray")
    common = ["--set", f"storage.root={base / 'tables'}", "--skip-quality"]
    codes = {
        "day1": nightly.main(["--capture", str(devsample_dir), "--out", str(base / "out1"), "--fail-on", "critical",
                              "--capture-time", "2026-11-21T02:00:00Z", *common]),
        "day1_again": nightly.main(["--capture", str(devsample_dir), "--out", str(base / "out1b"),
                                    "--fail-on", "never", "--capture-time", "2026-11-21T02:00:00Z", *common]),
        "day2": nightly.main(["--capture", str(day2), "--out", str(base / "out2"), "--fail-on", "info",
                              "--capture-time", "2026-11-22T02:00:00Z", *common]),
    }
    from deltalake import DeltaTable

    (base / "gold_after_day2.json").write_text(
        DeltaTable(str(base / "tables" / "gold_findings")).to_pandas().to_json(orient="records", date_unit="us"))
    # a backfill: the older capture again, after the newer one (the re-run of Nov 27 after Nov 28)
    codes["day1_backfill"] = nightly.main(["--capture", str(devsample_dir), "--out", str(base / "out1c"),
                                           "--fail-on", "never", "--capture-time", "2026-11-21T02:00:00Z", *common])
    return base, codes


def test_findings_match_kafkas_ground_truth(runs):
    base, _ = runs
    assert devsample_truth.from_rows(_findings(base / "out1")) == devsample_truth.FINDINGS


def test_lagging_replicas_of_broker_103_are_not_findings(runs):
    base, _ = runs
    on_103 = [r for r in _findings(base / "out1") if r["broker_id"] == "103"]
    assert [r["dir_name"] for r in on_103] == ["clicks-0"]  # inventory-0/1/2 and events-1 lag but are valid


def test_exit_codes_follow_fail_on(runs):
    _, codes = runs
    assert codes == {"day1": nightly.EXIT_FINDINGS, "day1_again": nightly.EXIT_OK, "day2": nightly.EXIT_FINDINGS,
                     "day1_backfill": nightly.EXIT_OK}


def test_rerun_of_a_capture_is_idempotent_and_ids_are_stable(runs, spark):
    base, _ = runs
    from deltalake import DeltaTable

    gold = DeltaTable(str(base / "tables" / "gold_findings")).to_pandas()
    assert gold["finding_id"].is_unique
    assert len(gold) == len(devsample_truth.FINDINGS)
    files = DeltaTable(str(base / "tables" / "bronze_ingest_files")).to_pandas()
    per_capture = files.groupby("capture_id")["path"].agg(["count", "nunique"])
    assert (per_capture["count"] == per_capture["nunique"]).all()  # no duplicate rows after the re-run
    assert len(per_capture) == 2


def test_problem_gone_on_day2_is_resolved_and_others_stay_open(runs):
    base, _ = runs
    from deltalake import DeltaTable

    gold = DeltaTable(str(base / "tables" / "gold_findings")).to_pandas().set_index("check_id")
    assert gold.loc["STRAY_DIR", "status"] == "resolved"
    assert str(gold.loc["STRAY_DIR", "resolved_at"]).startswith("2026-11-22 02:00:00")
    still_open = gold[gold["status"] == "open"]
    assert set(still_open.index) == {finding[0] for finding in devsample_truth.FINDINGS} - {"STRAY_DIR"}
    assert (still_open["first_seen"].astype(str).str.startswith("2026-11-21 02:00:00")).all()
    assert (still_open["last_seen"].astype(str).str.startswith("2026-11-22 02:00:00")).all()
    summary = json.loads((base / "out2" / "summary.json").read_text())
    assert summary["findings_resolved"] == 1


def test_a_backfill_of_the_older_capture_changes_no_current_state_and_reports_that_capture(runs):
    """Re-running day 1 after day 2: gold_findings is what day 2 left (the stray dir stays resolved), the run's
    summary.json describes day 1's capture and says what its gold_run_summary row says, and there is still one
    row (one trend point) per capture."""
    base, _ = runs
    from deltalake import DeltaTable

    from jobs.report.summary import schema_errors

    keep = ["finding_id", "status", "first_seen", "last_seen", "resolved_at", "first_seen_capture"]
    before = json.loads((base / "gold_after_day2.json").read_text())
    after = json.loads(DeltaTable(str(base / "tables" / "gold_findings")).to_pandas()
                       .to_json(orient="records", date_unit="us"))
    assert sorted([{k: r[k] for k in keep} for r in after], key=lambda r: r["finding_id"]) == \
        sorted([{k: r[k] for k in keep} for r in before], key=lambda r: r["finding_id"])
    summary = json.loads((base / "out1c" / "summary.json").read_text())
    assert schema_errors(summary) == []
    runs_table = DeltaTable(str(base / "tables" / "gold_run_summary")).to_pandas()
    assert sorted(runs_table["capture_id"]) == sorted(set(runs_table["capture_id"])) and len(runs_table) == 2
    row = runs_table[runs_table["run_id"] == summary["run_id"]].iloc[0]
    assert summary["findings_open"] == row["open_findings"] == len(devsample_truth.FINDINGS)
    assert (summary["findings_new"], summary["findings_resolved"]) == (row["new_findings"], row["resolved_findings"])
    assert summary["counts"]["by_check"] == json.loads(row["counts_by_check_json"])
    assert devsample_truth.from_rows(_findings(base / "out1c")) == devsample_truth.FINDINGS
