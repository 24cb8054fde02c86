"""A session this job starts forks its Python workers from the preloading daemon (jobs/engine/worker_daemon.py), which
has pyarrow's native library loaded before any worker exists (PySpark's own daemon loads none)."""
from __future__ import annotations

from jobs.spark_session import PRELOADING_DAEMON, PYTHON_DAEMON_KEY


def test_python_workers_are_forked_from_the_preloading_daemon(spark):
    def parent_of_worker(_):
        import os

        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            command = [part.decode() for part in f.read().split(b"\0") if part]
        with open(f"/proc/{os.getppid()}/maps") as f:
            arrow_loaded = any("libarrow" in line for line in f)
        yield command, arrow_loaded

    assert spark.conf.get(PYTHON_DAEMON_KEY) == PRELOADING_DAEMON
    [(command, arrow_loaded)] = spark.sparkContext.parallelize([0], 1).mapPartitions(parent_of_worker).collect()
    assert command[1:3] == ["-m", PRELOADING_DAEMON]
    assert arrow_loaded
