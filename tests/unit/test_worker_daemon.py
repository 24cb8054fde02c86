"""The preloading Python daemon (jobs/engine/worker_daemon.py): what it imports before forking can still be used in a
forked child (the threads numpy and pyarrow start on import do not deadlock it), an import's prints stay off the
daemon's standard output, a failed preload (an error or an exit) is reported and skipped, and the setting decides
whether a session this job starts uses it."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

from jobs.engine.worker_daemon import PRELOADED, preload
from jobs.spark_session import PRELOADING_DAEMON, PYTHON_DAEMON_KEY, python_daemon_conf
from tests.settings_from import settings_from

# In a fresh interpreter: preload, fork, and in the child do what a decoding task does with the preloaded
# libraries (Arrow arrays and compute, a Parquet file, a numpy product, a metadata record decoded); the parent
# reports the child's exit status. A deadlock shows up as the timeout.
_FORKED_CHILD = textwrap.dedent("""
    import io, os, sys
    import jobs.engine.worker_daemon as daemon
    failed = daemon.preload()
    assert not failed, failed
    loaded = [m for m in daemon.PRELOADED if m in sys.modules]
    pid = os.fork()
    if pid == 0:
        import numpy, pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
        from udfs import metadata_log
        total = pc.sum(pa.array(list(range(100_000)), pa.int64())).as_py()
        sink = io.BytesIO()
        pq.write_table(pa.table({"n": pa.array(range(1000))}), sink)
        rows = pq.read_table(io.BytesIO(sink.getvalue())).num_rows
        dot = int(numpy.ones((200, 200)) @ numpy.ones(200) @ numpy.ones(200))
        frame = metadata_log.encode_metadata_frame("TOPIC_RECORD", 0, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"})
        kind, _, _, data, error = metadata_log.decode_metadata_value(frame)
        ok = total == 4_999_950_000 and rows == 1000 and dot == 40_000 and kind == "TOPIC_RECORD" and error is None
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    print(len(loaded), os.waitstatus_to_exitcode(status))
""")


def test_what_the_daemon_preloads_works_in_a_forked_worker():
    out = subprocess.run([sys.executable, "-c", _FORKED_CHILD], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(len(PRELOADED)), "0"]


def test_what_an_import_prints_does_not_reach_the_daemons_standard_output(tmp_path):
    (tmp_path / "noisy_module.py").write_text("import os\nprint('from print')\nos.write(1, b'from the fd\\n')\n")
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import jobs.engine.worker_daemon as d; "
              "failed = d.preload(('noisy_module',)); print('port', failed)")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "port []\n"  # Spark reads the daemon's port here
    assert "from print" in out.stderr and "from the fd" in out.stderr


def test_a_module_that_fails_to_import_is_reported_and_the_rest_still_load(tmp_path, monkeypatch):
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(0)\n")  # as pyspark.sql.connect can
    monkeypatch.syspath_prepend(str(tmp_path))
    assert preload(("json", "jobs.no_such_module", "exits_on_import", "csv")) == ["jobs.no_such_module",
                                                                                  "exits_on_import"]
    assert preload(("json",)) == []


def test_the_setting_picks_the_daemon_of_a_session_the_job_starts_on_a_local_master():
    assert python_daemon_conf(settings_from().spark, local_master=True) == {PYTHON_DAEMON_KEY: PRELOADING_DAEMON}
    assert python_daemon_conf(settings_from("spark.preload_python_workers=false").spark, local_master=True) == {}
    assert python_daemon_conf(settings_from().spark, local_master=False) == {}  # executors may lack the package
    assert importlib.util.find_spec(PRELOADING_DAEMON) is not None  # Spark runs `python -m` of this name
