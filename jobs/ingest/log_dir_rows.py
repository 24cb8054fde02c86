"""Executor side: the collector's entry stream of one log dir -> bronze rows.

The same entries come from a raw tree (``collector.walk_log_dirs``) and from a packed snapshot
(``udfs.pack_reader.read_pack``), so both give the same rows by construction. Entries arrive in post-order (a
directory's children, then the directory, the log dir itself last), so one replica dir is open at a time and
memory does not grow with the number of partitions.

Rows carry ``log_dir`` but not the broker: a log dir's broker is its meta.properties node.id/broker.id,
which may arrive after the other entries; the driver joins it in from bronze_log_dirs (a broadcast join).
"""
from __future__ import annotations

import stat
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional

from collector import (
    FLAG_OVER_CAP,
    KIND_DIR,
    KIND_FILE,
    KIND_SYMLINK,
)
from udfs import json_state_files, leader_epochs, log_dir_names, metadata_log, properties_files, record_batch
from udfs.errors import DecodeError
from udfs.partition_metadata import read_partition_metadata
from udfs.producer_state import decode_producer_snapshot

from . import metadata_files
from .input_damage import damage_fact
from .metadata_rows import millis_to_datetime
from .tagged_rows import RowSink

METADATA_DIR = log_dir_names.METADATA_DIR
FILES = "bronze_ingest_files"
CHECKPOINTS = "bronze_offset_checkpoints"

# Names and small files repeat across replica dirs (00000000000000000000.log, "version: 0\ntopic_id: <one id
# per topic>", "0\n1\n0 0\n"): their readings are cached. Only outcomes that do not depend on the path are
# cached; a failing file is always read again with its own path for Kafka's message.
classify_partition_file = lru_cache(maxsize=8192)(log_dir_names.classify_partition_file)


@lru_cache(maxsize=65536)
def _partition_metadata_ok(data: bytes):
    result = read_partition_metadata(data)
    return result if result.ok else None


@lru_cache(maxsize=4096)
def _leader_epochs_ok(data: bytes) -> bool:
    return properties_files.parse_leader_epoch_checkpoint(data).ok


def partition_metadata(data: bytes, path: str):
    return _partition_metadata_ok(data) or read_partition_metadata(data, path)


def leader_epoch_error(data: bytes, path: str) -> Optional[DecodeError]:
    return None if _leader_epochs_ok(data) else properties_files.parse_leader_epoch_checkpoint(data, path).error


@lru_cache(maxsize=4096)
def leader_epochs_loaded(data: bytes):
    """(entries as (epoch, start offset), what LeaderEpochFileCache's load does with them) of a file that parses."""
    entries = tuple((e.epoch, e.start_offset) for e in properties_files.parse_leader_epoch_checkpoint(data).entries)
    return entries, leader_epochs.load(entries)

# classify_partition_file kind -> bronze_ingest_files.file_kind (data/metadata segments told apart by folder)
CHILD_FILE_KINDS = {
    "index": "index", "timeindex": "index", "txnindex": "txnindex", "producer_snapshot": "producer_snapshot",
    "metadata_snapshot": "metadata_snapshot", "leader_epoch_checkpoint": "checkpoint",
    "partition_metadata": "partition_metadata", "quorum_state": "quorum_state", "other": "other",
}


def segment_end_columns(summaries: Dict[int, tuple], newest: Optional[int]) -> Dict[str, Any]:
    """bronze_dir_entries' end-of-log columns from the collector's segment summaries (see collector).

    The log end offset is what Kafka's ``LogSegment.readNextOffset`` finds in the newest segment: the offset
    after its last batch, or its base offset when it holds none. Unknown (null) when the newest segment was not
    summarized or its scan stopped early.
    """
    if newest is None or newest not in summaries:
        return {"log_end_offset": None, "tail_scanned": False if summaries or newest is not None else None,
                "newest_segment_bytes": None, "index_last_position": None}
    summary, size, _ = summaries[newest]
    whole = all(s.get("end") in ("eof", "zeros", "corrupt") for s, _, _ in summaries.values())
    end_known = summary.get("end") in ("eof", "zeros", "corrupt")
    next_offset = summary.get("next_offset")
    index_last = summary.get("index_last")
    return {
        "log_end_offset": (next_offset if next_offset is not None else newest) if end_known else None,
        "tail_scanned": whole, "newest_segment_bytes": size,
        "index_last_position": index_last[1] if index_last else None,
    }


@dataclass
class DecodeOptions:
    """What executors decode: the ``ingest`` settings they need (no defaults here: the values live in
    conf/default.yaml; build with :meth:`from_settings`), plus two switches of the code. Plain data, so it
    pickles to executors."""

    max_embedded_file_bytes: int
    max_metadata_file_bytes: int
    decompression_limit_bytes: int
    read_data_segment_headers: bool
    max_segment_scan_bytes: int
    # raw trees: how far the walk's segment summaries (log end, markers) read a segment; 0 turns them off
    segment_summary_bytes: int
    # the second pass cuts a metadata segment or snapshot larger than this into parts decoded in parallel
    metadata_chunk_bytes: int
    batch_rows: int = 4096
    # metadata-log segments and snapshots: batch summaries now, records in the second pass for the copies
    # that need them (False: records now, for every copy; for callers without the second pass)
    defer_metadata_records: bool = True

    @classmethod
    def from_settings(cls, ingest: Any, **changes: Any) -> "DecodeOptions":
        """The options an :class:`jobs.settings.IngestSettings` gives (its fields of the same names), then
        ``changes``."""
        names = [f.name for f in fields(cls) if hasattr(ingest, f.name)]
        return cls(**{**{name: getattr(ingest, name) for name in names}, **changes})

    def pack_limits(self) -> Dict[str, int]:
        """``read_pack`` limits: no embedded file bigger than ingest's own caps is held in memory."""
        return {"max_content_bytes": max(self.max_embedded_file_bytes, self.max_metadata_file_bytes)}


@dataclass
class FileOutcome:
    """What happened to one input file: becomes its bronze_ingest_files row."""

    status: str = "ok"
    error: Optional[DecodeError] = None
    rows: int = 0
    note: Optional[str] = None  # a message for an ok file (e.g. content not embedded)

    def fail(self, error: DecodeError) -> None:
        """Keep the first error; a file with any error is quarantined (its good rows are still kept)."""
        if self.error is None:
            self.error = error
        self.status = "quarantined"


def flag_error(entry: Dict[str, Any]) -> Optional[DecodeError]:
    """An entry the walk could not read (vanished, unreadable, changed, over the embedding cap) as an error."""
    flags = [f for f in entry.get("flags") or () if f != "non_utf8_name"]
    if not flags:
        return None
    if flags == [FLAG_OVER_CAP]:
        return DecodeError("value_too_large", f"{entry.get('size')} bytes: over the embedding cap, not decoded")
    text = ", ".join(flags) + (f": {entry['error']}" if entry.get("error") else "")
    return DecodeError("io_error", text)


SPECIAL_ENTRY = "special"  # bronze_dir_entries.entry_kind of a symlink, FIFO, socket or device in a log dir


def special_entry_text(entry: Dict[str, Any]) -> str:
    """What a log-dir entry that is neither a file nor a directory is, in words: "symlink to '/etc'", "FIFO"."""
    if entry["kind"] == KIND_SYMLINK:
        target = entry.get("target")
        return f"symlink to {target!r}" if target is not None else "symlink (target unreadable)"
    mode = entry.get("mode")
    if isinstance(mode, int) and not isinstance(mode, bool):
        for test, what in ((stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISSOCK, "socket"),
                           (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
            if test(mode):
                return what
    return "special file (not a regular file, directory or symlink)"


@dataclass
class _OpenDir:
    """Facts gathered for the replica dir whose children are arriving."""

    name: str
    bytes: int = 0
    segment_count: int = 0
    newest_mtime_ms: Optional[int] = None
    oldest_file_mtime_ms: Optional[int] = None
    pm_mtime_ms: Optional[int] = None
    log_start_offset: Optional[int] = None
    newest_segment_offset: Optional[int] = None
    pm: Any = None
    producer_rows: List[dict] = field(default_factory=list)
    classified: Any = None  # log_dir_names.EntryName of this dir, read once
    summaries: Dict[int, tuple] = field(default_factory=dict)  # segment base -> (summary, .log size, path)
    epoch_rows: List[dict] = field(default_factory=list)  # leader-epoch-checkpoint entries, topic_id added at close

    def add_mtime(self, mtime_ms: Optional[int]) -> None:
        if mtime_ms is not None and (self.newest_mtime_ms is None or mtime_ms > self.newest_mtime_ms):
            self.newest_mtime_ms = mtime_ms


class LogDirDecoder:
    """Turns the entries of one log dir into rows of bronze_dir_entries, bronze_metadata_records,
    bronze_producer_states, bronze_ingest_files and (at the end) bronze_log_dirs.

    :param log_dir: the log dir as shown in the tables (root-relative path, or ``<pack>!<recorded path>``)
    :param open_file: ``(relative path) -> binary file object`` for files the walk did not embed (raw trees
        only; None for packs, whose listed-only files cannot be read)
    """

    def __init__(self, sink: RowSink, options: DecodeOptions, log_dir: str, host: Optional[str] = None,
                 open_file: Optional[Callable[[str], Any]] = None, headless: bool = False,
                 raw_log_dir: Optional[str] = None, kafka_log_dir: Optional[str] = None,
                 locate: Optional[Callable[[str], Dict[str, Any]]] = None) -> None:
        self.sink = sink
        self.locate = locate  # relative path -> how the second pass reopens a metadata file
        self.raw_log_dir = raw_log_dir  # the entries' own log_dir value
        self.kafka_log_dir = kafka_log_dir or log_dir  # used inside Kafka's messages (no pack prefix)
        self.options = options
        self.log_dir = log_dir
        self.host = host
        self.open_file = open_file
        self.headless = headless
        self.meta: Optional[properties_files.MetaProperties] = None
        self.meta_error: Optional[DecodeError] = None
        self.entry_count = 0
        self.has_metadata_log = False
        self.has_bootstrap = False
        self.current: Optional[_OpenDir] = None
        self.newest_mtime_ms: Optional[int] = None
        self.finished = False

    # ------------------------------------------------------------------ helpers
    def _path(self, rel: str) -> str:
        return f"{self.log_dir}/{rel}" if rel else self.log_dir

    def _kafka_path(self, rel: str) -> str:
        """The path as Kafka would print it in its messages: the log dir as the broker (or collector) named it."""
        return f"{self.kafka_log_dir}/{rel}" if rel else self.kafka_log_dir

    def _seen_mtime(self, mtime_ms: Optional[int]) -> None:
        if mtime_ms is not None and (self.newest_mtime_ms is None or mtime_ms > self.newest_mtime_ms):
            self.newest_mtime_ms = mtime_ms

    def _file_row(self, entry: Dict[str, Any], kind: str, outcome: FileOutcome) -> None:
        error = outcome.error
        self.sink.add(FILES, {
            "path": self._path(entry["path"]), "file_kind": kind, "log_dir": self.log_dir, "bytes": entry.get("size"),
            "status": outcome.status, "error_kind": error.kind if error else None,
            "error_message": error.message if error else outcome.note,
            "error_offset": error.offset if error else None, "error_line": error.line if error else None,
            "rows_produced": outcome.rows,
        })

    def _content(self, entry: Dict[str, Any], outcome: FileOutcome, large: bool = False) -> Any:
        """The file's bytes (embedded) or, for raw trees, an open file; None when unreadable (``outcome`` says why)."""
        if entry.get("content") is not None:
            return entry["content"]
        error = flag_error(entry)
        over_cap_only = error is not None and error.kind == "value_too_large"
        if error is not None and not (over_cap_only and large and self.open_file is not None):
            outcome.fail(error)
            return None
        if self.open_file is None:
            outcome.note = "content not in the packed snapshot (listed only)"
            return None
        try:
            return self.open_file(entry["path"])
        except OSError as exc:
            outcome.fail(DecodeError("io_error", f"cannot open: {exc}"))
            return None

    # ------------------------------------------------------------------ entries
    def feed(self, entry: Dict[str, Any]) -> None:
        path = entry["path"]
        if path == "":
            self.finish(entry)
            return
        if entry["kind"] in (KIND_DIR, KIND_FILE):  # a link's or a FIFO's own time is not Kafka data's time
            self._seen_mtime(entry.get("mtime_ms"))
        parent, _, name = path.rpartition("/")
        if not parent:
            self._top_level(entry, name)
        else:
            self._child(entry, parent, name)

    def _top_level(self, entry: Dict[str, Any], name: str) -> None:
        self.entry_count += 1
        if entry["kind"] == KIND_DIR:
            self._close_dir(entry, name)
            return
        if entry["kind"] != KIND_FILE:  # symlink, FIFO, socket, device: never followed, never a replica
            self.sink.add("bronze_dir_entries", {
                "log_dir": self.log_dir, "entry_name": name, "entry_kind": SPECIAL_ENTRY, "is_dir": False,
                "name_error": special_entry_text(entry), "bytes": entry.get("size"), "segment_count": None,
                "newest_mtime": millis_to_datetime(entry.get("mtime_ms")), "pm_status": "not_applicable",
            })
            self._top_file(entry, name)
            return
        classified = log_dir_names.classify_entry(name, is_dir=False, log_dir=self.kafka_log_dir)
        self.sink.add("bronze_dir_entries", {
            "log_dir": self.log_dir, "entry_name": name, "entry_kind": classified.kind, "is_dir": False,
            "topic": classified.topic, "partition": classified.partition, "suffix_id": classified.suffix_id,
            "name_error": classified.error.message if classified.error else None, "bytes": entry.get("size"),
            "segment_count": None, "newest_mtime": millis_to_datetime(entry.get("mtime_ms")),
            "pm_status": "not_applicable",
        })
        self._top_file(entry, name)

    def _top_file(self, entry: Dict[str, Any], name: str) -> None:
        outcome = FileOutcome()
        if entry["kind"] != KIND_FILE:
            outcome.note = f"{entry['kind']}" + (f" -> {entry['target']}" if entry.get("target") else "")
            self._file_row(entry, "other", outcome)
            return
        if name == "meta.properties":
            kind = "meta_properties"
            data = self._content(entry, outcome)
            if data is not None:
                self.meta = properties_files.parse_meta_properties(bytes(data))
                outcome.rows = 1
                if self.meta.error is not None:
                    outcome.fail(self.meta.error)
            else:
                self.meta_error = outcome.error
        elif name == metadata_log.BOOTSTRAP_FILE_NAME:
            kind = "bootstrap_checkpoint"
            self.has_bootstrap = True
            self._metadata_file(entry, outcome, "bootstrap", f"{self.log_dir}/{name}", None)
        elif name.endswith("-checkpoint"):
            kind = "checkpoint"
            data = self._content(entry, outcome)
            if data is not None:
                result = properties_files.parse_offset_checkpoint(bytes(data), self._kafka_path(entry["path"]))
                if result.error is not None:
                    outcome.fail(result.error)
                for item in result.entries:
                    self.sink.add(CHECKPOINTS, {"log_dir": self.log_dir, "checkpoint": name, "topic": item.topic,
                                                "partition": item.partition, "offset": item.offset,
                                                "source_file": self._path(entry["path"])})
                    outcome.rows += 1
        else:
            kind = "other"
        self._file_row(entry, kind, outcome)

    def _child(self, entry: Dict[str, Any], parent: str, name: str) -> None:
        if self.current is None or self.current.name != parent:
            self.current = _OpenDir(parent)
        current = self.current
        current.add_mtime(entry.get("mtime_ms"))
        if entry["kind"] == KIND_DIR:
            return  # a folder inside a replica dir: listed by the walk, never descended
        outcome = FileOutcome()
        if entry["kind"] != KIND_FILE:
            outcome.note = entry["kind"] + (f" -> {entry['target']}" if entry.get("target") else "")
            self._file_row(entry, "other", outcome)
            return
        current.bytes += entry.get("size") or 0
        mtime = entry.get("mtime_ms")
        if mtime is not None and (current.oldest_file_mtime_ms is None or mtime < current.oldest_file_mtime_ms):
            current.oldest_file_mtime_ms = mtime
        pf = classify_partition_file(name)
        in_metadata_dir = parent == METADATA_DIR
        if pf.kind == "log":
            kind = "metadata_segment" if in_metadata_dir else "data_segment"
            if pf.state is None and pf.offset is not None:
                current.segment_count += 1
                if current.log_start_offset is None or pf.offset < current.log_start_offset:
                    current.log_start_offset = pf.offset
                if current.newest_segment_offset is None or pf.offset > current.newest_segment_offset:
                    current.newest_segment_offset = pf.offset
                if entry.get("segment") is not None:
                    current.summaries[pf.offset] = (entry["segment"], entry.get("size") or 0, entry["path"])
                if in_metadata_dir:
                    self._metadata_file(entry, outcome, "log", f"{self.log_dir}/{METADATA_DIR}", None)
                elif self.options.read_data_segment_headers and self.open_file is not None:
                    self._segment_headers(entry, outcome, parent, pf.offset)
        else:
            kind = CHILD_FILE_KINDS.get(pf.kind, "other")
            if pf.kind == "partition_metadata" and pf.state is None:
                current.pm_mtime_ms = mtime
                data = self._content(entry, outcome)
                if data is not None:
                    current.pm = partition_metadata(bytes(data), self._kafka_path(entry["path"]))
                    outcome.rows = 1
                    if current.pm.error is not None:
                        outcome.fail(current.pm.error)
                else:
                    current.pm = outcome.error or DecodeError("io_error", outcome.note or "not readable")
            elif pf.kind == "metadata_snapshot" and in_metadata_dir and pf.state is None:
                self._metadata_file(entry, outcome, "snapshot", f"{self.log_dir}/{METADATA_DIR}", pf.offset)
            elif pf.kind == "producer_snapshot" and pf.state is None:
                self._producer_snapshot(entry, outcome, parent, pf.offset)
            elif pf.kind == "leader_epoch_checkpoint" and pf.state is None:
                self._leader_epochs(entry, outcome, parent)
            elif pf.kind == "quorum_state" and pf.state is None:
                data = self._content(entry, outcome)
                if data is not None:
                    result = json_state_files.parse_quorum_state(bytes(data), self._kafka_path(entry["path"]))
                    if result.error is not None:
                        outcome.fail(result.error)
        self._file_row(entry, kind, outcome)

    def _classified(self, current: _OpenDir):
        if current.classified is None:
            current.classified = log_dir_names.classify_entry(current.name, is_dir=True, log_dir=self.kafka_log_dir)
        return current.classified

    def _leader_epochs(self, entry: Dict[str, Any], outcome: FileOutcome, parent: str) -> None:
        """The entries of a leader-epoch-checkpoint Kafka can load; a file it cannot is quarantined, no rows."""
        data = self._content(entry, outcome)
        if data is None:
            return
        error = leader_epoch_error(bytes(data), self._kafka_path(entry["path"]))
        if error is not None:
            outcome.fail(error)
            return
        entries, loaded = leader_epochs_loaded(bytes(data))
        if loaded.error is not None:
            outcome.fail(loaded.error)
            return
        classified = self._classified(self.current)
        for position, (epoch, start) in enumerate(entries):
            self.current.epoch_rows.append({
                "log_dir": self.log_dir, "entry_name": parent, "topic": classified.topic,
                "partition": classified.partition, "position": position, "epoch": epoch, "start_offset": start,
                "kafka_keeps": loaded.kept[position], "source_file": self._path(entry["path"]),
            })
        outcome.rows = len(entries)

    def _close_dir(self, entry: Dict[str, Any], name: str) -> None:
        current = self.current if self.current is not None and self.current.name == name else _OpenDir(name)
        self.current = None
        current.add_mtime(entry.get("mtime_ms"))
        classified = self._classified(current)
        if name == METADATA_DIR:
            self.has_metadata_log = True
        pm = current.pm
        topic_id = pm_version = pm_message = None
        if not classified.is_replica:
            pm_status = "not_applicable"
        elif pm is None:
            pm_status = "missing"
        elif isinstance(pm, DecodeError):  # present but unreadable: Kafka's IOException takes the log dir offline
            pm_status, pm_message = "log_dir_offline", pm.message
        else:
            pm_status, topic_id, pm_version = pm.outcome, pm.topic_id, pm.version
            pm_message = pm.kafka_read() if pm.outcome != "ok" else None
        error = flag_error(entry)
        self.sink.add("bronze_dir_entries", {
            "log_dir": self.log_dir, "entry_name": name, "entry_kind": classified.kind, "is_dir": True,
            "topic": classified.topic, "partition": classified.partition, "suffix_id": classified.suffix_id,
            "name_error": (classified.error.message if classified.error else None)
            or (f"listing failed: {error.message}" if error else None),
            "bytes": current.bytes, "segment_count": current.segment_count,
            "newest_mtime": millis_to_datetime(current.newest_mtime_ms),
            "first_written": millis_to_datetime(current.pm_mtime_ms if current.pm_mtime_ms is not None
                                                else current.oldest_file_mtime_ms),
            "log_start_offset": current.log_start_offset, "newest_segment_offset": current.newest_segment_offset,
            "pm_status": pm_status, "pm_message": pm_message, "pm_version": pm_version, "topic_id": topic_id,
            **segment_end_columns(current.summaries, current.newest_segment_offset),
        })
        self._marker_rows(current, name)
        for row in current.producer_rows:
            row["topic_id"] = topic_id
            self.sink.add("bronze_producer_states", row)
        for row in current.epoch_rows:
            row["topic_id"] = topic_id
            self.sink.add("bronze_leader_epochs", row)

    # ------------------------------------------------------------------ decoders
    def _metadata_file(self, entry: Dict[str, Any], outcome: FileOutcome, section: str, copy_id: str,
                       snapshot_end: Optional[int]) -> None:
        """Bootstrap files: records now. Log segments and snapshots: batch summaries and a locator (records
        only for the authoritative copy, in the second pass), or records now when the file cannot be reopened."""
        data = self._content(entry, outcome, large=True)
        if data is None:
            return
        source = {"copy_id": copy_id, "source_file": self._path(entry["path"]),
                  "source_kind": {"log": "segment", "snapshot": "snapshot", "bootstrap": "bootstrap"}[section],
                  "section": section, "snapshot_end_offset": snapshot_end}
        locator = self.locate(entry["path"]) if self.locate is not None else None
        try:
            for block in metadata_files.first_pass(data, self.sink, outcome, source, locator,
                                                   self.options.decompression_limit_bytes):
                self.sink.add_block(metadata_files.RECORDS, block)  # decode_entries flushes between entries
        finally:
            if hasattr(data, "close"):
                data.close()

    def _producer_snapshot(self, entry: Dict[str, Any], outcome: FileOutcome, parent: str,
                           offset: Optional[int]) -> None:
        data = self._content(entry, outcome)
        if data is None:
            return
        decoded = decode_producer_snapshot(bytes(data))
        if decoded.error is not None:
            outcome.fail(decoded.error)
        classified = self._classified(self.current)
        for e in decoded.entries:
            self.current.producer_rows.append({
                "log_dir": self.log_dir, "entry_name": parent, "topic": classified.topic,
                "partition": classified.partition, "source_file": self._path(entry["path"]),
                "source_kind": "producer_snapshot", "snapshot_offset": offset, "producer_id": e.producer_id,
                "producer_epoch": e.epoch, "last_sequence": e.last_sequence, "last_offset": e.last_offset,
                "timestamp": millis_to_datetime(e.timestamp), "coordinator_epoch": e.coordinator_epoch,
                "current_txn_first_offset": e.current_txn_first_offset,
            })
            outcome.rows += 1

    def _segment_headers(self, entry: Dict[str, Any], outcome: FileOutcome, parent: str, base: int) -> None:
        """Producer ids of a data segment's batches, from the 61-byte headers only (raw trees)."""
        try:
            handle = self.open_file(entry["path"])
        except OSError as exc:
            outcome.fail(DecodeError("io_error", f"cannot open: {exc}"))
            return
        producers: Dict[int, dict] = {}
        limit = self.options.max_segment_scan_bytes
        try:
            for item in record_batch.scan_headers(handle):
                if isinstance(item, DecodeError):
                    outcome.fail(item)
                    break
                if not isinstance(item, record_batch.BatchHeader):
                    continue
                if item.position >= limit:
                    outcome.note = f"scanned the first {limit} bytes only"
                    break
                if item.producer_id < 0:
                    continue
                p = producers.setdefault(item.producer_id, {"epoch": item.producer_epoch, "seq": item.last_sequence,
                                                            "last": item.last_offset, "ts": item.max_timestamp})
                if (item.producer_epoch, item.last_offset) >= (p["epoch"], p["last"]):
                    p.update(epoch=item.producer_epoch, seq=item.last_sequence, last=item.last_offset)
                p["ts"] = max(p["ts"], item.max_timestamp)
        finally:
            handle.close()
        classified = self._classified(self.current)
        for pid in sorted(producers):
            p = producers[pid]
            self.current.producer_rows.append({
                "log_dir": self.log_dir, "entry_name": parent, "topic": classified.topic,
                "partition": classified.partition, "source_file": self._path(entry["path"]),
                "source_kind": "batch_header", "snapshot_offset": None, "producer_id": pid,
                "producer_epoch": p["epoch"], "last_sequence": p["seq"], "last_offset": p["last"],
                "timestamp": millis_to_datetime(p["ts"]),
            })
            outcome.rows += 1

    def _marker_rows(self, current: _OpenDir, parent: str) -> None:
        """The last transaction marker of each producer in the summarized segments (ends an open transaction)."""
        classified = self._classified(current)
        last: Dict[int, tuple] = {}
        for base in sorted(current.summaries):
            summary, _, path = current.summaries[base]
            for producer_id, epoch, offset in summary.get("markers") or ():
                last[producer_id] = (epoch, offset, path)
        for producer_id in sorted(last):
            epoch, offset, path = last[producer_id]
            current.producer_rows.append({
                "log_dir": self.log_dir, "entry_name": parent, "topic": classified.topic,
                "partition": classified.partition, "source_file": self._path(path), "source_kind": "txn_marker",
                "snapshot_offset": None, "producer_id": producer_id, "producer_epoch": epoch, "last_offset": offset,
            })

    # ------------------------------------------------------------------ end of the log dir
    def finish(self, root: Optional[Dict[str, Any]] = None) -> None:
        """Emit the bronze_log_dirs row (called on the log dir's own entry, or when its entries stop)."""
        if self.finished:
            return
        self.finished = True
        if root is not None:
            self._seen_mtime(root.get("mtime_ms"))
        meta = self.meta
        error = (meta.error if meta is not None else None) or self.meta_error
        if meta is None and error is None:
            error = DecodeError("missing_key", "no meta.properties in this log dir" + (
                " (a folder holding Kafka's checkpoint files)" if self.headless else ""))
        root_error = flag_error(root) if root is not None else None
        if error is None and root_error is not None:
            error = root_error
        if root_error is not None:  # the log dir could not be listed whole: what is absent may just be unread
            fact = damage_fact({"path": self.log_dir, "file_kind": "log_dir", "status": "quarantined",
                                "error_kind": root_error.kind, "error_message": root_error.message,
                                "broker_id": meta.node_id if meta else None, "rows_produced": self.entry_count,
                                "bytes": None})
            if fact is not None:
                self.sink.add("_ingest_facts", fact)
        self.sink.add("bronze_log_dirs", {
            "cluster_id": meta.cluster_id if meta else None, "broker_id": meta.node_id if meta else None,
            "log_dir": self.log_dir, "directory_id": meta.directory_id if meta else None,
            "meta_version": meta.version if meta else None, "host": self.host,
            "has_metadata_log": self.has_metadata_log, "entry_count": self.entry_count,
            "error_kind": error.kind if error else None, "error_message": error.message if error else None,
        })
        self.sink.seen_time(millis_to_datetime(self.newest_mtime_ms))
        if self.has_bootstrap:
            self.sink.add("_ingest_facts", {"fact": "bootstrap_source", "source": f"{self.log_dir}/bootstrap.checkpoint",
                                            "text_value": self.log_dir})
        if self.has_metadata_log:
            self.sink.add("_ingest_facts", {"fact": "metadata_copy", "source": f"{self.log_dir}/{METADATA_DIR}",
                                            "text_value": self.log_dir})


def decode_entries(entries, sink: RowSink, options: DecodeOptions, display: Callable[[str], str],
                   host: Optional[str] = None, open_file_for: Optional[Callable[[str], Callable[[str], Any]]] = None,
                   headless: bool = False, kafka_name: Optional[Callable[[str], str]] = None,
                   locate_for: Optional[Callable[[str], Callable[[str], Dict[str, Any]]]] = None):
    """Feed a stream of entries (one or more log dirs, each contiguous) to one decoder per log dir.

    Yields ready Arrow batches between entries so memory stays flat. ``display`` maps the entry's
    ``log_dir`` to the table form, ``kafka_name`` to the form used inside Kafka's messages (default: the
    table form); ``open_file_for(log_dir)`` gives the raw-tree file opener; ``locate_for(log_dir)`` gives
    ``relative path -> locator`` for metadata files the second pass may reopen (None: decode them now).
    """
    decoder: Optional[LogDirDecoder] = None
    for entry in entries:
        if decoder is None or decoder.finished or entry["log_dir"] != decoder.raw_log_dir:
            if decoder is not None:
                decoder.finish()
            decoder = LogDirDecoder(sink, options, display(entry["log_dir"]), host,
                                    open_file_for(entry["log_dir"]) if open_file_for else None, headless,
                                    raw_log_dir=entry["log_dir"],
                                    kafka_log_dir=kafka_name(entry["log_dir"]) if kafka_name else None,
                                    locate=locate_for(entry["log_dir"]) if locate_for else None)
        decoder.feed(entry)
        yield from sink.ready()
    if decoder is not None:
        decoder.finish()

