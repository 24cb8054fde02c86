"""The job where users run it, started for real on this machine and held to the devsample's truth (what Kafka itself
says about that capture: tests/devsample_truth.py), the oracle local mode meets too:

- an installed wheel in a fresh venv (no checkout on the path) runs ``kafka-recon nightly``;
- ``spark-submit --master spark://...`` to a standalone master with two workers (their own JVMs) uses that master,
  once with the code shipped as the ``--py-files`` zip to executors whose Python has only the dependencies, once
  with the wheel installed in the executors' Python;
- Spark Connect: ``SPARK_REMOTE=local[2]`` and a notebook-style driver whose active ``spark`` is a Connect session.

README's "Running it on a cluster" and "Databricks" sections are these commands.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import devsample_truth
from tests.integration.deployment import (
    PYSPARK_VERSION,
    ROOT,
    build_dist,
    connect_server,
    dependency_requirements,
    make_venv,
    master_status,
    standalone_cluster,
    tasks_per_executor,
)

pytestmark = pytest.mark.slow

CAPTURE_TIME = "2026-11-21T02:00:00Z"
_CLEAN_ENV = ("PYTHONPATH", "KAFKA_RECON_CONF_DIR", "KAFKA_RECON_SPARK_MASTER", "SPARK_REMOTE", "MASTER",
              "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS", "SPARK_HOME",
              "SPARK_CONNECT_MODE_ENABLED")


def clean_env(**extra: str) -> dict:
    """The environment of a user's shell: none of the test session's Spark or Python path settings."""
    env = {k: v for k, v in os.environ.items() if k not in _CLEAN_ENV and not k.startswith("KAFKA_RECON__")}
    env.update(TZ="UTC", **extra)
    return env


def nightly_args(capture: Path, base: Path, quality: bool = False) -> list:
    args = ["--capture", str(capture), "--out", str(base / "report"), "--fail-on", "never",
            "--capture-time", CAPTURE_TIME, "--set", f"storage.root={base / 'tables'}"]
    return args + ([] if quality else ["--skip-quality"])


def truth_of(base: Path):
    with (base / "report" / "findings.csv").open() as fh:
        return devsample_truth.from_rows(csv.DictReader(fh))


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    return build_dist(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def wheel_python(dist, tmp_path_factory):
    """A fresh venv with only the built wheel and pyspark, as a user installs it."""
    return make_venv(tmp_path_factory.mktemp("wheel-venv") / "venv", [str(dist["wheel"]), f"pyspark=={PYSPARK_VERSION}"])


@pytest.fixture(scope="module")
def deps_python(tmp_path_factory):
    """An executor's Python with the wheel's dependencies only: the job's own code must come from --py-files."""
    return make_venv(tmp_path_factory.mktemp("deps-venv") / "venv", dependency_requirements())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("standalone")) as running:
        yield running


def test_installed_wheel_runs_the_nightly_outside_the_checkout(wheel_python, devsample_dir, tmp_path):
    where = subprocess.run([str(wheel_python), "-c", "import jobs, udfs; print(jobs.__file__); print(udfs.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=clean_env(), check=True).stdout
    assert str(ROOT) not in where and str(wheel_python.parent.parent) in where, where
    proc = subprocess.run([str(wheel_python.parent / "kafka-recon"), "nightly", *nightly_args(devsample_dir, tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, env=clean_env(), timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "no conf/*.yaml" not in proc.stderr
    assert truth_of(tmp_path) == devsample_truth.FINDINGS


def _submit(spark_submit: Path, cluster: dict, script: str, extra: list, executor_python: Path, driver_python: Path,
            capture: Path, base: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``spark-submit --master spark://...`` as README's "Running it on a cluster" says."""
    command = [str(spark_submit), "--master", cluster["master"], "--driver-memory", "2g",
               "--conf", f"spark.pyspark.python={executor_python}",
               "--conf", f"spark.pyspark.driver.python={driver_python}",
               "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
               "--conf", "spark.log.level=WARN", *extra, script, *nightly_args(capture, base)]
    # as from an activated venv: spark-submit finds its Spark home through the python on PATH
    path = f"{spark_submit.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=2400,
                          env=clean_env(SPARK_LOCAL_IP="127.0.0.1", PATH=path))


def _assert_ran_on_the_cluster(proc, cluster: dict, before: set) -> None:
    assert proc.returncode == 0, (proc.stdout[-4000:], proc.stderr[-4000:])
    # spark-submit hands the Python driver's stderr to its own stdout (PythonRunner)
    assert f"master={cluster['master']} source=running JVM (spark-submit)" in proc.stdout + proc.stderr, proc.stdout[-3000:]
    apps = {a["id"]: a for a in master_status(cluster["ui"])["completedapps"]} if master_status(cluster["ui"]) else {}
    new = [a for app_id, a in apps.items() if app_id not in before]
    assert [a["name"] for a in new] == ["kafka-recon"], apps
    ran = {k: v for k, v in tasks_per_executor(cluster["work"]).items() if k.split("/")[0] == new[0]["id"]}
    assert len(ran) == 2 and all(count > 0 for count in ran.values()), ran  # both workers' executors ran tasks


def _completed(cluster: dict) -> set:
    status = master_status(cluster["ui"]) or {}
    return {a["id"] for a in status.get("completedapps", [])}


def test_spark_submit_to_a_standalone_master_ships_the_code_as_the_zip(cluster, dist, deps_python, devsample_dir,
                                                                       tmp_path):
    import pyspark

    before = _completed(cluster)
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    proc = _submit(spark_submit, cluster, "jobs/nightly.py", ["--py-files", str(dist["zip"])], deps_python,
                   Path(sys.executable), devsample_dir, tmp_path, ROOT)
    _assert_ran_on_the_cluster(proc, cluster, before)
    assert truth_of(tmp_path) == devsample_truth.FINDINGS


def test_spark_submit_to_a_standalone_master_with_the_wheel_installed(cluster, wheel_python, devsample_dir, tmp_path):
    script = subprocess.run([str(wheel_python), "-c", "import jobs.nightly; print(jobs.nightly.__file__)"],
                            capture_output=True, text=True, check=True, env=clean_env(), cwd=tmp_path).stdout.strip()
    before = _completed(cluster)
    proc = _submit(wheel_python.parent / "spark-submit", cluster, script, [], wheel_python, wheel_python, devsample_dir,
                   tmp_path, tmp_path)
    _assert_ran_on_the_cluster(proc, cluster, before)
    assert truth_of(tmp_path) == devsample_truth.FINDINGS


def test_spark_connect_from_spark_remote_gives_the_same_findings(devsample_dir, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "nightly", *nightly_args(devsample_dir, tmp_path, True)],
                          capture_output=True, text=True, cwd=ROOT, timeout=2400,
                          env=clean_env(SPARK_REMOTE="local[2]", PYSPARK_PYTHON=sys.executable))
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "source=SPARK_REMOTE (Spark Connect)" in proc.stderr
    assert truth_of(tmp_path) == devsample_truth.FINDINGS


def test_pyspark_client_alone_runs_the_nightly_against_a_connect_server(dist, devsample_dir, tmp_path):
    """A driver with ``pyspark-client`` (no JVM, no py4j: Databricks serverless' situation) and the wheel, against a
    Spark Connect server whose Python workers have the job installed (the repo's venv)."""
    client = make_venv(tmp_path / "client-venv", [str(dist["wheel"]), f"pyspark-client=={PYSPARK_VERSION}"])
    no_jvm = subprocess.run([str(client), "-c", "import py4j"], capture_output=True, text=True, env=clean_env())
    assert no_jvm.returncode != 0  # the client side cannot fall back on a classic session
    with connect_server(tmp_path / "server", sys.executable) as url:
        proc = subprocess.run([str(client.parent / "kafka-recon"), "nightly", *nightly_args(devsample_dir, tmp_path, True)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=2400, env=clean_env(SPARK_REMOTE=url))
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert f"master={url} source=SPARK_REMOTE (Spark Connect)" in proc.stderr
    assert truth_of(tmp_path) == devsample_truth.FINDINGS


NOTEBOOK_DRIVER = r'''
import json, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote("local[2]").getOrCreate()
from tests.integration.conftest import notebook_cells
namespace = {"_widget_values": json.loads(sys.argv[1]), "spark": spark, "__name__": "__notebook__"}
for cell in notebook_cells(__import__("pathlib").Path("notebooks/01_nightly_run.py")):
    exec(compile(cell, "01_nightly_run.py", "exec"), namespace)
print("NOTEBOOK_EXIT", namespace["exit_code"], type(spark).__module__)
'''


def test_a_notebook_whose_spark_is_a_connect_session(devsample_dir, tmp_path):
    import json

    widgets = {"captures": str(devsample_dir), "output_dir": str(tmp_path / "report"),
               "storage_root": str(tmp_path / "tables"), "fail_on": "never", "capture_time": CAPTURE_TIME}
    env = clean_env(PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", NOTEBOOK_DRIVER, json.dumps(widgets)], capture_output=True,
                          text=True, cwd=ROOT, timeout=2400, env=env)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "NOTEBOOK_EXIT 0 pyspark.sql.connect.session" in proc.stdout, proc.stdout[-2000:]
    assert "source=active session" in proc.stderr
    with (tmp_path / "report" / "findings.csv").open() as fh:
        found = devsample_truth.from_rows(csv.DictReader(fh))
    assert found == devsample_truth.FINDINGS
