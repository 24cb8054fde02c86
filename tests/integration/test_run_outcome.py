"""Never a false green: captures that cannot support a verdict end incomplete (exit 3), a failure mid-pipeline
ends in error (exit 1), and each leaves a summary.json saying what happened. Whole nightly runs on simulated
captures whose gaps are known by construction: two as real subprocesses, the rest in-process (the session's
Spark)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jobs import nightly
from jobs.simulate.command import main as simulate

pytestmark = pytest.mark.slow  # whole nightly runs, two as subprocesses: `make test-slow`


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    base = tmp_path_factory.mktemp("outcome")
    for name in ("topic-id-divergence-disks-only", "missing-replica"):
        assert simulate(["--scenario", name, "--out", str(base / name), "--seed", "7"]) == 0
    return base


def _nightly(capture, out, tables, *extra):
    code = nightly.main(["--capture", str(capture), "--out", str(out), "--set", f"storage.root={tables}",
                         "--skip-quality", *extra])
    return code, json.loads((out / "summary.json").read_text())


def _subprocess(capture, tmp_path, fail_at=None):
    out = tmp_path / "out"
    entry = ["-m", "tests.fault_injection", "--fail-at", fail_at, "--"] if fail_at else ["-m", "jobs.cli"]
    proc = subprocess.run([sys.executable, *entry, "nightly", "--capture", str(capture), "--out", str(out),
                           "--set", f"storage.root={tmp_path / 'tables'}", "--set", "run.progress_seconds=1",
                           "--skip-quality"], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).resolve().parents[2])
    return proc.returncode, proc.stderr, json.loads((out / "summary.json").read_text())


def test_log_dirs_without_a_controller_view_stop_after_ingest_unless_allowed(captures, tmp_path):
    disks = captures / "topic-id-divergence-disks-only"
    code, err, summary = _subprocess(disks, tmp_path / "r1")
    assert code == nightly.EXIT_INCOMPLETE == summary["exit_code"]
    assert summary["status"] == "incomplete" and summary["stage"] == "ingest"
    assert [g["reason"] for g in summary["inputs"]["gaps"]] == ["no_controller_view"]
    assert "ingest" in summary["stages"] and not (tmp_path / "r1" / "out" / "report.html").exists()
    assert "stage=ingest status=stopped" in err and "status=progress" in err and "Traceback" not in err
    # a capture this small starts its JVM with the client compiler only (spark.small_capture_jvm_*)
    assert "jvm_options_added=-XX:TieredStopAtLevel=1" in err

    code, summary = _nightly(disks, tmp_path / "r2", tmp_path / "t", "--allow-partial")
    assert code == nightly.EXIT_FINDINGS and summary["status"] == "findings"
    assert summary["inputs"] == {"complete": False, "allow_partial": True,
                                 "gaps": [{"reason": "no_controller_view",
                                           "message": summary["inputs"]["gaps"][0]["message"]}]}
    assert summary["counts"]["by_check"].get("TOPIC_ID_DIVERGENCE")

    # the same cluster again with one broker's disks only: the capture shrank (kept: --allow-partial)
    shrunk = tmp_path / "shrunk"
    shutil.copytree(disks / "broker-1", shrunk / "broker-1")
    code, summary = _nightly(shrunk, tmp_path / "r3", tmp_path / "t", "--allow-partial")
    reasons = {g["reason"]: g for g in summary["inputs"]["gaps"]}
    assert set(reasons) == {"no_controller_view", "capture_shrunk"}
    assert reasons["capture_shrunk"]["files_seen"] < 0.5 * reasons["capture_shrunk"]["previous_files_seen"]


def test_registered_broker_not_captured_is_incomplete_with_a_full_report(captures, tmp_path):
    capture = captures / "missing-replica"
    absent = sorted(int(b) for b, info in json.loads((capture / "capture.json").read_text())["brokers"].items()
                    if info["state"] == "absent")
    code, summary = _nightly(capture, tmp_path / "r", tmp_path / "t")
    assert absent and code == nightly.EXIT_INCOMPLETE and summary["status"] == "incomplete"
    (gap,) = summary["inputs"]["gaps"]
    assert gap["reason"] == "brokers_not_captured" and gap["brokers"] == absent
    assert summary["counts"]["by_check"]["MISSING_REPLICA"] >= 1  # the report is still complete
    assert (tmp_path / "r" / "report.html").exists()
    code, summary = _nightly(capture, tmp_path / "r2", tmp_path / "t", "--allow-partial")
    assert code == nightly.EXIT_FINDINGS and summary["status"] == "findings" and not summary["inputs"]["complete"]


def test_a_failure_mid_pipeline_leaves_an_error_summary_naming_the_stage(captures, tmp_path):
    code, err, summary = _subprocess(captures / "missing-replica", tmp_path, fail_at="before_findings_merge")
    assert code == nightly.EXIT_ERROR == summary["exit_code"] and summary["status"] == "error"
    assert summary["stage"] == "reconcile" and summary["error"] == {
        "kind": "RuntimeError", "message": "RuntimeError: injected failure at before_findings_merge"}
    assert set(summary["stages"]) == {"ingest", "reconcile"}
    assert "Traceback" not in err and "stage=reconcile status=failed" in err
    # Spark's warnings that ask nothing of the user are quieted in a session the job starts (spark_session.py)
    for noise in ("No Partition Defined for Window", "The output columns are expected", "large task binary"):
        assert noise not in err
