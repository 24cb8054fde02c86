"""Broker-side collector: pack == raw walk == disk, read-only, no symlink followed, races become flags.

Runs on copies of the real Kafka-written devsample tree (tests/fixtures/kafka-devsample).
"""
from __future__ import annotations

import ast
import builtins
import gzip
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import pytest

import collector
import collector.filesystem
from collector import (
    ENTRY_FIELDS,
    CollectOptions,
    LocalFileSystem,
    PathFileSystem,
    UsageError,
    collect,
    main,
    parse_properties,
    walk_log_dirs,
    write_pack,
)
from collector.build import build, build_source
from udfs import pack_reader
from udfs.pack_reader import read_pack

CLUSTER_ID = "EKJ41Lv86vWjqGSh58Dg2w"
FS_CLASSES = [LocalFileSystem, PathFileSystem]
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


# ------------------------------------------------------------------------------------------- helpers


def make_writable(top: Path) -> None:
    for root, _dirs, files in os.walk(top):
        os.chmod(root, 0o755)
        for name in files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                os.chmod(p, 0o644)


def copy_broker(devsample: Path, dest: Path, broker: str) -> list[str]:
    shutil.copytree(devsample / broker, dest / broker, symlinks=True)
    make_writable(dest / broker)
    return sorted(str(p) for p in (dest / broker).iterdir())


@pytest.fixture
def b102(devsample_dir: Path, tmp_path: Path) -> list[str]:
    """Broker 102: JBOD with kafka-logs-a and kafka-logs-b (a -future dir, a replica without partition.metadata)."""
    return copy_broker(devsample_dir, tmp_path, "broker-102")


@pytest.fixture
def b101(devsample_dir: Path, tmp_path: Path) -> list[str]:
    return copy_broker(devsample_dir, tmp_path, "broker-101")


def pack_bytes(log_dirs, options=None, fs=None, **kw) -> bytes:
    buf = io.BytesIO()
    write_pack(buf, log_dirs, options, fs, host="test-host", capture_time="2026-11-22T08:32:56.000Z", **kw)
    return buf.getvalue()


def read_all(data) -> tuple[pack_reader.PackReader, list[dict]]:
    reader = read_pack(data)
    return reader, list(reader)


def tracking(fs_cls):
    """An adapter that remembers which child directory it is listing (``current``)."""

    class Tracking(fs_cls):
        current = None

        def open_dir(self, handle, name):
            self.current = name
            return super().open_dir(handle, name)

    return Tracking()


def by_key(entries):
    return {(e["log_dir"], e["path"]): e for e in entries}


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


def tree_state(top) -> dict:
    """Everything that a write, create, rename or chmod would change (not atime)."""
    state = {}
    for root, dirs, files in os.walk(top):
        for name in [".", *dirs, *files]:
            p = os.path.join(root, name)
            st = os.lstat(p)
            state[os.path.relpath(p, top)] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return state


# -------------------------------------------------------------------------------- pack and read back


def test_pack_then_read_gives_every_entry_with_sizes_and_bytes(b102):
    reader, entries = read_all(pack_bytes(b102))

    assert reader.errors == [] and reader.complete
    got = {k: (e["kind"], e["size"], e["content"]) for k, e in by_key(entries).items()}
    assert got == disk_listing(b102)
    assert len(entries) == len(got) == reader.trailer["entries"]
    for e in entries:
        assert list(e) == list(ENTRY_FIELDS)
        assert e["flags"] == [] and e["error"] is None
        if e["kind"] == "file":
            assert e["alloc"] is not None and e["mtime_ms"] > 0 and stat.S_ISREG(e["mode"])


def test_header_records_identity_from_meta_properties(b102):
    reader, _ = read_all(pack_bytes(b102))
    h = reader.header
    assert (h["format"], h["version"], h["broker_id"], h["cluster_id"]) == ("kafka-recon-pack", 1, 102, CLUSTER_ID)
    assert h["log_dirs"] == b102
    assert h["host"] == "test-host" and h["capture_time"] == "2026-11-22T08:32:56.000Z"
    assert h["log_dir_ids"] == {b102[0]: "nKuNR3LmZUuB0M1ReqkepA", b102[1]: "Pt-uz-EuG-YYlKGr7dcT1Q"}
    assert h["warnings"] == []
    assert h["options"] == {"max_file_bytes": 1 << 20, "include_metadata_log": False,
                            "max_metadata_file_bytes": 1 << 30, "segment_scan_bytes": 1 << 30}


def test_real_devsample_facts_survive_the_pack(b102):
    _, entries = read_all(pack_bytes(b102))
    e = by_key(entries)
    a, b = b102
    assert e[(a, "events-1/partition.metadata")]["content"].startswith(b"version: 0\ntopic_id: ")
    assert b"node.id=102" in e[(a, "meta.properties")]["content"]
    assert (a, "clicks-0/partition.metadata") not in e  # the replica whose partition.metadata is missing
    future = "events-1.96cc2e120fcaecf473a7e5b7b7d57964-future"
    assert e[(b, future)]["kind"] == "dir" and e[(b, future + "/partition.metadata")]["content"] is not None
    assert e[(a, "__cluster_metadata-0/quorum-state")]["content"].startswith(b"{")
    assert e[(a, "inventory-0/00000000000000000006.txnindex")]["content"] is None  # listed only
    assert e[(a, "__cluster_metadata-0/00000000000000000000.log")]["content"] is None  # not requested


def test_metadata_log_embedded_on_request(b101):
    options = CollectOptions(include_metadata_log=True)
    reader, entries = read_all(pack_bytes(b101, options))
    assert reader.complete
    got = {k: (e["kind"], e["size"], e["content"]) for k, e in by_key(entries).items()}
    assert got == disk_listing(b101, include_metadata_log=True)
    md = Path(b101[0]) / "__cluster_metadata-0"
    e = by_key(entries)
    assert e[(b101[0], "__cluster_metadata-0/00000000000000000044-0000000001.checkpoint")]["content"] == (
        md / "00000000000000000044-0000000001.checkpoint"
    ).read_bytes()
    assert e[(b101[0], "__cluster_metadata-0/00000000000000000026.log")]["content"] == (
        md / "00000000000000000026.log"
    ).read_bytes()


def test_post_order_children_before_their_directory_and_log_dir_last(b102):
    entries = list(walk_log_dirs(b102))
    seen_dirs = set()
    for e in entries:
        top = e["path"].split("/")[0]
        if "/" in e["path"]:
            assert (e["log_dir"], top) not in seen_dirs
        elif e["kind"] == "dir":
            seen_dirs.add((e["log_dir"], top))
    roots = [i for i, e in enumerate(entries) if e["path"] == ""]
    last_of = {e["log_dir"]: i for i, e in enumerate(entries)}
    assert roots == [last_of[d] for d in b102]


@pytest.mark.parametrize("fs_cls", FS_CLASSES)
def test_raw_walk_equals_pack_read(b102, fs_cls):
    options = CollectOptions(include_metadata_log=True)
    raw = list(walk_log_dirs(b102, options, fs_cls()))
    reader, packed = read_all(pack_bytes(b102, options, fs_cls()))
    assert reader.complete
    assert packed == raw


def test_both_filesystem_adapters_yield_the_same_entries(b102):
    local = sorted(walk_log_dirs(b102, fs=LocalFileSystem()), key=lambda e: (e["log_dir"], e["path"]))
    path = sorted(walk_log_dirs(b102, fs=PathFileSystem()), key=lambda e: (e["log_dir"], e["path"]))
    assert local == path


def test_large_embedded_file_is_split_into_parts_and_reassembled(tmp_path):
    log_dir = tmp_path / "kafka-logs"
    md = log_dir / "__cluster_metadata-0"
    md.mkdir(parents=True)
    segment = os.urandom(2 * collector.PART_BYTES + 12345)
    (md / "00000000000000000000.log").write_bytes(segment)
    data = pack_bytes([str(log_dir)], CollectOptions(include_metadata_log=True))

    lines = gzip.decompress(data).split(b"\n")
    assert max(len(line) for line in lines) < 1.5 * collector.PART_BYTES
    assert sum(1 for line in lines if line.startswith(b'{"rec":"part"')) == 2
    reader, entries = read_all(data)
    assert reader.complete and reader.trailer["parts"] == 2
    assert by_key(entries)[(str(log_dir), "__cluster_metadata-0/00000000000000000000.log")]["content"] == segment


def test_over_cap_file_listed_with_flag_not_embedded(b102):
    reader, entries = read_all(pack_bytes(b102, CollectOptions(max_file_bytes=100)))
    e = by_key(entries)[(b102[0], "__cluster_metadata-0/quorum-state")]  # 161 bytes
    assert (e["content"], e["flags"], e["size"]) == (None, ["over_cap"], 161)
    small = by_key(entries)[(b102[0], "inventory-0/partition.metadata")]
    assert small["content"] is not None and small["flags"] == []


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
    opened = []
    real_open = os.open

    def recording_open(path, flags, mode=0o777, *, dir_fd=None):
        opened.append(os.path.basename(os.fspath(path)))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", recording_open)
    entries = by_key(walk_log_dirs(b102))
    monkeypatch.undo()
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
    opened = []
    real_open = os.open

    def recording_open(path, flags, mode=0o777, *, dir_fd=None):
        opened.append(os.path.basename(os.fspath(path)))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", recording_open)
    entries = by_key(walk_log_dirs([b102[0]]))
    monkeypatch.undo()
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


# ------------------------------------------------------------------------------------ bounded memory


def _synthetic_tree(root: Path, partitions: int) -> str:
    log_dir = root / ("kafka-logs-%d" % partitions)
    log_dir.mkdir()
    (log_dir / "meta.properties").write_bytes(b"node.id=7\ncluster.id=x\nversion=1\n")
    body = b"version: 0\ntopic_id: xWt6cg-LDx4r6BAz2rYsCg"
    for n in range(partitions):
        d = log_dir / ("topic-%d-%d" % (n // 100, n % 100))
        d.mkdir()
        fd = os.open(d / "partition.metadata", os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, body)
        os.close(fd)
    return str(log_dir)


class _NullSink(io.RawIOBase):
    def writable(self):
        return True

    def write(self, b):
        return len(b)


def _peak_while_packing(log_dir: str) -> tuple[int, int]:
    tracemalloc.start()
    try:
        trailer = write_pack(_NullSink(), [log_dir], host="h", capture_time="2026-01-01T00:00:00.000Z")
        return tracemalloc.get_traced_memory()[1], trailer["entries"]
    finally:
        tracemalloc.stop()


def test_packing_memory_does_not_grow_with_partition_count(tmp_path):
    small, large = _synthetic_tree(tmp_path, 5000), _synthetic_tree(tmp_path, 20000)
    peak_small, n_small = _peak_while_packing(small)
    peak_large, n_large = _peak_while_packing(large)
    assert (n_small, n_large) == (2 * 5000 + 2, 2 * 20000 + 2)
    assert peak_large < 3 << 20
    assert peak_large < peak_small * 1.25 + (128 << 10)  # 4x the partitions, same memory


def test_packing_a_large_metadata_segment_holds_its_bytes_once(tmp_path):
    """A 1 GiB segment must not cost ~4 GiB on a controller (all its base64 lines, their join, the encode)."""
    md = tmp_path / "kafka-logs" / "__cluster_metadata-0"
    md.mkdir(parents=True)
    size = 24 * collector.PART_BYTES + 7
    (md / "00000000000000000000.log").write_bytes(os.urandom(size))
    tracemalloc.start()
    try:
        trailer = write_pack(_NullSink(), [str(md.parent)], CollectOptions(include_metadata_log=True),
                             host="h", capture_time="2026-01-01T00:00:00.000Z")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (trailer["embedded"], trailer["parts"]) == (1, 24)
    assert peak < size + 10 * collector.PART_BYTES  # the file once, plus one line's copies in flight (~8 MiB)


# ------------------------------------------------------------------------------------------- CLI


def test_cli_writes_pack_and_prints_one_summary_line(b102, tmp_path, capsys):
    out = tmp_path / "b102.jsonl.gz"
    assert main(["--log-dir", b102[0], "--log-dir", b102[1], "--out", str(out),
                 "--capture-time", "2026-11-22T08:32:56Z", "--max-file-bytes", "1K"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kafka-recon collect: broker 102 cluster " + CLUSTER_ID)
    reader, entries = read_all(out)
    assert reader.complete and reader.header["capture_time"] == "2026-11-22T08:32:56.000Z"
    assert reader.header["options"]["max_file_bytes"] == 1024


def test_cli_directory_output_gets_an_automatic_name(b102, tmp_path, capsys):
    out_dir = tmp_path / "packs"
    out_dir.mkdir()
    assert main(["--log-dir", *b102, "--out", str(out_dir), "--capture-time", "2026-11-22T08:32:56Z"]) == 0
    names = os.listdir(out_dir)
    assert len(names) == 1 and names[0].endswith("-broker-102-20261122T083256Z.jsonl.gz")
    assert names[0].endswith(collector.PACK_SUFFIXES)
    capsys.readouterr()


def test_cli_exit_codes(b102, tmp_path, capsys):
    assert main([]) == 2
    assert main(["--log-dir", str(tmp_path / "missing"), "--out", str(tmp_path / "x.gz")]) == 2
    assert main(["--log-dir", b102[0], b102[0], "--out", str(tmp_path / "x.gz")]) == 2
    assert main(["--log-dir", b102[0], "--out", str(tmp_path / "x.gz"), "--capture-time", "yesterday"]) == 2
    assert main(["--log-dir", b102[0], "--out", str(tmp_path / "x.gz"), "--max-file-bytes", "lots"]) == 2
    assert main(["--log-dir", b102[0], "--out", str(tmp_path / "no-such-dir" / "x.gz")]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert main(["--version"]) == 0
    assert not (tmp_path / "x.gz").exists()


def test_cli_writes_to_stdout(b102, tmp_path):
    run = subprocess.run([sys.executable, "-I", str(build(tmp_path / "collector.py")), "--log-dir", b102[1], "--out", "-"],
                         capture_output=True, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    reader, entries = read_all(run.stdout)
    assert reader.complete and reader.header["broker_id"] == 102


# ----------------------------------------------------------------------------------- stand-alone file


def test_module_source_keeps_python_38_grammar_and_stdlib_imports():
    """The one file brokers run (built from the package) parses as Python 3.8 and imports only the stdlib."""
    source = build_source()
    tree = ast.parse(source, feature_version=(3, 8))
    optional = set()  # imported inside ``try: ... except ImportError``
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                                             for h in node.handlers):
            for inner in node.body:
                optional.update(_imported_modules(inner))
    imported = _imported_modules(tree) - optional
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
    assert optional == set()  # the reader and its accelerators live in udfs.pack_reader, not on brokers


def _imported_modules(tree) -> set:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            names.add(node.module.split(".")[0])
    return names


def _find_python38() -> str | None:
    """A Python 3.8 to prove the broker-side promise (PATH, else a pyenv install)."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which("python3.8"), *map(str, sorted(Path(root, "versions").glob("3.8*/bin/python3.8")))]
    for candidate in filter(None, candidates):
        try:
            probe = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                                   capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.stdout.strip() == "(3, 8)":
            return candidate
    return None


PY38 = _find_python38()


@pytest.mark.parametrize("python", [sys.executable, PY38], ids=["current", "python3.8"])
def test_stand_alone_copy_runs_without_the_project(b102, tmp_path, python):
    if python is None:
        pytest.skip("no Python 3.8 interpreter on this machine")
    alone = tmp_path / "alone"
    alone.mkdir()
    build(alone / "collector.py")
    out = tmp_path / "pack.jsonl.gz"
    run = subprocess.run([python, "-I", "-S", str(alone / "collector.py"), "--log-dir", *b102, "--out", str(out),
                          "--include-metadata-log"], capture_output=True, text=True, cwd=str(alone))
    assert run.returncode == 0, run.stderr
    reader, entries = read_all(out)
    assert reader.complete
    got = {k: (e["kind"], e["size"], e["content"]) for k, e in by_key(entries).items()}
    assert got == disk_listing(b102, include_metadata_log=True)
    with gzip.open(out) as f:
        assert json.loads(f.readline())["python_version"].startswith("3.8." if python == PY38 else "3.")


# ----------------------------------------------------------------------------------- meta.properties


def test_parse_properties_handles_comments_separators_and_continuations():
    text = (
        "#\n#Sun Nov 22 08:32:56 UTC 2026\n  ! another comment\n\n"
        "node.id=101\ncluster.id : EKJ41Lv86vWjqGSh58Dg2w\ndirectory.id dY8vSxKUoccnQSccqw4OyQ\n"
        "long=a\\\n    b\\\n  c\nescaped\\=key=v\\u0041\\tz\nempty=\nversion=1"
    )
    assert parse_properties(text) == {
        "node.id": "101",
        "cluster.id": "EKJ41Lv86vWjqGSh58Dg2w",
        "directory.id": "dY8vSxKUoccnQSccqw4OyQ",
        "long": "abc",
        "escaped=key": "vA\tz",
        "empty": "",
        "version": "1",
    }


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-11-22T08:32:56Z", "2026-11-22T08:32:56.000Z"),
        ("2026-11-22T08:32:56.5Z", "2026-11-22T08:32:56.500Z"),
        ("2026-11-22 08:32:56.123456789", "2026-11-22T08:32:56.123Z"),
        ("2026-11-22T10:32:56+02:00", "2026-11-22T08:32:56.000Z"),
        ("2026-11-22T03:02-0530", "2026-11-22T08:32:00.000Z"),
    ],
)
def test_capture_time_is_normalised_to_utc_milliseconds(text, expected):
    assert collector.parse_capture_time(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01T00:00:00Z", "2026-11-22", "2026-11-22T08:32:56+25:00"])
def test_bad_capture_times_are_refused(text):
    with pytest.raises(ValueError, match="capture time"):
        collector.parse_capture_time(text)


def test_identity_conflicts_and_zk_broker_id(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d, body in ((a, "node.id=1\ncluster.id=X\n"), (b, "node.id=2\ncluster.id=X\n"),
                    (c, "version=0\nbroker.id=3\ncluster.id=Y\n")):
        d.mkdir()
        (d / "meta.properties").write_text(body)
    conflict = collector.make_header([str(a), str(b)])
    assert conflict["broker_id"] is None and conflict["cluster_id"] == "X"
    assert any("differ" in w for w in conflict["warnings"])
    zk = collector.make_header([str(c)])
    assert (zk["broker_id"], zk["cluster_id"], zk["warnings"]) == (3, "Y", [])
