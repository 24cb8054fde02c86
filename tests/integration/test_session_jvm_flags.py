"""The JVM a session starts for a small capture really runs with the small capture's flags."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from jobs.settings import Settings
from jobs.spark_session import get_spark
spark = get_spark(Settings.load().spark, master="local[1]", capture_bytes=int(sys.argv[1]))
bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print(json.dumps(list(bean.getInputArguments())))
spark.stop()
"""


def test_a_session_started_for_a_small_capture_runs_the_client_compiler_only():
    proc = subprocess.run([sys.executable, "-c", PROBE, str(10 * 2**20)], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    args = json.loads(proc.stdout.strip().splitlines()[-1])  # the running JVM's own command-line flags
    assert "-XX:TieredStopAtLevel=1" in args and "-XX:+UseParallelGC" in args
    assert "jvm_options_added=-XX:TieredStopAtLevel=1" in proc.stderr


CAPTURE_PROBE = """
import json, sys
from jobs.ingest.discover import discover
from jobs.settings import Settings
from jobs.spark_session import get_spark_for_capture
spark = get_spark_for_capture(Settings.load().spark, discover([sys.argv[1]]), master="local[1]")
bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print(json.dumps(list(bean.getInputArguments())))
spark.stop()
"""


def test_the_nightlys_session_for_the_real_devsample_is_sized_from_its_discovered_units():
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", CAPTURE_PROBE, str(root / "tests" / "fixtures" / "kafka-devsample")],
                          capture_output=True, text=True, timeout=300, cwd=root)
    assert proc.returncode == 0, proc.stderr
    args = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "-XX:TieredStopAtLevel=1" in args
