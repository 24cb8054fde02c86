"""PySpark's Python daemon with the job's decoders imported once, before it forks the workers.

Spark starts one daemon per executor (``python -m <spark.python.daemon.module>``) and forks a worker from it for
each concurrent Python task. PySpark's own daemon imports nothing: every worker imports pyspark's worker,
pyarrow, pandas (pyarrow loads it on its first ``pa.array``) and this job's decoders after the fork, ~1 s of CPU
per worker on a 2-core VM. This daemon imports them once; each worker forked from it starts with them. It pays
where a worker starts while others work: the real 1M log's first run into bronze, whose second decoding worker
started cold, is 0.4-0.9 s shorter (two sets of alternating runs; docs/benchmarks.md, session 39). Where all
workers start at once (a small capture's first pass) the daemon's imports take about as long as theirs did.

PySpark imports after the fork on purpose: a library may start threads on import, and only the forking thread
survives ``fork``. What this imports starts two (numpy's OpenBLAS pool, jemalloc's background thread in pyarrow);
both libraries handle ``fork`` themselves (``pthread_atfork`` handlers; tests/unit/test_worker_daemon.py uses them
in a forked child). Nothing here runs pyarrow's own thread pools. A module that fails to import is skipped: the
worker then imports it after the fork as under PySpark's daemon, and the task that needs it reports the error.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import sys

# the modules every decoding task imports first (jobs.ingest.decode_tasks reaches the rest of the decoders)
PRELOADED = ("pyspark.worker", "pandas", "pyarrow", "pyarrow.parquet", "pyarrow.compute",
             "jobs.ingest.decode_tasks", "jobs.ingest.metadata_sequence", "jobs.ingest.records_direct")


def preload(modules=PRELOADED) -> list:
    """Import ``modules``; returns the names that failed (their workers import them again after the fork).

    Whatever an import writes to standard output goes to standard error instead: the daemon's standard output is
    where Spark reads the daemon's port, and a stray line there would fail every Python task."""
    failed = []
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            for name in modules:
                try:
                    importlib.import_module(name)
                except (Exception, SystemExit):  # noqa: BLE001 - a worker importing it itself reports the error
                    failed.append(name)  # (SystemExit: a module that exits on import must not end the daemon)
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    return failed


if __name__ == "__main__":
    preload()
    from pyspark import daemon

    daemon.manager()
