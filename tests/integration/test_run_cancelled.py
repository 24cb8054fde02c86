"""A real nightly run stopped by SIGINT (Ctrl-C) or SIGTERM (a scheduler) in the middle of reconcile, with Spark
running: exit 130 / 143, one line saying so, no traceback, and a summary.json ``cancelled`` naming the stage
(issue #65). The signal is sent by the process to itself at a named point (tests/fault_injection.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.report.summary import EXIT_SIGINT, EXIT_SIGTERM

pytestmark = pytest.mark.slow  # whole nightly runs as subprocesses: `make test-slow`
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("flag, code, name", [("--interrupt-at", EXIT_SIGINT, "SIGINT"),
                                              ("--terminate-at", EXIT_SIGTERM, "SIGTERM")])
def test_a_signal_during_reconcile_cancels_the_run_with_a_summary(tmp_path, devsample_dir, flag, code, name):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tests.fault_injection", flag, "before_findings_merge", "--",
                           "nightly", "--capture", str(devsample_dir), "--out", str(out), "--skip-quality",
                           "--set", f"storage.root={tmp_path / 'tables'}"],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == code, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    ours = [line for line in proc.stderr.splitlines() if "status=cancelled exit_code=" in line]
    assert len(ours) == 1 and f"cancelled by {name} during reconcile" in ours[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "cancelled" and summary["exit_code"] == code and summary["stage"] == "reconcile"
    assert not (tmp_path / "tables" / "gold_findings").exists()  # stopped before the merge: gold untouched
