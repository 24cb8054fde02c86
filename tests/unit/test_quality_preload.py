"""The Great Expectations preload (jobs.quality.gx_context.preload_in_background): GX imported off the main
thread with analytics already off, and a failing import left silent for the quality stage to report."""
import os
import subprocess
import sys
import threading
from pathlib import Path

from jobs.quality import gx_context
from tests.fresh_interpreter import run_script

ROOT = Path(__file__).resolve().parents[2]


def test_preload_imports_gx_with_analytics_off_in_a_fresh_interpreter(tmp_path):
    code = (
        "import os, sys\n"
        "os.environ.pop('GX_ANALYTICS_ENABLED', None)\n"
        "from jobs.quality.gx_context import PRELOADED_MODULES, preload_in_background\n"
        "before = [m for m in PRELOADED_MODULES if m in sys.modules]\n"
        "thread = preload_in_background()\n"
        "thread.join(300)\n"
        "print(before, thread.is_alive(), os.environ.get('GX_ANALYTICS_ENABLED'),"
        " all(m in sys.modules for m in PRELOADED_MODULES))\n"
    )
    lines = run_script(tmp_path, code, name="preload.py")
    assert lines[-1] == "[] False false True"  # nothing imported before, all of it after


def test_a_failing_preload_leaves_no_thread_traceback(monkeypatch):
    hooked = []
    monkeypatch.setattr(threading, "excepthook", hooked.append)
    monkeypatch.setattr(gx_context, "PRELOADED_MODULES", ("kafka_recon_no_such_module",))
    thread = gx_context.preload_in_background()
    thread.join(60)
    assert not thread.is_alive()
    assert hooked == []  # the stage's own import reports it, once, as the stage's error


def test_preload_turns_analytics_off_before_its_first_import(monkeypatch):
    monkeypatch.delenv("GX_ANALYTICS_ENABLED", raising=False)
    seen = []
    monkeypatch.setattr(gx_context.importlib, "import_module",
                        lambda name: seen.append((name, os.environ.get("GX_ANALYTICS_ENABLED"))))
    gx_context.preload_in_background().join(60)
    assert seen == [(name, "false") for name in gx_context.PRELOADED_MODULES]


def test_gx_imports_where_pyspark_takes_the_process_for_its_doctests(tmp_path):
    """Under ``python -c`` (no file, no spec for ``__main__``) and without Spark Connect's grpc, PySpark calls
    sys.exit(0) while GX imports it: a nightly started that way ended mid-run with exit 0, no summary, no report.
    Importing the quality package first makes that import an ImportError GX handles."""
    code = ("from jobs.quality.gx_context import PRELOADED_MODULES, preload_in_background\n"
            "import sys\n"
            "preload_in_background().join(300)\n"
            "import great_expectations.expectations as gxe\n"
            "print('imported', all(m in sys.modules for m in PRELOADED_MODULES), gxe.ExpectColumnValuesToNotBeNull.__name__)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "imported True ExpectColumnValuesToNotBeNull", out.stderr[-2000:]
    assert "Skipping doctests" not in out.stderr
