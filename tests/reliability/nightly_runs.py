"""Run ``kafka-recon nightly`` as a child process, kill it at chosen moments, and read its tables back.

The crash and concurrency tests drive the real entry point (``python -m jobs.nightly``) on a small simulated
capture, each child in its own process group so a SIGKILL takes its JVM down with it. Tables are read with
``deltalake`` (never through the code under test): every version of every table must load, keys must be
unique, and rows are compared without the columns that hold wall-clock time.
"""
from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from jobs.tables.registry import TABLES

ROOT = Path(__file__).resolve().parent.parent.parent
CAPTURE_TIME = "2026-11-22T09:00:00Z"
RUN_ID = "20261122T090000Z-reliab01"  # retries of one nightly keep its run id
# Wall-clock columns: they differ between any two runs by nature, so comparisons leave them out.
VOLATILE = {"gold_run_summary": {"started_at", "finished_at", "stage_seconds_json"},
            "gold_dq_results": {"evaluated_at"}}
POLL_SECONDS = 0.01
RUN_TIMEOUT = 1800  # one nightly run of the small capture, on a loaded 2-core machine
STARTED: List[subprocess.Popen] = []  # every run started here: killed by the tests' teardown if still alive


def simulate(out: Path, scenario: str = "stray-dirs") -> Path:
    subprocess.run([sys.executable, "-m", "jobs.cli", "simulate", "--scenario", scenario, "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    return out


def nightly_command(capture: Path, root: Path, out: Path, run_id: str, kill_at: Optional[str] = None,
                    sets: Sequence[str] = ()) -> List[str]:
    """The nightly entry point, or the same command line under tests.fault_injection killing it at ``kill_at``;
    ``sets``: more ``--set KEY=VALUE`` overrides."""
    entry = ["-m", "tests.fault_injection", "--kill-at", kill_at, "--", "nightly"] if kill_at else ["-m", "jobs.nightly"]
    return [sys.executable, *entry, "--capture", str(capture), "--out", str(out),
            "--capture-time", CAPTURE_TIME, "--run-id", run_id, "--fail-on", "never", "--skip-quality",
            "--set", f"storage.root={root}", "--set", "storage.backend=embedded",
            "--set", "spark.master=local[2]", "--set", "spark.shuffle_partitions=2",
            "--set", "spark.driver_memory=2g", *[arg for value in sets for arg in ("--set", value)]]


def start(capture: Path, root: Path, out: Path, run_id: str, log: Path,
          kill_at: Optional[str] = None, sets: Sequence[str] = ()) -> subprocess.Popen:
    """Start one nightly run in its own process group; stdout and stderr go to ``log``."""
    env = dict(os.environ, TZ="UTC", PYSPARK_PYTHON=sys.executable)
    handle = open(log, "ab")
    try:
        proc = subprocess.Popen(nightly_command(capture, root, out, run_id, kill_at, sets), cwd=ROOT, env=env, stdout=handle,
                                stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        handle.close()
    STARTED.append(proc)
    return proc


def kill_leftovers() -> None:
    """Kill the process group of every run started here that is still alive (a failed or timed-out test)."""
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            kill_group(proc)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the run and everything it started (its JVM, Python workers): the group of this child only."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=60)


def kill_when(proc: subprocess.Popen, condition: Callable[[], bool], timeout: float = RUN_TIMEOUT) -> bool:
    """Poll ``condition``; SIGKILL the run the moment it holds. False when the run ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            kill_group(proc)
            return True
        if proc.poll() is not None:
            return False
        time.sleep(POLL_SECONDS)
    kill_group(proc)
    raise TimeoutError("the run neither reached the kill condition nor ended")


def finish(proc: subprocess.Popen, timeout: float = RUN_TIMEOUT) -> int:
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise


class Baseline:
    """An uninterrupted run of the capture, in the background (not in ``STARTED``: it outlives single tests)."""

    def __init__(self, capture: Path, base: Path) -> None:
        self.base = base
        self.log = base / "run.log"
        self.proc = start(capture, base / "tables", base / "out", RUN_ID, self.log)
        STARTED.remove(self.proc)
        self.code: Optional[int] = None

    def result(self) -> tuple:
        if self.code is None:
            self.code = finish(self.proc)
        assert self.code == 0, self.log.read_text(errors="replace")[-5000:]
        return self.base / "tables", self.base / "out"

    def stop(self) -> None:
        if self.proc.poll() is None:
            kill_group(self.proc)


def staging_exists(table_dir: Path) -> bool:
    """A write of the embedded backend is under way: Spark is filling ``<table>/_kr_staging/<write id>/``."""
    staging = table_dir / "_kr_staging"
    try:
        return any(staging.iterdir())
    except OSError:
        return False


def any_bronze_write(root: Path) -> Callable[[], bool]:
    def check() -> bool:
        try:
            tables = [p for p in root.iterdir() if p.name.startswith("bronze_")]
        except OSError:
            return False
        return any(staging_exists(t) for t in tables)
    return check


# ---------------------------------------------------------------------------------------------- reading back

def table_dirs(root: Path) -> List[Path]:
    return sorted(p for p in root.iterdir() if (p / "_delta_log").is_dir()) if root.is_dir() else []


def check_every_version_readable(root: Path) -> Dict[str, int]:
    """Load every committed version of every table (a torn commit would fail here); returns the versions."""
    from deltalake import DeltaTable

    versions = {}
    for path in table_dirs(root):
        latest = DeltaTable(str(path)).version()
        for version in range(latest + 1):
            DeltaTable(str(path), version=version).to_pyarrow_table()
        versions[path.name] = latest
    return versions


def _norm(value):
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(value, (list, tuple)):
        return tuple(_norm(v) for v in value)
    return value


def table_differences(got: Dict[str, Counter], want: Dict[str, Counter]) -> Dict[str, str]:
    """Per differing table: how many rows differ and which columns hold the differences (for failure text)."""
    out = {}
    for name in sorted(set(got) | set(want)):
        a, b = got.get(name, Counter()), want.get(name, Counter())
        if a == b:
            continue
        extra, missing = list((a - b).elements()), list((b - a).elements())
        columns = sorted({k for row in extra for k, v in row if (k, v) not in {kv for r in missing for kv in r}})
        out[name] = f"{len(extra)} row(s) differ from the uninterrupted run's {len(missing)}; columns: {columns}"
    return out


def read_tables(root: Path) -> Dict[str, Counter]:
    """Latest rows of every table as a multiset, wall-clock columns left out."""
    from deltalake import DeltaTable

    out = {}
    for path in table_dirs(root):
        skip = VOLATILE.get(path.name, set())
        rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
        out[path.name] = Counter(tuple(sorted((k, _norm(v)) for k, v in r.items() if k not in skip)) for r in rows)
    return out


def duplicate_keys(root: Path) -> Dict[str, List[tuple]]:
    """Per table, key tuples held by more than one row (the registry's natural keys)."""
    from deltalake import DeltaTable

    found = {}
    for path in table_dirs(root):
        spec = TABLES.get(path.name)
        if spec is None or not spec.keys:
            continue
        rows = DeltaTable(str(path)).to_pyarrow_table(columns=list(spec.keys)).to_pylist()
        counts = Counter(tuple(r[k] for k in spec.keys) for r in rows)
        dupes = [k for k, n in counts.items() if n > 1]
        if dupes:
            found[path.name] = dupes[:5]
    return found
