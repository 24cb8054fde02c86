"""Decode speed on one core: the 1M-record KRaft metadata segment (not a test; run by hand or `make bench`).

    .venv/bin/python bench/bench_decode.py [--segment PATH.log[.gz]] [--repeat 3] [--csv OUT.csv]

The segment (default: the shared ``kafka-perf-1m`` fixture, 1,000,000 metadata records + 1 LeaderChange in 851
batches) is gunzipped once into --work. Modes, each timed ``--repeat`` times (best run kept):

- ``header_scan``   record_batch.scan_headers: 61 bytes per batch, bodies skipped (records/s = sum of counts)
- ``records``       record_batch.read_batches + iter_records (CRC checked, record framing, no value decoding)
- ``decode``        metadata_log.iter_metadata_records: MetadataRecord with its ``data`` dict (raft-shaped
                    record loop + generated decoders, udfs/message_codegen.py)
- ``decode_json``   the same plus ``payload_json()`` for every record (what ingest and ``decode`` do; the
                    generated JSON writers)
- ``kafka_python``  kafka-python's DefaultRecordBatch record iteration, when installed (``.[bench]``), for
                    comparison with ``records``

Prints one Markdown row per mode and appends the same as CSV (with wall and CPU seconds, the load average
and the Python version): on a shared machine CPU seconds are the fairer number. Target: ``decode_json``
>= 300k records/s (< 3.4 s for the file). Kafka's own figures on a 2-core machine: dump-log ~171k/s,
a bare Java FileRecords -> MetadataRecordSerde loop ~1.9M/s. Figures and what produced them:
docs/decode-performance.md. To compare with an older tree, run that tree's copy of this script
(``git archive <commit> udfs bench | tar -x -C DIR``) with ``--csv`` pointing elsewhere.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import os
import platform
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from udfs import metadata_log, record_batch  # noqa: E402

DEFAULT_SEGMENT = "/work/shared/fixtures/kafka-perf-1m/00000000000000000000.log.gz"
EXPECTED_RECORDS = 1_000_001


def materialise(segment: str, work: str) -> str:
    """Return a plain ``.log`` path, gunzipping into ``work`` once."""
    if not segment.endswith(".gz"):
        return segment
    os.makedirs(work, exist_ok=True)
    target = os.path.join(work, os.path.basename(segment)[: -len(".gz")])
    if not os.path.exists(target):
        partial = target + ".partial"
        with gzip.open(segment, "rb") as src, open(partial, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(partial, target)
    return target


def header_scan(path: str) -> int:
    return sum(h.records_count for h in record_batch.scan_headers(path) if isinstance(h, record_batch.BatchHeader))


def records(path: str) -> int:
    n = 0
    for batch in record_batch.read_batches(path):
        for _ in record_batch.iter_records(batch):
            n += 1
    return n


def decode(path: str) -> int:
    n = 0
    for rec in metadata_log.iter_metadata_records(path):
        if rec.data is not None:
            n += 1
    return n


def decode_json(path: str) -> int:
    n = 0
    for rec in metadata_log.iter_metadata_records(path):
        if rec.payload_json() is not None:
            n += 1
    return n


def kafka_python(path: str) -> int:
    from kafka.record.default_records import DefaultRecordBatch

    n = 0
    for batch in record_batch.read_batches(path, verify_crc=False):
        parsed = DefaultRecordBatch(bytes(batch.data))
        parsed.validate_crc()
        for _ in parsed:
            n += 1
    return n


MODES = {"header_scan": header_scan, "records": records, "decode": decode, "decode_json": decode_json,
         "kafka_python": kafka_python}


def run(mode: str, path: str, repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        count = MODES[mode](path)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if best is None or cpu < best["cpu_s"]:
            best = {"mode": mode, "records": count, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                    "records_per_s_cpu": int(count / cpu) if cpu else 0,
                    "records_per_s_wall": int(count / wall) if wall else 0}
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segment", default=DEFAULT_SEGMENT)
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kafka-recon-decode-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--csv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                      "bench_decode.csv"))
    args = parser.parse_args(argv)
    path = materialise(args.segment, args.work)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    rows = []
    print("| mode | records | CPU s | wall s | records/s (CPU) | records/s (wall) | load avg |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for mode in args.modes.split(","):
        if mode == "kafka_python":
            try:
                import kafka  # noqa: F401
            except ImportError:
                print(f"| {mode} | (kafka-python not installed: pip install '.[bench]') | | | | | |")
                continue
        row = run(mode, path, args.repeat)
        row.update(load_avg=round(os.getloadavg()[0], 2), python=platform.python_version(),
                   segment=os.path.basename(path), when=time.strftime("%Y-%m-%dT%H:%M:%S"))
        if mode != "header_scan" and os.path.basename(path) == "00000000000000000000.log" and \
                args.segment == DEFAULT_SEGMENT and row["records"] < EXPECTED_RECORDS - 1:
            print(f"warning: {mode} saw {row['records']} records, expected ~{EXPECTED_RECORDS}", file=sys.stderr)
        rows.append(row)
        print(f"| {mode} | {row['records']:,} | {row['cpu_s']} | {row['wall_s']} | {row['records_per_s_cpu']:,} | "
              f"{row['records_per_s_wall']:,} | {row['load_avg']} |", flush=True)
    if args.csv and rows:
        os.makedirs(os.path.dirname(args.csv), exist_ok=True)
        new = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            if new:
                writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
