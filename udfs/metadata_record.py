"""The row every metadata-log reader yields (binary segments, snapshots, dump-log text): one shape, one table."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, List, Optional

from .errors import DecodeError

# Control record types as Kafka names them (ControlRecordType.java); metadata records use the
# MetadataRecordType enum name (TOPIC_RECORD, PARTITION_CHANGE_RECORD, ...).
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}

# Same text as json.dumps(data, separators=(",", ":"), ensure_ascii=False), but the encoder is built once:
# json.dumps() with options builds a JSONEncoder, and JSONEncoder.encode() a C encoder, on every call. Decoded
# data is never cyclic, so no circular check. bench/bench_decode.py (1M records): payload JSON went from
# ~3.0 us to ~1.2 us per record (cProfile/timeit on the perf segment).
_PAYLOAD_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)
try:
    from json.encoder import c_make_encoder as _c_make_encoder
    from json.encoder import encode_basestring as _encode_basestring
except ImportError:  # pragma: no cover - CPython always has the C encoder
    _c_make_encoder = None
_C_PAYLOAD_JSON = (_c_make_encoder(None, _PAYLOAD_JSON.default, _encode_basestring, None, ":", ",", False, False,
                                   True) if _c_make_encoder is not None else None)


# What a generated writer raises for a dict of another shape (message_codegen_runtime.JSON_MISSES; its
# JsonShapeMismatch is a ValueError). Not imported from there: this module stays free of the codec.
_WRITER_MISSES = (ValueError, KeyError, TypeError, AttributeError)


def payload_json_text(data) -> str:
    """Compact JSON of a decoded record, byte-equal to Kafka's ``"data":{...}``."""
    if _C_PAYLOAD_JSON is not None:
        return "".join(_C_PAYLOAD_JSON(data, 0))
    return _PAYLOAD_JSON.encode(data)


@dataclass
class MetadataRecord:
    """One KRaft metadata or control record.

    ``data`` is a dict in Kafka's DumpLogSegments JSON order (tagged fields at their default omitted), or None
    when the record could not be decoded; then ``error`` says why and ``raw_value`` keeps the bytes.
    """

    offset: int
    batch_base_offset: int
    batch_last_offset: int
    leader_epoch: int
    timestamp: int  # batch maxTimestamp (ms since epoch) == append time for metadata batches
    is_control: bool
    type: Optional[str]  # "TOPIC_RECORD", ... or control "LEADER_CHANGE", ...; None if unknown
    api_key: Optional[int]  # metadata apiKey; for control records the control type id
    version: Optional[int]
    data: Optional[dict]
    error: Optional[DecodeError] = None
    raw_value: Optional[bytes] = None
    position: Optional[int] = None  # byte position of the batch in its file, when binary

    # Not a dataclass field (fields, repr, == and the positional order stay as they are): the generated JSON
    # writer of the record's (type, version), set by udfs.metadata_log on records whose ``data`` its generated
    # decoder produced. ``payload_json`` then skips the generic encoder (bench/bench_decode.py, 1M records:
    # ~1.0 us -> ~0.45 us per PartitionChangeRecord). Dropped when a record is pickled or copied.
    _json_writer = None

    def payload_json(self) -> Optional[str]:
        """``data`` as compact JSON, byte-equal to Kafka's ``"data":{...}`` part of the dump-log payload.

        Treat ``data`` as read-only: a decoded record renders it with its version's generated writer, which
        checks the key set (and falls back to the generic encoder when keys differ) but trusts value types.
        """
        data = self.data
        if data is None:
            return None
        writer = self._json_writer
        if writer is not None:
            try:
                return writer(data)
            except _WRITER_MISSES:
                pass
        return payload_json_text(data)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_json_writer", None)  # generated functions do not pickle; the generic encoder is exact
        return state

    def as_json_line(self) -> dict[str, Any]:
        """The object ``kafka-recon decode`` prints for this record."""
        out: dict[str, Any] = {"offset": self.offset, "type": self.type, "version": self.version, "data": self.data}
        if self.is_control:
            out["control"] = True
        if self.error is not None:
            out["error"] = self.error.as_dict()
        return out


@dataclass
class BatchRows:
    """One batch's records as its decoder found them, for callers that want columns rather than objects.

    ``rows`` holds, in order, ``(offset, frame, data, json_writer)`` for each record the generated decoders read
    (``frame``: ``(type, decoder, api_key, version)``; not a control record, no error), or with :attr:`fused`
    ``(offset, frame, JSON text, values)`` from the fused row functions (:mod:`udfs.message_codegen_rows`), and a
    :class:`MetadataRecord` for any other record (control records, the checked decoder's, errors; counted by
    :attr:`others`). The batch's fields are shared by every tuple row. Why: building a MetadataRecord per
    record, then reading its fields back a column at a time, was ~1 CPU s of the ~9 per million records into
    bronze (jobs/ingest/metadata_rows.py, ``RecordColumns.add_batch``).
    """

    base_offset: int
    last_offset: int
    leader_epoch: int
    timestamp: int
    position: Optional[int]
    rows: list
    fused: bool = False

    @property
    def others(self) -> int:
        """How many rows are MetadataRecords rather than the decoders' tuples (0: every row is a tuple)."""
        return len(self.rows) - list(map(type, self.rows)).count(tuple)

    def records(self) -> List[MetadataRecord]:
        """The rows as MetadataRecords (exactly what the readers yield one at a time); not of fused rows, which
        hold no dict."""
        if self.fused and self.others < len(self.rows):
            raise ValueError("fused rows hold no record dicts: read them without row_fields")
        base, last, epoch, ts, position = (self.base_offset, self.last_offset, self.leader_epoch, self.timestamp,
                                           self.position)
        out = []
        append = out.append
        for row in self.rows:
            if type(row) is tuple:
                offset, frame, data, writer = row
                # Positional arguments: keyword construction of this 13-field dataclass cost ~3x as much
                # (timeit); test_metadata_log.py pins the field order.
                row = MetadataRecord(offset, base, last, epoch, ts, False, frame[0], frame[2], frame[3], data, None,
                                     None, position)
                row._json_writer = writer
            append(row)
        return out
