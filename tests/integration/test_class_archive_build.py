"""`kafka-recon class-archive` end to end: the archive it builds is the one a later nightly's JVM loads Spark's
classes from (the JVM's own class-loading log is the oracle), and the nightly's outcome does not change."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # a training run, a dump and three nightlies

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], capture_output=True, text=True, timeout=900,
                          cwd=ROOT)


def _nightly(capture: Path, work: Path, name: str, *sets: str):
    """A nightly whose JVM writes where each class came from into ``<work>/<name>.classes``."""
    classes = work / f"{name}.classes"
    proc = _cli("nightly", "--capture", str(capture), "--out", str(work / name), "--fail-on", "never",
                "--skip-quality", "--set", "spark.master=local[2]", "--set", f"storage.root={work / name}-tables",
                "--set", f"spark.small_capture_jvm_options=-XX:TieredStopAtLevel=1 "
                         f"-Xlog:class+load=info:file={classes}", *sets)
    assert proc.returncode == 0, proc.stderr[-3000:]
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

    log, classes, with_archive = _nightly(devsample_dir, tmp_path, "auto", "--set", f"spark.class_archive_dir={cache}")
    assert f"stage=startup class_archive={archives[0]}" in log
    assert _source(classes, "org.apache.spark.SparkContext") == "shared objects file"
    assert _source(classes, "org.apache.spark.sql.catalyst.analysis.Analyzer") == "shared objects file"

    log, classes, without = _nightly(devsample_dir, tmp_path, "off", "--set", f"spark.class_archive_dir={cache}",
                                     "--set", "spark.class_archive=false")
    assert "class_archive=" not in log
    assert _source(classes, "org.apache.spark.SparkContext").endswith(".jar")  # the oracle tells the two apart
    for key in ("status", "exit_code", "findings_open", "counts"):
        assert with_archive[key] == without[key], key

    # Java 17's JVM crashed (SIGSEGV, exit 1) mapping the archive with Flight Recorder or an agent on: such a run
    # starts without it, and gives the same outcome
    log, classes, recorded = _nightly(devsample_dir, tmp_path, "jfr", "--set", f"spark.class_archive_dir={cache}",
                                      "--set", "spark.jvm_options=-XX:+UseParallelGC "
                                               f"-XX:StartFlightRecording=filename={tmp_path / 'rec.jfr'}")
    assert "stage=startup class_archive=none (the JVM options load an agent or Flight Recorder " \
           "(-XX:StartFlightRecording)" in log
    assert _source(classes, "org.apache.spark.SparkContext").endswith(".jar")
    for key in ("status", "exit_code", "findings_open", "counts"):
        assert recorded[key] == without[key], key
