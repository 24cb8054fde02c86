"""Primitive readers and writers of Kafka's binary encodings.

Wire rules (apache/kafka@1eb7644):
- clients/src/main/java/org/apache/kafka/common/protocol/{Readable,Writable,ByteBufferAccessor}.java:
  fixed-width integers are big-endian; ``uuid`` is 16 bytes (MSB int64 then LSB int64); ``bool`` is one byte.
- clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java: unsigned varints are LEB128, at most
  5 bytes (``readUnsignedVarint`` fails when the 5th byte still has its high bit set); signed varints are
  zig-zag ``(v >>> 1) ^ -(v & 1)``, at most 5 bytes (varint) or 10 bytes (varlong).
- Non-flexible ("classic") strings: int16 length, -1 = null; bytes and arrays: int32 length, -1 = null.
- Flexible ("compact") strings, bytes and arrays: uvarint(length + 1), 0 = null.

Every reader takes ``(buf, pos)`` and returns ``(value, new_pos)``; ``buf`` is anything indexable as bytes
(``bytes``, ``bytearray``, ``memoryview``). A read past the end or a malformed value raises
:class:`udfs.errors.CorruptInput` carrying the error kind and the byte offset where the bad value starts.
Writers append to a ``bytearray`` and return nothing.
"""
from __future__ import annotations

import struct
from typing import Callable, Optional

from .errors import CorruptInput

INT8 = struct.Struct(">b")
UINT8 = struct.Struct(">B")
INT16 = struct.Struct(">h")
UINT16 = struct.Struct(">H")
INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")
INT64 = struct.Struct(">q")
FLOAT64 = struct.Struct(">d")

MAX_UVARINT_BYTES = 5  # ByteUtils.readUnsignedVarint / readVarint
MAX_VARLONG_BYTES = 10  # ByteUtils.readVarlong
MAX_STRING_LENGTH = 0x7FFF  # generated readers reject longer strings ("string field X had invalid length N")

Reader = Callable[[object, int], tuple]


def _short(buf, pos: int, need: int, what: str) -> CorruptInput:
    have = max(0, len(buf) - pos)
    return CorruptInput(
        "length_out_of_buffer",
        f"Error reading {what}: needed {need} byte(s) but only {have} byte(s) available",
        pos,
    )


def _fixed_reader(layout: struct.Struct, what: str) -> Reader:
    size = layout.size
    unpack_from = layout.unpack_from

    def read(buf, pos: int):
        try:
            return unpack_from(buf, pos)[0], pos + size
        except struct.error:
            raise _short(buf, pos, size, what) from None

    read.__name__ = f"read_{what}"
    return read


read_int8 = _fixed_reader(INT8, "int8")
read_uint8 = _fixed_reader(UINT8, "uint8")
read_int16 = _fixed_reader(INT16, "int16")
read_uint16 = _fixed_reader(UINT16, "uint16")
read_int32 = _fixed_reader(INT32, "int32")
read_uint32 = _fixed_reader(UINT32, "uint32")
read_int64 = _fixed_reader(INT64, "int64")
read_float64 = _fixed_reader(FLOAT64, "float64")


def read_bool(buf, pos: int):
    """Kafka reads a boolean as ``readByte() != 0``."""
    value, pos = read_int8(buf, pos)
    return value != 0, pos


def read_uuid(buf, pos: int):
    """16 raw bytes (MSB then LSB); see :mod:`udfs.kafka_uuid` for the text form."""
    end = pos + 16
    if end > len(buf):
        raise _short(buf, pos, 16, "uuid")
    return bytes(buf[pos:end]), end


def read_raw(buf, pos: int, length: int, what: str = "bytes"):
    """``length`` raw bytes as ``bytes``."""
    end = pos + length
    if length < 0 or end > len(buf):
        raise CorruptInput(
            "length_out_of_buffer",
            f"Error reading {what} of {length} byte(s): only {max(0, len(buf) - pos)} byte(s) available",
            pos,
        )
    return bytes(buf[pos:end]), end


# ---- varints ---------------------------------------------------------------------------------------------

def read_uvarint(buf, pos: int):
    """Unsigned LEB128 varint of at most 5 bytes, as Kafka's ``readUnsignedVarint``.

    Kafka keeps the result in a Java ``int``: bits above 32 are dropped. The value returned here is that
    32-bit pattern read as unsigned (0 .. 2**32-1); callers that compare with Java semantics use
    :func:`as_int32`.
    """
    start = pos
    try:
        b = buf[pos]
    except IndexError:
        raise _short(buf, pos, 1, "unsigned varint") from None
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        try:
            b = buf[pos]
        except IndexError:
            raise _short(buf, pos, 1, "unsigned varint") from None
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFF, pos
        shift += 7
        if shift >= 7 * MAX_UVARINT_BYTES:
            raise CorruptInput(
                "varint_too_long",
                "Varint is too long, the most significant bit in the 5th byte is set",
                start,
            )


def _read_unsigned_leb(buf, pos: int, max_bytes: int, what: str):
    start = pos
    result = 0
    shift = 0
    for _ in range(max_bytes):
        try:
            b = buf[pos]
        except IndexError:
            raise _short(buf, pos, 1, what) from None
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    raise CorruptInput(
        "varint_too_long",
        f"{what.capitalize()} is too long, the most significant bit in the {max_bytes}th byte is set",
        start,
    )


def as_int32(value: int) -> int:
    """Reinterpret the low 32 bits of ``value`` as a Java ``int``."""
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value >= 0x80000000 else value


def read_varint(buf, pos: int):
    """Zig-zag signed varint (int32), as ``ByteUtils.readVarint``."""
    raw, pos = _read_unsigned_leb(buf, pos, MAX_UVARINT_BYTES, "varint")
    raw &= 0xFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf, pos: int):
    """Zig-zag signed varlong (int64), as ``ByteUtils.readVarlong``."""
    raw, pos = _read_unsigned_leb(buf, pos, MAX_VARLONG_BYTES, "varlong")
    raw &= 0xFFFFFFFFFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def uvarint_bytes(value: int) -> bytes:
    out = bytearray()
    write_uvarint(out, value)
    return bytes(out)


def size_of_uvarint(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def write_varint(out: bytearray, value: int) -> None:
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"varint out of int32 range: {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong out of int64 range: {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def size_of_varint(value: int) -> int:
    return size_of_uvarint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


# ---- strings, bytes, arrays --------------------------------------------------------------------------------

def _decode_utf8(raw, pos: int) -> str:
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptInput("invalid_utf8", f"string is not valid UTF-8: {exc.reason}", pos + exc.start) from None


def _string_body(buf, pos: int, length: int, nullable: bool, start: int, what: str):
    if length < 0:
        if nullable:
            return None, pos
        raise CorruptInput("negative_length", f"non-nullable field {what} was serialized as null", start)
    if length > MAX_STRING_LENGTH:
        raise CorruptInput("value_too_large", f"string field {what} had invalid length {length}", start)
    end = pos + length
    if end > len(buf):
        raise CorruptInput(
            "length_out_of_buffer",
            f"Error reading string of length {length}: only {len(buf) - pos} byte(s) available",
            start,
        )
    return _decode_utf8(buf[pos:end], pos), end


def read_string(buf, pos: int, nullable: bool = False, what: str = "string"):
    """Classic string: int16 length (-1 = null), UTF-8 bytes."""
    length, body = read_int16(buf, pos)
    return _string_body(buf, body, length, nullable, pos, what)


def read_compact_string(buf, pos: int, nullable: bool = False, what: str = "string"):
    """Compact string: uvarint(length + 1) (0 = null), UTF-8 bytes."""
    n, body = read_uvarint(buf, pos)
    return _string_body(buf, body, as_int32(n - 1), nullable, pos, what)


def _bytes_body(buf, pos: int, length: int, nullable: bool, start: int, what: str):
    if length < 0:
        if nullable:
            return None, pos
        raise CorruptInput("negative_length", f"non-nullable field {what} was serialized as null", start)
    end = pos + length
    if end > len(buf):
        raise CorruptInput(
            "length_out_of_buffer",
            f"Error reading byte array of {length} byte(s): only {len(buf) - pos} byte(s) available",
            start,
        )
    return bytes(buf[pos:end]), end


def read_bytes(buf, pos: int, nullable: bool = False, what: str = "bytes"):
    """Classic bytes: int32 length (-1 = null)."""
    length, body = read_int32(buf, pos)
    return _bytes_body(buf, body, length, nullable, pos, what)


def read_compact_bytes(buf, pos: int, nullable: bool = False, what: str = "bytes"):
    """Compact bytes: uvarint(length + 1) (0 = null)."""
    n, body = read_uvarint(buf, pos)
    return _bytes_body(buf, body, as_int32(n - 1), nullable, pos, what)


def _array_body(buf, pos: int, count: int, element: Reader, nullable: bool, start: int, what: str):
    if count < 0:
        if nullable:
            return None, pos
        raise CorruptInput("negative_length", f"non-nullable field {what} was serialized as null", start)
    if count > len(buf) - pos:
        raise CorruptInput(
            "length_out_of_buffer",
            f"Tried to allocate a collection of size {count}, but there are only {len(buf) - pos} bytes remaining.",
            start,
        )
    items = []
    append = items.append
    for _ in range(count):
        value, pos = element(buf, pos)
        append(value)
    return items, pos


def read_array(buf, pos: int, element: Reader, nullable: bool = False, what: str = "array"):
    """Classic array: int32 count (-1 = null), then ``count`` elements read by ``element``."""
    count, body = read_int32(buf, pos)
    return _array_body(buf, body, count, element, nullable, pos, what)


def read_compact_array(buf, pos: int, element: Reader, nullable: bool = False, what: str = "array"):
    """Compact array: uvarint(count + 1) (0 = null), then the elements."""
    n, body = read_uvarint(buf, pos)
    return _array_body(buf, body, as_int32(n - 1), element, nullable, pos, what)


# ---- writers -----------------------------------------------------------------------------------------------

def _fixed_writer(layout: struct.Struct, what: str):
    pack = layout.pack

    def write(out: bytearray, value) -> None:
        try:
            out += pack(value)
        except struct.error as exc:
            raise ValueError(f"{what} cannot hold {value!r}: {exc}") from None

    write.__name__ = f"write_{what}"
    return write


write_int8 = _fixed_writer(INT8, "int8")
write_uint8 = _fixed_writer(UINT8, "uint8")
write_int16 = _fixed_writer(INT16, "int16")
write_uint16 = _fixed_writer(UINT16, "uint16")
write_int32 = _fixed_writer(INT32, "int32")
write_uint32 = _fixed_writer(UINT32, "uint32")
write_int64 = _fixed_writer(INT64, "int64")
write_float64 = _fixed_writer(FLOAT64, "float64")


def write_bool(out: bytearray, value: bool) -> None:
    out.append(1 if value else 0)


def write_uuid(out: bytearray, raw: bytes) -> None:
    if len(raw) != 16:
        raise ValueError(f"a uuid has 16 bytes, got {len(raw)}")
    out += raw


def write_string(out: bytearray, value: Optional[str]) -> None:
    if value is None:
        out += INT16.pack(-1)
        return
    raw = value.encode("utf-8")
    if len(raw) > MAX_STRING_LENGTH:
        raise ValueError(f"string of {len(raw)} bytes is longer than {MAX_STRING_LENGTH}")
    out += INT16.pack(len(raw))
    out += raw


def write_compact_string(out: bytearray, value: Optional[str]) -> None:
    if value is None:
        out.append(0)
        return
    raw = value.encode("utf-8")
    if len(raw) > MAX_STRING_LENGTH:
        raise ValueError(f"string of {len(raw)} bytes is longer than {MAX_STRING_LENGTH}")
    write_uvarint(out, len(raw) + 1)
    out += raw


def write_bytes(out: bytearray, value: Optional[bytes]) -> None:
    if value is None:
        out += INT32.pack(-1)
        return
    out += INT32.pack(len(value))
    out += value


def write_compact_bytes(out: bytearray, value: Optional[bytes]) -> None:
    if value is None:
        out.append(0)
        return
    write_uvarint(out, len(value) + 1)
    out += value


def write_array(out: bytearray, items, element) -> None:
    if items is None:
        out += INT32.pack(-1)
        return
    out += INT32.pack(len(items))
    for item in items:
        element(out, item)


def write_compact_array(out: bytearray, items, element) -> None:
    if items is None:
        out.append(0)
        return
    write_uvarint(out, len(items) + 1)
    for item in items:
        element(out, item)
