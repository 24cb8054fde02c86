"""The real things a deployment test starts on this machine: a Spark standalone master and workers on 127.0.0.1
(pip's pyspark ships ``bin/spark-class``), fresh virtual environments holding only what a cluster node would
(the built wheel, or only its dependencies), and the built artefacts themselves (``make dist``: wheel + zip).

Everything listens on loopback only and is stopped by the fixture that started it.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pyspark

ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
PYSPARK_VERSION = pyspark.__version__


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_dist(out: Path) -> Dict[str, Path]:
    """The wheel (``pip wheel .``, as ``make dist``) and the ``--py-files`` zip (``kafka-recon pyfiles``)."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=900)
    (wheel,) = out.glob("kafka_recon-*.whl")
    zip_path = out / "kafka_recon.zip"
    subprocess.run([sys.executable, "-m", "jobs.pyfiles", str(zip_path)], check=True, capture_output=True,
                   text=True, timeout=300, cwd=ROOT)
    return {"wheel": wheel, "zip": zip_path}


def make_venv(path: Path, requirements: List[str], python: Optional[str] = None) -> Path:
    """A fresh venv at ``path`` with only ``requirements`` pip-installed; returns its python."""
    base = python or shutil.which("python3.11") or sys.executable
    subprocess.run([base, "-m", "venv", str(path)], check=True, timeout=300)
    py = path / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", *requirements], capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return py


def dependency_requirements() -> List[str]:
    """The wheel's install requirements (requirements-databricks.txt, kept equal to pyproject's)."""
    lines = (ROOT / "requirements-databricks.txt").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


@contextmanager
def standalone_cluster(work: Path, workers: int = 2, cores: int = 1, memory: str = "1500m",
                       env: Optional[Dict[str, str]] = None) -> Iterator[Dict[str, object]]:
    """A standalone master and ``workers`` workers on 127.0.0.1 (their own JVMs), stopped on exit. Yields the
    master URL, its web UI URL (the JSON status at ``/json/``) and the workers' work dir (executor logs)."""
    port, ui = free_port(), free_port()
    work.mkdir(parents=True, exist_ok=True)
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    base_env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_NO_DAEMONIZE": "1", **(env or {})}
    procs: List[subprocess.Popen] = []
    logs = []
    try:
        log = open(work / "master.log", "w")
        logs.append(log)
        procs.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                       "--port", str(port), "--webui-port", str(ui)],
                                      env=base_env, stdout=log, stderr=subprocess.STDOUT))
        master = f"spark://127.0.0.1:{port}"
        ui_url = f"http://127.0.0.1:{ui}"
        _wait_for(lambda: master_status(ui_url) is not None, 120, "the master's web UI")
        for i in range(workers):
            log = open(work / f"worker-{i}.log", "w")
            logs.append(log)
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1",
                 "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
                 "--work-dir", str(work / "work")], env=base_env, stdout=log, stderr=subprocess.STDOUT))
        _wait_for(lambda: len([w for w in (master_status(ui_url) or {}).get("workers", [])
                               if w.get("state") == "ALIVE"]) == workers, 180, f"{workers} workers")
        yield {"master": master, "ui": ui_url, "work": work / "work"}
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        for log in logs:
            log.close()


def master_status(ui_url: str) -> Optional[dict]:
    try:
        with urllib.request.urlopen(f"{ui_url}/json/", timeout=5) as response:
            return json.loads(response.read().decode())
    except Exception:  # noqa: BLE001 - not up yet
        return None


def tasks_per_executor(work: Path) -> Dict[str, int]:
    """``app/executor -> tasks run``, read from the executors' own logs under the workers' work dir."""
    out: Dict[str, int] = {}
    for stderr in sorted(work.glob("app-*/*/stderr")):
        out[f"{stderr.parent.parent.name}/{stderr.parent.name}"] = \
            stderr.read_text(errors="replace").count("Running task")
    return out


def _wait_for(ready, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(1)
    raise TimeoutError(f"{what} did not come up within {seconds:.0f} s")


@contextmanager
def connect_server(work: Path, python: str, cores: int = 2) -> Iterator[str]:
    """A Spark Connect server on 127.0.0.1 (``SparkConnectServer`` through spark-submit, as Spark's
    ``sbin/start-connect-server.sh`` starts it) whose Python workers run ``python``; yields its ``sc://`` URL."""
    port = free_port()
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": python}
    env.pop("SPARK_REMOTE", None)
    log = open(work / "connect-server.log", "w")
    proc = subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
         "--master", f"local[{cores}]", "--driver-memory", "2g",
         "--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
         "--conf", "spark.ui.enabled=false", "spark-internal"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        _wait_for(lambda: listening() or proc.poll() is not None, 180, "the Spark Connect server")
        if proc.poll() is not None:
            raise RuntimeError(f"the Connect server exited: {(work / 'connect-server.log').read_text()[-3000:]}")
        yield f"sc://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
