"""``kafka-recon decode FILE...``: print every KRaft metadata record of each file as one JSON object per line.

Run::

    kafka-recon decode __cluster_metadata-0/00000000000000000000.log
    python -m jobs.decode_command [decode] FILE...

Accepted files: metadata log segments (``.log``), snapshots (``<offset>-<epoch>.checkpoint``),
``bootstrap.checkpoint``, and text saved from ``kafka-dump-log.sh --cluster-metadata-decoder`` (parsed by
``udfs.dump_log_text``). Each line is ``MetadataRecord.as_json_line()``:
``{"offset":…,"type":…,"version":…,"data":{…}}``, plus ``"control":true`` for control records and
``"error":{kind,message,offset,line}`` for anything that could not be decoded. With several files, each line
also names its ``"file"``. Exit status: 0 when every record of every file could be read, 1 when a file or any record

No Spark here: this is the quick look a person runs on one broker's files. A binary file of
``PARALLEL_MIN_BYTES`` or more is decoded by one process per core, in parts cut at batch starts; the lines
come out in file order, the same as one process writes them.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, TextIO, Tuple

from udfs.errors import DecodeError
from udfs.metadata_record import MetadataRecord

USAGE = "usage: kafka-recon decode FILE [FILE...]"
_TEXT_MARKERS = (b"Dumping ", b"# kafka.tools", b"baseOffset:", b"| offset:", b"Log starting offset",
                 b"Snapshot end offset", b"KRaft bootstrap snapshot", b" payload:", b"{\"type\"")


def file_kind(path: Path) -> Optional[str]:
    """``"binary"`` for segments and snapshots, ``"text"`` for saved dump-log output, None if neither."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return None
    if path.suffix in (".log", ".checkpoint"):
        return "binary"
    if head.lstrip().startswith(_TEXT_MARKERS):
        return "text"
    return None


def _error_record(kind: str, message: str) -> MetadataRecord:
    return MetadataRecord(offset=-1, batch_base_offset=-1, batch_last_offset=-1, leader_epoch=-1, timestamp=-1,
                          is_control=False, type=None, api_key=None, version=None, data=None,
                          error=DecodeError(kind, message))


def _line_batches(path: Path, kind: Optional[str], start: int = 0, end: Optional[int] = None) -> Iterator[List[dict]]:
    """The JSON-line objects of one file (:func:`file_kind` ``kind``), a record batch at a time; a file of no
    kind is one error line. Records the generated decoders read become their line's dict straight from
    :class:`udfs.metadata_record.BatchRows` (no MetadataRecord per record: ~0.5 of the ~4 CPU s of the real
    1M-record log). ``start``/``end``: a binary file's batches starting in that byte range only (:func:`_parts`)."""
    if kind is None:
        if not path.is_file():
            yield [_error_record("io_error", f"cannot read {path}: not a readable file").as_json_line()]
        else:
            yield [_error_record("unrecognised_file", f"{path.name} is neither a metadata segment, a snapshot, "
                                                      "nor kafka-dump-log text").as_json_line()]
        return
    if kind == "binary":
        from udfs.metadata_log import iter_metadata_batch_rows

        for batch in iter_metadata_batch_rows(path, start=start, end=end):
            if batch.others:
                yield [record.as_json_line() for record in batch.records()]
            else:
                yield [{"offset": offset, "type": frame[0], "version": frame[3], "data": data}
                       for offset, frame, data, _writer in batch.rows]
        return
    from udfs.dump_log_text import iter_dump_log_records  # written separately; imported only when needed

    with open(path, encoding="utf-8", errors="replace") as fh:
        for record in iter_dump_log_records(fh):
            yield [record.as_json_line()]


def _json_line_encoder() -> Callable[[dict], bytes]:
    """One record's JSON line as UTF-8 bytes: orjson (a dependency of the wheel; JSON text is ~40% of this
    command's time with the stdlib encoder), the stdlib for what orjson refuses (integers beyond 64 bits)."""

    def stdlib(obj: dict) -> bytes:
        return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")

    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is an install requirement
        return stdlib
    fast, newline = orjson.dumps, orjson.OPT_APPEND_NEWLINE

    def encode(obj: dict) -> bytes:
        try:
            return fast(obj, option=newline)
        except TypeError:
            return stdlib(obj)

    return encode


_WRITE_BUFFER = 1 << 20


@contextmanager
def _byte_writer(out: TextIO) -> Iterator[Tuple[Callable[[bytes], Any], Callable[[], Any]]]:
    """``(write(bytes), flush())`` into ``out``: its file descriptor through a buffer of our own when it has
    one, else its byte buffer, else its text. Why our own buffer: under ``PYTHONUNBUFFERED=1`` (common in
    containers, and set on this project's machines) ``sys.stdout.buffer`` writes each line with its own system
    call: a million ``write()`` calls, ~1 s of system time on the real 1M-record log."""
    out.flush()  # whatever was written as text goes first
    sink = getattr(out, "buffer", None)
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None and sink is not None:
        sink.flush()
        with open(fd, "wb", buffering=_WRITE_BUFFER, closefd=False) as own:
            yield own.write, own.flush
        return
    if sink is not None:
        yield sink.write, sink.flush
        sink.flush()
        return
    yield (lambda data: out.write(data.decode("utf-8"))), out.flush


def _write_lines(path: Path, kind: Optional[str], write: Callable[[bytes], Any], named: bool, start: int = 0,
                 end: Optional[int] = None) -> int:
    """The JSON lines of one file (or of one byte range of a binary file); returns how many are errors (a
    record or a stretch of the file that could not be read)."""
    encode = _json_line_encoder()
    errors = 0
    for lines in _line_batches(path, kind, start, end):
        for line in lines:
            if named:
                line["file"] = str(path)
            if line.get("error") is not None:
                errors += 1
            write(encode(line))
    return errors


PART_HAD_ERRORS = 3  # a child's exit status when its part holds error lines: the parent decodes it to count them


# A binary file at least this big is decoded by one process per core (up to MAX_PROCESSES), each taking a part
# cut at batch starts: the real 1M-record log (55 MB) took ~3.5 s in one process on the 2-core bench machine.
PARALLEL_MIN_BYTES = 8 << 20
MAX_PROCESSES = 8
_WHOLE: List[Tuple[int, Optional[int]]] = [(0, None)]


def _processes() -> int:
    """Cores this process may run on (1 where processes cannot be forked: then one pass, as before)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_PROCESSES))


def _parts(path: Path, processes: int) -> List[Tuple[int, Optional[int]]]:
    """``[(start, end)]``: byte ranges starting at batch starts that cut a large binary file into ``processes``
    parts of about equal size (the last one open-ended), or the whole file as one part when it is small or when
    its framing is not sound from the first byte to the last (a framing error, a legacy entry): then a single
    reader reports it where it is, exactly as before. A header-only scan (~0.05 s for 55 MB)."""
    from bisect import bisect_left

    from udfs.record_batch import Batch, SegmentEnd, read_batches

    try:
        size = path.stat().st_size
    except OSError:
        return _WHOLE
    if processes < 2 or size < PARALLEL_MIN_BYTES or file_kind(path) != "binary":
        return _WHOLE
    ending = SegmentEnd()
    starts = []
    for item in read_batches(path, verify_crc=False, end_info=ending):
        if not isinstance(item, Batch):
            return _WHOLE
        starts.append(item.header.position)
    if ending.error is not None or len(starts) < processes or starts[0] != 0:
        return _WHOLE
    cuts = sorted({starts[min(bisect_left(starts, size * k // processes), len(starts) - 1)]
                   for k in range(1, processes)} - {0})
    return list(zip([0, *cuts], [*cuts, None], strict=True))


def _part_into(path: Path, start: int, end: Optional[int], named: bool, fd: int) -> None:
    """A child process: the lines of one part of a binary file into the spool file ``fd`` (its exit status
    says whether it finished; the parent decodes the part itself when not)."""
    with open(fd, "wb", buffering=_WRITE_BUFFER, closefd=False) as spool:
        errors = _write_lines(path, "binary", spool.write, named, start, end)
    if errors:
        raise SystemExit(PART_HAD_ERRORS)


def _write_file(path: Path, write: Callable[[bytes], Any], flush: Callable[[], Any], named: bool) -> Tuple[int, int]:
    """One file's lines, in file order: a large binary file in parts decoded at once by child processes
    (forked; each spools its lines to an unlinked temporary file) while this process writes the first part,
    then copies each child's lines after it. A child that fails leaves its part to this process: the output
    is the same lines whichever way they were made (a child whose part holds errors exits
    :data:`PART_HAD_ERRORS`, and its part is decoded here, so every error is counted). Returns ``(exit status: 1
    for a file of no kind, error lines)``."""
    kind = file_kind(path)
    parts = _parts(path, _processes()) if kind == "binary" else _WHOLE
    if len(parts) == 1:
        errors = _write_lines(path, kind, write, named)
        return (0 if kind is not None else 1), errors
    flush()  # a child ends with os._exit and never writes what it inherits; flushed so it holds nothing anyway
    fork = multiprocessing.get_context("fork")
    spools: List[Any] = []
    children: List[Any] = []  # None: no child for that part (no temporary file or process could be had)
    try:
        for start, end in parts[1:]:
            spools.append(None)
            children.append(None)
            try:
                spools[-1] = tempfile.TemporaryFile()
                child = fork.Process(target=_part_into, args=(path, start, end, named, spools[-1].fileno()),
                                     daemon=True)
                child.start()
                children[-1] = child
            except OSError:
                pass  # this part is decoded here, after the one before it
        errors = _write_lines(path, kind, write, named, *parts[0])
        for (start, end), spool, child in zip(parts[1:], spools, children, strict=True):
            if child is not None:
                child.join()
            if child is None or child.exitcode != 0:
                errors += _write_lines(path, kind, write, named, start, end)
                continue
            spool.seek(0)
            for chunk in iter(lambda spool=spool: spool.read(_WRITE_BUFFER), b""):
                write(chunk)
        return 0, errors
    finally:
        for child in children:
            if child is not None and child.is_alive():
                child.terminate()
                child.join()
        for spool in spools:
            if spool is not None:
                spool.close()


def write_records(paths: Sequence[Path], out: TextIO) -> int:
    """Write JSON lines for every file; returns the exit status. Each line goes as bytes into a buffered binary
    stream. (Joining a few thousand lines per write made glibc map and unmap memory on every batch: 525k page
    faults and 1.5 s of system time on the real 1M-record log.)"""
    status, errors = 0, 0
    named = len(paths) > 1
    with _byte_writer(out) as (write, flush):
        for path in paths:
            code, found = _write_file(path, write, flush, named)
            status, errors = max(status, code), errors + found
    if errors:  # a damaged file is never a clean exit: say how much could not be read
        print(f"kafka-recon decode: {errors} record(s) or stretch(es) could not be read (the lines with "
              f"\"error\"); exit 1", file=sys.stderr)
        status = max(status, 1)
    return status


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "decode":
        args = args[1:]
    if not args or any(a in ("-h", "--help") for a in args):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    try:
        return write_records([Path(a) for a in args], sys.stdout)
    except BrokenPipeError:  # e.g. piped into `head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
