"""KRaft metadata log: read records from segments, snapshots and ``bootstrap.checkpoint``; write them too.

Framing (apache/kafka@1eb7644):
- Metadata records sit in non-control batches (raft/.../internals/BatchBuilder.java): null key, attributes 0,
  timestamp delta 0, no headers. The value is an ``AbstractApiMessageSerde`` frame
  (server-common/.../serialization/AbstractApiMessageSerde.java): uvarint frame version (must be 1), uvarint
  apiKey, uvarint version, then the body at that version (``udfs/schemas/metadata_records.json``).
  Frame errors keep Kafka's wording; the record is still yielded, with ``error`` set and ``raw_value`` kept.
- Control records sit in control batches (attribute bit 5): key ``int16 version, int16 type``
  (ControlRecordType.java); ABORT/COMMIT values are ``int16 version, int32 coordinatorEpoch``
  (EndTransactionMarker.java); LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion and Voters values
  are read at version 0 without a version prefix (ControlRecordUtils.java; ``control_records.json``).
- A snapshot ``<endOffset:20d>-<epoch:10d>.checkpoint`` (raft/.../snapshot/RecordsSnapshotWriter.java) is a
  header control batch (SnapshotHeader [+ KRaftVersion [+ Voters]]), data batches, and a footer control
  batch, offsets starting at 0, every batch's partitionLeaderEpoch = the snapshot epoch.

Reading never raises on bad input: batch-level problems (truncated tail, CRC mismatch, legacy magic) become a
:class:`MetadataRecord` with ``error`` set and ``type`` None.
"""
from __future__ import annotations

import struct
from functools import lru_cache
from typing import Iterable, Iterator, List, Optional, Sequence

from . import (
    compression,
    message_codec,
    message_codegen_runtime,
    message_writer,
    record_batch,
    record_encode,
    record_parse,
    wire,
)
from .errors import CorruptInput, DecodeError
from .message_spec import MessageSpec, load_schema
from .metadata_record import CONTROL_TYPES, BatchRows, MetadataRecord
from .record_batch import Batch, BatchHeader, LegacyEntry, SegmentEnd
from .record_encode import NewRecord

FRAME_VERSION = 1
CONTROL_KEY = struct.Struct(">hh")  # version, type (ControlRecordType.CURRENT_CONTROL_RECORD_KEY_SIZE = 4)
END_TXN_MARKER = struct.Struct(">hi")  # version, coordinatorEpoch
CONTROL_KEY_VERSION = 0
CONTROL_VALUE_VERSION = 0  # ControlRecordUtils.*_CURRENT_VERSION
CONTROL_SCHEMAS = {2: "LeaderChangeMessage", 3: "SnapshotHeaderRecord", 4: "SnapshotFooterRecord",
                   5: "KRaftVersionRecord", 6: "VotersRecord"}
CONTROL_TYPE_IDS = {name: type_id for type_id, name in CONTROL_TYPES.items()}
SNAPSHOT_SUFFIX = ".checkpoint"
BOOTSTRAP_FILE_NAME = "bootstrap.checkpoint"
MAX_SNAPSHOT_BATCH_BYTES = 8 * 1024 * 1024  # KafkaRaftClient.MAX_BATCH_SIZE_BYTES


# ---- schema lookups --------------------------------------------------------------------------------------------

def metadata_schema():
    return load_schema("metadata_records")


def control_schema():
    return load_schema("control_records")


@lru_cache(maxsize=None)
def metadata_spec(name_or_key) -> MessageSpec:
    """Spec by record name (``TopicRecord``), dump-log type (``TOPIC_RECORD``) or apiKey (``2``)."""
    schema = metadata_schema()
    if isinstance(name_or_key, int):
        try:
            return schema.by_api_key[name_or_key]
        except KeyError:
            raise KeyError(f"Unknown metadata id {name_or_key}") from None
    return schema.by_name(name_or_key)


# ---- encoders (used by the simulator; keep these signatures stable) --------------------------------------------

def encode_metadata_frame(type_name: str, version: int, data: dict) -> bytes:
    """One record value: uvarint frame version 1, uvarint apiKey, uvarint version, body.

    :param type_name: ``"TopicRecord"`` or ``"TOPIC_RECORD"``
    :param data: the record in decoded-dict shape (``{"name": "foo", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}``)

    Example::

        encode_metadata_frame("TOPIC_RECORD", 0, {"name": "foo", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})
    """
    spec = metadata_spec(type_name)
    out = bytearray()
    wire.write_uvarint(out, FRAME_VERSION)
    wire.write_uvarint(out, spec.api_key)
    wire.write_uvarint(out, version)
    out += message_writer.encode(spec, version, data)
    return bytes(out)


def encode_metadata_batch(records: Sequence[tuple], base_offset: int, leader_epoch: int, append_time_ms: int,
                          compression_codec="none") -> bytes:
    """A data batch as the raft ``BatchAccumulator`` writes it: CreateTime, base = max timestamp = append
    time, no producer, null keys, attributes 0, no headers, ``partitionLeaderEpoch`` = the raft epoch.

    :param records: ``[(type_name, version, data), ...]``
    """
    values = [NewRecord(value=encode_metadata_frame(t, v, d)) for t, v, d in records]
    return record_encode.encode_batch(values, base_offset, partition_leader_epoch=leader_epoch,
                                      base_timestamp=append_time_ms, max_timestamp=append_time_ms,
                                      compression_codec=compression_codec)


def control_key(type_name_or_id) -> bytes:
    type_id = CONTROL_TYPE_IDS[type_name_or_id] if isinstance(type_name_or_id, str) else type_name_or_id
    return CONTROL_KEY.pack(CONTROL_KEY_VERSION, type_id)


def encode_control_value(type_name: str, data: dict) -> bytes:
    """The value of a control record (no version prefix), e.g. ``("SNAPSHOT_HEADER", {...})``."""
    type_id = CONTROL_TYPE_IDS[type_name]
    if type_id in (0, 1):
        return END_TXN_MARKER.pack(data.get("version", 0), data.get("coordinatorEpoch", 0))
    spec = control_schema().by_name(CONTROL_SCHEMAS[type_id])
    return message_writer.encode(spec, CONTROL_VALUE_VERSION, data)


def encode_control_batch(records: Sequence[tuple], base_offset: int, leader_epoch: int, append_time_ms: int,
                         producer_id: int = -1, producer_epoch: int = -1, is_transactional: bool = False) -> bytes:
    """A control batch of ``[(control_type_name, data), ...]`` (names as in ``CONTROL_TYPES``)."""
    values = [NewRecord(key=control_key(t), value=encode_control_value(t, d)) for t, d in records]
    return record_encode.encode_batch(values, base_offset, partition_leader_epoch=leader_epoch,
                                      base_timestamp=append_time_ms, max_timestamp=append_time_ms,
                                      producer_id=producer_id, producer_epoch=producer_epoch,
                                      is_transactional=is_transactional, is_control=True)


def _voters(items) -> list:
    return [v if isinstance(v, dict) else {"voterId": int(v)} for v in (items or ())]


def encode_leader_change_batch(base_offset: int, leader_epoch: int, append_time_ms: int, leader_id: int,
                               voters: Iterable, granting_voters: Optional[Iterable] = None) -> bytes:
    """The LEADER_CHANGE control batch a new leader writes at the start of its epoch (LeaderState.java).

    ``voters`` / ``granting_voters`` are voter ids (or ``{"voterId": n}`` dicts); granting defaults to voters.
    """
    voter_list = _voters(voters)
    data = {"version": CONTROL_VALUE_VERSION, "leaderId": leader_id, "voters": voter_list,
            "grantingVoters": voter_list if granting_voters is None else _voters(granting_voters)}
    return encode_control_batch([("LEADER_CHANGE", data)], base_offset, leader_epoch, append_time_ms)


def encode_txn_marker_batch(base_offset: int, leader_epoch: int, timestamp_ms: int, producer_id: int,
                            producer_epoch: int, commit: bool, coordinator_epoch: int) -> bytes:
    """A COMMIT or ABORT marker batch as the transaction coordinator writes it to a data partition."""
    name = "COMMIT" if commit else "ABORT"
    return encode_control_batch([(name, {"version": 0, "coordinatorEpoch": coordinator_epoch})], base_offset,
                                leader_epoch, timestamp_ms, producer_id, producer_epoch, is_transactional=True)


def snapshot_file_name(end_offset: int, epoch: int) -> str:
    """``<endOffset zero-padded to 20>-<epoch zero-padded to 10>.checkpoint`` (Snapshots.filenameFromSnapshotId)."""
    return f"{end_offset:020d}-{epoch:010d}{SNAPSHOT_SUFFIX}"


def encode_snapshot(records: Sequence[tuple], end_offset: int, epoch: int, last_contained_log_timestamp: int,
                    append_time_ms: Optional[int] = None, kraft_version: int = 0,
                    voters: Optional[list] = None, max_batch_bytes: int = MAX_SNAPSHOT_BATCH_BYTES) -> bytes:
    """A whole snapshot file: header control batch, data batches, footer control batch.

    :param records: ``[(type_name, version, data), ...]`` in snapshot order
    :param end_offset: the snapshot id's offset (exclusive end); it is not stored in the contents, only in
        the file name (:func:`snapshot_file_name`)
    :param voters: VotersRecord ``voters`` list; written only when ``kraft_version`` >= 1
    :param append_time_ms: batch timestamps (defaults to ``last_contained_log_timestamp``)
    """
    if end_offset < 0:
        raise ValueError(f"end_offset must be >= 0, got {end_offset}")
    now = last_contained_log_timestamp if append_time_ms is None else append_time_ms
    header_records = [("SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": last_contained_log_timestamp})]
    if kraft_version >= 1:
        header_records.append(("KRAFT_VERSION", {"version": 0, "kRaftVersion": kraft_version}))
        if voters is not None:
            header_records.append(("KRAFT_VOTERS", {"version": 0, "voters": voters}))
    out = bytearray(encode_control_batch(header_records, 0, epoch, now))
    offset = len(header_records)
    for chunk in _split_batches(records, max_batch_bytes):
        out += encode_metadata_batch(chunk, offset, epoch, now)
        offset += len(chunk)
    out += encode_control_batch([("SNAPSHOT_FOOTER", {"version": 0})], offset, epoch, now)
    return bytes(out)


def _split_batches(records: Sequence[tuple], max_batch_bytes: int) -> Iterator[list]:
    """Group records so each batch stays under ``max_batch_bytes`` (a record larger than that gets its own)."""
    chunk: list = []
    size = record_batch.RECORD_BATCH_OVERHEAD
    for item in records:
        estimate = len(encode_metadata_frame(*item)) + 16  # value + record framing, generously
        if chunk and size + estimate > max_batch_bytes:
            yield chunk
            chunk, size = [], record_batch.RECORD_BATCH_OVERHEAD
        chunk.append(item)
        size += estimate
    if chunk:
        yield chunk


# ---- decoding ------------------------------------------------------------------------------------------------

_FRAME_TABLE: dict = {}


def _frame_decoders() -> dict:
    """``(apiKey, version) -> (type name, compiled body reader)`` for every known record version (built once)."""
    if not _FRAME_TABLE:
        for spec in metadata_schema().messages:
            for version in range(spec.valid_versions.lowest, spec.valid_versions.highest + 1):
                _FRAME_TABLE[(spec.api_key, version)] = (spec.type_name, message_codec.decoder(spec, version))
    return _FRAME_TABLE


def decode_metadata_value(value) -> tuple:
    """Parse one frame: returns ``(type, api_key, version, data, error)``; never raises.

    ``type`` is the dump-log enum name (``TOPIC_RECORD``) when the apiKey is known.
    """
    # Fast path: frame 1 with one-byte apiKey and version, a known record, and a body that ends exactly at
    # the end of the value. Everything else (and every error) takes the checked path below.
    if value is not None and len(value) >= 4 and value[0] == FRAME_VERSION:
        entry = (_FRAME_TABLE or _frame_decoders()).get((value[1], value[2]))
        if entry is not None:
            try:
                data, pos = entry[1](value, 3)
            except CorruptInput:
                pass
            else:
                if pos == len(value):
                    return entry[0], value[1], value[2], data, None
    return _decode_metadata_value_checked(value)


def _decode_metadata_value_checked(value) -> tuple:
    if value is None:
        return None, None, None, None, DecodeError("negative_length", "metadata record has a null value", 0)
    api_key = version = type_name = None
    try:
        frame, pos = _frame_short(value, 0, "frame version")
        if frame == 0:
            raise CorruptInput("bad_frame_version", "Could not deserialize metadata record with frame version 0. "
                               "Note that upgrades from the preview release of KRaft in 2.8 to newer versions "
                               "are not supported.", 0)
        if frame != FRAME_VERSION:
            raise CorruptInput("bad_frame_version", "Could not deserialize metadata record due to unknown frame "
                               f"version {frame}(only frame version {FRAME_VERSION} is supported)", 0)
        api_key, pos = _frame_short(value, pos, "type")
        version, pos = _frame_short(value, pos, "version")
        spec = metadata_schema().by_api_key.get(api_key)
        if spec is None:
            raise CorruptInput("unknown_api_key", f"Unknown metadata id {api_key}", 0)
        type_name = spec.type_name
        if not spec.valid_versions.contains(version):
            raise CorruptInput("unknown_version", f"Can't read version {version} of {spec.name} "
                               f"(valid versions {spec.valid_versions})", pos)
        data, pos = message_codec.decoder(spec, version)(value, pos)
        if pos != len(value):
            raise CorruptInput("garbage_after_frame",
                               f"Found {len(value) - pos} byte(s) of garbage after {api_key}", pos)
        return type_name, api_key, version, data, None
    except CorruptInput as exc:
        return type_name, api_key, version, None, exc.error


def _frame_short(buf, pos: int, entity: str):
    try:
        value, pos = wire.read_uvarint(buf, pos)
    except CorruptInput as exc:
        raise CorruptInput(exc.error.kind, f"Error while reading {entity}: {exc.error.message}",
                           exc.error.offset) from None
    if value > 0x7FFF:
        raise CorruptInput("value_too_large", f"Value for {entity} was too large.", pos)
    return value, pos


def decode_control_record(key, value) -> tuple:
    """Parse one control record: returns ``(type, type_id, version, data, error)``; never raises."""
    if key is None or len(key) < CONTROL_KEY.size:
        size = -1 if key is None else len(key)
        return None, None, None, None, DecodeError(
            "length_out_of_buffer", "Invalid value size found for end control record key. Must have at least "
            f"{CONTROL_KEY.size} bytes, but found only {max(size, 0)}", 0)
    key_version, type_id = CONTROL_KEY.unpack_from(key, 0)
    if key_version < 0:
        return None, type_id, None, None, DecodeError(
            "bad_version", f"Invalid version found for control record: {key_version}. May indicate data corruption", 0)
    type_name = CONTROL_TYPES.get(type_id)
    if type_name is None:
        return "UNKNOWN", type_id, None, None, DecodeError("unknown_api_key", f"Unknown control record type {type_id}",
                                                           0)
    if value is None:
        return type_name, type_id, None, None, DecodeError("negative_length", "control record has a null value", 0)
    if type_id in (0, 1):
        if len(value) < END_TXN_MARKER.size:
            return type_name, type_id, None, None, DecodeError(
                "length_out_of_buffer", "Invalid value size found for end transaction marker. Must have at least "
                f"{END_TXN_MARKER.size} bytes, but found only {len(value)}", 0)
        marker_version, coordinator_epoch = END_TXN_MARKER.unpack_from(value, 0)
        if marker_version < 0:
            return type_name, type_id, None, None, DecodeError(
                "bad_version", f"Invalid version found for end transaction marker: {marker_version}. May indicate "
                "data corruption", 0)
        return type_name, type_id, 0, {"version": marker_version, "coordinatorEpoch": coordinator_epoch}, None
    spec = control_schema().by_name(CONTROL_SCHEMAS[type_id])
    try:
        # Kafka reads control values at version 0 and does not check for trailing bytes.
        data, _ = message_codec.decoder(spec, CONTROL_VALUE_VERSION)(value, 0)
    except CorruptInput as exc:
        return type_name, type_id, CONTROL_VALUE_VERSION, None, exc.error
    return type_name, type_id, CONTROL_VALUE_VERSION, data, None


def _batch_error(error: DecodeError, header: Optional[BatchHeader], position: int) -> MetadataRecord:
    base = header.base_offset if header is not None else -1
    last = header.last_offset if header is not None else -1
    return MetadataRecord(offset=base, batch_base_offset=base, batch_last_offset=last,
                          leader_epoch=header.partition_leader_epoch if header is not None else -1,
                          timestamp=header.max_timestamp if header is not None else -1,
                          is_control=header.is_control if header is not None else False,
                          type=None, api_key=None, version=None, data=None, error=error, position=position)


def _frame_versions():
    """``(bytes([1, apiKey, version]), spec, version)`` of every record version whose frame is three one-byte
    uvarints (all of them today) and whose encodings are flexible: there every element of an array takes at least
    one byte, so a body decoded in place in the batch buffer that ends exactly at the value's end has read nothing
    outside the value."""
    for spec in metadata_schema().messages:
        for version in range(spec.valid_versions.lowest, spec.valid_versions.highest + 1):
            if spec.api_key < 0x80 and version < 0x80 and spec.is_flexible(version):
                yield bytes((FRAME_VERSION, spec.api_key, version)), spec, version


def _fast_frames() -> dict:
    """frame key (:func:`_frame_versions`) -> ``(type name, generated fast decoder, apiKey, version)``; built
    once."""
    if not _FAST_FRAMES:
        for key, spec, version in _frame_versions():
            _FAST_FRAMES[key] = (spec.type_name, message_codec.generated(spec, version).fast_decoder, spec.api_key,
                                 version)
    return _FAST_FRAMES


_FAST_FRAMES: dict = {}


@lru_cache(maxsize=8)
def _row_frames(row_fields: tuple) -> dict:
    """:func:`_fast_frames` with each version's fused row function (:func:`message_codec.row_decoder`) in place of
    its decoder (which is then not compiled); ``row_fields``: ``((type name, ((JSON name, value when absent),
    ...)), ...)``, types not listed extract nothing."""
    wanted = dict(row_fields)
    return {key: (spec.type_name, message_codec.row_decoder(spec, version, wanted.get(spec.type_name, ())),
                  spec.api_key, version)
            for key, spec, version in _frame_versions()}


def _value_record(value, offset, base, last, epoch, ts, control, key, position) -> MetadataRecord:
    """A record whose value goes through the checked frame decoder (unusual shapes and every error)."""
    if control:
        type_name, api_key, version, data, error = decode_control_record(key, value)
    else:
        type_name, api_key, version, data, error = decode_metadata_value(value)
    if error is not None:
        error = DecodeError(error.kind, f"Error at {offset}, skipping. {error.message}", position)
    return MetadataRecord(offset, base, last, epoch, ts, control, type_name, api_key, version, data, error,
                          value if error is not None else None, position)


def records_of_batch(batch: Batch, trust_bad_crc: bool = False,
                     max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES) -> Iterator[MetadataRecord]:
    """The metadata or control records of one batch, errors included as records (:func:`batch_rows`)."""
    return iter(batch_rows(batch, trust_bad_crc, max_decompressed_bytes).records())


def batch_rows(batch: Batch, trust_bad_crc: bool = False,
               max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES,
               row_fields: Optional[tuple] = None) -> BatchRows:
    """The metadata or control records of one batch, errors included as records, as :class:`BatchRows`.

    ``row_fields`` (see :func:`_row_frames`): the decoded records' rows hold their JSON text and those fields
    (``BatchRows.fused``) instead of a dict and its JSON writer.

    Records in the shape raft's BatchBuilder writes (attributes 0, timestampDelta 0, null key, no headers;
    one- or two-byte varints) are framed and decoded in one loop, in place in the batch buffer; the first
    record of any other shape hands the rest of the batch to ``record_parse.parse_records``, which also
    reports every framing error. cProfile on the 1M-record perf segment: the general path (a generator
    yielding a 7-tuple per record, then a bytes slice per value) was ~1.1 us of framing per record.
    """
    header = batch.header
    base, last, epoch, ts, control = (header.base_offset, header.last_offset, header.partition_leader_epoch,
                                      header.max_timestamp, header.is_control)
    position = header.position
    out = BatchRows(base, last, epoch, ts, position, [], row_fields is not None)
    rows = out.rows
    if header.crc_valid is False and not trust_bad_crc:
        rows.append(_batch_error(batch.crc_error(), header, header.position))
        return out
    try:
        buf, where_base = record_batch.records_section(batch, max_decompressed_bytes)
        count = header.records_count
        pos = index = 0
        if not control:
            frames = _row_frames(row_fields) if row_fields is not None else _FAST_FRAMES or _fast_frames()
            misses = message_codegen_runtime.MISSES
            try:
                while index < count:
                    # varints are zig-zag: an even byte below 0x80 is a non-negative value of byte >> 1
                    b = buf[pos]
                    if b < 0x80:
                        length, body = b, pos + 1
                    elif buf[pos + 1] < 0x80:
                        length, body = (b & 0x7F) | (buf[pos + 1] << 7), pos + 2
                    else:
                        break
                    end = body + (length >> 1)  # a record cut short fails below: value_end + 1 == end
                    if length & 1 or buf[body] or buf[body + 1]:
                        break  # negative length, attributes or timestamp delta not 0
                    b = buf[body + 2]
                    if b < 0x80:
                        delta, at = b, body + 3
                    elif buf[body + 3] < 0x80:
                        delta, at = (b & 0x7F) | (buf[body + 3] << 7), body + 4
                    else:
                        break
                    if delta & 1 or buf[at] != 1:
                        break  # negative offset delta, or a key (1 is a null key)
                    b = buf[at + 1]
                    if b < 0x80:
                        length, value_start = b, at + 2
                    elif buf[at + 2] < 0x80:
                        length, value_start = (b & 0x7F) | (buf[at + 2] << 7), at + 3
                    else:
                        break
                    value_end = value_start + (length >> 1)
                    if length & 1 or value_end + 1 != end or buf[value_end]:
                        break  # null value, or header count not 0 / bytes left in the record
                    offset = base + (delta >> 1)
                    # frame version, apiKey and version as one key; a value under 3 bytes cannot end at
                    # value_end below, because decoding starts after those 3 bytes
                    entry = frames.get(buf[value_start:value_start + 3])
                    if entry is not None:
                        try:  # (dict, end, its JSON writer), or a row function's (JSON text, end, values)
                            first, stop, second = entry[1](buf, value_start + 3)
                        except misses:
                            stop = -1
                        if stop == value_end:
                            rows.append((offset, entry, first, second))
                            pos = end
                            index += 1
                            continue
                    rows.append(_value_record(buf[value_start:value_end], offset, base, last, epoch, ts, False, None,
                                              position))
                    pos = end
                    index += 1
            except IndexError:
                pass  # a record cut short: parse_records below reports it from its first byte
        for offset_delta, key, value, _attrs, _ts_delta, _headers, _size in record_parse.parse_records(
                buf, count - index, where_base, position, pos):
            rows.append(_value_record(value, base + offset_delta, base, last, epoch, ts, control, key, position))
    except CorruptInput as exc:
        rows.append(_batch_error(exc.error, header, position))
    return out


def iter_metadata_records(source, start: int = 0, verify_crc: bool = True, trust_bad_crc: bool = False,
                          end_info: Optional[SegmentEnd] = None,
                          max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES,
                          end: Optional[int] = None) -> Iterator[MetadataRecord]:
    """Every record of a metadata ``.log`` segment, ``.checkpoint`` snapshot or ``bootstrap.checkpoint``.

    :param source: a path, a binary file object, or bytes
    :param trust_bad_crc: decode the records of a batch whose CRC does not match (default: report the batch
        as one ``crc_mismatch`` error record and skip its records, as raft recovery would drop it)
    :param end_info: filled with ``valid_bytes`` / zero tail / framing error when iteration ends
    :param max_decompressed_bytes: a compressed batch inflating past this is a ``decompression_bomb`` error
    :param start, end: read only the batches starting in ``[start, end)`` (byte positions of batch starts,
        e.g. from :func:`iter_metadata_batches`), so several workers can share one large file

    Example::

        for rec in iter_metadata_records("__cluster_metadata-0/00000000000000000000.log"):
            print(rec.offset, rec.type, rec.payload_json())
    """
    for item in _items(source, start, verify_crc, end_info, end):
        if isinstance(item, Batch):
            yield from records_of_batch(item, trust_bad_crc, max_decompressed_bytes)
        else:
            yield _single_record(item)


def iter_metadata_record_lists(source, start: int = 0, verify_crc: bool = True, trust_bad_crc: bool = False,
                               end_info: Optional[SegmentEnd] = None,
                               max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES,
                               end: Optional[int] = None) -> Iterator[List[MetadataRecord]]:
    """The records of :func:`iter_metadata_records` (same parameters), one list per batch (a legacy entry or
    a framing error is a list of one), so a caller can do its per-record work a batch at a time."""
    for batch in iter_metadata_batch_rows(source, start, verify_crc, trust_bad_crc, end_info, max_decompressed_bytes,
                                          end):
        yield batch.records()


def iter_metadata_batch_rows(source, start: int = 0, verify_crc: bool = True, trust_bad_crc: bool = False,
                             end_info: Optional[SegmentEnd] = None,
                             max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES,
                             end: Optional[int] = None, row_fields: Optional[tuple] = None) -> Iterator[BatchRows]:
    """The records of :func:`iter_metadata_records` (same parameters) as one :class:`BatchRows` per batch (a
    legacy entry or a framing error is one of one record), for callers that build columns; ``row_fields``: see
    :func:`batch_rows`."""
    for item in _items(source, start, verify_crc, end_info, end):
        if isinstance(item, Batch):
            yield batch_rows(item, trust_bad_crc, max_decompressed_bytes, row_fields)
        else:
            record = _single_record(item)
            yield BatchRows(record.batch_base_offset, record.batch_last_offset, record.leader_epoch, record.timestamp,
                            record.position, [record], row_fields is not None)


def _items(source, start: int, verify_crc: bool, end_info: Optional[SegmentEnd], end: Optional[int]):
    """``record_batch.read_batches`` up to the first item starting at or after ``end``."""
    for item in record_batch.read_batches(source, start=start, verify_crc=verify_crc, end_info=end_info):
        if end is not None:
            at = item.header.position if isinstance(item, Batch) else (
                item.position if isinstance(item, LegacyEntry) else item.offset)
            if at is not None and at >= end:
                return
        yield item


def _single_record(item) -> MetadataRecord:
    """The record of a legacy (v0/v1) entry, or the error record of a framing error."""
    if isinstance(item, LegacyEntry):
        return MetadataRecord(offset=item.offset, batch_base_offset=item.offset, batch_last_offset=item.offset,
                              leader_epoch=-1, timestamp=item.timestamp if item.timestamp is not None else -1,
                              is_control=False, type=None, api_key=None, version=None, data=None,
                              error=item.error, position=item.position)
    return _batch_error(item, None, item.offset if item.offset is not None else -1)


def iter_metadata_batches(source, end_info: Optional[SegmentEnd] = None) -> Iterator[dict]:
    """One summary per batch of a metadata segment or snapshot, records left undecoded.

    Raft followers append the leader's batches byte for byte, so (base offset, last offset, leader epoch,
    CRC) identifies a batch across every copy of the log: comparing copies needs only this, and the CRC
    check still proves every byte of the batch. Framing problems end the file with an ``error`` entry.
    """
    for item in record_batch.read_batches(source, verify_crc=True, end_info=end_info):
        if isinstance(item, Batch):
            h = item.header
            yield {"base_offset": h.base_offset, "last_offset": h.last_offset, "records": h.records_count,
                   "leader_epoch": h.partition_leader_epoch, "crc": h.crc, "crc_valid": bool(h.crc_valid),
                   "is_control": h.is_control, "is_transactional": h.is_transactional, "position": h.position,
                   "size_bytes": h.size, "max_timestamp_ms": h.max_timestamp,
                   "error": None if h.crc_valid else item.crc_error()}
        elif isinstance(item, LegacyEntry):
            yield {"base_offset": item.offset, "last_offset": item.offset, "records": 1, "leader_epoch": -1,
                   "crc": item.crc, "crc_valid": None, "is_control": False, "is_transactional": False,
                   "position": item.position, "size_bytes": item.total_size, "max_timestamp_ms": item.timestamp,
                   "error": item.error}
        else:
            yield {"base_offset": None, "last_offset": None, "records": None, "leader_epoch": None,
                   "crc": None, "crc_valid": None, "is_control": None, "is_transactional": None,
                   "position": item.offset, "size_bytes": None, "max_timestamp_ms": None, "error": item}


def parse_snapshot_file_name(name: str) -> Optional[tuple]:
    """``(end_offset, epoch)`` from ``00000000000000000044-0000000001.checkpoint``, else None."""
    if not name.endswith(SNAPSHOT_SUFFIX):
        return None
    stem = name[: -len(SNAPSHOT_SUFFIX)]
    parts = stem.split("-")
    if len(parts) != 2 or len(parts[0]) != 20 or len(parts[1]) != 10 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])
