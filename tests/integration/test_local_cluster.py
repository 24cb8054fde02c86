"""Scale-out proof: the nightly pipeline on local-cluster[2,1,1024] (separate executor JVMs and Python
workers) gives the real devsample's truth exactly — nothing relies on driver-local state.

The run is a subprocess so it gets its own JVM. The oracle is what Kafka says about the capture
(tests/devsample_truth.py), which the local-mode runs of the same capture give too (test_nightly_devsample,
test_reconcile_devsample): no second, local-mode run is needed to compare with.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from tests import devsample_truth

pytestmark = pytest.mark.slow


# local-cluster's workers keep each executor's log under Spark's home: <pyspark>/work/<app id>/<executor id>/stderr
WORK = Path(pyspark.__file__).parent / "work"


def _apps() -> set:
    return set(WORK.glob("app-*")) if WORK.is_dir() else set()


def test_local_cluster_gives_exactly_the_devsamples_truth(devsample_dir, tmp_path):
    before = _apps()
    env = {**os.environ, "KAFKA_RECON_SPARK_MASTER": "local-cluster[2,1,1024]", "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "nightly", "--capture", str(devsample_dir), "--out", str(tmp_path / "report"),
         "--fail-on", "never", "--skip-quality", "--capture-time", "2026-11-21T02:00:00Z",
         "--set", f"storage.root={tmp_path / 'tables'}", "--set", "spark.driver_memory=2g"],
        env=env, capture_output=True, text=True, timeout=1800)
    apps = _apps() - before
    try:  # the oracle that the tasks ran in two executor JVMs of their own, not in the driver's: their logs
        assert proc.returncode == 0, proc.stderr[-4000:]
        (app,) = apps
        ran = {d.name: (d / "stderr").read_text(errors="replace").count("Running task") for d in app.iterdir()}
        assert ran.get("0", 0) > 0 and ran.get("1", 0) > 0, ran
    finally:
        for leftover in apps:
            shutil.rmtree(leftover, ignore_errors=True)
    assert "stage=reconcile status=done" in proc.stderr
    with (tmp_path / "report" / "findings.csv").open() as fh:
        assert devsample_truth.from_rows(csv.DictReader(fh)) == devsample_truth.FINDINGS
