"""``make bench``: the nightly pipeline end to end at fleet scale, plus the side-by-side comparisons.

    .venv/bin/python -m bench.run_all                       # 10k,100k,400k replica dirs x 100k,1M metadata records
    .venv/bin/python -m bench.run_all --sizes 10k,100k --metadata 100k
    .venv/bin/python -m bench.run_all --sizes 400kx1M        # one explicit pair
    .venv/bin/python -m bench.run_all --huge                 # adds 4M replica dirs (hours, ~100 GB apparent)
    .venv/bin/python -m bench.run_all --only ingest,decode,bronze   # just the side benches

What it does (every Spark run is a fresh subprocess in ``local[2]``, as the nightly job runs):

1. fleets from ``kafka-recon simulate --scenario healthy --packed`` cached under ``bench/.cache/`` keyed by
   their parameters (a cache hit costs nothing; delete the folder to rebuild);
2. ``kafka-recon nightly --skip-quality`` on each fleet (and once with data quality on the smallest), per-stage
   seconds parsed from the ``stage=<name> status=done rows=N seconds=S`` lines, rows/s, CPU seconds of the
   whole process tree (fairer than wall time on a shared machine), peak memory (``VmHWM`` from
   ``/proc/<pid>/status`` of the Python driver, the driver JVM - which is also the executor in local mode -
   and the Python workers) and the JVM heap flags;
3. side by side: packed-snapshot ingest vs Spark ``binaryFile`` (bench/bench_ingest.py), decoding the real
   1M-record metadata log vs kafka-python (bench/bench_decode.py), and that log into bronze;
4. pass/fail against the targets, written to ``bench/results/latest.md`` and appended to
   ``bench/results/history.csv`` together with the machine (cores, memory, load average, versions).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "bench", ".cache")
RESULTS = os.path.join(ROOT, "bench", "results")
PERF_SEGMENT = "/work/shared/fixtures/kafka-perf-1m/00000000000000000000.log.gz"
MASTER = "local[2]"
SCRATCH_PARENT = "/dev/shm"  # a tmpfs: file creation there is several times cheaper than on the VM's disk

# replica dirs -> (brokers, partitions per broker); 2 log dirs per broker (JBOD) in every size
SIZES: Dict[str, Tuple[int, int]] = {"10k": (10, 1000), "100k": (25, 4000), "400k": (100, 4000),
                                     "4M": (1000, 4000)}
LOG_DIRS = 2
DEFAULT_SIZES = "10k,100k,400k"
# --huge: 4M replica dirs with the metadata log embedded in the 3 voters' packs only (what an operator of a
# 1000-broker fleet collects; 1000 embedded copies would be ~60 GB of packs and hours of packing here), and the
# 400k fleet collected the same way, so the 4M/400k factor compares like with like
HUGE_COPIES = 3
HUGE_PAIRS = (f"400kx1M@{HUGE_COPIES}", f"4Mx1M@{HUGE_COPIES}")
DEFAULT_METADATA = "100k,1M"

# Targets (issue "Performance")
TARGET_400K_SECONDS = 150.0  # issue #19 target 2: <= 150 s wall and <= 300 CPU s
TARGET_400K_CPU_SECONDS = 300.0
TARGET_400K_TEXT = (f"400k replica dirs + 1M metadata records end to end <= {TARGET_400K_SECONDS:.0f} s wall and "
                    f"<= {TARGET_400K_CPU_SECONDS:.0f} CPU s")
TARGET_4M_FACTOR = 10.0
TARGET_DECODE_TEXT = "`kafka-recon decode` of the real 1M-record log, JSON lines out, <= 5.8 s (kafka-dump-log)"
TARGET_BRONZE_1M_SECONDS = 5.8  # warm: kafka-dump-log --cluster-metadata-decoder on the same file, 2 cores
TARGET_BRONZE_1M_FIRST_SECONDS = 10.0  # the first run in a fresh session (issue #19)
TARGET_PACKED_SPEEDUP = 10.0
TARGET_MEMORY_GROWTH = 1.5  # "flat": peak of the largest run / peak of the smallest run
KAFKA_DUMP_LOG_SECONDS = 5.8
KAFKA_JAVA_LOOP_SECONDS = 0.55

STAGE_LINE = re.compile(r"stage=(\w+) status=done rows=(\S+) seconds=([\d.]+)")
OPEN_FINDINGS = re.compile(r"status=finished exit_code=\d+ open_findings=(\d+)")


def parse_count(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if mult > 1 else text) * mult)


def size_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1_000}k" if n % 1_000 == 0 else str(n)


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


ARCHIVE_ENV = "KAFKA_RECON__SPARK__CLASS_ARCHIVE_DIR"  # every run below maps the bench's own class archive


def ensure_class_archive(timeout: float) -> dict:
    """The JVM class archive (`kafka-recon class-archive`) in bench/.cache, built once per JDK and Spark jars and
    used by every nightly, helper and floor below (they inherit the environment): measured like the product's
    runs, not borrowed from the user's ~/.cache."""
    os.environ[ARCHIVE_ENV] = os.path.join(CACHE, "class-archive")
    from jobs.class_archive import archive_path
    from jobs.settings import Settings
    from jobs.spark_session import check_java

    path = archive_path(Settings.load().spark, check_java())
    if path is not None and path.is_file():
        return {"built": False, "path": str(path), "bytes": path.stat().st_size}
    run = run_measured([sys.executable, "-m", "jobs.cli", "class-archive", "--set", f"spark.master={MASTER}"],
                       os.path.join(CACHE, "class-archive.log"), timeout)
    run.update(built=run["exit_code"] == 0, path=str(path), bytes=path.stat().st_size if path and path.is_file() else 0)
    return run


# ---------------------------------------------------------------------------------------------- fleets


def fleet_key(replicas: str, metadata: int, copies: Optional[int] = None, seed: int = 42) -> str:
    brokers, per_broker = SIZES[replicas]
    suffix = "" if copies is None else f"-c{copies}"
    return f"fleet-healthy-s{seed}-b{brokers}-d{LOG_DIRS}-p{per_broker}-m{metadata}{suffix}-packed"


def ensure_fleet(replicas: str, metadata: int, timeout: float, copies: Optional[int] = None) -> dict:
    """The cached packed fleet (built once; ``<key>.json`` next to it marks it complete).

    ``copies``: how many packs embed the metadata log (the voters' first); None = every broker's.
    """
    key = fleet_key(replicas, metadata, copies)
    path = os.path.join(CACHE, key)
    info_path = os.path.join(CACHE, key + ".json")
    if os.path.isdir(path) and os.path.exists(info_path):
        with open(info_path) as f:
            info = json.load(f)
        info["cached"] = True
        return info
    sim_log = os.path.join(CACHE, key + ".sim.log")
    done = [ln for ln in open(sim_log).read().splitlines() if ln.startswith("{")] if os.path.exists(sim_log) else []
    if os.path.isdir(path) and done:  # built by hand (an interrupted build has no summary line: rebuilt)
        summary = json.loads(done[-1])
        return _fleet_info(key, path, summary, {"wall_s": summary.get("seconds"), "cpu_s": "?", "load_before": "?"},
                           info_path, copies)
    brokers, per_broker = SIZES[replicas]
    # simulate straight into the final folder (the packs record their log-dir paths); the .json marks it complete
    cmd = [sys.executable, "-m", "jobs.cli", "simulate", "--scenario", "healthy", "--out", path, "--force",
           "--brokers", str(brokers), "--log-dirs", str(LOG_DIRS), "--partitions-per-broker", str(per_broker),
           "--metadata-records", str(metadata), "--packed"]
    if copies is not None:
        cmd += ["--metadata-log-copies", str(copies)]
    if os.path.isdir(SCRATCH_PARENT) and os.access(SCRATCH_PARENT, os.W_OK):  # trees on tmpfs until packed
        scratch = os.path.join(SCRATCH_PARENT, "kafka-recon-bench")
        shutil.rmtree(os.path.join(scratch, key), ignore_errors=True)  # left by an interrupted build
        cmd += ["--scratch", scratch]
    if os.path.isdir(path):  # an interrupted build: no marker, no summary
        shutil.rmtree(path)
    print(f"  simulating {key} ...", flush=True)
    run = run_measured(cmd, os.path.join(CACHE, key + ".sim.log"), timeout)
    if run["exit_code"] != 0:
        raise RuntimeError(f"simulate failed ({run['exit_code']}); see {run['log']}")
    with open(run["log"]) as f:
        summary = json.loads([ln for ln in f.read().splitlines() if ln.startswith("{")][-1])
    return _fleet_info(key, path, summary, run, info_path, copies)


def _fleet_info(key: str, path: str, summary: dict, run: dict, info_path: str, copies: Optional[int]) -> dict:
    info = {"key": key, "path": path, "metadata_log_copies": copies, "replica_dirs": summary["replica_dirs"] + summary.get("background_replica_dirs", 0),
            "metadata_records": summary["metadata_records"], "brokers": summary["brokers"],
            "pack_bytes": sum(os.path.getsize(os.path.join(path, p)) for p in os.listdir(path) if p.endswith(".gz")),
            "simulate_wall_s": run["wall_s"], "simulate_cpu_s": run["cpu_s"], "load": run["load_before"]}
    with open(info_path, "w") as f:
        json.dump(info, f, indent=2)
    info["cached"] = False
    return info


# ---------------------------------------------------------------------------------------------- nightly


def run_nightly(fleet: dict, label: str, quality: bool, timeout: float, profile: bool = False,
                resume: bool = False) -> dict:
    work = os.path.join(CACHE, "runs", label)
    saved = os.path.join(work, "result.json")
    if resume and os.path.exists(saved):
        with open(saved) as f:
            run = json.load(f)
        if run.get("fleet") == fleet["key"] and run.get("quality") == quality:  # failed runs too: delete to retry
            print(f"  {label}: reusing {os.path.relpath(saved, ROOT)} (--resume, ok={run.get('ok')})", flush=True)
            run["resumed"] = True
            return run
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    entry = [sys.executable, "-m", "cProfile", "-o", os.path.join(work, "driver.prof"), "-m", "jobs.cli"] \
        if profile else [sys.executable, "-m", "jobs.cli"]
    cmd = entry + ["nightly", "--capture", fleet["path"], "--out", os.path.join(work, "out"),
                   "--set", f"storage.root={os.path.join(work, 'tables')}", "--set", f"spark.master={MASTER}",
                   "--fail-on", "critical"]
    if not quality:
        cmd.append("--skip-quality")
    env = dict(os.environ, KAFKA_RECON_SPARK_MASTER=MASTER)
    print(f"  nightly {label} ({'with' if quality else 'without'} quality) ...", flush=True)
    run = run_measured(cmd, os.path.join(work, "nightly.log"), timeout, env)
    stages: Dict[str, dict] = {}
    with open(run["log"]) as f:
        text = f.read()
    for name, rows, seconds in STAGE_LINE.findall(text):
        stages[name] = {"rows": None if rows == "-" else int(rows), "seconds": float(seconds)}
    found = OPEN_FINDINGS.findall(text)
    open_findings = int(found[-1]) if found else None
    run.update(label=label, quality=quality, fleet=fleet["key"], replica_dirs=fleet["replica_dirs"],
               metadata_records=fleet["metadata_records"], brokers=fleet["brokers"], stages=stages,
               metadata_log_copies=fleet.get("metadata_log_copies"), open_findings=open_findings,
               ok=run["exit_code"] in (0, 10) and "ingest" in stages and open_findings == 0)
    run["stages_s"] = round(sum(s["seconds"] for s in stages.values()), 1)
    run["startup_and_other_s"] = round(run["wall_s"] - run["stages_s"], 1)
    if not run["ok"]:
        tail = text.strip().splitlines()[-15:]
        if open_findings:  # the fleets are healthy: any finding means the run did not see the fleet as it is
            tail.append(f"a healthy fleet gave {open_findings} open findings: see the quarantined files in "
                        f"bronze_ingest_files (e.g. a metadata file over the embedding cap)")
        run["error"] = "\n".join(tail)
        print(f"  FAILED {label}: exit {run['exit_code']}\n" + "\n".join("    " + t for t in tail), flush=True)
    with open(saved, "w") as f:
        json.dump(run, f, indent=2)
    if run["ok"]:
        print(f"  {label}: wall {run['wall_s']} s, cpu {run['cpu_s']} s, stages "
              + ", ".join(f"{k}={v['seconds']}" for k, v in stages.items()) + f", load {run['load_after']}",
              flush=True)
    return run


# ---------------------------------------------------------------------------------------------- side benches


def bench_ingest_compare(brokers: int, replicas: int, timeout: float) -> dict:
    """bench/bench_ingest.py in its own process: binaryFile over the raw tree vs run_ingest over the packs."""
    out_json = os.path.join(CACHE, f"ingest-compare-{brokers}x{replicas}.json")
    cmd = [sys.executable, os.path.join(ROOT, "bench", "bench_ingest.py"), "--brokers", str(brokers),
           "--replicas", str(replicas), "--master", MASTER, "--work", os.path.join(CACHE, "ingest-tree"),
           "--json", out_json]
    print(f"  ingest comparison {brokers}x{replicas} ...", flush=True)
    if os.path.exists(out_json):
        os.remove(out_json)
    run = run_measured(cmd, os.path.join(CACHE, "ingest-compare.log"), timeout)
    if run["exit_code"] != 0 or not os.path.exists(out_json):
        return {"ok": False, "run": run}
    with open(out_json) as f:
        res = json.load(f)
    listing = helper_process(["binaryfile-list", os.path.join(CACHE, "ingest-tree", "raw")], timeout)
    return {"ok": True, "run": run, "result": res, "listing": listing}


def bench_decode_compare(segment: str) -> dict:
    """bench/bench_decode.py's functions, in this process (one repeat each; CPU seconds are the fair figure)."""
    from bench import bench_decode

    path = bench_decode.materialise(segment, os.path.join(CACHE, "decode"))
    out = {"segment": path, "load_before": loadavg()}
    for mode in ("decode_json", "kafka_python"):
        print(f"  decode {mode} ...", flush=True)
        try:
            out[mode] = bench_decode.run(mode, path, 1)
        except ImportError as exc:
            out[mode] = {"error": f"{exc} (pip install '.[bench]')"}
    print("  decode command ...", flush=True)
    out["command"] = decode_command(path)
    out["load_after"] = loadavg()
    return out


def decode_command(segment: str) -> dict:
    """``kafka-recon decode`` on the log, JSON lines to stdout (a file on tmpfs), as a user runs it: issue #19
    target 4 compares it with Kafka's ``kafka-dump-log --cluster-metadata-decoder``."""
    import resource

    out_path = os.path.join(SCRATCH_PARENT if os.path.isdir(SCRATCH_PARENT) else CACHE, "kafka-recon-decode.jsonl")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(out_path, "wb") as sink:
        code = subprocess.run([sys.executable, "-m", "jobs.cli", "decode", segment], stdout=sink, cwd=ROOT,
                              timeout=600).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        with open(out_path, "rb") as f:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    finally:
        os.remove(out_path)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"ok": code == 0 and lines == 1_000_001, "exit_code": code, "records": lines, "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2)}


def build_perf_capture(segment_log: str) -> str:
    """A minimal log dir holding only the real 1M-record segment in ``__cluster_metadata-0``."""
    root = os.path.join(CACHE, "perf-1m-capture")
    part = os.path.join(root, "broker-1", "kafka-logs", "__cluster_metadata-0")
    target = os.path.join(part, os.path.basename(segment_log))
    if os.path.exists(target):
        return root
    os.makedirs(part, exist_ok=True)
    with open(os.path.join(root, "broker-1", "kafka-logs", "meta.properties"), "w") as f:
        f.write("#\n#Sun Nov 22 08:32:56 UTC 2026\nnode.id=1\ndirectory.id=lN3lRvnfkq_EW15qh9aZEA\nversion=1\n"
                "cluster.id=EKJ41Lv86vWjqGSh58Dg2w\n")
    try:
        os.link(segment_log, target)
    except OSError:
        shutil.copyfile(segment_log, target)
    return root


def bench_bronze_1m(segment: str, timeout: float) -> dict:
    from bench import bench_decode

    log = bench_decode.materialise(segment, os.path.join(CACHE, "decode"))
    capture = build_perf_capture(log)
    print("  real 1M-record log into bronze ...", flush=True)
    return helper_process(["bronze", capture, os.path.join(CACHE, "runs", "bronze-1m", "tables")], timeout)


def helper_process(args: List[str], timeout: float) -> dict:
    """Run one ``--helper`` job of this module in a fresh local[2] session; its last stdout line is JSON."""
    name = args[0]
    log = os.path.join(CACHE, "runs", f"helper-{name}.log")
    out_json = os.path.join(CACHE, "runs", f"helper-{name}.json")
    if os.path.exists(out_json):
        os.remove(out_json)
    run = run_measured([sys.executable, "-m", "bench.run_all", "--helper", *args, "--helper-json", out_json],
                       log, timeout, dict(os.environ, KAFKA_RECON_SPARK_MASTER=MASTER))
    if run["exit_code"] != 0 or not os.path.exists(out_json):
        return {"ok": False, "run": run}
    with open(out_json) as f:
        return {"ok": True, "run": run, **json.load(f)}


def helper_main(args: List[str], out_json: str) -> int:
    """Inside the helper process: ``bronze CAPTURE TABLES`` or ``binaryfile-list ROOT``."""
    from jobs.settings import Settings
    from jobs.spark_session import get_spark_for_capture

    name = args[0]
    sets = [f"spark.master={MASTER}"] + ([f"storage.root={args[2]}"] if name == "bronze" else [])
    settings = Settings.load(None, sets)
    units = None
    if name == "bronze":  # the JVM flags the nightly would start with for this capture
        from jobs.ingest.discover import discover

        units = discover([args[1]])
    t0 = time.monotonic()
    spark = get_spark_for_capture(settings.spark, units, master=MASTER)
    result = {"session_s": round(time.monotonic() - t0, 2), "load_before": loadavg()}
    if name == "bronze":
        from jobs.ingest.stage import run_ingest
        from jobs.tables.delta_store import DeltaStore

        shutil.rmtree(args[2], ignore_errors=True)
        store = DeltaStore.from_settings(spark, settings.storage)
        for attempt in ("first", "second"):  # first = what the nightly ingest stage sees; second = warm workers
            t0 = time.monotonic()
            res = run_ingest(spark, settings.ingest, store, [args[1]], "cap-bench-1m", f"bench-{attempt}", None,
                             execution=settings.spark)
            result[f"{attempt}_s"] = round(time.monotonic() - t0, 2)
            result["rows"] = res.rows_emitted
            res.release()
    elif name == "binaryfile-list":
        df = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(args[1])
        t0 = time.monotonic()
        result["files"] = df.select("path", "length").count()
        result["seconds"] = round(time.monotonic() - t0, 2)
    result["load_after"] = loadavg()
    with open(out_json, "w") as f:
        json.dump(result, f)
    spark.stop()
    return 0


def side_bench(name: str, resume: bool, fn, *args) -> dict:
    """Run one side bench, or with ``--resume`` reuse its last successful result."""
    saved = os.path.join(CACHE, "runs", f"side-{name}.json")
    if resume and os.path.exists(saved):
        with open(saved) as f:
            print(f"  {name}: reusing {os.path.relpath(saved, ROOT)} (--resume)", flush=True)
            return dict(json.load(f), resumed=True)
    result = fn(*args)
    if result.get("ok", True):
        os.makedirs(os.path.dirname(saved), exist_ok=True)
        with open(saved, "w") as f:
            json.dump(result, f, indent=2)
    return result


# ---------------------------------------------------------------------------------------------- report


def verdict(ok: Optional[bool]) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


TARGET_BRONZE_TEXT = (f"real 1M-record metadata log into bronze <= {TARGET_BRONZE_1M_SECONDS} s warm, "
                      f"<= {TARGET_BRONZE_1M_FIRST_SECONDS:g} s first")


def bronze_met(bronze: dict) -> bool:
    """Target 3 of issue #19: the warm re-run and the first run, each against its own figure."""
    return bronze["second_s"] <= TARGET_BRONZE_1M_SECONDS and bronze["first_s"] <= TARGET_BRONZE_1M_FIRST_SECONDS


def evaluate(runs: List[dict], ingest: Optional[dict], bronze: Optional[dict],
             cluster_runs: Optional[List[dict]] = None, decode: Optional[dict] = None) -> List[Tuple[str, str, str]]:
    good = [r for r in runs if r["ok"] and not r["quality"]]
    targets = []
    big = [r for r in good if r["replica_dirs"] >= 400_000 and r["metadata_records"] >= 1_000_000
           and r["replica_dirs"] < 4_000_000 and r.get("metadata_log_copies") is None]
    if big:
        r = big[0]
        targets.append((TARGET_400K_TEXT, f"{r['wall_s']} s wall ({r['cpu_s']} CPU s, load {r['load_after']})",
                        verdict(r["wall_s"] <= TARGET_400K_SECONDS and r["cpu_s"] <= TARGET_400K_CPU_SECONDS)))
    else:
        targets.append((TARGET_400K_TEXT, "not run", "n/a"))
    huge = [r for r in good if r["replica_dirs"] >= 4_000_000]
    alike = [r for r in good if 400_000 <= r["replica_dirs"] < 4_000_000 and huge
             and r.get("metadata_log_copies") == huge[0].get("metadata_log_copies")
             and r["metadata_records"] == huge[0]["metadata_records"]]
    if huge and alike:
        h, b = huge[0], alike[0]
        factor = h["wall_s"] / b["wall_s"]
        copies = h.get("metadata_log_copies")
        collected = "every broker's pack" if copies is None else f"{copies} packs"
        targets.append(("4M <= 10x the 400k time",
                        f"{factor:.1f}x: {h['wall_s']} s vs {b['wall_s']} s wall ({h['cpu_s']} vs {b['cpu_s']} CPU s; "
                        f"metadata log in {collected}; {h['replica_dirs'] / b['replica_dirs']:.1f}x the replica dirs)",
                        verdict(factor <= TARGET_4M_FACTOR)))
    else:
        targets.append(("4M <= 10x the 400k time", "not run (--huge)", "n/a"))
    if len(good) >= 2:
        small, large = min(good, key=lambda r: r["replica_dirs"]), max(good, key=lambda r: r["replica_dirs"])
        parts, oks = [], []
        for role in ("driver_python", "jvm"):
            a, b = small["peak_mib"][role], large["peak_mib"][role]
            growth = b / a if a else float("inf")
            oks.append(growth <= TARGET_MEMORY_GROWTH)
            parts.append(f"{role} {a} -> {b} MiB ({growth:.2f}x)")
        targets.append((f"driver memory flat as inputs grow (peak grows <= {TARGET_MEMORY_GROWTH}x from "
                        f"{size_label(small['replica_dirs'])} to {size_label(large['replica_dirs'])})",
                        "; ".join(parts), verdict(all(oks))))
    cluster = [r for r in cluster_runs or [] if r["ok"]]
    if len(cluster) >= 2:
        small, large = min(cluster, key=lambda r: r["replica_dirs"]), max(cluster, key=lambda r: r["replica_dirs"])
        a, b = small["peak_mib"]["jvm"], large["peak_mib"]["jvm"]
        growth = b / a if a else float("inf")
        targets.append((f"the same, driver JVM alone (executors in their own JVMs, local-cluster; "
                        f"{size_label(small['replica_dirs'])} to {size_label(large['replica_dirs'])})",
                        f"driver JVM {a} -> {b} MiB ({growth:.2f}x); largest executor "
                        f"{small['peak_mib'].get('executor_jvm', 0)} -> {large['peak_mib'].get('executor_jvm', 0)} MiB",
                        verdict(growth <= TARGET_MEMORY_GROWTH)))
    else:
        targets.append(("driver memory flat as inputs grow", "needs >= 2 sizes", "n/a"))
    if bronze and bronze.get("ok"):
        targets.append((TARGET_BRONZE_TEXT,
                        f"warm {bronze['second_s']} s, first {bronze['first_s']} s (load {bronze['load_after']})",
                        verdict(bronze_met(bronze))))
    else:
        targets.append((TARGET_BRONZE_TEXT, "not run / failed", "n/a"))
    command = (decode or {}).get("command", {})
    if command.get("ok"):
        targets.append((TARGET_DECODE_TEXT, f"{command['wall_s']} s wall ({command['cpu_s']} CPU s, load "
                                            f"{decode['load_after']})",
                        verdict(command["wall_s"] <= KAFKA_DUMP_LOG_SECONDS)))
    else:
        targets.append((TARGET_DECODE_TEXT, "not run / failed" + (f": {command}" if command else ""), "n/a"))
    if ingest and ingest.get("ok"):
        res = ingest["result"]
        targets.append(("packed ingest >= 10x faster than binaryFile",
                        f"{res['speedup_packed_vs_binary_file']}x wall, {res['cpu_ratio_packed_vs_binary_file']}x CPU",
                        verdict(res["speedup_packed_vs_binary_file"] >= TARGET_PACKED_SPEEDUP)))
    else:
        targets.append(("packed ingest >= 10x faster than binaryFile", "not run / failed", "n/a"))
    return targets


def archive_markdown(archive: dict) -> List[str]:
    how = (f"built by this run in {archive['wall_s']} s wall ({archive['cpu_s']} CPU s; training nightly on the "
           f"simulated demo fleet + `java -Xshare:dump`)" if "wall_s" in archive else "built by an earlier run")
    return ["## JVM class archive", "",
            f"Every Spark session below maps `{os.path.relpath(archive['path'], ROOT)}` "
            f"({archive.get('bytes', 0) / 2**20:.0f} MiB), {how}. The small-captures part also runs the floor "
            "and kafka-devsample without it."]


def fmt_rate(rows: Optional[int], seconds: float) -> str:
    return f"{int(rows / seconds):,}" if rows and seconds else "-"


def write_markdown(path: str, machine: dict, fleets: List[dict], runs: List[dict], ingest: Optional[dict],
                   decode: Optional[dict], bronze: Optional[dict], targets,
                   cluster_runs: Optional[List[dict]] = None) -> None:
    lines = [f"# kafka-recon benchmark results ({time.strftime('%Y-%m-%d %H:%M:%S %Z')})", "",
             f"Machine: {machine['host']}, {machine['nproc']} cores ({machine['cpu_model']}), "
             f"{machine['memory_gib']} GiB; Python {machine['python']}, {machine['java']}, Spark {machine['spark']}; "
             f"commit {machine['commit']}. Load average (1/5/15 min) at start {machine['load_avg_start']}, "
             f"at end {machine.get('load_avg_end', '?')}. Spark master {MASTER}. "
             "Wall times depend on the load; CPU seconds (whole process tree) much less so.", "",
             "## Targets", "", "| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {t} | {m} | {v} |" for t, m, v in targets]
    lines += ["", "## Nightly pipeline end to end (`kafka-recon nightly`, fresh process per run)", "",
              "| replica dirs | metadata records | quality | wall s | CPU s | ingest s | reconcile s | quality s | "
              "report s | startup+other s | replica dirs/s (wall) | ingest files/s | driver py peak MiB | "
              "JVM peak MiB | workers peak MiB (sum) | load before -> after |",
              "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in runs:
        if not r["ok"]:
            done = ", ".join(f"{k} {v['seconds']} s" for k, v in r["stages"].items()) or "none"
            lines.append(f"| {r['replica_dirs']:,} | {r['metadata_records']:,} | {'yes' if r['quality'] else 'no'} | "
                         f"NOT FINISHED (exit {r['exit_code']} after {r['wall_s']} s; stages done: {done}; log "
                         f"{os.path.relpath(r['log'], ROOT)}) | {r['cpu_s']} | | | | | | | | {r['peak_mib']['driver_python']} | "
                         f"{r['peak_mib']['jvm']} | {r['peak_mib']['workers_sum']} | {r['load_before']} -> "
                         f"{r['load_after']} |")
            continue
        s = r["stages"]
        sec = {k: s.get(k, {}).get("seconds") for k in ("ingest", "reconcile", "quality", "report")}
        lines.append(
            f"| {r['replica_dirs']:,} | {r['metadata_records']:,} | {'yes' if r['quality'] else 'no'} | {r['wall_s']} | "
            f"{r['cpu_s']} | {sec['ingest']} | {sec['reconcile']} | {sec['quality'] if sec['quality'] is not None else '-'}"
            f" | {sec['report']} | {r['startup_and_other_s']} | {fmt_rate(r['replica_dirs'], r['wall_s'])} | "
            f"{fmt_rate(s.get('ingest', {}).get('rows'), sec['ingest'] or 0)} | {r['peak_mib']['driver_python']} | "
            f"{r['peak_mib']['jvm']} | {r['peak_mib']['workers_sum']} | {r['load_before']} -> {r['load_after']} |")
    heap = next((r["jvm_heap"] for r in runs if r.get("jvm_heap") not in (None, "?")), "?")
    lines += ["", f"Executor memory: in `{MASTER}` the executor is the driver JVM (one process); its heap flags: "
              f"`{heap}`; its peak resident memory is the JVM column. Python worker peaks are the sum of the "
              "workers' resident memory at the busiest sample.", ""]
    if cluster_runs:
        from bench.bench_cluster_memory import markdown as cluster_markdown

        lines += cluster_markdown(cluster_runs)
    lines += [
              "## Fleets (simulator, cached in bench/.cache)", "",
              "| fleet | brokers | replica dirs | metadata records | packs MiB | simulate wall s | simulate CPU s | load |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    for f in fleets:
        lines.append(f"| {f['key']} | {f['brokers']} | {f['replica_dirs']:,} | {f['metadata_records']:,} | "
                     f"{f['pack_bytes'] / 2**20:.1f} | {f['simulate_wall_s']} | {f['simulate_cpu_s']} | {f['load']} |")
    lines += ["", "## Side by side", ""]
    if ingest:
        if ingest.get("ok"):
            res = ingest["result"]
            a, b = res["binary_file_raw"], res["ingest_packed"]
            lst = ingest.get("listing") or {}
            lines += [f"Packed snapshot vs `binaryFile`, same capture ({res['brokers']} brokers x "
                      f"{res['replicas_per_broker']:,} replica dirs, {res['files_in_raw_tree']:,} files), one warm "
                      f"session (bench/bench_ingest.py):", "",
                      "| read | files | wall s | CPU s |", "|---|---:|---:|---:|",
                      f"| binaryFile, recursive, small files' content summed | {a['files']:,} | {a['seconds']} | "
                      f"{a['cpu_seconds']} |",
                      f"| run_ingest over the packs (discovery + decode + every bronze frame) | "
                      f"{b['files']['seen']:,} | {b['seconds']} | {b['cpu_seconds']} |"]
            if lst.get("ok"):
                lines.append(f"| binaryFile listing only: `select(path, length).count()` (fresh session) | "
                             f"{lst['files']:,} | {lst['seconds']} | - |")
            lines += ["", f"Speed-up {res['speedup_packed_vs_binary_file']}x wall, "
                      f"{res['cpu_ratio_packed_vs_binary_file']}x CPU; load {ingest['run']['load_before']} -> "
                      f"{ingest['run']['load_after']}.", ""]
        else:
            lines += [f"Ingest comparison failed: see {os.path.relpath(ingest['run']['log'], ROOT)}", ""]
    if decode:
        lines += ["Decoding the real 1M-record metadata log (kafka-perf-1m, 1,000,001 records), one process:", "",
                  "| decoder | records | wall s | CPU s | records/s (CPU) |", "|---|---:|---:|---:|---:|"]
        for mode, name in (("decode_json", "kafka-recon udfs (decode + JSON payload)"),
                           ("kafka_python", "kafka-python DefaultRecordBatch (framing only, no payload decode)")):
            d = decode.get(mode, {})
            if "error" in d:
                lines.append(f"| {name} | {d['error']} | | | |")
            else:
                lines.append(f"| {name} | {d['records']:,} | {d['wall_s']} | {d['cpu_s']} | {d['records_per_s_cpu']:,} |")
        command = decode.get("command", {})
        if command.get("ok"):
            lines.append(f"| `kafka-recon decode` command, JSON lines to a file (whole process) | {command['records']:,} | "
                         f"{command['wall_s']} | {command['cpu_s']} | {int(command['records'] / command['cpu_s']):,} |")
        elif command:
            lines.append(f"| `kafka-recon decode` command | failed: {command} | | | |")
        lines += [f"| Kafka `kafka-dump-log --cluster-metadata-decoder` (quoted, 2-core machine) | 1,000,001 | "
                  f"{KAFKA_DUMP_LOG_SECONDS} | - | ~171,000 (wall) |",
                  f"| Kafka bare Java loop FileRecords -> MetadataRecordSerde (quoted) | 1,000,001 | "
                  f"{KAFKA_JAVA_LOOP_SECONDS} | - | ~1,900,000 (wall) |", "",
                  f"Load {decode['load_before']} -> {decode['load_after']}.", ""]
    if bronze:
        if bronze.get("ok"):
            rows = bronze.get("rows", {})
            lines += [f"Real 1M-record log into bronze (minimal log dir with only `__cluster_metadata-0`, run_ingest "
                      f"+ Delta write, `{MASTER}`): first {bronze['first_s']} s (what the nightly ingest stage "
                      f"sees), warm re-run {bronze['second_s']} s; session start {bronze['session_s']} s not "
                      f"included; rows {json.dumps(rows, sort_keys=True)}; load {bronze['load_before']} -> "
                      f"{bronze['load_after']}.", ""]
        else:
            lines += [f"Bronze 1M failed: see {os.path.relpath(bronze['run']['log'], ROOT)}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


HISTORY_FIELDS = ["when", "commit", "host", "nproc", "memory_gib", "load_1m", "python", "java", "spark", "kind",
                  "replica_dirs", "metadata_records", "quality", "ok", "wall_s", "cpu_s", "ingest_s", "reconcile_s",
                  "quality_s", "report_s", "driver_py_peak_mib", "jvm_peak_mib", "workers_peak_mib", "extra"]


def append_history(path: str, machine: dict, runs: List[dict], ingest, decode, bronze) -> None:
    when = time.strftime("%Y-%m-%dT%H:%M:%S")
    base = {"when": when, "commit": machine["commit"], "host": machine["host"], "nproc": machine["nproc"],
            "memory_gib": machine["memory_gib"], "python": machine["python"], "java": machine["java"],
            "spark": machine["spark"]}
    rows = []  # measurements reused by --resume are already in the history: not appended again
    runs = [r for r in runs if not r.get("resumed")]
    ingest, decode, bronze = (None if x is None or x.get("resumed") else x for x in (ingest, decode, bronze))
    for r in runs:
        s = r["stages"]
        rows.append({**base, "kind": "nightly", "load_1m": r["load_after"].split("/")[0],
                     "replica_dirs": r["replica_dirs"], "metadata_records": r["metadata_records"],
                     "quality": r["quality"], "ok": r["ok"], "wall_s": r["wall_s"], "cpu_s": r["cpu_s"],
                     **{f"{k}_s": s.get(k, {}).get("seconds", "") for k in ("ingest", "reconcile", "quality", "report")},
                     "driver_py_peak_mib": r["peak_mib"]["driver_python"], "jvm_peak_mib": r["peak_mib"]["jvm"],
                     "workers_peak_mib": r["peak_mib"]["workers_sum"], "extra": ""})
    if ingest and ingest.get("ok"):
        res = ingest["result"]
        rows.append({**base, "kind": "ingest_packed_vs_binaryfile", "load_1m": ingest["run"]["load_after"].split("/")[0],
                     "replica_dirs": res["brokers"] * res["replicas_per_broker"], "ok": True,
                     "wall_s": res["ingest_packed"]["seconds"], "cpu_s": res["ingest_packed"]["cpu_seconds"],
                     "extra": f"binaryFile {res['binary_file_raw']['seconds']} s; speedup "
                              f"{res['speedup_packed_vs_binary_file']}x"})
    if decode:
        for mode in ("decode_json", "kafka_python"):
            d = decode.get(mode, {})
            if "records" in d:
                rows.append({**base, "kind": f"decode_{mode}", "load_1m": decode["load_after"].split("/")[0],
                             "metadata_records": d["records"], "ok": True, "wall_s": d["wall_s"], "cpu_s": d["cpu_s"]})
        command = decode.get("command", {})
        if command.get("ok"):
            rows.append({**base, "kind": "decode_command", "load_1m": decode["load_after"].split("/")[0],
                         "metadata_records": command["records"], "ok": command["wall_s"] <= KAFKA_DUMP_LOG_SECONDS,
                         "wall_s": command["wall_s"], "cpu_s": command["cpu_s"]})
    if bronze and bronze.get("ok"):
        rows.append({**base, "kind": "bronze_real_1m", "load_1m": bronze["load_after"].split("/")[0],
                     "metadata_records": 1_000_001, "ok": bronze_met(bronze),
                     "wall_s": bronze["first_s"], "extra": f"warm {bronze['second_s']} s"})
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HISTORY_FIELDS)
        if new:
            w.writeheader()
        w.writerows(rows)


# ---------------------------------------------------------------------------------------------- main


def plan(sizes: str, metadata: str, huge: bool) -> List[Tuple[str, int, Optional[int]]]:
    """(replica-dir size, metadata records, packs embedding the metadata log or None for all) to run."""
    names = [s.strip() for s in sizes.split(",") if s.strip()]
    if huge:
        names += [n for n in HUGE_PAIRS if n not in names]
    runs = []
    for name in names:
        name, _, copies = name.partition("@")
        if "x" in name:
            rep, md = name.split("x", 1)
            pairs = [(size_label(parse_count(rep)), parse_count(md))]
        else:
            pairs = [(size_label(parse_count(name)), parse_count(m)) for m in metadata.split(",")]
        runs += [(rep, md, int(copies) if copies else None) for rep, md in pairs]
    for rep, _, _ in runs:
        if rep not in SIZES:
            raise SystemExit(f"unknown size {rep!r}; known: {', '.join(SIZES)}")
    return runs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default=DEFAULT_SIZES,
                   help=f"replica-dir sizes ({', '.join(SIZES)}) or explicit pairs like 400kx1M (default {DEFAULT_SIZES})")
    p.add_argument("--metadata", default=DEFAULT_METADATA, help="metadata records per fleet (default 100k,1M)")
    p.add_argument("--huge", action="store_true", help="add the 4M replica-dir fleet")
    p.add_argument("--only", default="small,nightly,quality,cluster,ingest,decode,bronze",
                   help="parts to run: small,nightly,quality,cluster,ingest,decode,bronze")
    p.add_argument("--ingest-brokers", type=int, default=4)
    p.add_argument("--ingest-replicas", type=int, default=2500, help="replica dirs per broker for the binaryFile "
                   "comparison (4 x 2500 = 10k replica dirs, 60k files)")
    p.add_argument("--profile", action="store_true", help="run the nightly driver under cProfile (driver.prof)")
    p.add_argument("--resume", action="store_true",
                   help="reuse nightly runs already completed in bench/.cache/runs/<label>/result.json")
    p.add_argument("--timeout", type=float, default=4 * 3600, help="per subprocess, seconds")
    p.add_argument("--results", default=RESULTS)
    p.add_argument("--helper", nargs="+", help=argparse.SUPPRESS)
    p.add_argument("--helper-json", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.helper:
        return helper_main(args.helper, args.helper_json)

    parts = set(args.only.split(","))
    os.makedirs(CACHE, exist_ok=True)
    os.makedirs(args.results, exist_ok=True)
    machine = machine_facts()
    print(f"machine: {machine}", flush=True)
    fleets, runs = [], []
    ingest = decode = bronze = small = None
    archive = ensure_class_archive(args.timeout)
    print(f"class archive: {archive}", flush=True)
    if "small" in parts:
        from bench import bench_small

        small = side_bench("small", args.resume, bench_small.run, args.timeout)
    pairs = plan(args.sizes, args.metadata, args.huge) if parts & {"nightly", "quality"} else []
    for rep, md, copies in pairs:
        fleet = ensure_fleet(rep, md, args.timeout, copies)
        fleet["label"] = f"{rep}-{size_label(md)}" + ("" if copies is None else f"-c{copies}")
        fleets.append(fleet)
        if "nightly" in parts:
            runs.append(run_nightly(fleet, fleet["label"], False, args.timeout, args.profile, args.resume))
    if "quality" in parts and fleets:
        smallest = min(fleets, key=lambda f: (f["replica_dirs"], f["metadata_records"]))
        runs.append(run_nightly(smallest, f"{smallest['label']}-quality", True, args.timeout, resume=args.resume))
    cluster_runs = []
    if "cluster" in parts and fleets:
        from bench.bench_cluster_memory import run_cluster_nightly

        usual = [f for f in fleets if f.get("metadata_log_copies") is None] or fleets  # not the --huge pair
        ends = {min(usual, key=lambda f: f["replica_dirs"])["key"], max(usual, key=lambda f: f["replica_dirs"])["key"]}
        for fleet in (f for f in usual if f["key"] in ends):
            cluster_runs.append(run_cluster_nightly(fleet, fleet["label"], args.timeout, CACHE, args.resume))
    if "ingest" in parts:
        ingest = side_bench("ingest", args.resume, bench_ingest_compare, args.ingest_brokers, args.ingest_replicas,
                            args.timeout)
    if "decode" in parts:
        decode = side_bench("decode", args.resume, bench_decode_compare, PERF_SEGMENT)
    if "bronze" in parts:
        bronze = side_bench("bronze", args.resume, bench_bronze_1m, PERF_SEGMENT, args.timeout)
    machine["load_avg_end"] = loadavg()
    targets = evaluate(runs, ingest, bronze, cluster_runs, decode)
    latest = os.path.join(args.results, "latest.md")
    write_markdown(latest, machine, fleets, runs, ingest, decode, bronze, targets, cluster_runs)
    with open(latest, "a") as f:
        f.write("\n" + "\n".join(archive_markdown(archive)) + "\n")
    if small:
        from bench import bench_small

        with open(latest, "a") as f:
            f.write("\n" + "\n".join(bench_small.markdown(small)) + "\n")
    append_history(os.path.join(args.results, "history.csv"), machine, runs, ingest, decode, bronze)
    with open(os.path.join(args.results, "latest.json"), "w") as f:
        json.dump({"machine": machine, "class_archive": archive, "fleets": fleets, "runs": runs, "cluster_runs": cluster_runs, "ingest": ingest,
                   "decode": decode, "bronze": bronze, "small": small, "targets": targets}, f, indent=2, default=str)
    print(open(latest).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
