"""The targets ``make bench`` judges (issue #19) and the verdict on each, from the measured runs.

One place for the figures: :mod:`bench.results_files` writes them out, :mod:`bench.run_all` only measures.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

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


def parse_count(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if mult > 1 else text) * mult)


def size_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1_000}k" if n % 1_000 == 0 else str(n)



def metadata_asked(run: dict) -> Optional[int]:
    """The metadata records a run's fleet was simulated with (``-m<N>`` in its cache key). The simulator writes at
    least one record per partition, so a 4M fleet's log holds more than asked: runs are paired by what was asked."""
    found = re.search(r"-m(\d+)-", run.get("fleet") or "")
    return int(found.group(1)) if found else run.get("metadata_records")


def verdict(ok: Optional[bool]) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


TARGET_BRONZE_TEXT = (f"real 1M-record metadata log into bronze <= {TARGET_BRONZE_1M_SECONDS} s warm, "
                      f"<= {TARGET_BRONZE_1M_FIRST_SECONDS:g} s first")


def bronze_met(bronze: dict) -> bool:
    """Target 3 of issue #19: the warm re-run and the first run, each against its own figure."""
    return bronze["second_s"] <= TARGET_BRONZE_1M_SECONDS and bronze["first_s"] <= TARGET_BRONZE_1M_FIRST_SECONDS


def evaluate(runs: List[dict], ingest: Optional[dict], bronze: Optional[dict],
             cluster_runs: Optional[List[dict]] = None, decode: Optional[dict] = None) -> List[Tuple[str, str, str]]:
    good = [r for r in runs if r["ok"] and not r["quality"] and r.get("engine", "classic") == "classic"]
    targets = []
    for c in (r for r in runs if r.get("engine") == "connect"):
        twin = next((r for r in good if r["fleet"] == c["fleet"]), None)
        ratio = f"{c['wall_s'] / twin['wall_s']:.2f}x classic's {twin['wall_s']} s" if c["ok"] and twin else "no classic twin"
        targets.append((f"Spark Connect nightly ({c['label']}, local server): measured, no target",
                        f"{c['wall_s']} s wall ({c['cpu_s']} CPU s), {ratio}" if c["ok"] else f"failed: {c.get('error', '')[:200]}",
                        "n/a"))
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
             and metadata_asked(r) == metadata_asked(huge[0])]
    if huge and alike:
        h, b = huge[0], alike[0]
        factor = h["wall_s"] / b["wall_s"]
        copies = h.get("metadata_log_copies")
        collected = "every broker's pack" if copies is None else f"{copies} packs"
        targets.append(("4M <= 10x the 400k time",
                        f"{factor:.1f}x: {h['wall_s']} s vs {b['wall_s']} s wall ({h['cpu_s']} vs {b['cpu_s']} CPU s; "
                        f"metadata log in {collected}; {h['replica_dirs'] / b['replica_dirs']:.1f}x the replica dirs, "
                        f"{h['metadata_records']:,} vs {b['metadata_records']:,} metadata records)",
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
                        f"warm {bronze['second_s']} s, first {bronze['first_s']} s (medians of "
                        f"{len(bronze.get('samples') or [bronze])} sessions; load {bronze['load_after']})",
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
