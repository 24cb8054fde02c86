"""``--quiet`` means quiet (issue #65): a real nightly run as a subprocess prints only its final line; every
stage line and whatever Spark and the JVM print go to ``--out/kafka-recon.log``, whose path the final line
names."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a whole nightly run as a subprocess: `make test-slow`
REPO = Path(__file__).resolve().parents[2]


def test_quiet_prints_the_final_line_and_logs_the_rest(tmp_path, devsample_dir):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "nightly", "--capture", str(devsample_dir), "--out",
                           str(out), "--skip-quality", "--quiet", "--set", f"storage.root={tmp_path / 'tables'}"],
                          capture_output=True, text=True, timeout=900, cwd=REPO)
    assert proc.returncode == 10, proc.stderr[-3000:]  # the devsample's truth has critical findings
    (line,) = proc.stderr.strip().splitlines()
    assert "status=finished exit_code=10" in line and f"log={out / 'kafka-recon.log'}" in line
    log = (out / "kafka-recon.log").read_text()
    for stage in ("ingest", "reconcile", "report"):
        assert f"stage={stage} status=done" in log
    assert "WARN" in log or "log4j" in log  # Spark's own output went to the file, not the terminal
