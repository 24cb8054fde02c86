"""Executor side: files outside log dirs (dump-log text, znode dumps, ZK-mode logs, kafka-log-dirs output,
metadata segments/snapshots handed over on their own, capture.json) -> bronze rows.

A loose file is classified by its name and, where names say nothing, by its first bytes: kafka-dump-log
output starts with ``Dumping``, a znode dump is JSON lines with ``path`` and ``stat``. Each file is read as a
stream, so a large dump or log costs one line at a time.
"""
from __future__ import annotations

import gzip
import io
import json
import posixpath
import re
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterator, Optional

from udfs import dump_log_text, log_dirs_describe, metadata_log, zookeeper
from udfs.errors import DecodeError

from . import metadata_files
from .log_dir_rows import FILES, FileOutcome
from .metadata_rows import RecordColumns, batch_row
from .tagged_rows import RowSink

HEAD_BYTES = 64 * 1024
MAX_SMALL_FILE_BYTES = 64 * 1024 * 1024  # capture.json / log-dirs output / znode dump read whole

_SEGMENT = re.compile(r"\d{20}\.log")
_SNAPSHOT = re.compile(r"\d{20}-\d{10}\.checkpoint")
_ZK_LOG = re.compile(r"(controller|server|state-change)\.log(\.[\w.-]+)?")
_BROKER_FOLDER = re.compile(r"broker-(\d{1,10})")
IGNORED_JSON = frozenset({"expected.json", "expected_findings.json"})
CAPTURE_RECORD = "capture.json"
CAPTURE_TIME_KEYS = ("capture_time", "captureTimeUtc", "capture_time_utc", "captureTime")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip() and not line.startswith("# "):
            return line.strip()
    return ""


def classify_loose(name: str, parent: str, head: bytes) -> str:
    """bronze_ingest_files.file_kind of a file outside any log dir, from its name and first bytes."""
    if name == CAPTURE_RECORD:
        return "capture_record"
    if name in IGNORED_JSON:
        return "other"
    if _SEGMENT.fullmatch(name):
        return "metadata_segment" if parent.startswith("__cluster_metadata") else "data_segment"
    if _SNAPSHOT.fullmatch(name):
        return "metadata_snapshot"
    if name == metadata_log.BOOTSTRAP_FILE_NAME:
        return "bootstrap_checkpoint"
    text = head.decode("utf-8", "replace")
    first = _first_line(text)
    if first.startswith("Dumping "):
        return "dump_log_text"
    if "Querying brokers for log directories information" in text or "Received log directory information" in text:
        return "log_dirs_json"
    if first.startswith("{"):
        try:
            obj = json.loads(first)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "path" in obj and "stat" in obj:
            return "zk_znodes"
        if isinstance(obj, dict) and isinstance(obj.get("brokers"), list) and "version" in obj:
            return "log_dirs_json"
        if obj is None and first.startswith('{"path"'):
            return "zk_znodes"  # a first line longer than the sniffed head
    if _ZK_LOG.fullmatch(name):
        return "zk_log"
    return "other"


def broker_of_log_path(path: str) -> Optional[int]:
    """ZK-mode log lines do not say which broker wrote them: take a ``broker-<id>`` folder of the path."""
    for part in reversed(path.split("/")[:-1]):
        m = _BROKER_FOLDER.fullmatch(part)
        if m:
            return int(m.group(1))
    return None


def parse_time(text: Any) -> Optional[datetime]:
    if not isinstance(text, str) or not text.strip():
        return None
    value = text.strip()
    if value[-1] in "Zz":
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


class LooseFile:
    """One loose file: how to open it, where it shows in the tables, what to decode it as."""

    def __init__(self, open_stream: Callable[[], Any], display: str, size: Optional[int],
                 mtime: Optional[datetime]) -> None:
        self._open_stream = open_stream
        self.display = display
        self.size = size
        self.mtime = mtime

    def open_binary(self):
        """A binary stream of the file's content (gzip is decompressed transparently)."""
        raw = self._open_stream()
        buffered = raw if hasattr(raw, "peek") else io.BufferedReader(raw)
        if buffered.peek(2)[:2] == b"\x1f\x8b":
            return gzip.GzipFile(fileobj=buffered, mode="rb")
        return buffered

    def open_text(self):
        return io.TextIOWrapper(self.open_binary(), encoding="utf-8", errors="replace", newline=None)

    def head(self) -> bytes:
        with self.open_binary() as stream:
            return stream.read(HEAD_BYTES)


def decode_loose(item: LooseFile, sink: RowSink, kind: Optional[str] = None,
                 locator: Optional[Dict[str, Any]] = None,
                 decompression_limit: int = metadata_files.DEFAULT_DECOMPRESSION_LIMIT) -> Iterator:
    """Rows of one loose file plus its bronze_ingest_files row; yields ready batches as it goes.

    :param locator: how the second pass reopens the file (metadata segments, snapshots and dump text are read
        as batch summaries here and decoded only if they belong to the authoritative copy); None: decode now.
    """
    outcome = FileOutcome()
    name = posixpath.basename(item.display)
    parent = posixpath.basename(posixpath.dirname(item.display))
    folder = posixpath.dirname(item.display) or "."
    try:
        kind = kind or classify_loose(name, parent, item.head())
        if kind == "capture_record":
            _capture_record(item, sink, outcome)
        elif kind in ("metadata_segment", "metadata_snapshot", "bootstrap_checkpoint"):
            yield from _metadata_file(item, sink, outcome, kind, folder, name, locator, decompression_limit)
        elif kind == "dump_log_text":
            yield from _dump_text(item, sink, outcome, folder, locator)
        elif kind == "zk_znodes":
            with item.open_text() as lines:
                parsed = zookeeper.parse_znode_dump(lines, item.display)
            _rows(sink, "bronze_zk_events", parsed.rows, outcome)
            for error in parsed.errors[:1]:
                outcome.fail(error)
        elif kind == "zk_log":
            with item.open_text() as lines:
                for row in zookeeper.iter_zk_log_events(lines, item.display, broker_id=broker_of_log_path(item.display)):
                    sink.add("bronze_zk_events", row)
                    outcome.rows += 1
                    if outcome.rows % 4096 == 0:
                        yield from sink.ready()
        elif kind == "log_dirs_json":
            with item.open_text() as lines:
                parsed = log_dirs_describe.parse_log_dirs_output(lines.read(MAX_SMALL_FILE_BYTES), item.display)
            _rows(sink, "bronze_reported_replicas", parsed.rows, outcome)
            for error in parsed.errors[:1]:
                outcome.fail(error)
    except (OSError, EOFError, ValueError) as exc:  # unreadable, truncated gzip, ...: quarantine, never fail
        kind = kind or "other"
        outcome.fail(DecodeError("io_error", f"{type(exc).__name__}: {exc}"))
    sink.seen_time(item.mtime)
    error = outcome.error
    sink.add(FILES, {
        "path": item.display, "file_kind": kind, "log_dir": None, "bytes": item.size, "status": outcome.status,
        "error_kind": error.kind if error else None, "error_message": error.message if error else outcome.note,
        "error_offset": error.offset if error else None, "error_line": error.line if error else None,
        "rows_produced": outcome.rows,
    })
    yield from sink.ready()


def _rows(sink: RowSink, table: str, rows, outcome: FileOutcome) -> None:
    for row in rows:
        sink.add(table, row)
        outcome.rows += 1


def _capture_record(item: LooseFile, sink: RowSink, outcome: FileOutcome) -> None:
    with item.open_binary() as stream:
        data = stream.read(MAX_SMALL_FILE_BYTES)
    try:
        obj = json.loads(data.decode("utf-8", "replace"))
    except ValueError as exc:
        outcome.fail(DecodeError("bad_json", f"capture record is not JSON: {exc}"))
        return
    if not isinstance(obj, dict):
        outcome.fail(DecodeError("bad_json", "capture record is not a JSON object"))
        return
    moment = next((parse_time(obj[k]) for k in CAPTURE_TIME_KEYS if k in obj), None)
    if moment is not None:
        sink.add("_ingest_facts", {"fact": "recorded_capture_time", "source": item.display, "time_value": moment})
    else:
        outcome.note = "no capture time in the capture record"


def metadata_source(item: LooseFile, kind: str, folder: str, name: str) -> Dict[str, Any]:
    """Where a loose metadata file's rows come from (its folder is its copy, as for a broker's log dir)."""
    section = {"metadata_segment": "log", "metadata_snapshot": "snapshot", "bootstrap_checkpoint": "bootstrap"}[kind]
    snapshot = metadata_log.parse_snapshot_file_name(name) if section == "snapshot" else None
    return {"copy_id": folder if section != "bootstrap" else item.display, "source_file": item.display,
            "source_kind": {"log": "segment", "snapshot": "snapshot", "bootstrap": "bootstrap"}[section],
            "section": section, "snapshot_end_offset": snapshot[0] if snapshot else None}


def readable(stream):
    """record_batch reads bytes or a seekable file (positioned reads); a gunzipped stream is read whole."""
    return stream if stream.seekable() and not isinstance(stream, gzip.GzipFile) else stream.read()


def _metadata_file(item: LooseFile, sink: RowSink, outcome: FileOutcome, kind: str, folder: str,
                   name: str, locator: Optional[Dict[str, Any]], decompression_limit: int) -> Iterator:
    source = metadata_source(item, kind, folder, name)
    with item.open_binary() as stream:
        located = dict(locator, format="binary") if locator is not None else None
        for block in metadata_files.first_pass(readable(stream), sink, outcome, source, located, decompression_limit):
            sink.add_block(metadata_files.RECORDS, block)
            yield from sink.ready()


def _dump_events(lines):
    return dump_log_text.iter_dump_log_events(lines)


def _is_metadata_dump(section) -> bool:
    """A section dumping a metadata segment, snapshot or bootstrap file (not a data segment, index, ...)."""
    if section is None:
        return True
    if section.file_kind in ("snapshot", "bootstrap"):
        return True
    if section.file_kind != "segment":
        return False
    return section.path is None or "/__cluster_metadata-" in "/" + section.path.replace("\\", "/")


def _dump_batch_summary(batch: Dict[str, Any]) -> Dict[str, Any]:
    """A dump-log batch line in the form of ``udfs.metadata_log.iter_metadata_batches`` (CRC as printed)."""
    count = batch.get("count")
    return {"base_offset": batch.get("base_offset"), "last_offset": batch.get("last_offset"),
            "records": count if count is not None else None, "leader_epoch": batch.get("partition_leader_epoch"),
            "crc": batch.get("crc"), "crc_valid": batch.get("is_valid"), "is_control": batch.get("is_control"),
            "is_transactional": batch.get("is_transactional"), "position": batch.get("position"),
            "size_bytes": batch.get("size"), "max_timestamp_ms": batch.get("max_timestamp"), "error": None}


def _dump_text(item: LooseFile, sink: RowSink, outcome: FileOutcome, folder: str,
               locator: Optional[Dict[str, Any]] = None, records_only: bool = False) -> Iterator:
    """kafka-dump-log output: the sections that dump the metadata log become batch rows (and records: bootstrap
    sections always, the log and snapshot sections when ``locator`` is None or ``records_only``, the second
    pass); data-segment dumps are recognised and skipped. All sections of one folder form one copy."""
    section = None
    wanted = False
    skipped = 0
    decode_now = locator is None or records_only
    columns = RecordColumns(metadata_files.BLOCK_ROWS)
    copy_source = {"copy_id": folder, "source_file": item.display, "source_kind": "dump_log_text", "section": "dump",
                   "snapshot_end_offset": None}
    pending: list = []  # records of the current batch, added to the columns together (add_many)
    source: Dict[str, Any] = {}

    def flush() -> Iterator:
        if pending:
            columns.add_many(pending, source)
            pending.clear()
            if columns.full():
                sink.add_block(metadata_files.RECORDS, columns.take(metadata_files.RECORDS_STRUCT))
                yield from sink.ready()

    with item.open_text() as lines:
        for kind, value in _dump_events(lines):
            if kind == "file":
                yield from flush()
                section, wanted = value, None
                continue
            if wanted is None:
                wanted = _is_metadata_dump(section)
                if wanted:  # one source per dump section: its records are added a batch at a time
                    part = {"segment": "log", "snapshot": "snapshot", "bootstrap": "bootstrap"}.get(
                        section.file_kind, "log")
                    source = {"copy_id": folder if part != "bootstrap" else item.display,
                              "source_file": item.display, "source_kind": "dump_log_text", "section": part,
                              "snapshot_end_offset": section.snapshot_end_offset if part == "snapshot" else None}
            if kind == "error":
                if wanted:
                    outcome.fail(value)
                continue
            if kind not in ("record", "batch"):
                continue
            if not wanted:
                skipped += kind == "record"
                continue
            if kind == "batch":
                yield from flush()
                if part != "bootstrap" and not records_only:
                    sink.add(metadata_files.BATCHES, batch_row(_dump_batch_summary(value), source))
                    outcome.rows += 1
                continue
            if part == "bootstrap" and records_only:
                continue  # the first pass decoded it
            if part == "bootstrap" or decode_now:
                pending.append(value)
                outcome.rows += 1
                if len(pending) >= metadata_files.BLOCK_ROWS:
                    yield from flush()
            if value.error is not None:
                outcome.fail(value.error)
            if outcome.rows % 4096 == 0:
                yield from sink.ready()
        yield from flush()
    if len(columns):
        sink.add_block(metadata_files.RECORDS, columns.take(metadata_files.RECORDS_STRUCT))
    if skipped and not outcome.rows:
        outcome.note = f"dump of a non-metadata file ({skipped} records not used)"
    elif locator is not None and not records_only and outcome.rows:
        metadata_files.add_locator(sink, copy_source, dict(locator, format="dump_text"), outcome)
