"""Producer-state ``.snapshot`` files and aborted-transaction ``.txnindex`` files of a partition directory.

``<offset:20d>.snapshot`` (storage/.../log/ProducerStateManager.java, apache/kafka@1eb7644)::

    version   int16    0   must be 1 (ProducerSnapshot validVersions "1")
    crc       uint32   2   CRC-32C over bytes [6, end) (PRODUCER_ENTRIES_OFFSET = 6)
    entries   int32 count, then per entry (non-flexible ProducerSnapshot v1, producer_snapshot.json):
              producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32,
              timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64 (-1 = none)

The offset in the file name is the end offset (exclusive) the state covers. Kafka reads the whole body with
the generated reader, then compares the CRC ("Snapshot is corrupt (CRC is no longer valid). Stored crc: X.
Computed crc: Y"); a body that does not parse is "Snapshot failed schema validation".

``<offset:20d>.txnindex`` (storage/.../log/AbortedTxn.java, TransactionIndex.java): 34-byte entries of
version int16 (0), producerId int64, firstOffset int64, lastOffset int64, lastStableOffset int64.
A trailing partial entry is reported, not thrown.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import crc32c as _crc32c

from . import message_codec, message_writer
from .errors import CorruptInput, DecodeError
from .message_spec import load_schema

SNAPSHOT_VERSION = 1
_VERSION = struct.Struct(">h")
_CRC = struct.Struct(">I")
CRC_OFFSET = _VERSION.size  # 2
PRODUCER_ENTRIES_OFFSET = CRC_OFFSET + _CRC.size  # 6

ABORTED_TXN = struct.Struct(">hqqqq")  # version, producerId, firstOffset, lastOffset, lastStableOffset
ABORTED_TXN_SIZE = ABORTED_TXN.size  # 34
ABORTED_TXN_VERSION = 0  # AbortedTxn.CURRENT_VERSION; TransactionIndex rejects anything newer
INT32_MAX = (1 << 31) - 1


def _spec():
    return load_schema("producer_snapshot").by_name("ProducerSnapshot")


@dataclass(frozen=True)
class ProducerEntry:
    """One producer's state, field names as in ProducerSnapshot.json."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int  # -1 when no transaction is open

    @property
    def has_batch_metadata(self) -> bool:
        """Kafka keeps batch metadata (sequences, last offset) only when ``lastOffset >= 0``."""
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        """BatchMetadata.firstSeq = DefaultRecordBatch.decrementSequence(lastSeq, offsetDelta)."""
        if self.last_sequence < self.offset_delta:
            return INT32_MAX - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta

    def as_dict(self) -> dict:
        return {"producerId": self.producer_id, "epoch": self.epoch, "lastSequence": self.last_sequence,
                "lastOffset": self.last_offset, "offsetDelta": self.offset_delta, "timestamp": self.timestamp,
                "coordinatorEpoch": self.coordinator_epoch, "currentTxnFirstOffset": self.current_txn_first_offset}


@dataclass(frozen=True)
class ProducerSnapshotFile:
    """A decoded ``.snapshot``; ``error`` is set (and ``entries`` may be empty) when the file is corrupt."""

    version: Optional[int]
    crc: Optional[int]
    computed_crc: Optional[int]
    entries: tuple[ProducerEntry, ...]
    error: Optional[DecodeError] = None

    @property
    def crc_valid(self) -> bool:
        return self.crc is not None and self.crc == self.computed_crc


def decode_producer_snapshot(data) -> ProducerSnapshotFile:
    """Decode a producer-state snapshot; never raises."""
    data = bytes(data)
    if not data:
        return ProducerSnapshotFile(None, None, None, (), DecodeError("empty_file", "producer snapshot is empty", 0))
    if len(data) < _VERSION.size:
        return ProducerSnapshotFile(None, None, None, (), DecodeError(
            "truncated_batch", "Snapshot failed schema validation: too short for a version", 0))
    (version,) = _VERSION.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        return ProducerSnapshotFile(version, None, None, (), DecodeError(
            "bad_version", f"Snapshot contained an unknown file version {version}", 0))
    try:
        body, end = message_codec.decode(_spec(), version, data, CRC_OFFSET)
    except CorruptInput as exc:
        return ProducerSnapshotFile(version, None, None, (), DecodeError(
            exc.error.kind, f"Snapshot failed schema validation: {exc.error.message}", exc.error.offset))
    computed = _crc32c.crc32c(data[PRODUCER_ENTRIES_OFFSET:])
    entries = tuple(ProducerEntry(e["producerId"], e["epoch"], e["lastSequence"], e["lastOffset"], e["offsetDelta"],
                                  e["timestamp"], e["coordinatorEpoch"], e["currentTxnFirstOffset"])
                    for e in body["producerEntries"])
    error = None
    if body["crc"] != computed:
        error = DecodeError("crc_mismatch", f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {body['crc']}. "
                                            f"Computed crc: {computed}", CRC_OFFSET)
    # Bytes after the entries are ignored, as Kafka does (they are covered by the CRC).
    del end
    return ProducerSnapshotFile(version, body["crc"], computed, entries, error)


def encode_producer_snapshot(entries: Sequence[ProducerEntry]) -> bytes:
    """Write a snapshot as ProducerStateManager.writeSnapshot does (entries in the given order)."""
    body = {"crc": 0, "producerEntries": [e.as_dict() for e in entries]}
    out = bytearray(_VERSION.pack(SNAPSHOT_VERSION))
    out += message_writer.encode(_spec(), SNAPSHOT_VERSION, body)
    _CRC.pack_into(out, CRC_OFFSET, _crc32c.crc32c(bytes(out[PRODUCER_ENTRIES_OFFSET:])))
    return bytes(out)


def producer_snapshot_file_name(end_offset: int) -> str:
    return f"{end_offset:020d}.snapshot"


# ---- .txnindex ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AbortedTxn:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    position: int = 0

    def as_dict(self) -> dict:
        return {"version": self.version, "producerId": self.producer_id, "firstOffset": self.first_offset,
                "lastOffset": self.last_offset, "lastStableOffset": self.last_stable_offset}


def iter_txn_index(data) -> Iterator:
    """Yield :class:`AbortedTxn` entries; a partial trailing entry or a bad version yields a ``DecodeError``."""
    data = memoryview(bytes(data))
    pos = 0
    while pos + ABORTED_TXN_SIZE <= len(data):
        version, producer_id, first, last, lso = ABORTED_TXN.unpack_from(data, pos)
        if version > ABORTED_TXN_VERSION:
            # AbortedTxn.version check in TransactionIndex.iterator: "Unexpected aborted transaction version"
            yield DecodeError("bad_version", f"Unexpected aborted transaction version {version} in transaction "
                                             f"index at position {pos}, current version is {ABORTED_TXN_VERSION}",
                              pos)
            return
        yield AbortedTxn(version, producer_id, first, last, lso, pos)
        pos += ABORTED_TXN_SIZE
    if pos < len(data):
        yield DecodeError("truncated_batch", f"{len(data) - pos} byte(s) at the end of the transaction index are "
                                             f"too few for an entry of {ABORTED_TXN_SIZE}", pos)


def encode_txn_index(entries: Sequence[AbortedTxn]) -> bytes:
    return b"".join(ABORTED_TXN.pack(e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
                    for e in entries)
