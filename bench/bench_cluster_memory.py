"""Driver memory on its own: the nightly job in ``local-cluster`` mode, where every executor is a JVM of its own.

In ``local[2]`` the driver JVM is also the executor, so its peak memory mixes what the driver keeps (small
aggregates) with what executors cache (the persisted ingest rows). Here the same fleets run on
``local-cluster[2,1,3072]`` (two executor JVMs of 2.5 GiB heap, one core each) and the sampler reports the
driver JVM and the largest executor JVM apart. Used by ``bench/run_all.py`` (``--only cluster``).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Dict, List

CLUSTER_MASTER = "local-cluster[2,1,3072]"
EXECUTOR_MEMORY = "2560m"


def run_cluster_nightly(fleet: dict, label: str, timeout: float, cache: str, resume: bool = False) -> dict:
    """One nightly run (no data quality) of ``fleet`` on :data:`CLUSTER_MASTER`; the measured run dict."""
    from bench.measure import STAGE_LINE, run_measured

    work = os.path.join(cache, "runs", f"{label}-cluster")
    saved = os.path.join(work, "result.json")
    if resume and os.path.exists(saved):
        with open(saved) as f:
            run = json.load(f)
        if run.get("fleet") == fleet["key"]:
            run["resumed"] = True
            return run
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    conf = os.path.join(work, "cluster.yaml")
    with open(conf, "w") as f:
        f.write(f'spark:\n  extra_conf:\n    spark.executor.memory: "{EXECUTOR_MEMORY}"\n')
    cmd = [sys.executable, "-m", "jobs.cli", "nightly", "--capture", fleet["path"], "--out", os.path.join(work, "out"),
           "--conf", conf, "--set", f"storage.root={os.path.join(work, 'tables')}",
           "--set", f"spark.master={CLUSTER_MASTER}", "--fail-on", "never", "--skip-quality"]
    env = dict(os.environ, KAFKA_RECON_SPARK_MASTER=CLUSTER_MASTER, PYSPARK_PYTHON=sys.executable)
    print(f"  nightly {label} on {CLUSTER_MASTER} ...", flush=True)
    run = run_measured(cmd, os.path.join(work, "nightly.log"), timeout, env)
    with open(run["log"]) as f:
        stages = {name: float(seconds) for name, _, seconds in STAGE_LINE.findall(f.read())}
    run.update(label=label, fleet=fleet["key"], replica_dirs=fleet["replica_dirs"],
               metadata_records=fleet["metadata_records"], stages=stages, master=CLUSTER_MASTER,
               ok=run["exit_code"] in (0, 10) and "ingest" in stages)
    with open(saved, "w") as f:
        json.dump(run, f, indent=2)
    print(f"  {label} cluster: wall {run['wall_s']} s, driver JVM {run['peak_mib']['jvm']} MiB, largest executor "
          f"{run['peak_mib']['executor_jvm']} MiB, ok={run['ok']}", flush=True)
    return run


def markdown(runs: List[dict]) -> List[str]:
    """The results section: one row per run, driver and executors apart."""
    lines = [f"Driver vs executors (`{CLUSTER_MASTER}`, executor heap {EXECUTOR_MEMORY}; bench/bench_cluster_memory.py):",
             "", "| replica dirs | metadata records | wall s | CPU s | driver py peak MiB | driver JVM peak MiB | "
             "largest executor JVM peak MiB | ok |", "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in runs:
        p: Dict[str, int] = r["peak_mib"]
        lines.append(f"| {r['replica_dirs']:,} | {r['metadata_records']:,} | {r['wall_s']} | {r['cpu_s']} | "
                     f"{p['driver_python']} | {p['jvm']} | {p.get('executor_jvm', 0)} | {'yes' if r['ok'] else 'NO'} |")
    return lines + [""]
