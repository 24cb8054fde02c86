"""Python code run in a fresh interpreter with this checkout on its path: for what only a new process shows (which
modules an import loads, what runs at import time)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_script(tmp_path: Path, code: str, name: str = "probe.py") -> list:
    """Run ``code`` as a script file (not ``-c``: pyspark takes a main module without a file for its doctests) and
    return its stdout lines; a non-zero exit fails the test with the script's stderr."""
    script = tmp_path / name
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()
