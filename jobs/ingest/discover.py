"""Driver-side discovery: find the log dirs, packed snapshots and loose files of a capture.

Cheap on purpose: it lists folders level by level and stops at every log dir (a folder holding
``meta.properties``), so it never lists a replica dir; executors walk each log dir themselves. A folder
without meta.properties that still holds Kafka's own top-level files (checkpoints, ``.lock``) is handed over
as a *headless* log dir: the driver does not descend into its replica dirs either, and ingest reports the
missing meta.properties. Loose files (dump-log text, znode dumps, ZK logs, capture.json, ...) are
classified on the executors, which can look inside them.
"""
from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Sequence, Union

from pyarrow import fs as pafs

from collector import PACK_SUFFIXES  # *.jsonl.gz, *.jsonl: a file that is no pack is decoded as loose
from udfs.log_dir_names import METADATA_TOPIC

from .filesystems import normalize_root, open_root, relative

META_PROPERTIES = "meta.properties"
# Files only Kafka writes at the top of a log dir (kafka-formats.md §1.2): a folder holding one is a log dir.
KAFKA_TOP_FILES = frozenset({
    "recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint", ".lock", ".kafka_cleanshutdown",
})
MAX_DEPTH = 32  # a symlink loop must not hang discovery
SIZE_WALK_MAX_ENTRIES = 50_000  # capture_bytes_below gives up (a large capture) after this many log-dir entries


@dataclass(frozen=True)
class WorkUnit:
    """One thing an executor ingests: a log dir, a packed snapshot, or a loose file."""

    kind: str  # log_dir | pack | file | link (a symlink: reported, not followed) | bad_name (not UTF-8: reported)
    root: str  # normalized capture root (URI or absolute local path)
    path: str  # path inside the root's filesystem
    rel_path: str  # path relative to the root, as shown in the tables
    size: int = -1  # bytes (files and packs), -1 for folders
    headless: bool = False  # a log dir without meta.properties


def unrecognised_capture(units: Sequence[WorkUnit], limit: int = 200) -> Optional[List[str]]:
    """What a capture holds when none of it is an input kafka-recon reads (no log dir, no pack, and every loose
    file classified ``other`` from its name and first bytes, as the executors would), else None. Decided on
    the driver before Spark starts; a capture of more than ``limit`` loose files is left to the ingest."""
    if any(u.kind in ("log_dir", "pack") for u in units):
        return None
    loose = [u for u in units if u.kind == "file"]
    if len(loose) > limit:
        return None
    from .loose_files import HEAD_BYTES, classify_loose

    found = []
    for unit in loose:
        shown = unit.rel_path or unit.path
        try:
            if "://" not in unit.root:  # a local root
                with open(unit.path, "rb") as f:
                    head = f.read(HEAD_BYTES)
            else:
                with open_root(unit.root)[0].open_input_stream(unit.path) as f:
                    head = f.read(HEAD_BYTES)
        except OSError:
            return None  # unreadable: the ingest quarantines it with its error
        if classify_loose(posixpath.basename(unit.path), posixpath.basename(posixpath.dirname(unit.path)),
                          head) != "other":
            return None
        found.append(f"{shown} ({unit.size} bytes)")
    return found + [f"{u.rel_path or u.path} ({u.kind})" for u in units if u.kind != "file"]


def is_pack_name(name: str) -> bool:
    return name.endswith(PACK_SUFFIXES)


def discover(captures: Union[str, Sequence[str]]) -> List[WorkUnit]:
    """Every work unit of a capture made of one or more roots (folders or single files), sorted by path."""
    roots = [captures] if isinstance(captures, str) else list(captures)
    units: List[WorkUnit] = []
    for raw_root in roots:
        root = normalize_root(raw_root)
        units.extend(_discover_root(root))
    units.sort(key=lambda u: (u.root, u.path))
    return units


def _discover_root(root: str) -> Iterable[WorkUnit]:
    fs, base = open_root(root)
    info = fs.get_file_info(base)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"capture root not found: {root}")
    if info.type == pafs.FileType.File:
        yield _file_unit(root, base, posixpath.dirname(base), info)
        return
    local = "://" not in root
    level = [base]
    for _ in range(MAX_DEPTH):
        next_level: List[str] = []
        for folder in level:
            listed = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
            children = _named(listed)
            if len(children) != len(listed):  # names pyarrow cannot decode: reported, never silently skipped
                yield from _undecodable_names(root, folder, base, local, len(listed) - len(children))
            names = {c.base_name: c for c in children}
            meta = names.get(META_PROPERTIES)
            if meta is not None and meta.type == pafs.FileType.File:
                yield WorkUnit("log_dir", root, folder, relative(folder, base))
                continue
            if folder != base and any(n in KAFKA_TOP_FILES for n in names):
                yield WorkUnit("log_dir", root, folder, relative(folder, base), headless=True)
                continue
            for child in children:
                if local and os.path.islink(child.path):  # never followed: it could lead outside the capture
                    yield WorkUnit("link", root, child.path, relative(child.path, base))
                elif child.type == pafs.FileType.Directory:
                    next_level.append(child.path)
                elif child.type == pafs.FileType.File:
                    yield _file_unit(root, child.path, base, child)
        if not next_level:
            return
        level = sorted(next_level)


def _named(children: List[pafs.FileInfo]) -> List[pafs.FileInfo]:
    """Children whose names pyarrow can decode. A non-UTF-8 name raises on ``base_name``; inside a log dir
    the executors' walk records such entries (escaped), so discovery only has to step over them."""
    out = []
    for child in children:
        try:
            _ = child.base_name
        except UnicodeDecodeError:
            continue
        out.append(child)
    return out


def _undecodable_names(root: str, folder: str, base: str, local: bool, count: int) -> Iterable[WorkUnit]:
    """One ``bad_name`` unit per entry whose name is not UTF-8 (shown with ``\\xNN`` escapes). Inside a log dir
    the walk reads such entries; at the capture's top levels they cannot be handed to Spark by name."""
    if local:
        names = [n for n in os.listdir(os.fsencode(folder)) if not _decodes(n)]
        shown = [n.decode("utf-8", "backslashreplace") for n in sorted(names)]
    else:
        shown = [f"<entry {i + 1} of {count} with an undecodable name>" for i in range(count)]
    for name in shown:
        path = posixpath.join(folder, name)
        yield WorkUnit("bad_name", root, path, relative(path, base))


def _decodes(name: bytes) -> bool:
    try:
        name.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _file_unit(root: str, path: str, base: str, info: pafs.FileInfo) -> WorkUnit:
    kind = "pack" if is_pack_name(posixpath.basename(path)) else "file"
    rel = relative(path, base) or posixpath.basename(path)
    return WorkUnit(kind, root, path, rel, size=info.size if info.size is not None else -1)


LOOSE_KINDS = ("file", "link", "bad_name")
"""Units that are single entries (grouped ``files_per_task`` to a task), not a log dir or a pack of many files."""


def plan_tasks(units: Sequence[WorkUnit], files_per_task: int, max_whole_tasks: Optional[int] = None
               ) -> List[List[WorkUnit]]:
    """Group units into Spark tasks: a log dir or a pack is a task of its own (each holds many files);
    loose files are grouped ``files_per_task`` to a task so tiny files do not pay Spark's per-task cost.

    ``max_whole_tasks``: at most this many tasks of log dirs and packs, each unit going to the task with the
    fewest bytes so far, largest first (when tasks write a file per table, fewer tasks leave fewer files)."""
    per_task = max(1, int(files_per_task))
    tasks: List[List[WorkUnit]] = []
    loose: List[WorkUnit] = []
    whole: List[WorkUnit] = []
    for unit in units:
        (loose if unit.kind in LOOSE_KINDS else whole).append(unit)
    if max_whole_tasks is not None and len(whole) > max(1, max_whole_tasks):
        groups: List[List[WorkUnit]] = [[] for _ in range(max(1, max_whole_tasks))]
        loads = [0] * len(groups)
        for unit in sorted(whole, key=lambda u: -max(u.size, 1)):
            emptiest = loads.index(min(loads))
            groups[emptiest].append(unit)
            loads[emptiest] += max(unit.size, 1)
        tasks.extend(groups)
    else:
        tasks.extend([unit] for unit in whole)
    for start in range(0, len(loose), per_task):
        tasks.append(loose[start:start + per_task])
    return tasks


def capture_bytes_below(units: Sequence[WorkUnit], limit: int,
                        max_entries: int = SIZE_WALK_MAX_ENTRIES) -> Optional[int]:
    """The bytes a run decodes, when fewer than ``limit``; else None (also when that cannot be known cheaply).

    Packs and loose files count their size, known from discovery. A local log dir is walked (links not followed,
    at most ``max_entries`` entries, or None): its metadata-log copy counts its files' sizes, as ingest decodes
    them whole, and the rest nothing, as data segments are read for batch headers only (a simulated 3-broker tree
    is 49 GB by size, most of it sparse segments and preallocated indexes). A log dir on a remote filesystem is
    not walked (None). What it is for: the JVM's flags, chosen before the JVM starts (``spark.small_capture_jvm_*``).
    """
    total, entries = 0, 0
    for unit in units:
        if unit.size >= 0:
            total += unit.size
        elif unit.kind == "log_dir":
            if "://" in unit.root:
                return None
            for size in _decoded_sizes_under(unit.path):
                total, entries = total + size, entries + 1
                if total >= limit or entries >= max_entries:
                    return None
        if total >= limit:
            return None
    return total


def _decoded_sizes_under(log_dir: str) -> Iterator[int]:
    """One number per entry under ``log_dir``: a metadata-log file's size, else 0 (depth first, links not
    followed; an unreadable folder is skipped here and reported by ingest)."""
    stack = [(log_dir, False)]
    while stack:
        folder, metadata_log = stack.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, metadata_log or entry.name.startswith(METADATA_TOPIC + "-")))
                        yield 0
                    elif metadata_log and entry.is_file(follow_symlinks=False):  # a link is reported, not read
                        yield entry.stat(follow_symlinks=False).st_size
                    else:
                        yield 0
        except OSError:
            continue
