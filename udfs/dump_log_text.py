"""Parse ``kafka-dump-log`` (``kafka.tools.DumpLogSegments``) text back into metadata records.

Some sites can only hand over Kafka's own dump of ``__cluster_metadata``; this turns it into the same
:class:`~udfs.metadata_record.MetadataRecord` rows the binary decoder (udfs/metadata_log.py) yields.
Line shapes from core/src/main/scala/kafka/tools/DumpLogSegments.scala (apache/kafka@1eb7644; same on 3.9):

- ``Dumping <file>``, then ``Log starting offset: N`` (``Starting offset: N`` before 3.3),
  ``Snapshot end offset: N, epoch: E`` or ``KRaft bootstrap snapshot``.
- Batch line, magic 2: ``baseOffset: B lastOffset: L count: N baseSequence: .. lastSequence: .. producerId: ..
  producerEpoch: .. partitionLeaderEpoch: E isTransactional: .. isControl: .. deleteHorizonMs: OptionalLong..
  position: P CreateTime: T size: S magic: 2 compresscodec: none crc: C isvalid: true``
  (``deleteHorizonMs`` since 3.2); magic < 2: ``offset: L position: .. <TimestampType>: .. size: ..``.
- Record line: ``| offset: O CreateTime: T keySize: K valueSize: V sequence: S headerKeys: [..]`` then, for
  control records, `` endTxnMarker: COMMIT coordinatorEpoch: N``, `` SnapshotHeader {json}``,
  `` SnapshotFooter {json}``, `` KRaftVersion {json}``, `` KRaftVoters {json}`` or
  `` controlType: LEADER_CHANGE(2)`` (not decoded by the tool); for data records `` payload: <p>`` where
  ``<p>`` is ``{"type":..,"version":..,"data":{..}}`` or ``Error at <offset>, skipping. <message>``.
- ``--skip-record-metadata``: a data record is just `` payload: <p>``; a control record is an empty line.
  Offsets are then inferred from the batch line (baseOffset + index).
- Trailer ``Found N invalid bytes at the end of <name>``.

Lines starting with ``# `` are comments (our captures and fixtures add them; Kafka never prints them).
Anything unrecognised is reported as a ``malformed_line`` error of the file section, never raised.
Control records become ``type`` = the ControlRecordType name, ``api_key`` = its id, ``version`` = 0 (Kafka
reads control values at version 0), ``data`` = the printed JSON; ``LEADER_CHANGE`` has ``data=None`` (the tool
does not print it) and ``COMMIT``/``ABORT`` get ``{"version": 0, "coordinatorEpoch": N}`` (the tool does not
print the marker version).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from .errors import DecodeError
from .metadata_record import CONTROL_TYPES, MetadataRecord

_CONTROL_IDS = {name: type_id for type_id, name in CONTROL_TYPES.items()}
CONTROL_VALUE_VERSION = 0  # ControlRecordUtils.*_CURRENT_VERSION

_TS_TYPES = "CreateTime|LogAppendTime|NoTimestampType"
_BATCH_V2 = re.compile(
    r"baseOffset: (?P<base_offset>-?\d+) lastOffset: (?P<last_offset>-?\d+) count: (?P<count>-?\d+|null)"
    r" baseSequence: (?P<base_sequence>-?\d+) lastSequence: (?P<last_sequence>-?\d+)"
    r" producerId: (?P<producer_id>-?\d+) producerEpoch: (?P<producer_epoch>-?\d+)"
    r" partitionLeaderEpoch: (?P<partition_leader_epoch>-?\d+) isTransactional: (?P<is_transactional>true|false)"
    r" isControl: (?P<is_control>true|false)"
    r"(?: deleteHorizonMs: (?P<delete_horizon_ms>OptionalLong\.empty|OptionalLong\[-?\d+\]))?"
    r" position: (?P<position>-?\d+) (?P<timestamp_type>" + _TS_TYPES + r"): (?P<max_timestamp>-?\d+)"
    r" size: (?P<size>-?\d+) magic: (?P<magic>-?\d+) compresscodec: (?P<compresscodec>\w+)"
    r" crc: (?P<crc>-?\d+) isvalid: (?P<is_valid>true|false)",
    re.ASCII,
)
_BATCH_LEGACY = re.compile(
    r"offset: (?P<last_offset>-?\d+) position: (?P<position>-?\d+) (?P<timestamp_type>" + _TS_TYPES + r"):"
    r" (?P<max_timestamp>-?\d+) size: (?P<size>-?\d+) magic: (?P<magic>-?\d+)"
    r" compresscodec: (?P<compresscodec>\w+) crc: (?P<crc>-?\d+) isvalid: (?P<is_valid>true|false)",
    re.ASCII,
)
_RECORD = re.compile(
    r"\| offset: (?P<offset>-?\d+) (?P<timestamp_type>" + _TS_TYPES + r"): (?P<timestamp>-?\d+)"
    r" keySize: (?P<key_size>-?\d+) valueSize: (?P<value_size>-?\d+)"
    r"(?: sequence: (?P<sequence>-?\d+) headerKeys: \[(?P<header_keys>[^\]]*)\])?"
    r"(?: isValid: (?:true|false) crc: \d+\})?"
    r"(?P<rest>.*)",
    re.ASCII | re.DOTALL,
)
_END_TXN = re.compile(r" endTxnMarker: (?P<type>COMMIT|ABORT) coordinatorEpoch: (?P<epoch>-?\d+)$", re.ASCII)
_CONTROL_JSON = re.compile(r" (?P<name>SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters) (?P<json>\{.*\})$",
                           re.DOTALL)
_CONTROL_NAMES = {"SnapshotHeader": "SNAPSHOT_HEADER", "SnapshotFooter": "SNAPSHOT_FOOTER",
                  "KRaftVersion": "KRAFT_VERSION", "KRaftVoters": "KRAFT_VOTERS"}
_CONTROL_TYPE = re.compile(r" controlType: (?P<name>\w+)\((?P<id>-?\d+)\)$", re.ASCII)
_ERROR_PAYLOAD = re.compile(r"Error at (?P<offset>-?\d+), skipping\. (?P<message>.*)$", re.DOTALL)
_DUMPING = re.compile(r"Dumping (?P<path>.*)$", re.DOTALL)
_LOG_START = re.compile(r"(?:Log starting|Starting) offset: (?P<offset>-?\d+)$", re.ASCII)
_SNAPSHOT_HEADER = re.compile(r"Snapshot end offset: (?P<offset>-?\d+), epoch: (?P<epoch>-?\d+)$", re.ASCII)
_TRAILER = re.compile(r"Found (?P<bytes>\d+) invalid bytes at the end of (?P<name>.*)$", re.DOTALL)

_BATCH_INTS = ("base_offset", "last_offset", "base_sequence", "last_sequence", "producer_id", "producer_epoch",
               "partition_leader_epoch", "position", "max_timestamp", "size", "magic", "crc")


@dataclass
class DumpedFile:
    """One ``Dumping <file>`` section of the output (``path`` None if the output had no such header)."""

    path: Optional[str] = None
    file_kind: Optional[str] = None  # segment | snapshot | bootstrap
    log_start_offset: Optional[int] = None
    snapshot_end_offset: Optional[int] = None
    snapshot_epoch: Optional[int] = None
    batches: List[Dict[str, Any]] = field(default_factory=list)
    records: List[MetadataRecord] = field(default_factory=list)
    errors: List[DecodeError] = field(default_factory=list)
    invalid_trailing_bytes: Optional[int] = None
    skip_record_metadata: bool = False  # records were printed in the --skip-record-metadata form


def _batch_dict(m: "re.Match[str]", line_no: int) -> Dict[str, Any]:
    g = m.groupdict()
    batch: Dict[str, Any] = {"line": line_no}
    for key in _BATCH_INTS:
        if g.get(key) is not None:
            batch[key] = int(g[key])
    if "base_offset" not in batch:  # magic < 2 prints only the last (wrapper) offset
        batch["base_offset"] = batch["last_offset"]
    count = g.get("count")
    batch["count"] = int(count) if count not in (None, "null") else None
    batch["is_transactional"] = g.get("is_transactional") == "true"
    batch["is_control"] = g.get("is_control") == "true"
    horizon = g.get("delete_horizon_ms")
    batch["delete_horizon_ms"] = int(horizon[13:-1]) if horizon and horizon.startswith("OptionalLong[") else None
    batch["timestamp_type"] = g["timestamp_type"]
    batch["compresscodec"] = g["compresscodec"].lower()
    batch["is_valid"] = g["is_valid"] == "true"
    batch.setdefault("partition_leader_epoch", -1)
    return batch


def _error_kind(message: str) -> str:
    """Map the text after ``Error at N, skipping.`` to one of our error kinds."""
    checks = (("frame version", "bad_frame_version"), ("Unknown metadata id", "unknown_api_key"),
              ("Can't read version", "unknown_version"), ("was too large", "value_too_large"),
              ("garbage after", "garbage_after_frame"), ("is not valid for version", "invalid_tag"),
              ("UTF-8", "invalid_utf8"), ("Tried to read", "length_out_of_buffer"),
              ("BufferUnderflow", "length_out_of_buffer"), ("Error while reading", "varint_too_long"))
    for needle, kind in checks:
        if needle in message:
            return kind
    return "dump_log_error"


class _Parser:
    """Streaming state machine over the lines; emits ('file', DumpedFile), ('batch', dict), ('record', rec)
    and ('error', DecodeError) events in input order."""

    def __init__(self) -> None:
        self.current = DumpedFile()
        self.announced = False  # whether self.current was emitted as a 'file' event yet
        self.batch: Optional[Dict[str, Any]] = None
        self.batch_records = 0
        self.saw_record_metadata = False  # a "| offset:" line in this section: empty lines are then blank

    def _announce(self) -> Iterator[Tuple[str, Any]]:
        if not self.announced:
            self.announced = True
            yield "file", self.current

    def _record(self, offset: int, **kw: Any) -> MetadataRecord:
        b = self.batch or {}
        return MetadataRecord(
            offset=offset, batch_base_offset=b.get("base_offset", offset), batch_last_offset=b.get("last_offset", offset),
            leader_epoch=b.get("partition_leader_epoch", -1), timestamp=b.get("max_timestamp", -1),
            is_control=bool(b.get("is_control", False)), position=b.get("position"), **kw)

    def _next_offset(self) -> Tuple[int, Optional[DecodeError]]:
        """Offset of the next record of the current batch when the line does not print it."""
        b = self.batch
        if b is None:
            return -1, DecodeError("malformed_line", "record line before any batch line: offset unknown")
        offset = b["base_offset"] + self.batch_records
        if offset > b["last_offset"]:
            return offset, DecodeError("malformed_line", f"more record lines than batch {b['base_offset']}.."
                                       f"{b['last_offset']} has offsets; inferred offset {offset} is outside it")
        return offset, None

    def _close_batch(self, line_no: int) -> Iterator[Tuple[str, Any]]:
        b = self.batch
        if b is not None and self.batch_records and b.get("count") is not None and self.batch_records != b["count"]:
            yield "error", DecodeError(
                "record_count_mismatch",
                f"batch at offset {b['base_offset']} says count {b['count']} but {self.batch_records} record lines "
                "follow", line=b["line"])
        self.batch = None
        self.batch_records = 0

    def feed(self, raw_line: str, line_no: int) -> Iterator[Tuple[str, Any]]:
        line = raw_line.rstrip("\r\n")
        if line.startswith("# "):
            return
        if line.startswith("| offset: ") or line.startswith(" payload: ") or self._is_skipped_control(line):
            yield from self._announce()
            yield from self._record_line(line, line_no)
            return
        if line.strip() == "":
            return
        if not line.startswith("Dumping "):
            yield from self._announce()
        m = _BATCH_V2.fullmatch(line) or _BATCH_LEGACY.fullmatch(line)
        if m:
            yield from self._close_batch(line_no)
            self.batch = _batch_dict(m, line_no)
            self.batch_records = 0
            self.current.batches.append(self.batch)
            yield "batch", self.batch
            return
        m = _DUMPING.fullmatch(line)
        if m:
            yield from self._close_batch(line_no)
            if self.announced or self.current.batches:
                self.current = DumpedFile()
            self.current.path = m.group("path")
            self.announced = False
            self.saw_record_metadata = False
            yield from self._announce()
            name = self.current.path.rsplit("/", 1)[-1]
            self.current.file_kind = ("bootstrap" if name == "bootstrap.checkpoint" else
                                      "snapshot" if name.endswith(".checkpoint") else
                                      "segment" if name.endswith(".log") else None)
            return
        m = _LOG_START.fullmatch(line)
        if m:
            self.current.log_start_offset = int(m.group("offset"))
            self.current.file_kind = self.current.file_kind or "segment"
            return
        m = _SNAPSHOT_HEADER.fullmatch(line)
        if m:
            self.current.snapshot_end_offset = int(m.group("offset"))
            self.current.snapshot_epoch = int(m.group("epoch"))
            self.current.file_kind = "snapshot"
            return
        if line == "KRaft bootstrap snapshot":
            self.current.file_kind = "bootstrap"
            return
        m = _TRAILER.fullmatch(line)
        if m:
            yield from self._close_batch(line_no)
            self.current.invalid_trailing_bytes = int(m.group("bytes"))
            yield "error", DecodeError("truncated_batch", line, line=line_no)
            return
        yield "error", DecodeError("malformed_line", f"unrecognised kafka-dump-log line: {line[:200]}", line=line_no)

    def _is_skipped_control(self, line: str) -> bool:
        """An empty line stands for a control record only in the --skip-record-metadata form."""
        b = self.batch
        return (line == "" and b is not None and bool(b.get("is_control")) and not self.saw_record_metadata
                and (b.get("count") is None or self.batch_records < b["count"]))

    def _record_line(self, line: str, line_no: int) -> Iterator[Tuple[str, Any]]:
        in_control = bool(self.batch and self.batch.get("is_control"))
        if line.startswith("| offset: "):
            m = _RECORD.fullmatch(line)
            if not m:
                yield "error", DecodeError("malformed_line", f"unrecognised record line: {line[:200]}", line=line_no)
                return
            self.saw_record_metadata = True
            offset = int(m.group("offset"))
            rest = m.group("rest")
            if self.batch is None:
                yield "error", DecodeError("malformed_line", "record line before any batch line", line=line_no)
            elif not self.batch["base_offset"] <= offset <= self.batch["last_offset"]:
                yield "error", DecodeError(
                    "malformed_line", f"record offset {offset} outside its batch {self.batch['base_offset']}.."
                    f"{self.batch['last_offset']}", line=line_no)
        else:
            self.current.skip_record_metadata = True
            b = self.batch
            if b is not None and self.batch_records == 0 and b.get("count") is not None \
                    and b["count"] != b["last_offset"] - b["base_offset"] + 1:
                yield "error", DecodeError(
                    "record_count_mismatch", f"batch {b['base_offset']}..{b['last_offset']} holds {b['count']} "
                    "records (offset gaps, e.g. compaction): offsets inferred in --skip-record-metadata output are "
                    "not reliable", line=line_no)
            offset, problem = self._next_offset()
            if problem is not None:
                yield "error", DecodeError(problem.kind, problem.message, line=line_no)
            rest = line
        self.batch_records += 1
        if in_control:
            yield "record", self._control_record(offset, rest, line_no)
        else:
            yield "record", self._data_record(offset, rest, line_no)

    def _control_record(self, offset: int, rest: str, line_no: int) -> MetadataRecord:
        if rest == "":
            # --skip-record-metadata prints control records as empty lines: we know only that one was there.
            return self._record(offset, type=None, api_key=None, version=None, data=None)
        m = _END_TXN.fullmatch(rest)
        if m:
            name = m.group("type")
            return self._record(offset, type=name, api_key=_CONTROL_IDS[name], version=CONTROL_VALUE_VERSION,
                                data={"version": CONTROL_VALUE_VERSION, "coordinatorEpoch": int(m.group("epoch"))})
        m = _CONTROL_JSON.fullmatch(rest)
        if m:
            name = _CONTROL_NAMES[m.group("name")]
            data, error = _load_json_object(m.group("json"), line_no)
            return self._record(offset, type=name, api_key=_CONTROL_IDS[name], version=CONTROL_VALUE_VERSION,
                                data=data, error=error)
        m = _CONTROL_TYPE.fullmatch(rest)
        if m:
            type_id = int(m.group("id"))
            name = CONTROL_TYPES.get(type_id)
            if name is None:
                return self._record(offset, type="UNKNOWN", api_key=type_id, version=None, data=None,
                                    error=DecodeError("unknown_api_key", f"Unknown control record type {type_id}",
                                                      line=line_no))
            return self._record(offset, type=name, api_key=type_id, version=CONTROL_VALUE_VERSION, data=None)
        return self._record(offset, type=None, api_key=None, version=None, data=None,
                            error=DecodeError("malformed_line", f"unrecognised control record text: {rest[:200]}",
                                              line=line_no))

    def _data_record(self, offset: int, rest: str, line_no: int) -> MetadataRecord:
        idx = rest.find(" payload: ")
        if idx < 0:
            # no value printed (not a decoder run, or a null value): nothing to decode
            return self._record(offset, type=None, api_key=None, version=None, data=None)
        payload = rest[idx + len(" payload: "):]
        m = _ERROR_PAYLOAD.fullmatch(payload)
        if m:
            text = payload
            return self._record(offset, type=None, api_key=None, version=None, data=None,
                                error=DecodeError(_error_kind(m.group("message")), text, line=line_no))
        doc, error = _load_json_object(payload, line_no)
        if error is not None:
            return self._record(offset, type=None, api_key=None, version=None, data=None, error=error)
        rtype, version, data = doc.get("type"), doc.get("version"), doc.get("data")
        if not isinstance(rtype, str) or not isinstance(version, int) or isinstance(version, bool) \
                or not isinstance(data, dict):
            return self._record(offset, type=rtype if isinstance(rtype, str) else None, api_key=None,
                                version=version if isinstance(version, int) and not isinstance(version, bool) else None,
                                data=None, error=DecodeError(
                                    "bad_json", 'payload is not {"type":..,"version":..,"data":{..}}', line=line_no))
        return self._record(offset, type=rtype, api_key=_API_KEYS.get(rtype), version=version, data=data)

    def finish(self, line_no: int) -> Iterator[Tuple[str, Any]]:
        yield from self._close_batch(line_no)


def _reject_constant(name: str):
    raise ValueError(f"non-standard JSON token {name}")


def _load_json_object(text: str, line_no: int) -> Tuple[Optional[dict], Optional[DecodeError]]:
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        return None, DecodeError("bad_json", f"not JSON: {exc}", line=line_no)
    if not isinstance(doc, dict):
        return None, DecodeError("bad_json", "JSON is not an object", line=line_no)
    return doc, None


# MetadataRecordType names -> apiKey (metadata/src/main/resources/common/metadata/*.json).
_API_KEYS = {
    "REGISTER_BROKER_RECORD": 0, "UNREGISTER_BROKER_RECORD": 1, "TOPIC_RECORD": 2, "PARTITION_RECORD": 3,
    "CONFIG_RECORD": 4, "PARTITION_CHANGE_RECORD": 5, "FENCE_BROKER_RECORD": 7, "UNFENCE_BROKER_RECORD": 8,
    "REMOVE_TOPIC_RECORD": 9, "DELEGATION_TOKEN_RECORD": 10, "USER_SCRAM_CREDENTIAL_RECORD": 11,
    "FEATURE_LEVEL_RECORD": 12, "CLIENT_QUOTA_RECORD": 14, "PRODUCER_IDS_RECORD": 15,
    "BROKER_REGISTRATION_CHANGE_RECORD": 17, "ACCESS_CONTROL_ENTRY_RECORD": 18,
    "REMOVE_ACCESS_CONTROL_ENTRY_RECORD": 19, "NO_OP_RECORD": 20, "ZK_MIGRATION_STATE_RECORD": 21,
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD": 22, "BEGIN_TRANSACTION_RECORD": 23, "END_TRANSACTION_RECORD": 24,
    "ABORT_TRANSACTION_RECORD": 25, "REMOVE_DELEGATION_TOKEN_RECORD": 26, "REGISTER_CONTROLLER_RECORD": 27,
    "CLEAR_ELR_RECORD": 28,
}


def iter_dump_log_events(lines: Iterable[str]) -> Iterator[Tuple[str, Any]]:
    """The parse as a stream, in input order: ``("file", DumpedFile)`` when a section starts (its header fields
    are filled before its first batch event), ``("batch", dict)``, ``("record", MetadataRecord)`` and
    ``("error", DecodeError)``. The other functions here are built on it."""
    parser = _Parser()
    line_no = 0
    for line_no, line in enumerate(lines, start=1):
        if not isinstance(line, str):
            line = bytes(line).decode("utf-8", "replace")
        yield from parser.feed(line, line_no)
    yield from parser.finish(line_no + 1)


def iter_dump_log_records(lines: Iterable[str]) -> Iterator[MetadataRecord]:
    """Every record in ``kafka-dump-log`` output, in order, across all ``Dumping`` sections; never raises.

    ``lines`` is any iterable of text lines (an open file works). File-level problems (unrecognised lines,
    invalid trailing bytes) are not records: use :func:`parse_dump_log` to see them.

    Example::

        with open("00000000000000000000.log.txt") as f:
            for rec in iter_dump_log_records(f):
                print(rec.offset, rec.type, rec.data)
    """
    for kind, item in iter_dump_log_events(lines):
        if kind == "record":
            yield item


def iter_dump_log_batches(lines: Iterable[str]) -> Iterator[Dict[str, Any]]:
    """Every batch line as a dict: base_offset, last_offset, count, base_sequence, last_sequence,
    producer_id, producer_epoch, partition_leader_epoch, is_transactional, is_control, delete_horizon_ms,
    position, timestamp_type, max_timestamp, size, magic, compresscodec, crc, is_valid, line."""
    for kind, item in iter_dump_log_events(lines):
        if kind == "batch":
            yield item


def parse_dump_log(lines: Iterable[str]) -> List[DumpedFile]:
    """The whole output, one :class:`DumpedFile` per ``Dumping`` section (records, batches, errors)."""
    files: List[DumpedFile] = []
    current = DumpedFile()
    for kind, item in iter_dump_log_events(lines):
        if kind == "file":
            current = item
            files.append(current)
            continue
        if kind == "record":
            current.records.append(item)
        elif kind == "error":
            current.errors.append(item)
        # batches are appended to the section by the parser itself
    return files


__all__ = ["DumpedFile", "iter_dump_log_batches", "iter_dump_log_events", "iter_dump_log_records", "parse_dump_log"]

_events = iter_dump_log_events  # old private name, still used by jobs/ingest/loose_files.py
