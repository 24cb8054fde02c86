"""``kafka-recon decode FILE...``: print every KRaft metadata record of each file as one JSON object per line.

Run::

    kafka-recon decode __cluster_metadata-0/00000000000000000000.log
    python -m jobs.decode_command [decode] FILE...

Accepted files: metadata log segments (``.log``), snapshots (``<offset>-<epoch>.checkpoint``),
``bootstrap.checkpoint``, and text saved from ``kafka-dump-log.sh --cluster-metadata-decoder`` (parsed by
``udfs.dump_log_text``). Each line is ``MetadataRecord.as_json_line()``:
``{"offset":…,"type":…,"version":…,"data":{…}}``, plus ``"control":true`` for control records and
``"error":{kind,message,offset,line}`` for anything that could not be decoded. With several files, each line
also names its ``"file"``. Exit status: 0 when every file could be read, 1 when one could not, 2 on usage.

No Spark here: this is the quick look a person runs on one broker's files.
"""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, TextIO

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


def _line_batches(path: Path) -> Iterator[tuple]:
    """``(objects, records)`` a batch at a time: for a binary file, the JSON-line objects of one record batch
    (``records`` None); otherwise the records themselves (``objects`` None). Records the generated decoders
    read become their line's dict straight from :class:`udfs.metadata_record.BatchRows` (no MetadataRecord
    per record: ~0.5 of the ~4 CPU s of the real 1M-record log)."""
    kind = file_kind(path)
    if kind is None:
        if not path.is_file():
            yield None, [_error_record("io_error", f"cannot read {path}: not a readable file")]
        else:
            yield None, [_error_record("unrecognised_file", f"{path.name} is neither a metadata segment, a "
                                                            "snapshot, nor kafka-dump-log text")]
        return
    if kind == "binary":
        from udfs.metadata_log import iter_metadata_batch_rows

        for batch in iter_metadata_batch_rows(path):
            if batch.others:
                yield None, batch.records()
            else:
                yield [{"offset": offset, "type": frame[0], "version": frame[3], "data": data}
                       for offset, frame, data, _writer in batch.rows], None
        return
    from udfs.dump_log_text import iter_dump_log_records  # written separately; imported only when needed

    with open(path, encoding="utf-8", errors="replace") as fh:
        for record in iter_dump_log_records(fh):
            yield None, [record]


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
def _byte_writer(out: TextIO) -> Iterator[Callable[[bytes], Any]]:
    """A ``write(bytes)`` into ``out``: its file descriptor through a buffer of our own when it has one, else its
    byte buffer, else its text. Why our own buffer: under ``PYTHONUNBUFFERED=1`` (common in containers, and
    set on this project's machines) ``sys.stdout.buffer`` writes each line with its own system call: a million
    ``write()`` calls, ~1 s of system time on the real 1M-record log."""
    out.flush()  # whatever was written as text goes first
    sink = getattr(out, "buffer", None)
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None and sink is not None:
        sink.flush()
        with open(fd, "wb", buffering=_WRITE_BUFFER, closefd=False) as own:
            yield own.write
        return
    if sink is not None:
        yield sink.write
        sink.flush()
        return
    yield lambda data: out.write(data.decode("utf-8"))


def write_records(paths: Sequence[Path], out: TextIO) -> int:
    """Write JSON lines for every file; returns the exit status. Each line goes as bytes into a buffered binary
    stream. (Joining a few thousand lines per write made glibc map and unmap memory on every batch: 525k page
    faults and 1.5 s of system time on the real 1M-record log.)"""
    status = 0
    encode = _json_line_encoder()
    named = len(paths) > 1
    with _byte_writer(out) as write:
        for path in paths:
            for objects, records in _line_batches(path):
                if records is not None:
                    objects = []
                    for record in records:
                        if record.offset == -1 and record.error is not None and record.error.kind in (
                                "io_error", "unrecognised_file"):
                            status = 1
                        objects.append(record.as_json_line())
                for line in objects:
                    if named:
                        line["file"] = str(path)
                    write(encode(line))
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
