#!/usr/bin/env python3
"""kafka-recon broker-side collector and the packed snapshot ("pack") format, version 1.

One stand-alone, stdlib-only file (Python >= 3.8): copy it to a broker and run ::

    python3 collector.py --log-dir /var/lib/kafka/data-a /var/lib/kafka/data-b --out /tmp/broker.jsonl.gz

or, from the project, ``kafka-recon collect --log-dir DIR... --out FILE``. The collector lists every entry of
every log dir given (the log dir itself, its children, and the children of each child directory: depth 2) and
embeds the bytes of the small metadata files into one gzip file, so that Spark reads hundreds of packs instead
of millions of small files. The same file holds a raw-tree walker (``walk_log_dirs``) that yields exactly the
entries the pack would hold, so ingest of a raw tree and ingest of its pack give identical rows by construction.
Packs are read by :mod:`udfs.pack_reader` (with the decoders, on the executors; not needed on a broker).

Safety on the broker (why it looks the way it does)
---------------------------------------------------
* Read-only: files and directories are opened ``O_RDONLY`` (plus ``O_NOATIME`` when the kernel permits it,
  ``O_NOFOLLOW``, ``O_NONBLOCK`` so a FIFO swapped in can never block, ``O_CLOEXEC``). Nothing is ever
  created inside a log dir; ``--out`` inside (or equal to) a log dir is refused before anything is written.
* Kafka's ``.lock`` is never opened (it is listed like any other entry).
* Symlinks below a log dir are recorded as ``kind: symlink`` with their target text and never followed. On
  POSIX the walk is descriptor-relative (``openat``/``fstatat`` with ``O_NOFOLLOW``), so even a directory
  swapped for a symlink between listing and descending is not followed. Only the log dir paths given on the
  command line are resolved the usual way (an operator's ``/kafka -> /mnt/disk1`` link is fine).
* Files that vanish, are replaced, grow or shrink during the walk are recorded with a flag, never an error.
* Bounded memory: entries are streamed to the output as they are found (directory order, no sorting, no list
  of entries), so 100k+ partitions cost the same memory as 10. An embedded file is held in memory once; its
  size is capped (``--max-file-bytes``, ``--max-metadata-file-bytes``); a file over its cap is listed with
  the flag ``over_cap`` and its bytes are not read (a 10 GiB sparse pre-allocated index costs one ``lstat``).

Which bytes are embedded
------------------------
* In the log dir: ``meta.properties``, ``.kafka_cleanshutdown``, ``bootstrap.checkpoint`` and every
  ``*-checkpoint`` file (recovery-point, log-start, replication and cleaner offset checkpoints).
* In any child directory: ``partition.metadata``, ``leader-epoch-checkpoint``, ``quorum-state`` and producer-state
  snapshots ``<20 digits>.snapshot``.
* With ``--include-metadata-log``, in ``__cluster_metadata-0`` only: segments ``<20 digits>.log`` and snapshots
  ``<20 digits>-<10 digits>.checkpoint``, under their own cap.
Everything else (data segments, indexes, ``.lock`` ...) is listed only. Data segments that decide what the broker
does at its next start get a *segment summary* instead of their bytes (below): the newest segment of every
partition dir, and every segment from the one holding the newest producer-state snapshot's offset on.

The pack format, version 1 (public; bump ``version`` only for incompatible changes)
-----------------------------------------------------------------------------------
A pack is a gzip stream (RFC 1952; several concatenated members are allowed) of UTF-8 JSON lines, each line
one JSON object terminated by ``\\n``; an uncompressed file of the same lines is also accepted by the reader.
Every object has ``"rec"``, the record type. Readers skip record types they do not know and ignore keys they
do not know; new optional keys may appear without a version bump. Suggested name: ``*.jsonl.gz`` (Spark's and
every other JSON-lines reader then decompress it transparently). The lines, in order:

1. ``{"rec":"header"}`` exactly once, first: ``format`` = ``"kafka-recon-pack"``, ``version`` = 1,
   ``collector_version``, ``python_version``, ``broker_id`` (int or null; ``node.id``, else ``broker.id``, of the
   log dirs' ``meta.properties``, null when they disagree or none has one), ``cluster_id`` (string or null),
   ``log_dir_ids`` ({log dir: ``directory.id`` or null}), ``host`` (``socket.gethostname()``), ``capture_time``
   (UTC ISO-8601 with milliseconds and ``Z``), ``log_dirs`` (list of the log dir paths as given), ``options``
   (the walk options), ``warnings`` (list of strings).
2. ``{"rec":"entry"}`` once per entry of the walk, with
   ``log_dir`` (one of the header's ``log_dirs``), ``path`` (relative to ``log_dir``, ``/``-separated, at most
   two components; ``""`` is the log dir itself), ``kind`` (``dir``, ``file``, ``symlink`` or ``other`` =
   device, FIFO or socket), and when known: ``size`` (apparent size, ``st_size``), ``alloc`` (allocated bytes,
   ``st_blocks * 512``, smaller than ``size`` for sparse files), ``mtime_ms``, ``mode`` (``st_mode``),
   ``target`` (symlink target text, symlinks only), ``flags`` (list of strings below), ``error`` (text of the
   OS error behind a flag), and for an embedded file (``kind`` = ``file`` only): ``content_size`` (bytes),
   ``content_b64`` (standard base64 of the bytes, or of their first part) and ``content_parts`` (default 1).
   When ``content_parts`` = N > 1, the entry line is followed by N-1 lines ``{"rec":"part","content_b64":...}``
   carrying the rest in order (the writer cuts at 1 MiB, so no line is longer than ~1.4 MiB whatever the file
   size, which lets a reader bound its line length). A data segment may carry ``segment`` (a segment summary,
   read from its 61-byte batch headers only, never its records): ``next_offset`` (the offset after the last
   batch, as Kafka's ``LogSegment.readNextOffset`` sees the data; null when not reached), ``batches``,
   ``valid_bytes`` (where the scan stopped), ``end`` (``eof``, ``zeros`` = a pre-allocated zero tail,
   ``corrupt`` = a batch that cannot be framed, ``cap`` = stopped at ``segment_scan_bytes``, ``unreadable``),
   ``markers`` (``[producer id, producer epoch, offset]`` of the last transaction marker (control batch) of each
   producer, at most ``MAX_SUMMARY_MARKERS``) and ``index_last`` (``[relative offset, position]`` of the last
   entry of the segment's ``.index``, or null). Order: post-order per directory: a directory's children
   come before the directory's own entry, the log dir's entry (path ``""``) comes last for that log dir; the
   log dir's files (checkpoints) come before its directories; otherwise the order among siblings is the
   filesystem's.
   Flags: ``over_cap`` (embeddable but larger than the cap: not embedded), ``vanished`` (gone between listing
   and stat/open/read), ``unreadable`` (stat/open/read/list failed, see ``error``), ``incomplete`` (listing of
   this directory broke off part way), ``changed_during_read`` (replaced, resized or changed type between
   listing and read; ``size``/``mtime_ms`` then describe the file that was read), ``non_utf8_name`` (the name
   is not UTF-8; ``path`` holds it with ``\\xNN`` escapes).
3. ``{"rec":"trailer"}`` exactly once, last: ``entries`` and ``parts`` (line counts, so truncation is
   detectable), ``dirs``, ``files``, ``symlinks``, ``other``, ``embedded``, ``embedded_bytes``, ``flagged``,
   ``log_dirs_unreadable``, ``finish_time``, ``elapsed_ms``.

Filesystem protocol: the walker talks to a tiny object (``open_root``, ``root_stat``, ``scan``, ``open_dir``,
``readlink``, ``read``, ``close``; see ``LocalFileSystem``) so ingest can plug in an adapter (e.g. pyarrow.fs
for ``s3://``) and get the same entries from a raw tree anywhere.
"""
from __future__ import annotations

import argparse
import base64
import datetime
import errno
import gzip
import json
import os
import re
import socket
import stat
import struct
import sys
import time
from bisect import bisect_right
from typing import Any, BinaryIO, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

COLLECTOR_VERSION = "1.0.0"
FORMAT_NAME = "kafka-recon-pack"
FORMAT_VERSION = 1
# File names a pack is written under (``collect`` auto-names ``*.jsonl.gz``; a gunzipped pack is ``*.jsonl``).
# Other JSON-lines files share these suffixes: a discoverer tries ``read_pack`` and treats ``bad_header`` as
# "not a pack".
PACK_SUFFIXES = (".jsonl.gz", ".jsonl")

KIND_DIR, KIND_FILE, KIND_SYMLINK, KIND_OTHER = "dir", "file", "symlink", "other"
ENTRY_KINDS = frozenset({KIND_DIR, KIND_FILE, KIND_SYMLINK, KIND_OTHER})

# Entry flags (stable strings: tables key on them).
FLAG_OVER_CAP = "over_cap"
FLAG_VANISHED = "vanished"
FLAG_UNREADABLE = "unreadable"
FLAG_INCOMPLETE = "incomplete"
FLAG_CHANGED = "changed_during_read"
FLAG_NON_UTF8 = "non_utf8_name"

# The keys of every entry dict, in order; the walker and the reader both yield exactly these.
ENTRY_FIELDS = ("log_dir", "path", "kind", "size", "alloc", "mtime_ms", "mode", "target", "content", "flags", "error",
                "segment")

METADATA_DIR = "__cluster_metadata-0"
LOCK_FILE = ".lock"
PART_BYTES = 1 << 20  # raw bytes per content line; keeps every pack line short whatever the file size

DEFAULT_MAX_FILE_BYTES = 1 << 20
# Kafka's metadata.log.segment.bytes defaults to 1 GiB, and a 4M-partition cluster's snapshot is ~170 MB: the
# cap must let both through (the file is held in memory once; lines stay short whatever its size).
DEFAULT_MAX_METADATA_FILE_BYTES = 1 << 30
DEFAULT_COMPRESS_LEVEL = 3
# A segment summary reads 61 bytes per batch and seeks over the rest: a whole 1 GiB segment (Kafka's
# log.segment.bytes default) of 16 KiB batches is ~65k small reads.
DEFAULT_SEGMENT_SCAN_BYTES = 1 << 30
MAX_SUMMARY_MARKERS = 100000

_TOP_LEVEL_EMBED = frozenset({"meta.properties", ".kafka_cleanshutdown", "bootstrap.checkpoint"})
_PARTITION_EMBED = frozenset({"partition.metadata", "leader-epoch-checkpoint", "quorum-state"})
_PRODUCER_SNAPSHOT = re.compile(r"[0-9]{20}\.snapshot\Z")
_METADATA_SEGMENT = re.compile(r"[0-9]{20}\.log\Z")
_METADATA_SNAPSHOT = re.compile(r"[0-9]{20}-[0-9]{10}\.checkpoint\Z")
_DATA_SEGMENT = _METADATA_SEGMENT

_O_NOATIME = getattr(os, "O_NOATIME", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


# --------------------------------------------------------------------------------------------- options


class CollectOptions(NamedTuple):
    """What the walk embeds. Recorded in the pack header (``options``)."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    include_metadata_log: bool = False
    max_metadata_file_bytes: int = DEFAULT_MAX_METADATA_FILE_BYTES
    # how far into one data segment the summary's header scan reads (0: no segment summaries)
    segment_scan_bytes: int = DEFAULT_SEGMENT_SCAN_BYTES

    def checked(self) -> "CollectOptions":
        for name in ("max_file_bytes", "max_metadata_file_bytes", "segment_scan_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError("%s must be an int >= 0, got %r (%s)" % (name, value, type(value).__name__))
        if not isinstance(self.include_metadata_log, bool):
            raise ValueError("include_metadata_log must be a bool, got %r" % (self.include_metadata_log,))
        return self


def embed_cap(parent: Optional[str], name: str, options: CollectOptions) -> Optional[int]:
    """Size cap for a file whose bytes are embedded, or None when the file is only listed.

    ``parent`` is None for a file directly in the log dir, else the name of the directory holding it.
    """
    if name == LOCK_FILE:
        return None
    if parent is None:
        if name in _TOP_LEVEL_EMBED or name.endswith("-checkpoint"):
            return options.max_file_bytes
        return None
    if name in _PARTITION_EMBED or _PRODUCER_SNAPSHOT.match(name):
        return options.max_file_bytes
    if (
        options.include_metadata_log
        and parent == METADATA_DIR
        and (_METADATA_SEGMENT.match(name) or _METADATA_SNAPSHOT.match(name))
    ):
        return options.max_metadata_file_bytes
    return None


# ----------------------------------------------------------------------------------- filesystem protocol


class Stat(NamedTuple):
    """One directory entry as a filesystem adapter reports it (never following symlinks).

    ``flag``/``error`` are set when the entry was listed but could not be stat'ed (``vanished`` or
    ``unreadable``); ``kind`` then comes from the directory listing alone.
    """

    name: str
    kind: str
    size: Optional[int] = None
    alloc: Optional[int] = None
    mtime_ms: Optional[int] = None
    mode: Optional[int] = None
    flag: Optional[str] = None
    error: Optional[str] = None


class NotRegularFile(OSError):
    """The name no longer refers to a regular file when it is opened (swapped for a FIFO, device, dir ...)."""


def _kind_of_mode(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return KIND_DIR
    if stat.S_ISREG(mode):
        return KIND_FILE
    if stat.S_ISLNK(mode):
        return KIND_SYMLINK
    return KIND_OTHER


def _stat_from_os(name: str, st: os.stat_result) -> Stat:
    blocks = getattr(st, "st_blocks", None)
    return Stat(
        name,
        _kind_of_mode(st.st_mode),
        st.st_size,
        blocks * 512 if blocks is not None else None,
        st.st_mtime_ns // 1000000,
        st.st_mode,
    )


def oserror_text(exc: BaseException) -> str:
    """Short, path-free description of an OS error: ``Permission denied (EACCES)``."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return "%s (%s)" % (exc.strerror or os.strerror(exc.errno), errno.errorcode.get(exc.errno, exc.errno))
    return str(exc) or type(exc).__name__


def _flag_of(exc: BaseException) -> str:
    return FLAG_VANISHED if isinstance(exc, FileNotFoundError) else FLAG_UNREADABLE


def _scandir_stat(entry: "os.DirEntry[str]") -> Stat:
    try:
        return _stat_from_os(entry.name, entry.stat(follow_symlinks=False))
    except OSError as exc:
        # Listed, then gone or unreadable: the kind comes from d_type (is_* never raise).
        if entry.is_symlink():
            kind = KIND_SYMLINK
        elif entry.is_dir(follow_symlinks=False):
            kind = KIND_DIR
        elif entry.is_file(follow_symlinks=False):
            kind = KIND_FILE
        else:
            kind = KIND_OTHER
        return Stat(entry.name, kind, flag=_flag_of(exc), error=oserror_text(exc))


def _read_capped(fd: int, size_hint: int, cap: int) -> Optional[bytes]:
    """Read a whole file up to ``cap`` bytes; None when it holds more than ``cap``."""
    limit = cap + 1
    chunks: List[bytes] = []
    total = 0
    want = min(limit, max(size_hint, 0) + 1)  # +1 sees growth (and EOF) without a second call for most files
    while total < limit:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total == size_hint < want:  # exactly fstat's size and a short read: EOF, no confirming read
            break
        want = min(limit - total, max(4096, total))
    if total > cap:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class LocalFileSystem:
    """Default adapter: descriptor-relative walk on POSIX (``openat``/``fstatat``), read-only, no symlink followed.

    A handle is an open directory descriptor. Every method raises ``OSError`` on failure; the walker turns
    those into flags.
    """

    def __init__(self) -> None:
        self._noatime = _O_NOATIME

    def _open(self, name: str, flags: int, dir_fd: Optional[int]) -> int:
        if self._noatime:
            try:
                return os.open(name, flags | self._noatime, dir_fd=dir_fd)
            except PermissionError as exc:  # O_NOATIME needs file ownership or CAP_FOWNER: drop it for good
                if exc.errno != errno.EPERM:
                    raise
                self._noatime = 0
        return os.open(name, flags, dir_fd=dir_fd)

    def open_root(self, path: str) -> int:
        return self._open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC, None)

    def root_stat(self, handle: int) -> Stat:
        return _stat_from_os("", os.fstat(handle))

    def scan(self, handle: int) -> Iterator[Stat]:
        with os.scandir(handle) as entries:
            for entry in entries:
                yield _scandir_stat(entry)

    def open_dir(self, handle: int, name: str) -> int:
        return self._open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, handle)

    def readlink(self, handle: int, name: str) -> str:
        return os.readlink(name, dir_fd=handle)

    def read(self, handle: int, name: str, cap: int) -> Tuple[Optional[bytes], Stat]:
        """Bytes of a regular file (None when over ``cap``) and its stat taken on the open descriptor."""
        fd = self._open(name, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, handle)
        try:
            return _read_open_file(fd, name, cap)
        finally:
            os.close(fd)

    def open_random(self, handle: int, name: str) -> "RandomReader":
        """A regular file opened for reads at offsets (segment summaries)."""
        fd = self._open(name, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, handle)
        return RandomReader(fd)

    def close(self, handle: int) -> None:
        os.close(handle)


class RandomReader:
    """``read_at(offset, n)`` over an open descriptor of a regular file; ``size`` from fstat at open."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFile("not a regular file when opened (%s)" % _kind_of_mode(st.st_mode))
        except BaseException:
            os.close(fd)
            raise
        self.size = st.st_size

    def read_at(self, offset: int, n: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self.fd, n, offset)
        os.lseek(self.fd, offset, os.SEEK_SET)
        return os.read(self.fd, n)

    def close(self) -> None:
        os.close(self.fd)


def _read_open_file(fd: int, name: str, cap: int) -> Tuple[Optional[bytes], Stat]:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile("not a regular file when opened (%s)" % _kind_of_mode(st.st_mode))
    info = _stat_from_os(name, st)
    if st.st_size > cap:
        return None, info
    return _read_capped(fd, st.st_size, cap), info


class PathFileSystem(LocalFileSystem):
    """Path-based adapter for platforms without ``openat`` (and the template for remote adapters).

    A handle is the directory path. Symlinks are still never followed (``lstat`` before descending,
    ``O_NOFOLLOW`` on open), but a swap between the check and the use is not excluded as on POSIX.
    """

    def open_root(self, path: str) -> str:  # type: ignore[override]
        if not stat.S_ISDIR(os.stat(path).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        return path

    def root_stat(self, handle: str) -> Stat:  # type: ignore[override]
        return _stat_from_os("", os.stat(handle))

    def scan(self, handle: str) -> Iterator[Stat]:  # type: ignore[override]
        with os.scandir(handle) as entries:
            for entry in entries:
                yield _scandir_stat(entry)

    def open_dir(self, handle: str, name: str) -> str:  # type: ignore[override]
        path = os.path.join(handle, name)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        return path

    def readlink(self, handle: str, name: str) -> str:  # type: ignore[override]
        return os.readlink(os.path.join(handle, name))

    def read(self, handle: str, name: str, cap: int) -> Tuple[Optional[bytes], Stat]:  # type: ignore[override]
        path = os.path.join(handle, name)
        fd = self._open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, None)
        try:
            return _read_open_file(fd, name, cap)
        finally:
            os.close(fd)

    def open_random(self, handle: str, name: str) -> RandomReader:  # type: ignore[override]
        path = os.path.join(handle, name)
        return RandomReader(self._open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, None))

    def close(self, handle: str) -> None:  # type: ignore[override]
        return None


def default_fs() -> LocalFileSystem:
    """The descriptor-relative adapter where the platform supports it, else the path-based one."""
    if (
        os.open in os.supports_dir_fd
        and os.readlink in os.supports_dir_fd
        and os.scandir in os.supports_fd
        and _O_DIRECTORY
        and _O_NOFOLLOW
    ):
        return LocalFileSystem()
    return PathFileSystem()


# ------------------------------------------------------------------------------------------ segment summaries

# Kafka's magic-2 batch header (DefaultRecordBatch): baseOffset, length, partitionLeaderEpoch, magic, crc,
# attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, count.
_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
_LOG_OVERHEAD = 12           # baseOffset + length: every magic's entry starts with them
_V2_MIN_LENGTH = _BATCH_HEADER.size - _LOG_OVERHEAD
_LEGACY_MIN_LENGTH = 14      # LegacyRecord.RECORD_OVERHEAD_V0
_ATTR_TRANSACTIONAL, _ATTR_CONTROL = 0x10, 0x20
_INDEX_ENTRY = struct.Struct(">ii")  # OffsetIndex entry: relative offset, physical position
_INDEX_HEAD_SLOTS = 512               # one 4 KiB read
_UNUSED_SLOT = bytes(_INDEX_ENTRY.size)


def last_index_entry(read_at: Any, size: int) -> Optional[Tuple[int, int]]:
    """The last used entry of an offset index (``[relative offset, position]``), or None when it has none.

    A running broker pre-allocates the active segment's index (10 MiB of zeros by default); used entries are a
    prefix, and no used entry is ``(0, 0)`` (the first entry follows ``index.interval.bytes`` of data), so a
    binary search over 8-byte slots finds the end in ~20 reads instead of reading the file.
    """
    slots = size // _INDEX_ENTRY.size
    if slots <= 0:
        return None

    def slot(i: int) -> Tuple[int, int]:
        data = read_at(i * _INDEX_ENTRY.size, _INDEX_ENTRY.size)
        return _INDEX_ENTRY.unpack(data) if len(data) == _INDEX_ENTRY.size else (0, 0)

    last = slot(slots - 1)
    if last != (0, 0):
        return last
    # most active segments hold few entries: the first block usually holds the end (one read)
    head = read_at(0, min(slots, _INDEX_HEAD_SLOTS) * _INDEX_ENTRY.size)
    full = len(head) // _INDEX_ENTRY.size
    end = head.find(_UNUSED_SLOT)
    while end != -1 and end % _INDEX_ENTRY.size:  # zero bytes straddling two used entries
        end = head.find(_UNUSED_SLOT, end + 1)
    if end != -1 and end // _INDEX_ENTRY.size < full:
        return _INDEX_ENTRY.unpack_from(head, end - _INDEX_ENTRY.size) if end else None
    lo, hi = full, slots - 1  # invariant: slots < lo are used, slots >= hi are unused
    while lo < hi:
        mid = (lo + hi) // 2
        if slot(mid) != (0, 0):
            lo = mid + 1
        else:
            hi = mid
    return slot(lo - 1) if lo > 0 else None


def summarize_segment(read_at: Any, size: int, scan_bytes: int = DEFAULT_SEGMENT_SCAN_BYTES) -> Dict[str, Any]:
    """What a data segment says about the partition's end, from batch headers only (records never read).

    ``next_offset`` is the offset after the last batch that frames; ``markers`` the last transaction marker
    (control batch) per producer id. The scan stops at the end of the file, at a zero tail (a pre-allocated
    segment), at a batch that cannot be framed (Kafka's recovery would truncate there), or after
    ``scan_bytes``.
    """
    position, batches, next_offset, end = 0, 0, None, "eof"
    markers: Dict[int, Tuple[int, int]] = {}
    while position + _LOG_OVERHEAD <= size:
        if position >= scan_bytes:
            end = "cap"
            break
        head = read_at(position, _BATCH_HEADER.size)
        if len(head) < _LOG_OVERHEAD:
            end = "corrupt"
            break
        base_offset, length = struct.unpack_from(">qi", head)
        if base_offset == 0 and length == 0:
            end = "zeros"
            break
        magic = head[16] if len(head) > 16 else -1
        minimum = _V2_MIN_LENGTH if magic >= 2 else _LEGACY_MIN_LENGTH
        if length < minimum or position + _LOG_OVERHEAD + length > size or magic < 0 or magic > 2:
            end = "corrupt"
            break
        if magic == 2:
            if len(head) < _BATCH_HEADER.size:
                end = "corrupt"
                break
            values = _BATCH_HEADER.unpack(head)
            attributes, last_delta, producer_id, producer_epoch = values[5], values[6], values[9], values[10]
            next_offset = base_offset + last_delta + 1
            if attributes & _ATTR_CONTROL and attributes & _ATTR_TRANSACTIONAL and producer_id >= 0:
                markers[producer_id] = (producer_epoch, base_offset)
        else:
            next_offset = base_offset + 1  # a legacy entry's offset is its last (inner) offset
        batches += 1
        position += _LOG_OVERHEAD + length
    listed = sorted(markers.items())[-MAX_SUMMARY_MARKERS:]
    return {"next_offset": next_offset, "batches": batches, "valid_bytes": position, "end": end,
            "markers": [[pid, epoch, offset] for pid, (epoch, offset) in listed], "index_last": None, "error": None}


def summary_targets(names: Iterable[str]) -> Tuple[int, ...]:
    """Base offsets of the data segments worth a summary: the newest, and every one from the segment holding
    the newest producer-state snapshot's offset on (transaction markers after that snapshot live there)."""
    bases = sorted(int(n[:20]) for n in names if _DATA_SEGMENT.match(n))
    if not bases:
        return ()
    snapshots = [int(n[:20]) for n in names if _PRODUCER_SNAPSHOT.match(n)]
    first = bases[-1]
    if snapshots:
        newest = max(snapshots)
        holding = [b for b in bases if b <= newest]
        first = holding[-1] if holding else bases[0]
    return tuple(b for b in bases if b >= first)


def segment_summary(fs: Any, handle: Any, name: str, size: Optional[int], index_size: Optional[int],
                    scan_bytes: int) -> Dict[str, Any]:
    """``summarize_segment`` of one file through the filesystem adapter; trouble becomes ``end: unreadable``."""
    opener = getattr(fs, "open_random", None)
    if opener is None:
        return _unread_summary("the filesystem adapter cannot read at offsets")
    try:
        reader = opener(handle, name)
        try:
            summary = summarize_segment(reader.read_at, reader.size, scan_bytes)
        finally:
            reader.close()
        if index_size:
            index = opener(handle, name[:-len(".log")] + ".index")
            try:
                found = last_index_entry(index.read_at, index.size)
            finally:
                index.close()
            summary["index_last"] = list(found) if found is not None else None
    except OSError as exc:
        return _unread_summary(oserror_text(exc))
    return summary


def _unread_summary(error: str) -> Dict[str, Any]:
    return {"next_offset": None, "batches": 0, "valid_bytes": 0, "end": "unreadable", "markers": [],
            "index_last": None, "error": error}


# ------------------------------------------------------------------------------------------------ walker


def _entry(
    log_dir: str,
    path: str,
    kind: str,
    size: Optional[int] = None,
    alloc: Optional[int] = None,
    mtime_ms: Optional[int] = None,
    mode: Optional[int] = None,
    target: Optional[str] = None,
    content: Optional[bytes] = None,
    flags: Optional[List[str]] = None,
    error: Optional[str] = None,
) -> Dict[str, Any]:
    return {
        "log_dir": log_dir,
        "path": path,
        "kind": kind,
        "size": size,
        "alloc": alloc,
        "mtime_ms": mtime_ms,
        "mode": mode,
        "target": target,
        "content": content,
        "flags": flags if flags is not None else [],
        "error": error,
        "segment": None,
    }


def _display_name(name: str, flags: List[str]) -> str:
    """The name as valid UTF-8 text; undecodable bytes become ``\\xNN`` and the entry is flagged."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        flags.append(FLAG_NON_UTF8)
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class _Walker:
    def __init__(self, fs: LocalFileSystem, options: CollectOptions) -> None:
        self.fs = fs
        self.options = options

    def log_dir(self, log_dir: str) -> Iterator[Dict[str, Any]]:
        fs = self.fs
        try:
            root = fs.open_root(log_dir)
        except OSError as exc:
            yield _entry(log_dir, "", KIND_DIR, flags=[_flag_of(exc)], error=oserror_text(exc))
            return
        try:
            flags: List[str] = []
            error = None
            try:
                info: Optional[Stat] = fs.root_stat(root)
            except OSError as exc:
                info, error = None, oserror_text(exc)
                flags.append(_flag_of(exc))
            # Two listings: the log dir's own files (checkpoints) first, then its directories. A running broker
            # only moves checkpoint offsets and log ends forward, so a checkpoint read before the segments it
            # describes is never ahead of them because of the walk itself (restart-hazard checks rely on it).
            files_seen = set()
            try:
                for st in fs.scan(root):
                    if st.flag is not None or st.kind != KIND_DIR:
                        files_seen.add(st.name)
                        yield from self._child(root, log_dir, st)
                for st in fs.scan(root):
                    if st.name not in files_seen:  # a directory (or what replaced one since the first listing)
                        yield from self._child(root, log_dir, st)
            except OSError as exc:
                flags.append(FLAG_INCOMPLETE)
                error = oserror_text(exc)
            if info is None:
                yield _entry(log_dir, "", KIND_DIR, flags=flags, error=error)
            else:
                yield _entry(log_dir, "", KIND_DIR, info.size, info.alloc, info.mtime_ms, info.mode,
                             flags=flags, error=error)
        finally:
            fs.close(root)

    def _child(self, root: Any, log_dir: str, st: Stat) -> Iterator[Dict[str, Any]]:
        flags: List[str] = []
        path = _display_name(st.name, flags)
        if st.flag is not None or st.kind != KIND_DIR:
            yield self._leaf(root, log_dir, None, path, st, flags)
            return
        fs = self.fs
        error = None
        try:
            handle = fs.open_dir(root, st.name)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                flags.append(FLAG_VANISHED)
            elif exc.errno in (errno.ELOOP, errno.ENOTDIR):  # replaced by a symlink or a file since listing
                flags.append(FLAG_CHANGED)
            else:
                flags.append(FLAG_UNREADABLE)
            yield _entry(log_dir, path, KIND_DIR, st.size, st.alloc, st.mtime_ms, st.mode,
                         flags=flags, error=oserror_text(exc))
            return
        try:
            try:
                children = list(fs.scan(handle))  # a replica dir holds a few files per segment
            except OSError as exc:
                children = []
                flags.append(FLAG_INCOMPLETE)
                error = oserror_text(exc)
            summarize = self._summaries_for(st.name, children)
            for sub in children:
                sub_flags: List[str] = []
                sub_path = path + "/" + _display_name(sub.name, sub_flags)
                entry = self._leaf(handle, log_dir, st.name, sub_path, sub, sub_flags)
                if sub.name in summarize and entry["kind"] == KIND_FILE and not entry["flags"]:
                    entry["segment"] = segment_summary(fs, handle, sub.name, sub.size, summarize[sub.name],
                                                       self.options.segment_scan_bytes)
                yield entry
        finally:
            fs.close(handle)
        yield _entry(log_dir, path, KIND_DIR, st.size, st.alloc, st.mtime_ms, st.mode, flags=flags, error=error)

    def _summaries_for(self, dir_name: str, children: List[Stat]) -> Dict[str, Optional[int]]:
        """Data segments of a replica dir that get a summary -> the size of their ``.index`` (None: none)."""
        if dir_name == METADATA_DIR or self.options.segment_scan_bytes <= 0:
            return {}
        files = {c.name: c for c in children if c.kind == KIND_FILE and c.flag is None}
        out: Dict[str, Optional[int]] = {}
        for base in summary_targets(files):
            name = "%020d.log" % base
            index = files.get("%020d.index" % base)
            out[name] = index.size if index is not None else None
        return out

    def _leaf(
        self, handle: Any, log_dir: str, parent: Optional[str], path: str, st: Stat, flags: List[str]
    ) -> Dict[str, Any]:
        """Entry for anything not descended into: files, symlinks, others, and directories at depth 2."""
        if st.flag is not None:
            flags.append(st.flag)
            return _entry(log_dir, path, st.kind, flags=flags, error=st.error)
        if st.kind == KIND_SYMLINK:
            try:
                target = _display_name(self.fs.readlink(handle, st.name), [])
            except OSError as exc:
                flags.append(_flag_of(exc))
                return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode,
                              flags=flags, error=oserror_text(exc))
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode, target, flags=flags)
        cap = embed_cap(parent, st.name, self.options) if st.kind == KIND_FILE else None
        if cap is None:
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode, flags=flags)
        if st.size is not None and st.size > cap:
            flags.append(FLAG_OVER_CAP)
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode, flags=flags)
        try:
            content, now = self.fs.read(handle, st.name, cap)
        except NotRegularFile as exc:
            flags.append(FLAG_CHANGED)
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode,
                          flags=flags, error=str(exc))
        except OSError as exc:
            flags.append(_flag_of(exc))
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode,
                          flags=flags, error=oserror_text(exc))
        changed = now.size != st.size or now.mtime_ms != st.mtime_ms
        if content is None:  # over the cap when opened, or grew past it while being read
            changed = changed or (now.size is not None and now.size <= cap)
        elif len(content) != now.size:
            changed = True
        if changed:
            flags.append(FLAG_CHANGED)
        if content is None:
            flags.append(FLAG_OVER_CAP)
        return _entry(log_dir, path, st.kind, now.size, now.alloc, now.mtime_ms, now.mode, None, content, flags)


def walk_log_dirs(
    log_dirs: Iterable[str], options: Optional[CollectOptions] = None, fs: Optional[LocalFileSystem] = None
) -> Iterator[Dict[str, Any]]:
    """Yield one entry dict (keys ``ENTRY_FIELDS``) per entry of each log dir, exactly as a pack would hold it.

    Entries are produced lazily in post-order (children before their directory, the log dir last), so memory
    does not grow with the number of partitions. Filesystem trouble becomes entry flags, never an exception.

    Example::

        for e in walk_log_dirs(["/var/lib/kafka/data"]):
            if e["path"].endswith("/partition.metadata"):
                print(e["path"], e["content"])

    :param log_dirs: log dir paths (as the adapter understands them); each is recorded as given.
    :param options: what to embed; defaults to ``CollectOptions()``.
    :param fs: filesystem adapter (see ``LocalFileSystem``); defaults to ``default_fs()``.
    """
    walker = _Walker(fs if fs is not None else default_fs(), (options or CollectOptions()).checked())
    for log_dir in log_dirs:
        yield from walker.log_dir(log_dir)


# ----------------------------------------------------------------------------- meta.properties and header


def parse_properties(text: str) -> Dict[str, str]:
    """``java.util.Properties.load`` of ``text``: the keys and values up to a malformed ``\\uxxxx`` (where Java
    stops with IllegalArgumentException)."""
    result: Dict[str, str] = {}
    try:
        for _, key, value in java_properties(text):
            result[key] = value
    except MalformedProperty:
        pass
    return result


class MalformedProperty(ValueError):
    """``Malformed \\uxxxx encoding.``: Java's only ``Properties.load`` failure; ``line`` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def java_properties(text: str) -> Iterator[Tuple[int, str, str]]:
    """``Properties.load(Reader)`` as the JDK reads it (tested against JDK 17 vectors in tests/fixtures/jdk-oracle):
    (1-based line, key, value) per logical line; raises :class:`MalformedProperty` where Java throws."""
    for number, logical in _logical_lines(text):
        key_end, value_start = _split_key_value(logical)
        try:
            yield number, _load_convert(logical[:key_end]), _load_convert(logical[value_start:])
        except ValueError as exc:
            raise MalformedProperty(str(exc), number) from None


def _logical_lines(text: str) -> Iterable[Tuple[int, str]]:
    """``Properties.LineReader.readLine``: yields (1-based line of the first char, logical line)."""
    line_starts = [0] + [m.end() for m in _NATURAL_EOL.finditer(text)]
    pos, end = 0, len(text)
    while True:
        buf: List[str] = []
        first_pos = -1
        skip_ws = True
        appended_line_begin = False
        preceding_backslash = False
        while True:
            if pos >= end:
                if buf:
                    yield bisect_right(line_starts, first_pos), "".join(buf[:-1] if preceding_backslash else buf)
                return
            c = text[pos]
            pos += 1
            if skip_ws:
                if c in " \t\f":
                    continue
                if not appended_line_begin and c in "\r\n":
                    continue
                skip_ws = False
                appended_line_begin = False
            if not buf and c in "#!":  # a comment: skip to the end of the natural line
                while pos < end and text[pos] not in "\r\n":
                    pos += 1
                skip_ws = True
                continue
            if c not in "\r\n":
                if not buf:
                    first_pos = pos - 1
                buf.append(c)
                preceding_backslash = (not preceding_backslash) if c == "\\" else False
                continue
            if not buf:  # an empty remainder after a continuation
                skip_ws = True
                continue
            if pos >= end:
                yield bisect_right(line_starts, first_pos), "".join(buf[:-1] if preceding_backslash else buf)
                return
            if preceding_backslash:  # continuation: drop the backslash, skip the next line's indent
                buf.pop()
                skip_ws = True
                appended_line_begin = True
                preceding_backslash = False
                if c == "\r" and text[pos] == "\n":
                    pos += 1
                continue
            yield bisect_right(line_starts, first_pos), "".join(buf)
            break


_NATURAL_EOL = re.compile(r"\r\n|\r|\n")


def _split_key_value(line: str) -> Tuple[int, int]:
    """``Properties.load0``: key ends at the first unescaped ``=``, ``:`` or whitespace; one separator and the
    whitespace around it are skipped before the value."""
    limit = len(line)
    key_len = 0
    value_start = limit
    has_sep = False
    preceding_backslash = False
    while key_len < limit:
        c = line[key_len]
        if c in "=:" and not preceding_backslash:
            value_start = key_len + 1
            has_sep = True
            break
        if c in " \t\f" and not preceding_backslash:
            value_start = key_len + 1
            break
        preceding_backslash = (not preceding_backslash) if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in " \t\f":
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return key_len, value_start


_HEX = "0123456789abcdefABCDEF"
_SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}


def _load_convert(raw: str) -> str:
    if "\\" not in raw:
        return raw
    out: List[str] = []
    i, end = 0, len(raw)
    while i < end:
        c = raw[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        c = raw[i] if i < end else ""  # LineReader never leaves a lone trailing backslash
        i += 1
        if c == "u":
            digits = raw[i:i + 4]
            if len(digits) < 4 or any(d not in _HEX for d in digits):
                raise ValueError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(c, c))
    return "".join(out)


def utc_now_iso() -> str:
    return _iso(datetime.datetime.now(datetime.timezone.utc))


def _iso(moment: datetime.datetime) -> str:
    moment = moment.astimezone(datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


_ISO_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]{1,9}))?)?"
    r"(?:([Zz])|([+-])([0-9]{2}):?([0-9]{2}))?\Z"
)


def parse_capture_time(text: str) -> str:
    """Normalise an ISO-8601 time to the header form (UTC, milliseconds, ``Z``); a time without offset is UTC.

    A regex rather than ``datetime.fromisoformat``, whose accepted forms differ between Python 3.8 and 3.11.
    """
    match = _ISO_TIME.match(text.strip())
    if not match:
        raise ValueError("capture time %r is not ISO-8601 (e.g. 2026-11-22T08:32:56Z)" % (text,))
    year, month, day, hour, minute, second, fraction, _, sign, off_h, off_m = match.groups()
    offset = datetime.timedelta(0)
    if sign:
        offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m)) * (1 if sign == "+" else -1)
    try:
        moment = datetime.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
            int((fraction or "0").ljust(6, "0")[:6]), tzinfo=datetime.timezone(offset),
        )
    except ValueError as exc:
        raise ValueError("capture time %r is not a valid time: %s" % (text, exc)) from None
    return _iso(moment)


def read_identity(
    log_dirs: List[str], fs: Optional[LocalFileSystem] = None, options: Optional[CollectOptions] = None
) -> Dict[str, Any]:
    """Broker id, cluster id and directory ids from the log dirs' ``meta.properties`` (+ warnings)."""
    fs = fs if fs is not None else default_fs()
    cap = (options or CollectOptions()).max_file_bytes
    warnings: List[str] = []
    broker_ids: Dict[str, str] = {}
    cluster_ids: Dict[str, str] = {}
    dir_ids: Dict[str, Optional[str]] = {}
    for log_dir in log_dirs:
        dir_ids[log_dir] = None
        try:
            root = fs.open_root(log_dir)
        except OSError as exc:
            warnings.append("%s: cannot open log dir: %s" % (log_dir, oserror_text(exc)))
            continue
        try:
            content, _ = fs.read(root, "meta.properties", cap)
        except OSError as exc:
            warnings.append("%s: no readable meta.properties: %s" % (log_dir, oserror_text(exc)))
            continue
        finally:
            fs.close(root)
        if content is None:
            warnings.append("%s: meta.properties larger than %d bytes" % (log_dir, cap))
            continue
        props = parse_properties(content.decode("latin-1"))  # Properties.load(InputStream), as Kafka reads it
        node = props.get("node.id", props.get("broker.id"))
        if node is not None:
            broker_ids[log_dir] = node.strip()
        if "cluster.id" in props:
            cluster_ids[log_dir] = props["cluster.id"].strip()
        dir_ids[log_dir] = props.get("directory.id")
    broker_id: Optional[int] = None
    if len(set(broker_ids.values())) > 1:
        warnings.append("node.id/broker.id differ across log dirs: %s" % json.dumps(broker_ids, sort_keys=True))
    elif broker_ids:
        text = next(iter(broker_ids.values()))
        if re.match(r"-?[0-9]{1,10}\Z", text):
            broker_id = int(text)
        else:
            warnings.append("node.id/broker.id %r is not an integer" % (text,))
    cluster_id: Optional[str] = None
    if len(set(cluster_ids.values())) > 1:
        warnings.append("cluster.id differs across log dirs: %s" % json.dumps(cluster_ids, sort_keys=True))
    elif cluster_ids:
        cluster_id = next(iter(cluster_ids.values()))
    return {"broker_id": broker_id, "cluster_id": cluster_id, "log_dir_ids": dir_ids, "warnings": warnings}


def make_header(
    log_dirs: List[str],
    options: Optional[CollectOptions] = None,
    fs: Optional[LocalFileSystem] = None,
    host: Optional[str] = None,
    capture_time: Optional[str] = None,
) -> Dict[str, Any]:
    """The pack header for these log dirs (also what raw-tree ingest should record for a capture)."""
    options = (options or CollectOptions()).checked()
    identity = read_identity(log_dirs, fs, options)
    return {
        "rec": "header",
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "collector_version": COLLECTOR_VERSION,
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "broker_id": identity["broker_id"],
        "cluster_id": identity["cluster_id"],
        "log_dir_ids": identity["log_dir_ids"],
        "host": host if host is not None else socket.gethostname(),
        "capture_time": capture_time if capture_time is not None else utc_now_iso(),
        "log_dirs": list(log_dirs),
        "options": dict(options._asdict()),
        "warnings": identity["warnings"],
    }


# ------------------------------------------------------------------------------------------------ writer

_ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)
_FLUSH_CHARS = 1 << 18


class _Counts:
    __slots__ = ("entries", "parts", "dirs", "files", "symlinks", "other", "embedded", "embedded_bytes",
                 "flagged", "log_dirs_unreadable")

    def __init__(self) -> None:
        for name in self.__slots__:
            setattr(self, name, 0)

    def add(self, entry: Dict[str, Any]) -> None:
        self.entries += 1
        kind = entry["kind"]
        if kind == KIND_FILE:
            self.files += 1
        elif kind == KIND_DIR:
            self.dirs += 1
        elif kind == KIND_SYMLINK:
            self.symlinks += 1
        else:
            self.other += 1
        if entry["content"] is not None:
            self.embedded += 1
            self.embedded_bytes += len(entry["content"])
        if entry["flags"]:
            self.flagged += 1
            if entry["path"] == "" and (FLAG_UNREADABLE in entry["flags"] or FLAG_VANISHED in entry["flags"]):
                self.log_dirs_unreadable += 1


def entry_lines(entry: Dict[str, Any]) -> Iterator[str]:
    """The pack lines (without newlines) for one entry: the entry record, then any content parts.

    A generator, so a 1 GiB segment costs its bytes plus one ~1.4 MiB line, not 1.4 GiB of lines.
    """
    rec: Dict[str, Any] = {"rec": "entry", "log_dir": entry["log_dir"], "path": entry["path"], "kind": entry["kind"]}
    for key in ("size", "alloc", "mtime_ms", "mode", "target"):
        value = entry[key]
        if value is not None:
            rec[key] = value
    if entry["flags"]:
        rec["flags"] = entry["flags"]
    if entry["error"] is not None:
        rec["error"] = entry["error"]
    if entry.get("segment") is not None:
        rec["segment"] = entry["segment"]
    content = entry["content"]
    if content is None:
        yield _ENCODER.encode(rec)
        return
    view = memoryview(content)
    rec["content_size"] = len(view)
    rec["content_b64"] = base64.b64encode(view[:PART_BYTES]).decode("ascii")
    if len(view) > PART_BYTES:
        rec["content_parts"] = (len(view) + PART_BYTES - 1) // PART_BYTES
    yield _ENCODER.encode(rec)
    for start in range(PART_BYTES, len(view), PART_BYTES):
        chunk = base64.b64encode(view[start:start + PART_BYTES]).decode("ascii")
        yield '{"rec":"part","content_b64":"%s"}' % chunk


def write_pack(
    out: BinaryIO,
    log_dirs: List[str],
    options: Optional[CollectOptions] = None,
    fs: Optional[LocalFileSystem] = None,
    host: Optional[str] = None,
    capture_time: Optional[str] = None,
    compress_level: int = DEFAULT_COMPRESS_LEVEL,
) -> Dict[str, Any]:
    """Walk ``log_dirs`` and write one pack to the binary stream ``out``; returns the trailer.

    Memory stays flat: lines are batched (256 KiB) into the gzip stream as the walk produces them. The
    caller owns ``out`` (``collect`` adds the "not inside a log dir" check and an atomic rename).

    Example::

        with open("/tmp/broker-101.jsonl.gz", "wb") as f:
            trailer = write_pack(f, ["/var/lib/kafka/data"])
    """
    options = (options or CollectOptions()).checked()
    fs = fs if fs is not None else default_fs()
    started = time.monotonic()
    header = make_header(log_dirs, options, fs, host, capture_time)
    counts = _Counts()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=compress_level, mtime=0) as gz:
        batch: List[str] = [_ENCODER.encode(header)]
        pending = len(batch[0])
        for entry in walk_log_dirs(log_dirs, options, fs):
            counts.add(entry)
            counts.parts -= 1  # the entry line itself
            for line in entry_lines(entry):
                counts.parts += 1
                batch.append(line)
                pending += len(line)
                if pending >= _FLUSH_CHARS:
                    batch.append("")
                    gz.write("\n".join(batch).encode("ascii"))
                    batch, pending = [], 0
        trailer: Dict[str, Any] = {"rec": "trailer"}
        for name in counts.__slots__:
            trailer[name] = getattr(counts, name)
        trailer["finish_time"] = utc_now_iso()
        trailer["elapsed_ms"] = int((time.monotonic() - started) * 1000)
        batch.append(_ENCODER.encode(trailer))
        batch.append("")
        gz.write("\n".join(batch).encode("ascii"))
    trailer["header"] = header
    return trailer


class UsageError(ValueError):
    """Bad collector arguments (exit code 2)."""


def _is_within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives on Windows
        return False


def check_output_path(out_path: str, log_dirs: List[str]) -> None:
    """Refuse an output path inside (or equal to) any log dir, following symlinks on both sides."""
    absolute = os.path.abspath(out_path)
    candidates = {os.path.realpath(absolute), os.path.join(os.path.realpath(os.path.dirname(absolute)),
                                                           os.path.basename(absolute))}
    for log_dir in log_dirs:
        root = os.path.realpath(log_dir)
        for candidate in candidates:
            if _is_within(candidate, root):
                raise UsageError("refusing to write %r: it is inside log dir %r (the collector never writes in a "
                                 "log dir; choose --out elsewhere, e.g. /tmp)" % (out_path, log_dir))


def default_pack_name(header: Dict[str, Any]) -> str:
    stamp = re.sub(r"[^0-9TZ]", "", header["capture_time"].split(".")[0]) + "Z"
    broker = header["broker_id"] if header["broker_id"] is not None else "unknown"
    host = re.sub(r"[^A-Za-z0-9._-]", "_", header["host"] or "host")[:64]
    return "kafka-recon-%s-broker-%s-%s.jsonl.gz" % (host, broker, stamp)


def collect(
    log_dirs: List[str],
    out_path: str,
    options: Optional[CollectOptions] = None,
    capture_time: Optional[str] = None,
    compress_level: int = DEFAULT_COMPRESS_LEVEL,
    fs: Optional[LocalFileSystem] = None,
    host: Optional[str] = None,
) -> Tuple[str, Dict[str, Any]]:
    """Checked, atomic pack writing: ``out_path`` (a file, an existing directory, or ``-`` for stdout).

    Raises ``UsageError`` for arguments that cannot work (duplicate/missing log dirs, output inside a log dir)
    before anything is written, ``OSError`` when the output cannot be written. Returns (path written, trailer).
    """
    if not log_dirs:
        raise UsageError("at least one --log-dir is required")
    if len(set(log_dirs)) != len(log_dirs):
        raise UsageError("a log dir is given twice: %s" % ", ".join(log_dirs))
    for log_dir in log_dirs:
        if "\x00" in log_dir or not os.path.isdir(log_dir):
            raise UsageError("log dir %r is not a directory" % (log_dir,))
    if not 0 <= compress_level <= 9:
        raise UsageError("compress level must be 0..9, got %r" % (compress_level,))
    capture_time = capture_time or utc_now_iso()  # one time for the auto name and the header
    if out_path == "-":
        trailer = write_pack(sys.stdout.buffer, log_dirs, options, fs, host, capture_time, compress_level)
        sys.stdout.buffer.flush()
        return out_path, trailer
    if os.path.isdir(out_path):
        check_output_path(os.path.join(out_path, "x"), log_dirs)
        name = default_pack_name(make_header(log_dirs, options, fs, host, capture_time))
        out_path = os.path.join(out_path, name)
    check_output_path(out_path, log_dirs)
    temp = out_path + ".part"
    check_output_path(temp, log_dirs)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY, 0o644)
    try:
        with os.fdopen(fd, "wb") as raw:
            trailer = write_pack(raw, log_dirs, options, fs, host, capture_time, compress_level)
        os.replace(temp, out_path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return out_path, trailer


# --------------------------------------------------------------------------------------------------- CLI


def _parse_size(text: str) -> int:
    match = re.match(r"\s*([0-9]+)\s*([kKmMgG]?)(i?[bB])?\s*\Z", text)
    if not match:
        raise argparse.ArgumentTypeError("not a size: %r (e.g. 1048576, 512K, 64M)" % (text,))
    return int(match.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[match.group(2).lower()]


def _human(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return ("%d %s" % (value, unit)) if unit == "B" else ("%.1f %s" % (value, unit))
        value /= 1024
    return "%d B" % n


def build_parser(prog: Optional[str] = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write a kafka-recon packed snapshot of Kafka log dirs (read-only; stdlib only).",
    )
    parser.add_argument("--log-dir", dest="log_dirs", action="extend", nargs="+", required=True, metavar="DIR",
                        help="a Kafka log dir (repeat or list several)")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="pack to write (*.jsonl.gz), an existing directory (auto name) or - for stdout; "
                             "never inside a log dir")
    parser.add_argument("--include-metadata-log", action="store_true",
                        help="also embed __cluster_metadata-0 segments and snapshots")
    parser.add_argument("--max-file-bytes", type=_parse_size, default=DEFAULT_MAX_FILE_BYTES, metavar="N",
                        help="cap for an embedded file (default 1M); bigger files are listed with over_cap")
    parser.add_argument("--max-metadata-file-bytes", type=_parse_size, default=DEFAULT_MAX_METADATA_FILE_BYTES,
                        metavar="N", help="cap for an embedded metadata segment/snapshot (default 1G)")
    parser.add_argument("--segment-scan-bytes", type=_parse_size, default=DEFAULT_SEGMENT_SCAN_BYTES, metavar="N",
                        help="how far into a data segment the end-of-log summary reads batch headers (default 1G; "
                        "0: no summaries)")
    parser.add_argument("--capture-time", metavar="ISO", help="capture time to record (default: now, UTC)")
    parser.add_argument("--compress-level", type=int, default=DEFAULT_COMPRESS_LEVEL, metavar="0-9",
                        help="gzip level (default %d)" % DEFAULT_COMPRESS_LEVEL)
    parser.add_argument("--version", action="version", version="kafka-recon collector " + COLLECTOR_VERSION)
    return parser


def main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """CLI entry point; returns the exit code: 0 ok, 1 error (I/O), 2 usage. One summary line on stderr."""
    name = prog or "kafka-recon collect"
    parser = build_parser(name)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help/--version (0) or a usage error (2), already printed
        return exit_.code if isinstance(exit_.code, int) else 2
    started = time.monotonic()
    try:
        capture = parse_capture_time(args.capture_time) if args.capture_time else None
        options = CollectOptions(args.max_file_bytes, args.include_metadata_log, args.max_metadata_file_bytes,
                                 args.segment_scan_bytes)
        written, trailer = collect(args.log_dirs, args.out, options, capture, args.compress_level)
    except (UsageError, ValueError) as exc:
        sys.stderr.write("%s: error: %s\n" % (name, exc))
        return 2
    except OSError as exc:
        sys.stderr.write("%s: error: cannot write %s: %s\n" % (name, args.out, oserror_text(exc)))
        return 1
    header = trailer["header"]
    size = "" if written == "-" else " (%s)" % _human(os.path.getsize(written))
    problems = []
    if trailer["log_dirs_unreadable"]:
        problems.append("%d log dir(s) unreadable" % trailer["log_dirs_unreadable"])
    if header["warnings"]:
        problems.append("%d warning(s): %s" % (len(header["warnings"]), "; ".join(header["warnings"])))
    sys.stderr.write(
        "%s: broker %s cluster %s, %d log dir(s), %d entries (%d dirs, %d files, %d symlinks, %d other), "
        "%d embedded (%s), %d flagged -> %s%s in %.2f s%s\n"
        % (name, header["broker_id"], header["cluster_id"], len(header["log_dirs"]), trailer["entries"],
           trailer["dirs"], trailer["files"], trailer["symlinks"], trailer["other"], trailer["embedded"],
           _human(trailer["embedded_bytes"]), trailer["flagged"], written, size, time.monotonic() - started,
           "; " + "; ".join(problems) if problems else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog=os.path.basename(sys.argv[0]) or "collector.py"))
