"""Ingest never writes inside a capture: the whole executor path (discovery, the collector's walk, segment
header scans, loose files, packs) run over a read-only capture holding the malformed corpus leaves every
file and folder exactly as it was, and no write-capable call ever targets it (checked with audit hooks in a
child process, since we may run as root, for whom permission bits mean nothing).

The collector's own read-only, no-write and symlink guarantees are tested in tests/unit/test_collector_read_only.py and
test_collector_symlinks_and_races.py.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .corpus_capture import copy_devsample, place_corpus

ROOT = Path(__file__).resolve().parent.parent.parent

CHILD = r"""
import json, os, sys
capture = os.path.realpath(sys.argv[1])
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
MUTATING = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.chmod", "os.chown", "os.utime", "os.truncate",
            "os.symlink", "os.link", "os.chflags", "shutil.rmtree", "shutil.move", "shutil.copyfile"}
violations, opened = [], 0

def inside(path):
    if isinstance(path, int):
        return False
    text = os.fsdecode(path) if isinstance(path, (bytes, str, os.PathLike)) else str(path)
    return not os.path.isabs(text) or os.path.realpath(text).startswith(capture + os.sep) or \
        os.path.realpath(text) == capture

def hook(event, args):
    global opened
    if event == "open" and args and inside(args[0]):
        opened += 1
        path, mode, flags = args
        if (isinstance(mode, str) and set(mode) & set("wax+")) or (flags or 0) & WRITE:
            violations.append([event, os.fsdecode(path) if not isinstance(path, int) else path, mode, flags])
    elif event in MUTATING and any(inside(a) for a in args if isinstance(a, (str, bytes, os.PathLike))):
        violations.append([event, [str(a) for a in args]])

sys.addaudithook(hook)
from tests.reliability.conftest import ingest_rows
from pathlib import Path
rows = ingest_rows(Path(capture))
print(json.dumps({"violations": violations, "opened": opened, "files": len(rows["bronze_ingest_files"]),
                  "quarantined": sum(r["status"] == "quarantined" for r in rows["bronze_ingest_files"])}))
"""


def tree_state(root: Path) -> dict:
    """Everything a write, chmod, rename or touch would change (ctime moves on any of them)."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames + [""]:
            path = os.path.join(dirpath, name) if name else dirpath
            st = os.lstat(path)
            state[path] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)
    return state


def test_ingest_of_a_read_only_capture_changes_nothing_and_opens_nothing_for_writing(tmp_path):
    capture = copy_devsample(tmp_path / "capture")
    place_corpus(capture)
    subprocess.run(["chmod", "-R", "a-w", str(capture)], check=True)
    try:
        before = tree_state(capture)
        run = subprocess.run([sys.executable, "-c", CHILD, str(capture)], cwd=ROOT, capture_output=True, text=True,
                             timeout=600, env=dict(os.environ, TZ="UTC"))
        assert run.returncode == 0, run.stderr[-5000:]
        report = json.loads(run.stdout.strip().splitlines()[-1])
        assert report["violations"] == []
        assert report["opened"] > 100 and report["files"] > 300 and report["quarantined"] > 60
        assert tree_state(capture) == before
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(capture)], check=False)
