"""DefaultRecord parsing over one batch's records buffer: :func:`parse_records`, the hot loop every record
decode runs through (wire layout in :mod:`udfs.record_batch`'s docstring).

Separate from :mod:`udfs.record_batch` (framing: headers, batches, files) because it works on bytes alone and
knows no batch: ``record_batch.record_tuples`` / ``iter_records`` and ``metadata_log``'s fast path hand it
their buffers. Malformed records raise :class:`udfs.errors.CorruptInput`.
"""
from __future__ import annotations

from typing import Iterator

from .errors import CorruptInput
from .wire import read_varint, read_varlong


def _pos_in_file(where_base, pos, fallback):
    return fallback if where_base is None else where_base + pos


def _slow_varint(buf, pos, end, what, read=read_varint):
    """Checked zig-zag varint that must end by ``end``; used when the inline cases do not apply."""
    start = pos
    value, pos = read(buf, pos)
    if pos > end:
        raise CorruptInput("length_out_of_buffer", f"{what} runs past the end of its record", start)
    return value, pos


def parse_records(buf, count: int, where_base, batch_position: int, start: int = 0) -> Iterator[tuple]:
    """Parse ``count`` records (DefaultRecord.readFrom) from ``buf[start:]`` to its end; yields ``(offset_delta,
    key, value, attributes, timestamp_delta, headers, size)`` and raises CorruptInput on every malformed case,
    including bytes left after the last record. ``start`` lets a specialised loop hand over mid-batch.

    Varints are decoded inline when they fit in one byte (almost every attributes/delta/length field), and
    the record length and offset delta also when they fit in two (records of 64-8191 bytes, batches of up to
    8192 records): cProfile on the 1M-record perf segment put wire.read_varint calls at ~15% of
    full-decode time before this.
    """
    end = len(buf)
    pos = start
    for _ in range(count):
        start = pos
        try:
            b = buf[pos] if pos < end else _past_end(pos)
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and buf[pos + 1] < 0x80:
                raw = (b & 0x7F) | (buf[pos + 1] << 7)
                length = (raw >> 1) ^ -(raw & 1)
                pos += 2
            else:
                length, pos = _slow_varint(buf, pos, end, "record length")
            if length < 0:
                raise CorruptInput("negative_length", f"Invalid record size {length}", start)
            if end - pos < length:
                raise CorruptInput("length_out_of_buffer", f"Invalid record size: expected {length} bytes in "
                                   f"record payload, but instead the buffer has only {end - pos} remaining bytes.",
                                   start)
            body_start = pos
            rec_end = pos + length
            attributes = buf[pos] if pos < rec_end else _past_record(pos)
            pos += 1
            b = buf[pos] if pos < rec_end else _past_record(pos)
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                ts_delta, pos = _slow_varint(buf, pos, rec_end, "timestamp delta", read_varlong)
            b = buf[pos] if pos < rec_end else _past_record(pos)
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < rec_end and buf[pos + 1] < 0x80:
                raw = (b & 0x7F) | (buf[pos + 1] << 7)
                offset_delta = (raw >> 1) ^ -(raw & 1)
                pos += 2
            else:
                offset_delta, pos = _slow_varint(buf, pos, rec_end, "offset delta")
            if pos < rec_end and buf[pos] == 1:  # null key (zig-zag -1): every metadata record
                key = None
                pos += 1
            else:
                key, pos = _blob(buf, pos, rec_end, "key")
            value, pos = _blob(buf, pos, rec_end, "value")
            b = buf[pos] if pos < rec_end else _past_record(pos)
            if b < 0x80:
                header_count = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                header_count, pos = _slow_varint(buf, pos, rec_end, "header count")
            headers = ()
            if header_count:
                headers, pos = _headers(buf, pos, rec_end, header_count)
            if pos != rec_end:
                raise CorruptInput("garbage_after_frame", f"Invalid record size: expected to read {length} bytes "
                                   f"in record payload, but instead read {pos - body_start}", start)
        except CorruptInput as exc:
            raise CorruptInput(exc.error.kind, exc.error.message,
                               _pos_in_file(where_base, start, batch_position)) from None
        yield offset_delta, key, value, attributes, ts_delta, headers, pos - start
    if pos != end:
        raise CorruptInput("record_count_mismatch", "Incorrect declared batch size, records still remaining in file",
                           _pos_in_file(where_base, pos, batch_position))


def _past_end(pos):
    raise CorruptInput("length_out_of_buffer", "the batch has fewer records than its recordsCount", pos)


def _past_record(pos):
    raise CorruptInput("length_out_of_buffer", "record ends before all its fields were read", pos)


def _blob(buf, pos, rec_end, what):
    """varint length (-1 = null) + bytes, bounded by the record end."""
    b = buf[pos] if pos < rec_end else _past_record(pos)
    if b < 0x80:
        length = (b >> 1) ^ -(b & 1)
        pos += 1
    elif pos + 1 < rec_end and buf[pos + 1] < 0x80:
        raw = (b & 0x7F) | (buf[pos + 1] << 7)
        length = (raw >> 1) ^ -(raw & 1)
        pos += 2
    else:
        length, pos = _slow_varint(buf, pos, rec_end, what)
    if length < 0:
        return None, pos
    if pos + length > rec_end:
        raise CorruptInput("length_out_of_buffer", f"{what} of {length} bytes runs past the record", pos)
    return buf[pos:pos + length], pos + length


def _headers(buf, pos, rec_end, count):
    if count < 0:
        raise CorruptInput("negative_length", f"Found invalid number of record headers {count}", pos)
    headers = []
    for _ in range(count):
        key_pos = pos
        key_len, pos = _slow_varint(buf, pos, rec_end, "header key length")
        if key_len < 0:
            raise CorruptInput("negative_length", f"Invalid negative header key size {key_len}", key_pos)
        if pos + key_len > rec_end:
            raise CorruptInput("length_out_of_buffer", "header key runs past the record", pos)
        try:
            key = str(buf[pos:pos + key_len], "utf-8")
        except UnicodeDecodeError:
            raise CorruptInput("invalid_utf8", "header key is not valid UTF-8", pos) from None
        value, pos = _blob(buf, pos + key_len, rec_end, "header value")
        headers.append((key, value))
    return tuple(headers), pos
