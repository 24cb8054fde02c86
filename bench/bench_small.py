"""Small captures against the Spark floor: what a user with a 3-broker cluster waits for.

The floor is the same entry point's start-up (configuration, session, one trivial job) measured in the same
run; each capture's whole nightly (ingest, reconcile, data quality, report) is reported as a multiple of it.
Target (issue #19): <= 3x the floor.

    python -m bench.bench_small            # prints a markdown table, writes bench/.cache/small.json
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Dict, List

from bench.measure import CACHE, MASTER, ROOT, STAGE_LINE, run_measured

TARGET_RATIO = 3.0
DEVSAMPLE = os.path.join(ROOT, "tests", "fixtures", "kafka-devsample")


def floor_main() -> int:
    """The floor: configuration loaded, the session started as nightly starts it for these small captures (the
    same JVM flags: ``spark.small_capture_jvm_options``), one trivial job."""
    from jobs.ingest.discover import discover
    from jobs.settings import Settings
    from jobs.spark_session import get_spark_for_capture

    spark = get_spark_for_capture(Settings.load(overrides=[f"spark.master={MASTER}"]).spark, discover([DEVSAMPLE]))
    assert spark.range(1).count() == 1
    spark.stop()
    return 0


# each capture's run -> the floor it is compared with
CAPTURES = {"kafka-devsample": "floor", "sim-3-brokers": "floor", "kafka-devsample-no-archive": "floor-no-archive"}


def _floor(label: str, timeout: float, env=None) -> dict:
    run = run_measured([sys.executable, "-m", "bench.bench_small", "--floor"],
                       os.path.join(CACHE, "small", f"{label}.log"), timeout, env=env)
    run["ok"] = run["exit_code"] == 0
    return run


def _nightly(capture: str, label: str, timeout: float, env=None) -> dict:
    work = os.path.join(CACHE, "small", label)
    cmd = [sys.executable, "-m", "jobs.cli", "nightly", "--capture", capture, "--out", os.path.join(work, "out"),
           "--set", f"storage.root={os.path.join(work, 'tables')}", "--set", f"spark.master={MASTER}",
           "--fail-on", "never"]
    run = run_measured(cmd, os.path.join(work, "nightly.log"), timeout, env=env)
    with open(run["log"]) as f:
        run["stages"] = {name: float(sec) for name, _rows, sec in STAGE_LINE.findall(f.read())}
    run["ok"] = run["exit_code"] == 0 and {"ingest", "reconcile", "quality", "report"} <= set(run["stages"])
    return run


def run(timeout: float = 1800) -> Dict[str, dict]:
    shutil.rmtree(os.path.join(CACHE, "small"), ignore_errors=True)
    sim = os.path.join(CACHE, "small", "sim-3-brokers")
    subprocess.run([sys.executable, "-m", "jobs.cli", "simulate", "--scenario", "healthy", "--out", sim],
                   cwd=ROOT, check=True, capture_output=True, timeout=600)
    # the same entry points without the JVM class archive (`kafka-recon class-archive`), for the before/after
    without = {**os.environ, "KAFKA_RECON__SPARK__CLASS_ARCHIVE": "false"}
    out = {"floor": _floor("floor", timeout)}
    out["kafka-devsample"] = _nightly(DEVSAMPLE, "kafka-devsample", timeout)
    out["sim-3-brokers"] = _nightly(sim, "sim-3-brokers", timeout)
    out["floor-no-archive"] = _floor("floor-no-archive", timeout, env=without)
    out["kafka-devsample-no-archive"] = _nightly(DEVSAMPLE, "kafka-devsample-no-archive", timeout, env=without)
    for name, floor_name in CAPTURES.items():  # each capture against the floor of the same JVM flags
        floor = out[floor_name]["wall_s"]
        out[name]["ratio"] = round(out[name]["wall_s"] / floor, 2) if floor else None
        out[name]["target_met"] = bool(out[name]["ok"] and out[name]["ratio"] is not None
                                       and out[name]["ratio"] <= TARGET_RATIO)
    with open(os.path.join(CACHE, "small.json"), "w") as f:
        json.dump(out, f, indent=2)
    return out


def markdown(result: Dict[str, dict]) -> List[str]:
    floor = result["floor"]
    lines = ["## Small captures vs the Spark floor (target <= 3x)", "",
             f"Floor (session start + one trivial job, same entry point): **{floor['wall_s']} s** wall, "
             f"{floor['cpu_s']} CPU s (with the JVM class archive; without it: "
             f"{result.get('floor-no-archive', {}).get('wall_s', '-')} s).", "",
             "| capture | wall s | CPU s | x floor | ingest | reconcile | quality | report | target |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in CAPTURES:
        if name not in result:
            continue
        r = result[name]
        st = r.get("stages", {})
        lines.append(f"| {name} | {r['wall_s']} | {r['cpu_s']} | {r.get('ratio')} | "
                     + " | ".join(str(st.get(k, "-")) for k in ("ingest", "reconcile", "quality", "report"))
                     + f" | {'PASS' if r.get('target_met') else 'MISS'} |")
    return lines


if __name__ == "__main__":
    if sys.argv[1:] == ["--floor"]:
        sys.exit(floor_main())
    print("\n".join(markdown(run())))
