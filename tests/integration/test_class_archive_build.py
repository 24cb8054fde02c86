"""`kafka-recon class-archive` end to end: the archive it builds is the one a later nightly's JVM loads Spark's
classes from (the JVM's own class-loading log is the oracle), and that nightly still gives the real devsample's
truth. The runs that must not map the archive (switched off; Flight Recorder on) are judged at start-up, so they
run on a capture with disks only, which stops after ingest (exit 3): a Spark job, without a whole reconcile."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.nightly import EXIT_FINDINGS, EXIT_INCOMPLETE
from jobs.simulate.command import main as simulate
from tests import devsample_truth

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # a training run, a dump and three nightlies

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], capture_output=True, text=True, timeout=900,
                          cwd=ROOT)


def _nightly(capture: Path, work: Path, name: str, exit_code: int, *sets: str):
    """A nightly whose JVM writes where each class came from into ``<work>/<name>.classes``."""
    classes = work / f"{name}.classes"
    proc = _cli("nightly", "--capture", str(capture), "--out", str(work / name), "--fail-on", "warning",
                "--skip-quality", "--set", "spark.master=local[2]", "--set", f"storage.root={work / name}-tables",
                "--set", f"spark.small_capture_jvm_options=-XX:TieredStopAtLevel=1 "
                         f"-Xlog:class+load=info:file={classes}", *sets)
    assert proc.returncode == exit_code, proc.stderr[-3000:]
    summary = json.loads((work / name / "summary.json").read_text())
    return proc.stderr, classes.read_text(), summary


def _source(class_log: str, name: str) -> str:
    found = re.search(rf"\] {re.escape(name)} source: (.*)$", class_log, re.M)
    assert found, f"{name} was not loaded"
    return found.group(1)


def test_a_built_archive_is_where_the_next_nightlys_jvm_loads_sparks_classes_from(tmp_path, devsample_dir):
    cache = tmp_path / "cache"
    built = _cli("class-archive", "--capture", str(devsample_dir), "--set", "spark.master=local[2]",
                 "--set", f"spark.class_archive_dir={cache}")
    assert built.returncode == 0, built.stderr[-3000:]
    archives = list(cache.glob("spark-classes-*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 10 * 2**20
    assert f"class_archive={archives[0]}" in built.stderr
    assert [p.name for p in cache.iterdir()] == [archives[0].name]  # the training run's files are gone

    log, classes, summary = _nightly(devsample_dir, tmp_path, "auto", EXIT_FINDINGS,
                                     "--set", f"spark.class_archive_dir={cache}")
    assert f"stage=startup class_archive={archives[0]}" in log
    assert _source(classes, "org.apache.spark.SparkContext") == "shared objects file"
    assert _source(classes, "org.apache.spark.sql.catalyst.analysis.Analyzer") == "shared objects file"
    with (tmp_path / "auto" / "findings.csv").open() as fh:  # the archive changes where classes come from, only
        assert devsample_truth.from_rows(csv.DictReader(fh)) == devsample_truth.FINDINGS
    assert summary["status"] == "findings" and summary["findings_open"] == len(devsample_truth.FINDINGS)

    disks = tmp_path / "disks-only"
    assert simulate(["--scenario", "topic-id-divergence-disks-only", "--out", str(disks), "--seed", "7"]) == 0
    log, classes, summary = _nightly(disks, tmp_path, "off", EXIT_INCOMPLETE, "--set", f"spark.class_archive_dir={cache}",
                                     "--set", "spark.class_archive=false")
    assert "class_archive=" not in log
    assert _source(classes, "org.apache.spark.SparkContext").endswith(".jar")  # the oracle tells the two apart
    assert summary["stage"] == "ingest" and summary["status"] == "incomplete"

    # Java 17's JVM crashed (SIGSEGV, exit 1) mapping the archive with Flight Recorder or an agent on: such a run
    # starts without it, and runs Spark's jobs to the same outcome
    log, classes, recorded = _nightly(disks, tmp_path, "jfr", EXIT_INCOMPLETE, "--set", f"spark.class_archive_dir={cache}",
                                      "--set", "spark.jvm_options=-XX:+UseParallelGC "
                                               f"-XX:StartFlightRecording=filename={tmp_path / 'rec.jfr'}")
    assert "stage=startup class_archive=none (the JVM options load an agent or Flight Recorder " \
           "(-XX:StartFlightRecording)" in log
    assert _source(classes, "org.apache.spark.SparkContext").endswith(".jar")
    for key in ("status", "stage", "exit_code", "inputs"):
        assert recorded[key] == summary[key], key
