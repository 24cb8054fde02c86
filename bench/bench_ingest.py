"""Packed-snapshot ingest vs Spark ``binaryFile`` over the raw tree, on the same capture (not a test).

Spark's per-file cost dominates when a capture is millions of tiny files. This builds a synthetic capture
(``--brokers`` x ``--replicas`` replica dirs, each holding what an idle replica holds: partition.metadata,
leader-epoch-checkpoint, an empty .log, a producer .snapshot and sparse 10 MiB .index/.timeindex), packs
every broker with the collector, then times on one warm local Spark session:

A. ``binaryFile`` (recursive, filtered to the small metadata files ingest reads) + a sum over the bytes:
   the cheapest a per-file Spark read of the raw tree can be, before any decoding;
B. ``run_ingest`` over the packs: discovery, decoding, every bronze DataFrame materialised;
C. (``--raw-ingest``) ``run_ingest`` over the raw tree, for reference.

    .venv/bin/python bench/bench_ingest.py --brokers 4 --replicas 1000
    .venv/bin/python bench/bench_ingest.py --brokers 4 --replicas 5000 --raw-ingest --json bench/results/ingest.json

The tree and packs are built once under --work and reused while the sizes stay the same.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from collector import CollectOptions, collect  # noqa: E402
from udfs.partition_metadata import encode_partition_metadata  # noqa: E402
from udfs.producer_state import encode_producer_snapshot  # noqa: E402
from udfs.properties_files import write_leader_epoch_checkpoint, write_offset_checkpoint  # noqa: E402

TOPIC_ID = "xWt6cg-LDx4r6BAz2rYsCg"
SPARSE = 10 << 20
SMALL_FILES_GLOB = "{partition.metadata,leader-epoch-checkpoint,*.snapshot,meta.properties,*-checkpoint}"


def build_capture(root: str, brokers: int, replicas: int) -> str:
    """``root/raw/broker-<id>/kafka-logs`` trees and ``root/packs/broker-<id>.jsonl.gz``; returns the raw root."""
    marker = os.path.join(root, f".complete-{brokers}x{replicas}")
    raw, packs = os.path.join(root, "raw"), os.path.join(root, "packs")
    if os.path.exists(marker):
        return raw
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(packs)
    pm = encode_partition_metadata(TOPIC_ID)
    epochs = write_leader_epoch_checkpoint([(0, 0)])
    snapshot = encode_producer_snapshot([])
    for b in range(brokers):
        node = 100 + b
        log_dir = os.path.join(raw, f"broker-{node}", "kafka-logs")
        os.makedirs(log_dir)
        with open(os.path.join(log_dir, "meta.properties"), "w") as f:
            f.write(f"#\n#Sun Nov 22 08:32:56 UTC 2026\nnode.id={node}\nversion=1\ncluster.id=EKJ41Lv86vWjqGSh58Dg2w\n")
        entries = []
        for n in range(replicas):
            topic, partition = f"topic-{n // 50:05d}", n % 50
            part = os.path.join(log_dir, f"{topic}-{partition}")
            os.mkdir(part)
            entries.append((topic, partition, 0))
            for name, data in (("partition.metadata", pm), ("leader-epoch-checkpoint", epochs),
                               ("00000000000000000000.log", b""), ("00000000000000000000.snapshot", snapshot)):
                with open(os.path.join(part, name), "wb") as f:
                    f.write(data)
            for name in ("00000000000000000000.index", "00000000000000000000.timeindex"):
                with open(os.path.join(part, name), "wb") as f:
                    f.truncate(SPARSE)
        for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
            with open(os.path.join(log_dir, name), "wb") as f:
                f.write(write_offset_checkpoint(entries))
    cwd = os.getcwd()
    try:
        os.chdir(raw)  # log dirs recorded relative to the capture root, as a raw-tree ingest shows them
        for b in range(brokers):
            node = 100 + b
            collect([f"broker-{node}/kafka-logs"], os.path.join(packs, f"broker-{node}.jsonl.gz"),
                    CollectOptions(), capture_time="2026-11-22T09:00:00Z", host=f"host-{node}")
    finally:
        os.chdir(cwd)
    open(marker, "w").close()
    return raw


def _proc_stat(pid: int):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return int(fields[1]), sum(int(v) for v in fields[11:15])  # ppid; utime+stime+cutime+cstime (ticks)


def tree_cpu_seconds(root_pid: int) -> float:
    """CPU seconds used so far by the Spark JVM and every process below it (the Python workers): a cost that,
    unlike wall time, does not depend on how busy the machine is."""
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stats[int(name)] = _proc_stat(int(name))
            except (OSError, ValueError):
                continue
    children = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
        todo.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def measured(spark, fn, *args) -> dict:
    jvm = spark.sparkContext._gateway.proc.pid
    cpu0, t0 = tree_cpu_seconds(jvm), time.monotonic()
    out = fn(*args)
    out["seconds"] = round(time.monotonic() - t0, 2)
    out["cpu_seconds"] = round(tree_cpu_seconds(jvm) - cpu0, 2)
    return out


def count_files(root: str) -> int:
    return sum(len(files) for _, _, files in os.walk(root))


def binary_file(spark, raw: str) -> dict:
    from pyspark.sql import functions as F

    df = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
          .option("pathGlobFilter", SMALL_FILES_GLOB).load(raw))
    row = df.agg(F.count("*").alias("files"), F.sum(F.length("content")).alias("bytes")).collect()[0]
    return {"files": row["files"], "bytes": row["bytes"]}


def ingest(spark, settings, roots) -> dict:
    """Discovery + decoding of every file (persisted) + the metadata-copy comparison + the files summary:
    what the nightly job does before writing."""
    from jobs.ingest import run_ingest

    result = run_ingest(spark, settings.ingest, None, roots, "bench", "bench-run", execution=settings.spark)
    out = {"files": result.files_summary(), "rows": result.rows_emitted, "_result": result}
    return out


def time_binary_file(spark, raw: str) -> dict:
    return measured(spark, binary_file, spark, raw)


def time_ingest(spark, settings, roots) -> dict:
    out = measured(spark, ingest, spark, settings, roots)
    out.pop("_result").release()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=4)
    parser.add_argument("--replicas", type=int, default=1000, help="replica dirs per broker")
    parser.add_argument("--work", default="/tmp/kafka-recon-bench-ingest")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--raw-ingest", action="store_true", help="also time run_ingest over the raw tree")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    t0 = time.monotonic()
    raw = build_capture(args.work, args.brokers, args.replicas)
    packs = os.path.join(args.work, "packs")
    print(f"capture: {args.brokers} brokers x {args.replicas} replica dirs, {count_files(raw)} files "
          f"({len(os.listdir(packs))} packs, {sum(os.path.getsize(os.path.join(packs, p)) for p in os.listdir(packs))}"
          f" bytes) ready in {time.monotonic() - t0:.1f} s", flush=True)

    from jobs.settings import Settings
    from jobs.spark_session import get_spark

    settings = Settings.load()
    spark = get_spark(settings.spark, master=args.master)
    warm = build_capture(os.path.join(args.work, "warm"), 1, 5)  # start Python workers before timing
    time_binary_file(spark, warm)
    time_ingest(spark, settings, [os.path.join(args.work, "warm", "packs")])

    results = {"brokers": args.brokers, "replicas_per_broker": args.replicas, "files_in_raw_tree": count_files(raw),
               "master": args.master}
    results["binary_file_raw"] = time_binary_file(spark, raw)
    print("A binaryFile over the raw tree:", results["binary_file_raw"], flush=True)
    results["ingest_packed"] = time_ingest(spark, settings, [packs])
    print("B run_ingest over the packs:  ", {k: v for k, v in results["ingest_packed"].items() if k != "rows"},
          flush=True)
    if args.raw_ingest:
        results["ingest_raw"] = time_ingest(spark, settings, [raw])
        print("C run_ingest over the raw tree:", {k: v for k, v in results["ingest_raw"].items() if k != "rows"},
              flush=True)
    speedup = results["binary_file_raw"]["seconds"] / max(results["ingest_packed"]["seconds"], 1e-9)
    cpu_ratio = results["binary_file_raw"]["cpu_seconds"] / max(results["ingest_packed"]["cpu_seconds"], 1e-9)
    results["speedup_packed_vs_binary_file"] = round(speedup, 1)
    results["cpu_ratio_packed_vs_binary_file"] = round(cpu_ratio, 1)
    results["load_average"] = os.getloadavg()
    print(f"packed-snapshot ingest is {speedup:.1f}x faster than binaryFile over the raw tree (goal >= 10x) "
          f"and uses {cpu_ratio:.1f}x less CPU; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
    spark.stop()


if __name__ == "__main__":
    main()
