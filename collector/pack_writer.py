"""Writing a pack: the entry lines, the header and trailer, and ``collect`` (refuses an output inside a log dir)."""
from __future__ import annotations

import base64
import gzip
import json
import os
import re
import sys
import time
from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Tuple

from .filesystem import LocalFileSystem, default_fs, oserror_text
from .header import make_header, utc_now_iso
from .options import CollectOptions
from .pack_format import (
    _O_BINARY,
    _O_CLOEXEC,
    _O_NOFOLLOW,
    DEFAULT_COMPRESS_LEVEL,
    FLAG_UNREADABLE,
    FLAG_VANISHED,
    KIND_DIR,
    KIND_FILE,
    KIND_SYMLINK,
    PART_BYTES,
)
from .walk import walk_log_dirs

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


def check_is_log_dir(log_dir: str) -> None:
    """A Kafka log dir holds ``meta.properties`` (written by ``kafka-storage format`` in KRaft, by the broker's
    first start in ZooKeeper mode: ``MetaPropertiesEnsemble``); without it the folder is not one, and a pack
    of it would say "broker None cluster None". UsageError naming what the folder holds instead."""
    if os.path.lexists(os.path.join(log_dir, "meta.properties")):
        return
    try:
        names = sorted(os.listdir(log_dir))
    except OSError as exc:
        raise UsageError("log dir %r cannot be listed: %s" % (log_dir, oserror_text(exc))) from None
    shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "") if names else "nothing"
    raise UsageError("%r is not a Kafka log dir: no meta.properties (it holds %s); give the folders of the "
                     "broker's log.dirs" % (log_dir, shown))


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
        check_is_log_dir(log_dir)
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
