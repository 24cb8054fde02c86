"""Broker-side collector, walking hostile log dirs: no symlink followed, races (vanishing, growing, swapped
files and dirs) become flags, sparse files, FIFOs, odd names and missing log dirs.

Runs on copies of the real Kafka-written devsample tree (tests/fixtures/kafka-devsample).
"""
from __future__ import annotations

import gzip
import os
import shutil
import stat
from pathlib import Path

import pytest
from collector_trees import FS_CLASSES, by_key, pack_bytes, read_all, walk_recording_opens

import collector
import collector.filesystem
from collector import (
    CollectOptions,
    LocalFileSystem,
    walk_log_dirs,
)


def tracking(fs_cls):
    """An adapter that remembers which child directory it is listing (``current``)."""

    class Tracking(fs_cls):
        current = None

        def open_dir(self, handle, name):
            self.current = name
            return super().open_dir(handle, name)

    return Tracking()


# ---------------------------------------------------------------------------------- symlinks, races


@pytest.mark.parametrize("fs_cls", FS_CLASSES)
def test_symlinks_pointing_outside_are_recorded_not_followed(b102, tmp_path, fs_cls):
    outside = tmp_path / "outside"
    (outside / "secret-0").mkdir(parents=True)
    secret = b"version: 0\ntopic_id: SECRETSECRETSECRETSECR"
    (outside / "secret-0" / "partition.metadata").write_bytes(secret)
    (outside / "meta.properties").write_bytes(b"node.id=666\n#SECRET\n")
    a = Path(b102[0])
    (a / "evil-0").symlink_to(outside / "secret-0")
    (a / "inventory-0" / "partition.metadata").unlink()
    (a / "inventory-0" / "partition.metadata").symlink_to(outside / "secret-0" / "partition.metadata")
    (Path(b102[1]) / "meta.properties").unlink()
    (Path(b102[1]) / "meta.properties").symlink_to(outside / "meta.properties")

    data = pack_bytes(b102, fs=fs_cls())

    assert b"SECRET" not in gzip.decompress(data)
    reader, entries = read_all(data)
    e = by_key(entries)
    assert reader.complete
    evil = e[(str(a), "evil-0")]
    assert (evil["kind"], evil["target"], evil["content"]) == ("symlink", str(outside / "secret-0"), None)
    assert not [k for k in e if k[1].startswith("evil-0/")]
    pm = e[(str(a), "inventory-0/partition.metadata")]
    assert (pm["kind"], pm["content"]) == ("symlink", None)
    assert pm["target"].endswith("secret-0/partition.metadata")
    assert reader.header["broker_id"] == 102  # the symlinked meta.properties (node.id=666) was not read
    assert reader.header["log_dir_ids"][b102[1]] is None


def test_directory_swapped_for_symlink_after_listing_is_not_followed(b102, tmp_path):
    """The descriptor-relative walk opens children with O_NOFOLLOW: a swap between listing and descending fails."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "partition.metadata").write_bytes(b"SECRET")
    a = Path(b102[0])

    seen = []

    class SwappingFS(LocalFileSystem):
        def scan(self, handle):  # the log dir is listed twice (files, then directories): swap in the second
            for st in super().scan(handle):
                seen.append(st.name)
                if st.name == "events-1" and seen.count("events-1") == 2:
                    os.rename(a / "events-1", tmp_path / "moved")
                    (a / "events-1").symlink_to(outside)
                yield st

    entries = by_key(walk_log_dirs(b102, fs=SwappingFS()))
    swapped = entries[(str(a), "events-1")]
    assert swapped["kind"] == "dir" and swapped["flags"] == ["changed_during_read"]
    assert "ELOOP" in swapped["error"] or "ENOTDIR" in swapped["error"]
    assert not [k for k in entries if k[1].startswith("events-1/")]


@pytest.mark.parametrize("fs_cls", FS_CLASSES)
def test_file_vanishing_between_listing_and_stat(b102, monkeypatch, fs_cls):
    real = collector.filesystem._scandir_stat
    fs = tracking(fs_cls)

    def vanishing(entry):  # runs after the directory was read (listed), before the entry's lstat
        if fs.current == "events-1" and entry.name == "leader-epoch-checkpoint":
            os.unlink(Path(b102[0]) / "events-1" / entry.name)
        return real(entry)

    monkeypatch.setattr(collector.filesystem, "_scandir_stat", vanishing)
    entries = list(walk_log_dirs([b102[0]], fs=fs))
    gone = by_key(entries)[(b102[0], "events-1/leader-epoch-checkpoint")]
    assert (gone["kind"], gone["size"], gone["content"], gone["flags"]) == ("file", None, None, ["vanished"])
    assert "ENOENT" in gone["error"]
    assert by_key(entries)[(b102[0], "events-1/partition.metadata")]["content"] is not None


@pytest.mark.parametrize("fs_cls", FS_CLASSES)
def test_file_vanishing_between_stat_and_read(b102, fs_cls):
    fs = tracking(fs_cls)
    real_read = fs.read

    def vanishing_read(handle, name, cap):
        if fs.current == "inventory-1" and name == "partition.metadata":
            os.unlink(Path(b102[0]) / "inventory-1" / name)
        return real_read(handle, name, cap)

    fs.read = vanishing_read
    entries = by_key(walk_log_dirs([b102[0]], fs=fs))
    gone = entries[(b102[0], "inventory-1/partition.metadata")]
    assert gone["flags"] == ["vanished"] and gone["content"] is None and gone["size"] == 43


def test_partition_dir_vanishing_before_descending(b102):
    class VanishingFS(LocalFileSystem):
        def open_dir(self, handle, name):
            if name == "inventory-0":
                shutil.rmtree(Path(b102[0]) / name)
            return super().open_dir(handle, name)

    entries = by_key(walk_log_dirs([b102[0]], fs=VanishingFS()))
    gone = entries[(b102[0], "inventory-0")]
    assert gone["kind"] == "dir" and gone["flags"] == ["vanished"]
    assert not [k for k in entries if k[1].startswith("inventory-0/")]
    assert entries[(b102[0], "")]["flags"] == []


def test_unreadable_directory_and_broken_listing_are_flagged(b102):
    class FailingFS(LocalFileSystem):
        def open_dir(self, handle, name):
            if name == "inventory-1":
                raise PermissionError(13, "Permission denied")
            return super().open_dir(handle, name)

        def scan(self, handle):
            for st in super().scan(handle):
                if st.name == "00000000000000000000.timeindex":
                    raise OSError(5, "Input/output error")
                yield st

    entries = by_key(walk_log_dirs([b102[0]], fs=FailingFS()))
    denied = entries[(b102[0], "inventory-1")]
    assert denied["flags"] == ["unreadable"] and denied["error"] == "Permission denied (EACCES)"
    broken = [e for e in entries.values() if e["flags"] == ["incomplete"]]
    assert broken and all(e["error"] == "Input/output error (EIO)" for e in broken)


def test_file_growing_before_and_during_the_read(b102, monkeypatch):
    a = Path(b102[0])
    grown_before = a / "events-1" / "leader-epoch-checkpoint"
    grown_during = a / "inventory-1" / "partition.metadata"
    original_before, original_during = grown_before.read_bytes(), grown_during.read_bytes()

    fs = tracking(LocalFileSystem)
    real_fs_read = fs.read

    def growing_fs_read(handle, name, cap):  # grows after the listing, before the open
        if fs.current == "events-1" and name == "leader-epoch-checkpoint":
            with open(grown_before, "ab") as f:
                f.write(b"1 7\n")
        return real_fs_read(handle, name, cap)

    fs.read = growing_fs_read

    real_read = os.read
    state = {"done": False}

    def growing_read(fd, n):  # grows after the open and fstat, before the first read
        if not state["done"] and os.fstat(fd).st_ino == grown_during.stat().st_ino:
            state["done"] = True
            with open(grown_during, "ab") as f:
                f.write(b"\nAPPENDED")
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", growing_read)
    entries = by_key(walk_log_dirs([b102[0]], fs=fs))
    monkeypatch.undo()

    before = entries[(b102[0], "events-1/leader-epoch-checkpoint")]
    assert before["flags"] == ["changed_during_read"]
    assert before["content"] == original_before + b"1 7\n" and before["size"] == len(before["content"])
    during = entries[(b102[0], "inventory-1/partition.metadata")]
    assert during["flags"] == ["changed_during_read"]
    assert during["content"] == original_during + b"\nAPPENDED"


def test_file_growing_past_the_cap_during_read_is_not_embedded(b102, monkeypatch):
    target = Path(b102[0]) / "inventory-1" / "partition.metadata"
    real_read = os.read

    def growing_read(fd, n):
        if os.fstat(fd).st_ino == target.stat().st_ino and target.stat().st_size < 1000:
            with open(target, "ab") as f:
                f.write(b"x" * 1000)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", growing_read)
    entries = by_key(walk_log_dirs([b102[0]], CollectOptions(max_file_bytes=500)))
    monkeypatch.undo()
    e = entries[(b102[0], "inventory-1/partition.metadata")]
    assert e["content"] is None and "over_cap" in e["flags"] and "changed_during_read" in e["flags"]


def test_sparse_10gib_file_listed_with_apparent_size_without_reading(b102, monkeypatch):
    part = Path(b102[0]) / "inventory-1"
    for name in ("00000000000000000100.snapshot", "00000000000000000100.index"):
        with open(part / name, "wb") as f:
            f.truncate(10 << 30)
    entries, opened = walk_recording_opens(monkeypatch, [b102[0]])
    snap = entries[(b102[0], "inventory-1/00000000000000000100.snapshot")]
    index = entries[(b102[0], "inventory-1/00000000000000000100.index")]
    assert (snap["size"], snap["content"], snap["flags"]) == (10 << 30, None, ["over_cap"])
    assert (index["size"], index["content"], index["flags"]) == (10 << 30, None, [])
    assert snap["alloc"] < (1 << 20) and index["alloc"] < (1 << 20)
    assert "00000000000000000100.snapshot" not in opened and "00000000000000000100.index" not in opened


def test_fifo_and_non_utf8_names(b102):
    part = Path(b102[0]) / "inventory-1"
    os.unlink(part / "partition.metadata")
    os.mkfifo(part / "partition.metadata")  # embeddable name, but not a regular file: never opened (would block)
    os.close(os.open(os.path.join(os.fsencode(b102[0]), b"stray-\xff"), os.O_CREAT | os.O_WRONLY, 0o644))

    data = pack_bytes([b102[0]])

    assert gzip.decompress(data).decode("utf-8")  # the pack stays valid UTF-8
    reader, entries = read_all(data)
    e = by_key(entries)
    fifo = e[(b102[0], "inventory-1/partition.metadata")]
    assert (fifo["kind"], fifo["content"], stat.S_ISFIFO(fifo["mode"])) == ("other", None, True)
    odd = e[(b102[0], "stray-\\xff")]
    assert odd["flags"] == ["non_utf8_name"] and odd["kind"] == "file"
    assert reader.complete


def test_unreadable_and_missing_log_dirs_become_flagged_root_entries(tmp_path):
    missing = str(tmp_path / "no-such-dir")
    entries = list(walk_log_dirs([missing]))
    assert entries == [{"log_dir": missing, "path": "", "kind": "dir", "size": None, "alloc": None,
                        "mtime_ms": None, "mode": None, "target": None, "content": None, "flags": ["vanished"],
                        "error": "No such file or directory (ENOENT)", "segment": None}]
