"""How a bench run is measured: the machine's facts, and a command's wall time, CPU seconds of its whole process
tree and peak memory per role (Python driver, JVM, Python workers), sampled from ``/proc``.

Separate from :mod:`bench.run_all` (what runs) and :mod:`bench.targets` (what is judged): the small-captures and
local-cluster benches measure their runs with the same :func:`run_measured`.
"""
from __future__ import annotations

import os
import platform
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "bench", ".cache")
MASTER = "local[2]"  # every Spark run of the bench, as the nightly job runs on a 2-core machine
# what a nightly prints of each stage and of its outcome (jobs/stage_log.py), parsed from its log
STAGE_LINE = re.compile(r"stage=(\w+) status=done rows=(\S+) seconds=([\d.]+)")
OPEN_FINDINGS = re.compile(r"status=finished exit_code=\d+ open_findings=(\d+)")

# ---------------------------------------------------------------------------------------------- machine


def machine_facts() -> dict:
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    cpu_model = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu_model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    try:
        import pyspark
        spark_version = pyspark.__version__
    except ImportError:
        spark_version = "?"
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True).stdout.strip())
    return {"host": platform.node(), "nproc": os.cpu_count(), "cpu_model": cpu_model,
            "memory_gib": round(mem_kib / 2**20, 1), "python": platform.python_version(),
            "java": java[0] if java else "?", "spark": spark_version,
            "commit": commit + ("+dirty" if dirty else ""), "load_avg_start": loadavg()}


def loadavg() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


# ---------------------------------------------------------------------------------------------- /proc sampling


def _status(pid: int) -> Dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "PPid"):
                out[key] = int(value.split()[0])
    return out


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # utime + stime of this process only (children counted by pid)


def _children_map() -> Dict[int, List[int]]:
    children: Dict[int, List[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
            ppid = int(text[text.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    return children


@dataclass
class TreeSampler:
    """Samples a process tree every ``interval`` s: peak VmHWM per role, CPU seconds per pid (last seen)."""

    root: int
    interval: float = 0.5
    peak_kib: Dict[str, int] = field(default_factory=lambda: {"driver_python": 0, "jvm": 0, "worker_max": 0,
                                                               "workers_sum": 0, "tree_sum": 0,
                                                               "executor_jvm": 0})
    cpu_ticks: Dict[int, int] = field(default_factory=dict)
    jvm_cmdline: List[str] = field(default_factory=list)
    jvm_pid: Optional[int] = None
    _executors: Dict[int, bool] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "TreeSampler":
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> None:
        children = _children_map()
        todo, tree = [self.root], []
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, []))
        workers_rss = tree_rss = 0
        for pid in tree:
            try:
                st = _status(pid)
                self.cpu_ticks[pid] = _cpu_ticks(pid)
                with open(f"/proc/{pid}/comm") as f:
                    comm = f.read().strip()
            except (OSError, ValueError):
                continue
            hwm, rss = st.get("VmHWM", 0), st.get("VmRSS", 0)
            tree_rss += rss
            if pid == self.root:
                role = "driver_python"
            elif comm == "java" and self._is_executor(pid):
                role = "executor_jvm"  # local-cluster: an executor in its own JVM
            elif comm == "java":
                role = "jvm"
                if self.jvm_pid != pid:
                    self.jvm_pid = pid
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as f:
                            self.jvm_cmdline = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
                    except OSError:
                        pass
            else:
                role = "worker_max"
                workers_rss += rss
            self.peak_kib[role] = max(self.peak_kib[role], hwm)
        self.peak_kib["workers_sum"] = max(self.peak_kib["workers_sum"], workers_rss)
        self.peak_kib["tree_sum"] = max(self.peak_kib["tree_sum"], tree_rss)

    def _is_executor(self, pid: int) -> bool:
        known = self._executors.get(pid)
        if known is None:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    known = b"CoarseGrainedExecutorBackend" in f.read()
            except OSError:
                known = False
            self._executors[pid] = known
        return known

    def cpu_seconds(self) -> float:
        return sum(self.cpu_ticks.values()) / os.sysconf("SC_CLK_TCK")

    def heap_flags(self) -> str:
        flags = [a for a in self.jvm_cmdline if a.startswith(("-Xmx", "-Xms", "-XX:MaxRAM", "-XX:+Use"))]
        return " ".join(flags) or "?"


def run_measured(cmd: List[str], log_path: str, timeout: float, env: Optional[dict] = None) -> dict:
    """Run ``cmd`` with stdout+stderr to ``log_path``; wall, tree CPU, peak memory, exit code."""
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    load0 = loadavg()
    with open(log_path, "w") as log:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        sampler = TreeSampler(proc.pid).start()
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
            code = f"timeout>{timeout:.0f}s"
        wall = time.monotonic() - t0
        sampler.stop()
    return {"exit_code": code, "wall_s": round(wall, 1), "cpu_s": round(sampler.cpu_seconds(), 1),
            "peak_mib": {k: round(v / 1024) for k, v in sampler.peak_kib.items()},
            "jvm_heap": sampler.heap_flags(), "load_before": load0, "load_after": loadavg(), "log": log_path}
