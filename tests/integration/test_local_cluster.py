"""Scale-out proof: the nightly pipeline on local-cluster[2,1,1024] (separate executor JVMs and Python
workers) finds exactly what local mode finds — nothing relies on driver-local state.

Both runs are subprocesses so each gets its own JVM; the local-mode run is the reference.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow
KEY = ("check_id", "severity", "broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition", "bytes")


def _run(master: str, capture, tmp_path, name: str):
    out = tmp_path / name
    env = {**os.environ, "KAFKA_RECON_SPARK_MASTER": master, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "nightly", "--capture", str(capture), "--out", str(out / "report"),
         "--fail-on", "never", "--skip-quality", "--capture-time", "2026-11-21T02:00:00Z",
         "--set", f"storage.root={out / 'tables'}", "--set", "spark.driver_memory=2g"],
        env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with (out / "report" / "findings.csv").open() as fh:
        rows = sorted(tuple(r[k] for k in KEY) for r in csv.DictReader(fh))
    return rows, proc.stderr


def test_local_cluster_finds_exactly_what_local_mode_finds(devsample_dir, tmp_path):
    local_rows, _ = _run("local[2]", devsample_dir, tmp_path, "local")
    cluster_rows, log = _run("local-cluster[2,1,1024]", devsample_dir, tmp_path, "cluster")
    assert local_rows, "the devsample has findings; an empty result means the run read nothing"
    assert cluster_rows == local_rows
    assert "stage=reconcile status=done" in log
