"""Broker-side collector, read-only: nothing in the tree is written, opened for writing, or locked; output
inside a log dir is refused.

Runs on copies of the real Kafka-written devsample tree (tests/fixtures/kafka-devsample).
"""
from __future__ import annotations

import builtins
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from collector_trees import by_key, disk_listing, read_all, walk_recording_opens

from collector import (
    CollectOptions,
    UsageError,
    collect,
    main,
)
from collector.build import build

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def tree_state(top) -> dict:
    """Everything that a write, create, rename or chmod would change (not atime)."""
    state = {}
    for root, dirs, files in os.walk(top):
        for name in [".", *dirs, *files]:
            p = os.path.join(root, name)
            st = os.lstat(p)
            state[os.path.relpath(p, top)] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return state


# --------------------------------------------------------------------------------------- read-only


def _nobody_python() -> list[str] | None:
    """An interpreter the unprivileged user can run (the venv's may live under /root)."""
    for candidate in (sys.executable, shutil.which("python3"), "/usr/bin/python3", "/usr/local/bin/python3"):
        if not candidate:
            continue
        try:
            probe = subprocess.run([candidate, "-c", "pass"], user=65534, group=65534, capture_output=True)
        except OSError:  # not executable by that user
            continue
        if probe.returncode == 0:
            return [candidate]
    return None


def test_collector_runs_on_a_read_only_tree_and_changes_nothing(devsample_dir):
    """chmod -R a-w, then run the stand-alone copy as an unprivileged user (root ignores permissions)."""
    as_root = os.geteuid() == 0
    python = _nobody_python() if as_root else [sys.executable]
    if python is None:
        pytest.skip("no interpreter runnable by uid 65534 on this machine")
    user = {"user": 65534, "group": 65534} if as_root else {}
    work = Path(tempfile.mkdtemp(prefix="kafka-recon-ro-"))
    try:
        os.chmod(work, 0o755)
        shutil.copytree(devsample_dir / "broker-102", work / "broker-102", symlinks=True)
        build(work / "collector.py")
        out_dir = work / "out"
        out_dir.mkdir()
        os.chmod(out_dir, 0o777)
        subprocess.run(["chmod", "-R", "a-w", str(work / "broker-102")], check=True)
        log_dirs = sorted(str(p) for p in (work / "broker-102").iterdir())
        probe = subprocess.run([*python, "-c", "open(%r, 'w')" % (log_dirs[0] + "/probe")], capture_output=True,
                               **user)
        assert probe.returncode != 0  # the sandbox is real: this user cannot write in the tree
        before = tree_state(work / "broker-102")

        run = subprocess.run([*python, "-I", str(work / "collector.py"), "--log-dir", *log_dirs,
                              "--out", str(out_dir / "b102.jsonl.gz"), "--include-metadata-log"],
                             capture_output=True, text=True, cwd=str(out_dir), **user)

        assert run.returncode == 0, run.stderr
        assert "broker 102" in run.stderr and "0 flagged" in run.stderr
        assert tree_state(work / "broker-102") == before
        reader, entries = read_all(out_dir / "b102.jsonl.gz")
        assert reader.complete
        got = {k: (e["kind"], e["size"], e["content"]) for k, e in by_key(entries).items()}
        assert got == disk_listing(log_dirs, include_metadata_log=True)
        assert sorted(os.listdir(out_dir)) == ["b102.jsonl.gz"]
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(work)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def test_no_write_flag_ever_reaches_the_tree(b102, tmp_path, monkeypatch):
    tree = str(tmp_path / "broker-102")
    (Path(b102[0]) / ".lock").write_bytes(b"")
    before = tree_state(tree)
    calls, violations = [], []
    real_open, real_builtin_open = os.open, builtins.open

    def inside(path, dir_fd):
        return dir_fd is not None or os.path.realpath(os.fspath(path)).startswith(tree + os.sep)

    def guarded_open(path, flags, mode=0o777, *, dir_fd=None):
        calls.append((os.fspath(path), flags, dir_fd))
        if inside(path, dir_fd) and flags & WRITE_FLAGS:
            violations.append((path, flags))
            raise PermissionError(13, "write attempted inside the tree")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def guarded_builtin_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and inside(file, None) and set(mode) & set("wax+"):
            violations.append((file, mode))
            raise PermissionError(13, "write attempted inside the tree")
        return real_builtin_open(file, mode, *args, **kwargs)

    def refuse(name):
        real = getattr(os, name)

        def wrapper(*args, **kwargs):
            if any(isinstance(a, str) and inside(a, None) for a in args):
                violations.append((name, args))
                raise PermissionError(13, name + " attempted inside the tree")
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(os, "open", guarded_open)
    monkeypatch.setattr(builtins, "open", guarded_builtin_open)
    for name in ("mkdir", "rename", "replace", "unlink", "remove", "symlink", "utime", "chmod", "truncate"):
        monkeypatch.setattr(os, name, refuse(name))

    written, trailer = collect(b102, str(tmp_path / "out.jsonl.gz"), CollectOptions(include_metadata_log=True))

    monkeypatch.undo()
    assert violations == []
    assert tree_state(tree) == before
    assert written == str(tmp_path / "out.jsonl.gz") and not os.path.exists(written + ".part")
    tree_opens = [c for c in calls if c[2] is not None or c[0].startswith(tree)]
    assert tree_opens and all(flags & WRITE_FLAGS == 0 for _, flags, _ in tree_opens)
    assert all(flags & os.O_NOFOLLOW for name, flags, dir_fd in tree_opens if dir_fd is not None)
    assert not [c for c in calls if os.path.basename(c[0]) == ".lock"]
    assert trailer["entries"] == len(disk_listing(b102))


def test_lock_file_listed_but_never_opened(b102, monkeypatch):
    (Path(b102[0]) / ".lock").write_bytes(b"")
    entries, opened = walk_recording_opens(monkeypatch, b102)
    assert ".lock" not in opened and "partition.metadata" in opened
    lock = entries[(b102[0], ".lock")]
    assert (lock["kind"], lock["size"], lock["content"], lock["flags"]) == ("file", 0, None, [])


def test_output_inside_a_log_dir_is_refused(b102, tmp_path, capsys):
    link = tmp_path / "link-to-log-dir"
    link.symlink_to(b102[0])
    before = tree_state(tmp_path / "broker-102")
    for out in (b102[0] + "/pack.jsonl.gz", b102[1] + "/events-0/pack.jsonl.gz", str(link / "pack.jsonl.gz"),
                b102[0]):
        with pytest.raises(UsageError, match="inside log dir"):
            collect(b102, out)
        assert main(["--log-dir", *b102, "--out", out]) == 2
        assert "inside log dir" in capsys.readouterr().err
    assert tree_state(tmp_path / "broker-102") == before
