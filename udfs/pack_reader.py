"""Reading a pack (the collector's packed snapshot, format in :mod:`collector`): ``read_pack`` / ``PackReader``.

The executors read hundreds of packs, so this side may use accelerators the broker side never needs: where
``isal``, ``pybase64`` and ``orjson`` are installed, inflating, base64 and JSON use them, with identical
results; without them it uses the stdlib.

Reader guarantees: it never writes or creates anything, so no member (symlink, device, ``../`` path) is ever
materialised; every line length, every content size and the total decompressed size are capped before the bytes
are held; a member with an unsafe path (absolute, ``.``/``..``/empty component, NUL, more than two components,
log dir not in the header) or an impossible shape (content on a symlink/dir/device) is rejected with a reason; a
truncated or corrupt pack yields everything read so far plus an error. Errors are ``PackError`` values with a
stable ``kind``; no exception escapes for bad input.
"""
from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import os
import zlib
from typing import Any, BinaryIO, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

from collector.filesystem import oserror_text
from collector.pack_format import (
    DEFAULT_MAX_METADATA_FILE_BYTES,
    ENTRY_KINDS,
    FORMAT_NAME,
    FORMAT_VERSION,
    KIND_DIR,
    KIND_FILE,
    KIND_SYMLINK,
    MAX_SUMMARY_MARKERS,
)

from .gzip_members import InflateError, Prefixed, gzip_reader

PACK_ERROR_KINDS = frozenset(
    {
        "bad_header",           # first line missing, not JSON, not a kafka-recon-pack header, or bad fields
        "bad_version",          # header version this reader does not know
        "bad_json",             # a line that is not a JSON object
        "bad_entry",            # an entry/part with missing or mistyped fields, or content parts out of place
        "unsafe_path",          # absolute, ./../empty component, NUL, > 2 components, log dir not in header
        "unsafe_member",        # content on a symlink, directory or device entry
        "decompression_bomb",   # a line, a content or the whole stream over the reader's caps
        "truncated_pack",       # stream ends early: gzip cut short, last line unterminated, no trailer
        "corrupt_pack",         # gzip CRC/format error
        "count_mismatch",       # trailer counts disagree with the lines read
        "garbage_after_frame",  # lines after the trailer
        "io_error",             # reading the pack's bytes failed
        "too_many_errors",      # reader stopped after max_errors errors
    }
)


class PackError(NamedTuple):
    """One problem found in a pack: a stable ``kind`` (``PACK_ERROR_KINDS``), text, 1-based line, member path."""

    kind: str
    message: str
    line: Optional[int] = None
    path: Optional[str] = None


class _Stop(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


DEFAULT_MAX_CONTENT_BYTES = DEFAULT_MAX_METADATA_FILE_BYTES  # whatever the collector embeds by default
DEFAULT_MAX_LINE_BYTES = 4 << 20
DEFAULT_MAX_TOTAL_BYTES = 8 << 30
DEFAULT_MAX_ERRORS = 1000

_INT = int  # ``type(x) is _INT`` rejects bools and floats
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1  # broker ids are Java ints
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1  # sizes and times are Java longs
_JSON_DECODE = json.JSONDecoder().decode
_B64_DECODE = base64.b64decode
# Optional accelerators for the reading side only (executors reading hundreds of packs; together about half
# the CPU of a pack): ISA-L inflate (udfs/gzip_members.py), SIMD base64 and orjson, with the same
# contracts (validate=True base64; JSON objects). On a broker none needs to be installed: the stdlib is used.
try:  # pragma: no branch
    import pybase64 as _pybase64

    _B64_DECODE = _pybase64.b64decode
except ImportError:  # pragma: no cover
    pass
try:
    import orjson as _orjson

    _JSON_DECODE = _orjson.loads  # stricter than json only for lone surrogates and integers past 64 bits
except ImportError:  # pragma: no cover
    pass


def path_problem(path: str) -> Optional[str]:
    """Why a member path is unsafe (None when it is a plain relative path of at most two components)."""
    if path == "":
        return None
    if "\x00" in path:
        return "path contains a NUL byte"
    if path.startswith("/"):
        return "absolute path"
    parts = path.split("/")
    if len(parts) > 2:
        return "path has more than 2 components"
    for part in parts:
        if part in ("", ".", ".."):
            return "path has an empty, '.' or '..' component"
    return None


def _b64_bound(n: int) -> int:
    return 4 * ((n + 2) // 3)


class PackReader:
    """Sequential, bounded-memory reader of one pack; iterate it for entries (dicts with ``ENTRY_FIELDS``).

    ``header`` is read on construction (None when unusable), ``trailer`` after iteration, ``errors`` collects
    ``PackError`` values as they are found, ``complete`` is True only when the trailer was read, its counts
    match and no error was found. Rejected members are not yielded; each leaves one error (kind, line, path).
    The reader creates nothing on disk; symlink and device members are data only.

    Example::

        with PackReader("broker-101.jsonl.gz") as pack:
            for entry in pack:
                ...
        if not pack.complete:
            quarantine(pack.errors)

    :param source: a path, bytes, or a binary file object (gzip or plain JSON lines, sniffed).
    :param max_content_bytes: largest embedded file accepted (bigger: ``decompression_bomb``).
    :param max_line_bytes: longest line accepted; reading stops there (``decompression_bomb``).
    :param max_total_bytes: most decompressed bytes read; reading stops there (``decompression_bomb``).
    :param max_errors: errors recorded before the reader gives up (``too_many_errors``).
    """

    def __init__(
        self,
        source: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO],
        max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_errors: int = DEFAULT_MAX_ERRORS,
    ) -> None:
        self.max_content_bytes = max_content_bytes
        self.max_line_bytes = max_line_bytes
        self.max_total_bytes = max_total_bytes
        self.max_errors = max_errors
        self.header: Optional[Dict[str, Any]] = None
        self.trailer: Optional[Dict[str, Any]] = None
        self.errors: List[PackError] = []
        self.entries_seen = 0  # entry lines, accepted or not
        self.parts_seen = 0
        self.complete = False
        self._line_no = 0
        self._total = 0
        self._stopped = False
        self._started = False
        self._owned: Optional[BinaryIO] = None
        self._stream: Any = None
        self._dirs: Dict[str, str] = {}
        try:
            self._open(source)
            self._read_header()
        except _Stop as stop:
            self._fail(stop.kind, str(stop))

    # -- opening
    def _open(self, source: Any) -> None:
        if isinstance(source, (bytes, bytearray, memoryview)):
            raw: BinaryIO = io.BytesIO(bytes(source))
        elif isinstance(source, (str, os.PathLike)):
            try:
                raw = open(source, "rb")  # closed by close()
            except OSError as exc:
                raise _Stop("io_error", "cannot open pack: %s" % oserror_text(exc)) from None
            self._owned = raw
        else:
            raw = source
        try:
            head = raw.read(2)
        except OSError as exc:
            raise _Stop("io_error", "cannot read pack: %s" % oserror_text(exc)) from None
        buffered = io.BufferedReader(Prefixed(head or b"", raw), 1 << 16)
        if head == b"\x1f\x8b":
            self._stream = gzip_reader(buffered)
        else:
            self._stream = buffered

    def close(self) -> None:
        self._stopped = True
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __enter__(self) -> "PackReader":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # -- errors
    def _error(self, kind: str, message: str, path: Optional[str] = None) -> None:
        if self._stopped:
            return
        if len(self.errors) >= self.max_errors:
            self.errors.append(PackError("too_many_errors", "stopped after %d errors" % self.max_errors,
                                         self._line_no))
            self._stopped = True
            return
        if path is not None and len(path) > 300:
            path = path[:300] + "..."
        self.errors.append(PackError(kind, message, self._line_no or None, path))

    def _fail(self, kind: str, message: str) -> None:
        self._error(kind, message)
        self.close()

    # -- lines
    def _read_line(self, unterminated_ok: bool = False) -> Optional[bytes]:
        try:
            line = self._stream.readline(self.max_line_bytes + 1)
        except EOFError:
            raise _Stop("truncated_pack", "pack ends in the middle of its gzip stream (truncated)") from None
        except (gzip.BadGzipFile, zlib.error, InflateError) as exc:
            raise _Stop("corrupt_pack", "gzip stream is corrupt: %s" % (exc,)) from None
        except OSError as exc:
            raise _Stop("io_error", "cannot read pack: %s" % oserror_text(exc)) from None
        if not line:
            return None
        self._line_no += 1
        self._total += len(line)
        if len(line) > self.max_line_bytes:
            raise _Stop("decompression_bomb", "line longer than max_line_bytes=%d; stopped reading"
                        % self.max_line_bytes)
        if self._total > self.max_total_bytes:
            raise _Stop("decompression_bomb", "more than max_total_bytes=%d decompressed; stopped reading"
                        % self.max_total_bytes)
        if not line.endswith(b"\n") and not unterminated_ok:
            raise _Stop("truncated_pack", "last line is not terminated (truncated pack)")
        return line

    def _parse(self, line: bytes) -> Optional[Dict[str, Any]]:
        try:
            obj = _JSON_DECODE(line.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            self._error("bad_json", "line is not JSON: %s" % (str(exc)[:200],))
            return None
        if not isinstance(obj, dict):
            self._error("bad_json", "line is not a JSON object")
            return None
        return obj

    # -- header
    def _read_header(self) -> None:
        line = self._read_line(unterminated_ok=True)
        if line is None:
            raise _Stop("bad_header", "empty pack: no header line")
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise _Stop("bad_header", "first line is not JSON (not a kafka-recon pack?)") from None
        if not isinstance(obj, dict) or obj.get("rec") != "header" or obj.get("format") != FORMAT_NAME:
            raise _Stop("bad_header", "first line is not a %s header" % FORMAT_NAME)
        version = obj.get("version")
        if type(version) is not _INT:
            raise _Stop("bad_header", "header version is not an integer")
        if version != FORMAT_VERSION:
            raise _Stop("bad_version", "pack version %d, this reader knows %d" % (version, FORMAT_VERSION))
        log_dirs = obj.get("log_dirs")
        if (
            not isinstance(log_dirs, list)
            or not log_dirs
            or not all(isinstance(d, str) and d and "\x00" not in d for d in log_dirs)
            or len(set(log_dirs)) != len(log_dirs)
        ):
            raise _Stop("bad_header", "header log_dirs must be a non-empty list of distinct non-empty strings")
        checks = (
            ("broker_id", lambda v: v is None or (type(v) is _INT and _INT32_MIN <= v <= _INT32_MAX)),
            ("cluster_id", lambda v: v is None or isinstance(v, str)),
            ("host", lambda v: v is None or isinstance(v, str)),
            ("capture_time", lambda v: v is None or isinstance(v, str)),
            ("log_dir_ids", lambda v: v is None or isinstance(v, dict)),
            ("options", lambda v: v is None or isinstance(v, dict)),
            ("warnings", lambda v: v is None or (isinstance(v, list) and all(isinstance(w, str) for w in v))),
        )
        for key, ok in checks:
            if not ok(obj.get(key)):
                raise _Stop("bad_header", "header field %s has the wrong type" % key)
        if not line.endswith(b"\n"):
            raise _Stop("truncated_pack", "pack ends right after its header line (truncated)")
        self._dirs = {d: d for d in log_dirs}
        header = dict(obj)
        header.pop("rec", None)
        for key in ("broker_id", "cluster_id", "host", "capture_time", "log_dir_ids", "options"):
            header.setdefault(key, None)
        header.setdefault("warnings", [])
        self.header = header

    # -- entries
    def __iter__(self) -> Iterator[Dict[str, Any]]:
        if self._started:
            raise ValueError("a PackReader can be iterated once")
        self._started = True
        return self._entries()

    def _entries(self) -> Iterator[Dict[str, Any]]:
        if self.header is None or self._stopped:
            return
        # Content parts still expected after an entry line. ``pending`` is the entry being reassembled, or
        # None while the parts of a rejected entry are skipped (read and counted, never held).
        parts_left = 0
        pending: Optional[Dict[str, Any]] = None
        chunks: List[bytes] = []
        missing = 0  # bytes of ``pending``'s content still to come
        try:
            while not self._stopped:
                line = self._read_line()
                if line is None:
                    break
                obj = self._parse(line)
                if obj is None:
                    continue
                rec = obj.get("rec")
                if parts_left and rec == "part":
                    self.parts_seen += 1
                    parts_left -= 1
                    if pending is None:
                        continue
                    data = self._part(obj, pending["path"], missing)
                    if data is None:
                        pending, chunks = None, []
                        continue
                    chunks.append(data)
                    missing -= len(data)
                    if parts_left == 0:
                        done = self._finish(pending, chunks, missing)
                        pending, chunks = None, []
                        if done is not None:
                            yield done
                    continue
                if parts_left:
                    self._error("bad_entry", "content parts missing (%d more expected)" % parts_left,
                                pending["path"] if pending is not None else None)
                    parts_left, pending, chunks = 0, None, []
                if self.trailer is not None:
                    self._error("garbage_after_frame", "record after the trailer")
                    break
                if rec == "entry":
                    self.entries_seen += 1
                    checked = self._check_entry(obj)
                    if checked is None:
                        parts = obj.get("content_parts")
                        if type(parts) is _INT and parts > 1:
                            parts_left = parts - 1  # skip the rejected entry's parts
                        continue
                    entry, parts, first, size = checked
                    if first is None:
                        yield entry
                    elif parts == 1:
                        done = self._finish(entry, [first], size - len(first))
                        if done is not None:
                            yield done
                    else:
                        pending, chunks, parts_left, missing = entry, [first], parts - 1, size - len(first)
                elif rec == "part":
                    self.parts_seen += 1
                    self._error("bad_entry", "content part without an entry")
                elif rec == "trailer":
                    self._check_trailer(obj)
                elif rec == "header":
                    self._error("bad_entry", "second header")
                elif not isinstance(rec, str):
                    self._error("bad_entry", "record without a rec type")
                # any other named record type comes from a newer minor version: skipped
            if parts_left and not self._stopped:
                self._error("truncated_pack", "pack ends inside an entry's content parts",
                            pending["path"] if pending is not None else None)
            if self.trailer is None and not self._stopped:
                self._error("truncated_pack", "pack has no trailer (truncated)")
        except _Stop as stop:
            self._error(stop.kind, str(stop))
        finally:
            self.complete = self.trailer is not None and not self.errors
            self.close()

    def _part(self, obj: Dict[str, Any], path: str, missing: int) -> Optional[bytes]:
        """Decoded bytes of one content part, never more than the ``missing`` bytes the entry announced."""
        text = obj.get("content_b64")
        if not isinstance(text, str):
            self._error("bad_entry", "content part without content_b64", path)
            return None
        if len(text) > _b64_bound(missing):
            self._error("bad_entry", "content parts hold more than content_size", path)
            return None
        try:
            return _B64_DECODE(text, validate=True)
        except (binascii.Error, ValueError):
            self._error("bad_entry", "content part is not base64", path)
            return None

    def _finish(self, entry: Dict[str, Any], chunks: List[bytes], missing: int) -> Optional[Dict[str, Any]]:
        if missing != 0:
            self._error("bad_entry", "content size differs from content_size by %d bytes" % -missing,
                        entry["path"])
            return None
        entry["content"] = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return entry

    def _check_entry(
        self, obj: Dict[str, Any]
    ) -> Optional[Tuple[Dict[str, Any], int, Optional[bytes], int]]:
        """(entry, content parts, first part's bytes, content_size), or None once the rejection is recorded."""
        path = obj.get("path")
        shown = path if isinstance(path, str) else None
        log_dir = obj.get("log_dir")
        canonical = self._dirs.get(log_dir) if isinstance(log_dir, str) else None
        if canonical is None:
            self._error("unsafe_path", "log_dir is not one of the header's log_dirs", shown)
            return None
        if not isinstance(path, str):
            self._error("bad_entry", "path is not a string")
            return None
        problem = path_problem(path)
        if problem is not None:
            self._error("unsafe_path", problem, shown)
            return None
        kind = obj.get("kind")
        if not isinstance(kind, str) or kind not in ENTRY_KINDS:
            self._error("bad_entry", "unknown kind %r" % (str(kind)[:40],), shown)
            return None
        if path == "" and kind != KIND_DIR:
            self._error("unsafe_member", "the log dir entry must be a directory", shown)
            return None
        get = obj.get
        size, alloc, mtime_ms, mode = get("size"), get("alloc"), get("mtime_ms"), get("mode")
        for key, value in (("size", size), ("alloc", alloc), ("mtime_ms", mtime_ms), ("mode", mode)):
            if value is not None and (type(value) is not _INT or (value < 0 and key != "mtime_ms")
                                      or not _INT64_MIN <= value <= _INT64_MAX):  # readers store int64
                self._error("bad_entry", "%s is not a valid integer" % key, shown)
                return None
        target, flags, error = get("target"), get("flags"), get("error")
        if target is not None and (kind != KIND_SYMLINK or not isinstance(target, str) or "\x00" in target):
            self._error("bad_entry", "target is only allowed as a string on a symlink", shown)
            return None
        if flags is None:
            flags = []
        elif not isinstance(flags, list) or len(flags) > 16 or not all(
            isinstance(f, str) and len(f) <= 64 for f in flags
        ):
            self._error("bad_entry", "flags must be a short list of short strings", shown)
            return None
        if error is not None and not isinstance(error, str):
            self._error("bad_entry", "error is not a string", shown)
            return None
        segment = get("segment")
        if segment is not None:
            segment = checked_segment_summary(segment)
            if segment is None or kind != KIND_FILE:
                self._error("bad_entry", "segment is not a valid segment summary on a file", shown)
                return None
        entry = {"log_dir": canonical, "path": path, "kind": kind, "size": size, "alloc": alloc,
                 "mtime_ms": mtime_ms, "mode": mode, "target": target, "content": None, "flags": flags,
                 "error": error, "segment": segment}
        text = obj.get("content_b64")
        if text is None:
            if "content_size" in obj or "content_parts" in obj:
                self._error("bad_entry", "content_size/content_parts without content_b64", shown)
                return None
            return entry, 1, None, 0
        if kind != KIND_FILE:
            self._error("unsafe_member", "a %s entry cannot carry content" % kind, shown)
            return None
        content_size = get("content_size")
        parts = get("content_parts", 1)
        if (
            type(content_size) is not _INT
            or content_size < 0
            or type(parts) is not _INT
            or parts < 1
            or not isinstance(text, str)
        ):
            self._error("bad_entry", "content_size/content_parts/content_b64 malformed", shown)
            return None
        if content_size > self.max_content_bytes or len(text) > _b64_bound(self.max_content_bytes):
            self._error("decompression_bomb", "content of %d bytes over max_content_bytes=%d"
                        % (content_size, self.max_content_bytes), shown)
            return None
        try:
            first = _B64_DECODE(text, validate=True)
        except (binascii.Error, ValueError):
            self._error("bad_entry", "content_b64 is not base64", shown)
            return None
        if len(first) > content_size:
            self._error("bad_entry", "content has more bytes than content_size says", shown)
            return None
        return entry, parts, first, content_size

    def _check_trailer(self, obj: Dict[str, Any]) -> None:
        self.trailer = {k: v for k, v in obj.items() if k != "rec"}
        entries, parts = obj.get("entries"), obj.get("parts", 0)
        if type(entries) is not _INT or type(parts) is not _INT:
            self._error("count_mismatch", "trailer has no integer entries/parts counts")
        elif entries != self.entries_seen or parts != self.parts_seen:
            self._error("count_mismatch", "trailer says %d entries/%d parts, pack holds %d/%d"
                        % (entries, parts, self.entries_seen, self.parts_seen))


_SEGMENT_ENDS = frozenset({"eof", "zeros", "corrupt", "cap", "unreadable"})


def _int64(value: Any) -> bool:
    return type(value) is _INT and _INT64_MIN <= value <= _INT64_MAX


def checked_segment_summary(value: Any) -> Optional[Dict[str, Any]]:
    """A pack's ``segment`` value with exactly the known keys and types, or None (untrusted input)."""
    if not isinstance(value, dict):
        return None
    get = value.get
    next_offset, index_last, markers, error = get("next_offset"), get("index_last"), get("markers", []), get("error")
    if not (
        (next_offset is None or _int64(next_offset))
        and _int64(get("batches", 0)) and get("batches", 0) >= 0
        and _int64(get("valid_bytes", 0)) and get("valid_bytes", 0) >= 0
        and get("end") in _SEGMENT_ENDS
        and (index_last is None or (isinstance(index_last, list) and len(index_last) == 2
                                    and all(type(v) is _INT and -(1 << 31) <= v < (1 << 31) for v in index_last)))
        and isinstance(markers, list) and len(markers) <= MAX_SUMMARY_MARKERS
        and all(isinstance(m, list) and len(m) == 3 and all(_int64(v) for v in m) for m in markers)
        and (error is None or (isinstance(error, str) and len(error) <= 1000))
    ):
        return None
    return {"next_offset": next_offset, "batches": get("batches", 0), "valid_bytes": get("valid_bytes", 0),
            "end": get("end"), "markers": [list(m) for m in markers],
            "index_last": list(index_last) if index_last is not None else None, "error": error}


def read_pack(source: Any, **limits: int) -> PackReader:
    """Open a pack for reading: ``PackReader(source, **limits)`` (see there). Never raises for bad input."""
    return PackReader(source, **limits)


