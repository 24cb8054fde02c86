"""Helpers shared by the collector tests (test_collector_*.py): pack/read round trips and an independent
listing of the disk to compare packs with. The broker-copy fixtures (b101, b102) live in conftest.py.
"""
from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from collector import (
    LocalFileSystem,
    PathFileSystem,
    write_pack,
)
from udfs import pack_reader
from udfs.pack_reader import read_pack

CLUSTER_ID = "EKJ41Lv86vWjqGSh58Dg2w"
FS_CLASSES = [LocalFileSystem, PathFileSystem]


def pack_bytes(log_dirs, options=None, fs=None, **kw) -> bytes:
    buf = io.BytesIO()
    write_pack(buf, log_dirs, options, fs, host="test-host", capture_time="2026-11-22T08:32:56.000Z", **kw)
    return buf.getvalue()


def read_all(data) -> tuple[pack_reader.PackReader, list[dict]]:
    reader = read_pack(data)
    return reader, list(reader)


def by_key(entries):
    return {(e["log_dir"], e["path"]): e for e in entries}


def walk_recording_opens(monkeypatch, log_dirs) -> tuple[dict, list[str]]:
    """``walk_log_dirs`` of ``log_dirs`` keyed by (log dir, path), and the base names of every file it opened."""
    from collector import walk_log_dirs

    opened: list[str] = []
    real_open = os.open

    def recording_open(path, flags, mode=0o777, *, dir_fd=None):
        opened.append(os.path.basename(os.fspath(path)))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", recording_open)
    try:
        entries = by_key(walk_log_dirs(log_dirs))
    finally:
        monkeypatch.undo()
    return entries, opened


def expected_embedded(parent: str | None, name: str, include_metadata_log: bool = False) -> bool:
    """The documented embed rule, written again independently of the collector."""
    if parent is None:
        return name in {"meta.properties", ".kafka_cleanshutdown", "bootstrap.checkpoint"} or name.endswith(
            "-checkpoint"
        )
    if name in {"partition.metadata", "leader-epoch-checkpoint", "quorum-state"}:
        return True
    if name.endswith(".snapshot") and len(name) == 29 and name[:20].isdigit():
        return True
    if include_metadata_log and parent == "__cluster_metadata-0":
        return (name.endswith(".log") and name[:20].isdigit() and len(name) == 24) or (
            name.endswith(".checkpoint") and len(name) == 42
        )
    return False


def disk_listing(log_dirs, include_metadata_log=False) -> dict:
    """{(log_dir, path): (kind, size, bytes or None)} built with plain os calls, depth 2, no symlink followed."""
    out = {}

    def kind(st):
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        if stat.S_ISREG(st.st_mode):
            return "file"
        if stat.S_ISLNK(st.st_mode):
            return "symlink"
        return "other"

    for log_dir in log_dirs:
        out[(log_dir, "")] = ("dir", os.lstat(log_dir).st_size, None)
        for name in os.listdir(log_dir):
            p = os.path.join(log_dir, name)
            st = os.lstat(p)
            data = Path(p).read_bytes() if kind(st) == "file" and expected_embedded(None, name) else None
            out[(log_dir, name)] = (kind(st), st.st_size, data)
            if kind(st) != "dir":
                continue
            for sub in os.listdir(p):
                q = os.path.join(p, sub)
                st2 = os.lstat(q)
                emb = kind(st2) == "file" and expected_embedded(name, sub, include_metadata_log)
                out[(log_dir, name + "/" + sub)] = (kind(st2), st2.st_size, Path(q).read_bytes() if emb else None)
    return out
