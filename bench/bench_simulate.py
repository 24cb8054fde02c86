"""Simulator speed and memory at fleet scale: 400k replica dirs (not a test; run by hand or `make bench`).

    .venv/bin/python bench/bench_simulate.py [--brokers 100] [--log-dirs 2] [--partitions-per-broker 4000]
        [--metadata-records 1000000] [--scenario healthy] [--work DIR] [--keep] [--csv OUT.csv]

Writes one capture with ``kafka-recon simulate`` into --work (default: a temp dir on the same disk as /tmp),
then prints one Markdown row and appends a CSV row: replica dirs written, files, apparent vs allocated bytes,
wall and CPU seconds, peak RSS, the load average. On a shared machine CPU seconds are the fairer number.
Target: 400k replica dirs in a few minutes with flat memory (peak RSS independent of size).
"""
from __future__ import annotations

import argparse
import csv
import os
import platform
import resource
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from jobs.simulate.command import run  # noqa: E402
from jobs.simulate.simulation import SimParams  # noqa: E402


def tree_stats(root: str) -> tuple:
    files = apparent = allocated = 0
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            st = os.lstat(os.path.join(dirpath, name))
            files += 1
            apparent += st.st_size
            allocated += st.st_blocks * 512
    return files, apparent, allocated


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="healthy")
    parser.add_argument("--brokers", type=int, default=100)
    parser.add_argument("--log-dirs", type=int, default=2)
    parser.add_argument("--partitions-per-broker", type=int, default=4000)
    parser.add_argument("--metadata-records", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--work", default=None)
    parser.add_argument("--keep", action="store_true", help="keep the capture (default: delete it)")
    parser.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "results", "simulate.csv"))
    args = parser.parse_args(argv)

    work = args.work or tempfile.mkdtemp(prefix="kr-bench-sim-")
    out = os.path.join(work, "capture")
    params = SimParams(args.seed, args.brokers, args.log_dirs, args.partitions_per_broker, args.metadata_records)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.monotonic()
    stats = run(args.scenario, out, params)
    wall = time.monotonic() - wall0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    peak_mb = cpu1.ru_maxrss / 1024
    files, apparent, allocated = tree_stats(out)
    replica_dirs = stats["replica_dirs"] + stats["background_replica_dirs"]
    row = {
        "scenario": args.scenario, "brokers": args.brokers, "log_dirs": args.log_dirs,
        "partitions_per_broker": args.partitions_per_broker, "replica_dirs": replica_dirs, "files": files,
        "metadata_records": stats["metadata_records"], "apparent_gib": round(apparent / 2**30, 1),
        "allocated_mib": round(allocated / 2**20, 1), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
        "replica_dirs_per_cpu_s": int(replica_dirs / cpu) if cpu else 0, "peak_rss_mib": round(peak_mb, 1),
        "load_avg": round(os.getloadavg()[0], 1), "python": platform.python_version(),
    }
    print("| " + " | ".join(row) + " |")
    print("| " + " | ".join(str(v) for v in row.values()) + " |")
    os.makedirs(os.path.dirname(args.csv), exist_ok=True)
    new = not os.path.exists(args.csv)
    with open(args.csv, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
    if not args.keep:
        shutil.rmtree(work if args.work is None else out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
