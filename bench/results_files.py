"""``bench/results/``: the run written as ``latest.md`` (targets, tables, side benches) and appended to
``history.csv``; :mod:`bench.run_all` writes ``latest.json`` beside them.
"""
from __future__ import annotations

import csv
import json
import os
import time
from typing import List, Optional

from bench.measure import MASTER, ROOT
from bench.targets import KAFKA_DUMP_LOG_SECONDS, KAFKA_JAVA_LOOP_SECONDS, bronze_met


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
            lines.append(f"| `kafka-recon decode` command, JSON lines to a file (whole command: a process per core, CPU summed) | {command['records']:,} | "
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
            samples = bronze.get("samples") or [bronze]
            each = "; ".join(f"{s['first_s']} / {s['second_s']}" for s in samples)
            lines += [f"Real 1M-record log into bronze (minimal log dir with only `__cluster_metadata-0`, run_ingest "
                      f"+ Delta write, `{MASTER}`), the median of {len(samples)} fresh sessions: first "
                      f"{bronze['first_s']} s (what the nightly ingest stage sees), warm re-run {bronze['second_s']} s "
                      f"(each session's first / warm: {each}); session start {bronze['session_s']} s not "
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
