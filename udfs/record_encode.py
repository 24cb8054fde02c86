"""Encoding magic-2 record batches as MemoryRecordsBuilder / the raft BatchBuilder write them
(:func:`encode_batch`, :func:`encode_record`); the layout is in :mod:`udfs.record_batch`'s docstring.

Separate from :mod:`udfs.record_batch`, which only reads: the writers (the simulator, metadata_log's
encoders, tests) take the layout constants from there and nothing flows back.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Iterable, Optional

from . import compression
from .record_batch import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    HEADER,
    LOG_OVERHEAD,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    crc32c,
)


@dataclass
class NewRecord:
    """A record to encode. ``timestamp`` None means the batch base timestamp; ``offset_delta`` None means
    its index in the batch."""

    value: Optional[bytes] = None
    key: Optional[bytes] = None
    headers: tuple = field(default_factory=tuple)  # ((str key, bytes-or-None value), ...)
    timestamp: Optional[int] = None
    offset_delta: Optional[int] = None


def encode_record(out: bytearray, offset_delta: int, timestamp_delta: int, key: Optional[bytes],
                  value: Optional[bytes], headers: Iterable = ()) -> None:
    """Append one DefaultRecord (length-prefixed) to ``out``."""
    from .wire import write_varint, write_varlong

    body = bytearray(b"\x00")  # attributes: unused, 0
    write_varlong(body, timestamp_delta)
    write_varint(body, offset_delta)
    for blob in (key, value):
        if blob is None:
            write_varint(body, -1)
        else:
            write_varint(body, len(blob))
            body += blob
    headers = tuple(headers)
    write_varint(body, len(headers))
    for hkey, hvalue in headers:
        raw_key = hkey.encode("utf-8") if isinstance(hkey, str) else bytes(hkey)
        write_varint(body, len(raw_key))
        body += raw_key
        if hvalue is None:
            write_varint(body, -1)
        else:
            write_varint(body, len(hvalue))
            body += hvalue
    write_varint(out, len(body))
    out += body


def _as_new_record(item) -> NewRecord:
    if isinstance(item, NewRecord):
        return item
    if isinstance(item, dict):
        return NewRecord(**item)
    if isinstance(item, (bytes, bytearray)) or item is None:
        return NewRecord(value=None if item is None else bytes(item))
    raise ValueError(f"a record is a NewRecord, a dict of its fields or value bytes, got {type(item).__name__}")


def encode_batch(records: Iterable, base_offset: int = 0, *, partition_leader_epoch: int = 0,
                 base_timestamp: Optional[int] = None, max_timestamp: Optional[int] = None,
                 log_append_time: bool = False, producer_id: int = NO_PRODUCER_ID,
                 producer_epoch: int = NO_PRODUCER_EPOCH, base_sequence: int = NO_SEQUENCE,
                 is_transactional: bool = False, is_control: bool = False, compression_codec=compression.NONE,
                 delete_horizon_ms: Optional[int] = None, last_offset_delta: Optional[int] = None) -> bytes:
    """Encode one magic-2 batch, as MemoryRecordsBuilder / the raft BatchBuilder write it.

    Timestamps: ``base_timestamp`` defaults to the first record's timestamp, ``max_timestamp`` to the largest
    (for log-append time, both to ``max_timestamp``). Record timestamps are stored as deltas from the base.

    Example::

        encode_batch([NewRecord(value=b"v", key=b"k", timestamp=1700000000000)], base_offset=42,
                     producer_id=1000, producer_epoch=0, base_sequence=0, compression_codec="gzip")
    """
    items = [_as_new_record(r) for r in records]
    timestamps = [r.timestamp for r in items if r.timestamp is not None]
    if base_timestamp is None:
        base_timestamp = items[0].timestamp if items and items[0].timestamp is not None else (
            min(timestamps) if timestamps else NO_TIMESTAMP)
    if max_timestamp is None:
        max_timestamp = max(timestamps) if timestamps else base_timestamp
    codec = compression.codec_id(compression_codec)
    body = bytearray()
    deltas = []
    for index, rec in enumerate(items):
        delta = index if rec.offset_delta is None else rec.offset_delta
        deltas.append(delta)
        ts = base_timestamp if rec.timestamp is None or log_append_time else rec.timestamp
        encode_record(body, delta, ts - base_timestamp, rec.key, rec.value, rec.headers)
    if last_offset_delta is None:
        last_offset_delta = deltas[-1] if deltas else 0
    records_section = compression.compress(codec, bytes(body))
    attributes = codec
    if log_append_time:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    first_timestamp = base_timestamp
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG_MASK
        first_timestamp = delete_horizon_ms
    total = RECORD_BATCH_OVERHEAD + len(records_section)
    header = bytearray(HEADER.pack(base_offset, total - LOG_OVERHEAD, partition_leader_epoch, 2, 0, attributes,
                                   last_offset_delta, first_timestamp, max_timestamp, producer_id, producer_epoch,
                                   base_sequence, len(items)))
    out = header + records_section
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)
