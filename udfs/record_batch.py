"""Kafka log segments: framing of record batches (magic 2), their records, and detection of legacy message
sets. The record loop itself is :mod:`udfs.record_parse`; writing batches is :mod:`udfs.record_encode`.

Wire layout of a batch (clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java,
apache/kafka@1eb7644; all integers big-endian)::

    baseOffset            int64    0
    batchLength           int32    8   bytes after this field (total size - LOG_OVERHEAD 12)
    partitionLeaderEpoch  int32   12   NOT covered by the CRC
    magic                 int8    16   2 (0 and 1 are the legacy formats: LegacyRecord.java)
    crc                   uint32  17   CRC-32C (Castagnoli) over [21, end of batch)
    attributes            int16   21   bits: 0-2 codec, 3 timestamp type, 4 transactional, 5 control,
                                       6 delete horizon
    lastOffsetDelta       int32   23
    baseTimestamp         int64   27   (the delete horizon when bit 6 is set)
    maxTimestamp          int64   35
    producerId            int64   43
    producerEpoch         int16   51
    baseSequence          int32   53
    recordsCount          int32   57
    records               ...     61   one compressed stream when codec != none

Record (DefaultRecord.java): varint length, int8 attributes, varlong timestampDelta, varint offsetDelta,
varint keyLength (-1 = null) + key, varint valueLength (-1 = null) + value, varint headerCount, then per
header varint keyLength (>= 0) + UTF-8 key, varint valueLength (-1 = null) + value. Varints are zig-zag.

Reading a file (FileLogInputStream.nextBatch): the magic byte sits at byte 16 in every format, so it is read
before anything else. Framing needs only baseOffset and batchLength, so a header scan reads 61 bytes per
batch and seeks over the body. A zero-filled tail (a preallocated segment) ends the segment cleanly; a
batch cut short by the end of the file is reported as ``truncated_batch`` at the position where the valid
bytes end. Corruption is yielded as :class:`udfs.errors.DecodeError` values, never raised.
"""
from __future__ import annotations

import errno
import os
import struct
from dataclasses import dataclass
from typing import BinaryIO, Iterator, Optional, Union

import crc32c as _crc32c

from . import compression
from .errors import CorruptInput, DecodeError
from .record_parse import parse_records

# ---- layout -------------------------------------------------------------------------------------------------

# One precompiled struct for the 61-byte header; one format character per field, in wire order.
_HEADER_FORMAT = (
    ">"
    "q"  # baseOffset
    "i"  # batchLength
    "i"  # partitionLeaderEpoch
    "b"  # magic
    "I"  # crc (unsigned)
    "h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordsCount
)
HEADER = struct.Struct(_HEADER_FORMAT)
RECORD_BATCH_OVERHEAD = HEADER.size  # 61
LOG_OVERHEAD = struct.calcsize(">qi")  # 12: baseOffset + batchLength
PARTITION_LEADER_EPOCH_OFFSET = LOG_OVERHEAD
MAGIC_OFFSET = struct.calcsize(">qii")  # 16
CRC_OFFSET = struct.calcsize(">qiib")  # 17
ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")  # 21: the CRC covers from here to the end
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1  # 17
_LOG_ENTRY = struct.Struct(">qi")

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
INT32_MAX = (1 << 31) - 1

# Legacy message sets (LegacyRecord.java): offset int64, size int32, crc uint32, magic int8, attributes int8,
# timestamp int64 (magic 1 only), keyLength int32, key, valueLength int32, value.
_LEGACY_V0 = struct.Struct(">qiIbbi")  # up to keyLength
_LEGACY_V1 = struct.Struct(">qiIbbqi")
RECORD_OVERHEAD_V0 = 14  # LegacyRecord.RECORD_OVERHEAD_V0: smallest possible entry body
DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024
_ZERO_TAIL_PROBE = 64 * 1024  # how much of a zero tail is checked for stray data, per data region
_ZERO_TAIL_REGIONS = 16


def crc32c(data) -> int:
    return _crc32c.crc32c(data)


# ---- values ---------------------------------------------------------------------------------------------------

class BatchHeader:
    """The 61-byte header of one magic-2 batch, plus where it sits in its file."""

    __slots__ = ("base_offset", "batch_length", "partition_leader_epoch", "magic", "crc", "attributes",
                 "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch",
                 "base_sequence", "records_count", "position", "crc_valid")

    def __init__(self, values: tuple, position: int):
        (self.base_offset, self.batch_length, self.partition_leader_epoch, self.magic, self.crc,
         self.attributes, self.last_offset_delta, self.base_timestamp, self.max_timestamp, self.producer_id,
         self.producer_epoch, self.base_sequence, self.records_count) = values
        self.position = position
        self.crc_valid: Optional[bool] = None  # None until checked

    @property
    def size(self) -> int:
        """Total bytes of the batch in the file (DumpLogSegments ``size``)."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def next_position(self) -> int:
        return self.position + self.size

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression_name(self) -> str:
        return compression.NAMES.get(self.compression, f"unknown({self.compression})")

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.is_log_append_time else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> Optional[int]:
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    def as_dict(self) -> dict:
        out = {name: getattr(self, name) for name in self.__slots__}
        out.update(size=self.size, last_offset=self.last_offset, compression=self.compression_name,
                   timestamp_type=self.timestamp_type, is_transactional=self.is_transactional,
                   is_control=self.is_control, delete_horizon_ms=self.delete_horizon_ms,
                   last_sequence=self.last_sequence)
        return out

    def __repr__(self) -> str:
        return (f"BatchHeader(base_offset={self.base_offset}, last_offset={self.last_offset}, "
                f"count={self.records_count}, position={self.position}, size={self.size}, "
                f"compression={self.compression_name}, control={self.is_control}, "
                f"transactional={self.is_transactional}, crc_valid={self.crc_valid})")


@dataclass(frozen=True)
class LegacyEntry:
    """One magic 0/1 log entry (a record, or a wrapper around a compressed message set); not decoded further."""

    offset: int
    size: int  # entry body size (after offset and size fields)
    position: int
    crc: int
    magic: int
    attributes: int
    timestamp: Optional[int]  # magic 1 only

    @property
    def total_size(self) -> int:
        return self.size + LOG_OVERHEAD

    @property
    def next_position(self) -> int:
        return self.position + self.total_size

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def error(self) -> DecodeError:
        codec = compression.NAMES.get(self.compression, str(self.compression))
        ts = "" if self.timestamp is None else f", timestamp {self.timestamp}"
        return DecodeError("legacy_magic",
                           f"legacy message format (magic {self.magic}) at offset {self.offset}: entry size "
                           f"{self.size}, compression {codec}{ts}; only magic 2 is decoded", self.position)


class Record:
    """One record of a batch, with absolute offset, timestamp and sequence already resolved."""

    __slots__ = ("offset", "timestamp", "attributes", "key", "value", "headers", "sequence", "size",
                 "offset_delta", "timestamp_delta")

    def __init__(self, offset, timestamp, attributes, key, value, headers, sequence, size, offset_delta,
                 timestamp_delta):
        self.offset = offset
        self.timestamp = timestamp
        self.attributes = attributes
        self.key = key
        self.value = value
        self.headers = headers
        self.sequence = sequence
        self.size = size
        self.offset_delta = offset_delta
        self.timestamp_delta = timestamp_delta

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)

    def __repr__(self) -> str:
        return (f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r}, sequence={self.sequence})")


class Batch:
    """A magic-2 batch: its header and its bytes (``data`` covers the whole batch, header included)."""

    __slots__ = ("header", "data")

    def __init__(self, header: BatchHeader, data):
        self.header = header
        self.data = data

    def compute_crc(self) -> int:
        return crc32c(self.data[ATTRIBUTES_OFFSET:])

    def check_crc(self) -> bool:
        self.header.crc_valid = self.compute_crc() == self.header.crc
        return self.header.crc_valid

    def crc_error(self) -> DecodeError:
        return DecodeError("crc_mismatch",
                           f"Record is corrupt (stored crc = {self.header.crc}, computed crc = "
                           f"{self.compute_crc()})", self.header.position)

    def records(self, max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES) -> Iterator[Record]:
        """Decode the records; raises :class:`CorruptInput` on malformed records (see :func:`iter_records`)."""
        return _records(self, max_decompressed_bytes)

    def __repr__(self) -> str:
        return f"Batch({self.header!r})"


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: sequences wrap to 0 after Integer.MAX_VALUE."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


# ---- sources ------------------------------------------------------------------------------------------------

class _Source:
    """Positioned reads over bytes (zero-copy memoryview slices) or a file (``os.pread``, no full read)."""

    def __init__(self, source):
        self._owned = None
        self._view = None
        self._fd = None
        self._fileobj = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._view = memoryview(source).cast("B") if isinstance(source, memoryview) else memoryview(source)
            self.size = len(self._view)
            return
        if isinstance(source, (str, os.PathLike)):
            self._owned = open(source, "rb")
            source = self._owned
        self._fileobj = source
        try:
            self._fd = source.fileno()
            self.size = os.fstat(self._fd).st_size
        except (AttributeError, OSError, ValueError):
            self._fd = None
            current = source.tell()
            self.size = source.seek(0, os.SEEK_END)
            source.seek(current)

    def read_at(self, pos: int, length: int):
        length = max(0, min(length, self.size - pos))
        if self._view is not None:
            return self._view[pos:pos + length]
        if self._fd is not None and hasattr(os, "pread"):
            chunks = []
            while length > 0:
                chunk = os.pread(self._fd, length, pos)
                if not chunk:
                    break
                chunks.append(chunk)
                pos += len(chunk)
                length -= len(chunk)
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self._fileobj.seek(pos)
        return self._fileobj.read(length)

    @property
    def knows_holes(self) -> bool:
        return self._fd is not None and hasattr(os, "SEEK_DATA")

    def next_data(self, pos: int) -> Optional[int]:
        """Start of the next non-hole region at or after ``pos`` (sparse files), or None when only holes remain."""
        if pos >= self.size:
            return None
        if self._fd is None or not hasattr(os, "SEEK_DATA"):
            return pos
        try:
            return os.lseek(self._fd, pos, os.SEEK_DATA)
        except OSError as exc:
            return None if exc.errno == errno.ENXIO else pos  # ENXIO: no data after pos

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
            self._owned = None


Source = Union[bytes, bytearray, memoryview, str, os.PathLike, BinaryIO]
Item = Union[BatchHeader, Batch, LegacyEntry, DecodeError]


@dataclass
class SegmentEnd:
    """How framing of a segment ended: ``valid_bytes`` good bytes, then ``zero_tail_bytes`` of zeros, or an error."""

    valid_bytes: int = 0
    file_size: int = 0
    zero_tail_bytes: int = 0
    error: Optional[DecodeError] = None
    batches: int = 0
    legacy_entries: int = 0

    @property
    def remaining_bytes(self) -> int:
        return self.file_size - self.valid_bytes - self.zero_tail_bytes


def _all_zero(chunk) -> bool:
    return not any(chunk) if len(chunk) < 64 else bytes(chunk).count(0) == len(chunk)


def _frame(src: _Source, start: int, end_info: SegmentEnd, want_body: bool, verify_crc: bool,
           max_batch_bytes: int) -> Iterator[Item]:
    pos = start
    end = src.size
    end_info.file_size = end
    while True:
        end_info.valid_bytes = pos
        remaining = end - pos
        if remaining <= 0:
            return
        prefix = src.read_at(pos, RECORD_BATCH_OVERHEAD if remaining >= RECORD_BATCH_OVERHEAD else remaining)
        if _all_zero(prefix[:HEADER_SIZE_UP_TO_MAGIC]):
            error = _check_zero_tail(src, pos, end)
            if error is None:
                end_info.zero_tail_bytes = remaining
                return
            end_info.error = error
            yield error
            return
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            end_info.error = DecodeError("truncated_batch", f"{remaining} byte(s) at the end of the segment are "
                                         f"too few for a batch header", pos)
            yield end_info.error
            return
        base_offset, length = _LOG_ENTRY.unpack_from(prefix, 0)
        magic = prefix[MAGIC_OFFSET]
        if length < RECORD_OVERHEAD_V0:
            end_info.error = DecodeError("batch_too_small", f"Found record size {length} smaller than minimum "
                                         f"record overhead ({RECORD_OVERHEAD_V0}) at position {pos}", pos)
            yield end_info.error
            return
        total = length + LOG_OVERHEAD
        if total > remaining:
            end_info.error = DecodeError("truncated_batch", f"batch at offset {base_offset} declares {total} "
                                         f"bytes but only {remaining} remain in the segment", pos)
            yield end_info.error
            return
        if magic in (0, 1):
            entry = _legacy_entry(prefix, pos, magic)
            end_info.legacy_entries += 1
            yield entry
            pos += total
            continue
        if magic != 2:
            end_info.error = DecodeError("bad_magic", f"Invalid magic {magic if magic < 128 else magic - 256} "
                                         f"in batch at position {pos}", pos)
            yield end_info.error
            return
        if total < RECORD_BATCH_OVERHEAD:
            end_info.error = DecodeError("batch_too_small", f"Record batch is corrupt (the size {total} is "
                                         f"smaller than the minimum allowed overhead {RECORD_BATCH_OVERHEAD})",
                                         pos)
            yield end_info.error
            return
        header = BatchHeader(HEADER.unpack_from(prefix, 0), pos)
        end_info.batches += 1
        if want_body:
            if total > max_batch_bytes:
                end_info.error = DecodeError("length_out_of_buffer", f"batch at offset {base_offset} has "
                                             f"{total} bytes, over the {max_batch_bytes}-byte limit", pos)
                yield end_info.error
                return
            batch = Batch(header, src.read_at(pos, total))
            if verify_crc:
                batch.check_crc()
            yield batch
        else:
            yield header
        pos += total


def _check_zero_tail(src: _Source, pos: int, end: int) -> Optional[DecodeError]:
    """A zero header starts a preallocated tail unless non-zero bytes follow. Checked: the next 64 KiB, then
    (on a sparse file) the start of each following data region, at most ``_ZERO_TAIL_REGIONS`` of them.
    Holes are never read, so a 10 GiB preallocated segment costs a few small reads."""
    at = pos
    for _ in range(_ZERO_TAIL_REGIONS):
        if not _all_zero(src.read_at(at, _ZERO_TAIL_PROBE)):
            return DecodeError("batch_too_small", f"Found record size 0 smaller than minimum record overhead "
                               f"({RECORD_OVERHEAD_V0}) at position {pos}, followed by non-zero bytes", pos)
        if not src.knows_holes:
            return None  # a plain file object: one window is all we look at
        at = src.next_data(at + _ZERO_TAIL_PROBE)
        if at is None or at >= end:
            return None
    return None


def _legacy_entry(prefix, pos: int, magic: int) -> LegacyEntry:
    if magic == 1 and len(prefix) >= _LEGACY_V1.size:
        offset, size, crc, _, attributes, timestamp, _ = _LEGACY_V1.unpack_from(prefix, 0)
    else:
        offset, size, crc, _, attributes, _ = _LEGACY_V0.unpack_from(bytes(prefix[:_LEGACY_V0.size]).ljust(
            _LEGACY_V0.size, b"\0"), 0)
        timestamp = None
    return LegacyEntry(offset, size, pos, crc, magic, attributes, timestamp)


def scan_headers(source: Source, start: int = 0, end_info: Optional[SegmentEnd] = None) -> Iterator[Item]:
    """Yield each batch's :class:`BatchHeader` (or :class:`LegacyEntry`) without reading record bodies.

    Reads 61 bytes per batch and seeks over the rest, so a 10 GiB segment costs one small read per batch.
    A framing problem is yielded as a ``DecodeError`` and ends the scan; pass ``end_info`` to learn
    ``valid_bytes`` and the zero tail afterwards.

    Example::

        end = SegmentEnd()
        for item in scan_headers("00000000000000000000.log", end_info=end):
            ...
        end.valid_bytes
    """
    src = _Source(source)
    try:
        yield from _frame(src, start, end_info or SegmentEnd(), False, False, DEFAULT_MAX_BATCH_BYTES)
    finally:
        src.close()


def read_batches(source: Source, start: int = 0, verify_crc: bool = True, end_info: Optional[SegmentEnd] = None,
                 max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> Iterator[Item]:
    """Yield each :class:`Batch` with its bytes (one batch in memory at a time), CRC checked explicitly.

    A batch whose CRC does not match is still yielded, with ``header.crc_valid`` False; the caller decides.
    """
    src = _Source(source)
    try:
        yield from _frame(src, start, end_info or SegmentEnd(), True, verify_crc, max_batch_bytes)
    finally:
        src.close()


def parse_batch(data, position: int = 0) -> Batch:
    """One batch from bytes that hold exactly (at least) that batch; raises CorruptInput when malformed."""
    for item in read_batches(memoryview(data)):
        if isinstance(item, Batch):
            item.header.position = position
            return item
        if isinstance(item, LegacyEntry):
            raise CorruptInput("legacy_magic", item.error.message, position)
        raise CorruptInput(item.kind, item.message, position)
    raise CorruptInput("truncated_batch", "no batch in buffer", position)


# ---- records ------------------------------------------------------------------------------------------------

def records_section(batch: Batch, max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES):
    """``(buffer, file position of its byte 0 or None when decompressed)`` of the batch's records (``bytes``,
    decompressed when the batch is). Raises :class:`CorruptInput` (negative count, decompression)."""
    header = batch.header
    if header.records_count < 0:
        raise CorruptInput("record_count_mismatch",
                           f"Found invalid record count {header.records_count} in magic v2 batch", header.position)
    body = memoryview(batch.data)[RECORD_BATCH_OVERHEAD:]
    codec = header.compression
    if codec != compression.NONE:
        # offsets inside a decompressed stream do not map to file positions
        return compression.decompress(codec, body, max_decompressed_bytes, header.position), None
    return bytes(body), header.position + RECORD_BATCH_OVERHEAD


def _records(batch: Batch, max_decompressed_bytes: int) -> Iterator[Record]:
    header = batch.header
    buf, where_base = records_section(batch, max_decompressed_bytes)
    base_offset, base_sequence = header.base_offset, header.base_sequence
    log_append = header.is_log_append_time
    base_ts = header.max_timestamp if log_append else header.base_timestamp
    for offset_delta, key, value, attributes, ts_delta, headers, size in parse_records(
            buf, header.records_count, where_base, header.position):
        sequence = NO_SEQUENCE if base_sequence == NO_SEQUENCE else increment_sequence(base_sequence, offset_delta)
        yield Record(base_offset + offset_delta, base_ts if log_append else base_ts + ts_delta, attributes, key,
                     value, headers, sequence, size, offset_delta, ts_delta)


def record_tuples(batch: Batch, max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES) -> Iterator[tuple]:
    """Lean record iteration for bulk decoding, without :class:`Record` objects: one tuple per record,
    ``(offset_delta, key, value, attributes, timestamp_delta, headers, size)``.

    Raises :class:`CorruptInput` on a malformed record (callers at a public boundary convert it).
    """
    buf, where_base = records_section(batch, max_decompressed_bytes)
    return parse_records(buf, batch.header.records_count, where_base, batch.header.position)



def iter_records(batch: Batch, max_decompressed_bytes: int = compression.DEFAULT_MAX_BYTES
                 ) -> Iterator[Union[Record, DecodeError]]:
    """Yield the batch's records; on corruption yield one ``DecodeError`` and stop (never raises)."""
    try:
        yield from _records(batch, max_decompressed_bytes)
    except CorruptInput as exc:
        yield exc.error

