"""Time packing and reading a synthetic broker of many replica dirs (not a test; run by hand or `make bench`).

Each replica dir holds what a real idle replica holds: ``partition.metadata`` (43 B, embedded),
``leader-epoch-checkpoint`` (embedded), an empty ``.log``, sparse 10 MiB ``.index``/``.timeindex`` (listed with
apparent and allocated size, never read) and a small producer ``.snapshot`` (embedded): 6 entries per replica.

    .venv/bin/python bench/bench_pack.py --replicas 100000 --log-dirs 2

The tree is built once under --work (default /tmp/kafka-recon-bench) and reused by later runs.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from collector import CollectOptions, walk_log_dirs, write_pack  # noqa: E402
from udfs.pack_reader import read_pack

TOPIC_ID = b"version: 0\ntopic_id: xWt6cg-LDx4r6BAz2rYsCg"
EPOCHS = b"0\n1\n0 0\n"
SNAPSHOT = bytes(56)
SPARSE = 10 << 20


def build_tree(root: str, replicas: int, log_dirs: int) -> list:
    dirs = [os.path.join(root, "kafka-logs-%d" % i) for i in range(log_dirs)]
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return dirs
    shutil.rmtree(root, ignore_errors=True)
    for d in dirs:
        os.makedirs(d)
        with open(os.path.join(d, "meta.properties"), "w") as f:
            f.write("#\n#Sun Nov 22 08:32:56 UTC 2026\nnode.id=7\nversion=1\ncluster.id=EKJ41Lv86vWjqGSh58Dg2w\n")
    for n in range(replicas):
        part = os.path.join(dirs[n % log_dirs], "topic-%05d-%d" % (n // 50, n % 50))
        os.mkdir(part)
        for name, data in (("partition.metadata", TOPIC_ID), ("leader-epoch-checkpoint", EPOCHS),
                           ("00000000000000000000.log", b""), ("00000000000000000000.snapshot", SNAPSHOT)):
            with open(os.path.join(part, name), "wb") as f:
                f.write(data)
        for name in ("00000000000000000000.index", "00000000000000000000.timeindex"):
            with open(os.path.join(part, name), "wb") as f:
                f.truncate(SPARSE)
    open(marker, "w").close()
    return dirs


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=100_000)
    parser.add_argument("--log-dirs", type=int, default=2)
    parser.add_argument("--levels", default="1,3,6", help="gzip levels to time (comma list)")
    parser.add_argument("--work", default="/tmp/kafka-recon-bench")
    args = parser.parse_args()

    tree = os.path.join(args.work, "tree-%d-%d" % (args.replicas, args.log_dirs))
    t0 = time.perf_counter()
    dirs = build_tree(tree, args.replicas, args.log_dirs)
    print("tree: %d replica dirs in %d log dirs (%s, %.1f s to build or reuse); load average %.1f on %d cpus"
          % (args.replicas, args.log_dirs, tree, time.perf_counter() - t0, os.getloadavg()[0], os.cpu_count()))

    t0, c0 = time.perf_counter(), time.process_time()
    walked = sum(1 for _ in walk_log_dirs(dirs, CollectOptions()))
    walk_s, walk_cpu = time.perf_counter() - t0, time.process_time() - c0
    print("raw walk (walk_log_dirs): %d entries  wall %.2f s  cpu %.2f s  (%.0f entries per cpu-s)  max RSS %.0f MiB"
          % (walked, walk_s, walk_cpu, walked / walk_cpu, max_rss_mib()))

    for level in [int(x) for x in args.levels.split(",")]:
        out = os.path.join(args.work, "pack-%d-%d-l%d.jsonl.gz" % (args.replicas, args.log_dirs, level))
        t0, c0 = time.perf_counter(), time.process_time()
        with open(out, "wb") as f:
            trailer = write_pack(f, dirs, compress_level=level)
        pack_s, pack_cpu = time.perf_counter() - t0, time.process_time() - c0
        size = os.path.getsize(out)
        t0, c0 = time.perf_counter(), time.process_time()
        reader = read_pack(out)
        read = sum(1 for _ in reader)
        read_s, read_cpu = time.perf_counter() - t0, time.process_time() - c0
        if not reader.complete or read != trailer["entries"]:
            raise SystemExit("pack did not read back complete: %s" % (reader.errors,))
        print("gzip level %d: pack wall %.2f s cpu %.2f s (%.0f entries per cpu-s), %.1f MiB (%.1f B/entry); "
              "read wall %.2f s cpu %.2f s (%.0f entries per cpu-s); max RSS %.0f MiB"
              % (level, pack_s, pack_cpu, trailer["entries"] / pack_cpu, size / 2**20, size / trailer["entries"],
                 read_s, read_cpu, read / read_cpu, max_rss_mib()))


if __name__ == "__main__":
    main()
