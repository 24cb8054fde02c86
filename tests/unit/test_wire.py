"""Primitive readers/writers: Kafka's byte layouts, varint limits, and every corrupt-input branch."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import wire
from udfs.errors import CorruptInput

# Zig-zag varint vectors from Kafka's ByteUtilsTest (testVarintSerde / testVarlongSerde).
VARINTS = [
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"),
    (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"), (-8193, "818001"),
    (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f"),
]
VARLONGS = VARINTS + [(2**63 - 1, "feffffffffffffffff01"), (-(2**63), "ffffffffffffffffff01")]
UVARINTS = [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (16383, "ff7f"), (16384, "808001"),
            (2**31 - 1, "ffffffff07"), (2**32 - 1, "ffffffff0f")]


def kind_of(call) -> tuple:
    with pytest.raises(CorruptInput) as info:
        call()
    return info.value.error.kind, info.value.error.offset


@pytest.mark.parametrize("value,hexed", VARINTS)
def test_varint_matches_kafka_vectors(value, hexed):
    out = bytearray()
    wire.write_varint(out, value)
    assert out.hex() == hexed
    assert wire.read_varint(bytes.fromhex(hexed), 0) == (value, len(hexed) // 2)


@pytest.mark.parametrize("value,hexed", VARLONGS)
def test_varlong_matches_kafka_vectors(value, hexed):
    out = bytearray()
    wire.write_varlong(out, value)
    assert out.hex() == hexed
    assert wire.read_varlong(bytes.fromhex(hexed), 0) == (value, len(hexed) // 2)


@pytest.mark.parametrize("value,hexed", UVARINTS)
def test_unsigned_varint_vectors(value, hexed):
    assert wire.uvarint_bytes(value).hex() == hexed
    assert wire.read_uvarint(bytes.fromhex(hexed), 0) == (value, len(hexed) // 2)
    assert wire.size_of_uvarint(value) == len(hexed) // 2


def test_varints_longer_than_kafka_allows_fail_at_their_start():
    # 5th byte with the continuation bit set: ByteUtils "Varint is too long" (MetadataRecordSerdeTest's 0x80...)
    assert kind_of(lambda: wire.read_uvarint(b"\x00\x80\x80\x80\x80\x80\x01", 1)) == ("varint_too_long", 1)
    assert kind_of(lambda: wire.read_varint(b"\xff\xff\xff\xff\xff\x01", 0)) == ("varint_too_long", 0)
    assert kind_of(lambda: wire.read_varlong(b"\xff" * 10 + b"\x01", 0)) == ("varint_too_long", 0)


def test_varints_cut_short_report_the_missing_byte():
    assert kind_of(lambda: wire.read_uvarint(b"\x80\x80", 0)) == ("length_out_of_buffer", 2)
    assert kind_of(lambda: wire.read_uvarint(b"", 0)) == ("length_out_of_buffer", 0)
    assert kind_of(lambda: wire.read_varint(b"\x80", 0)) == ("length_out_of_buffer", 1)


def test_uvarint_keeps_javas_32_bit_result():
    # Kafka keeps only the low 32 bits of a 5-byte varint ("1f" in the 5th byte sets bits 28-32).
    value, _ = wire.read_uvarint(bytes.fromhex("ffffffff1f"), 0)
    assert value == 0xFFFFFFFF
    assert wire.as_int32(value) == -1


@pytest.mark.parametrize("reader,width", [(wire.read_int8, 1), (wire.read_int16, 2), (wire.read_uint16, 2),
                                          (wire.read_int32, 4), (wire.read_uint32, 4), (wire.read_int64, 8),
                                          (wire.read_float64, 8), (wire.read_uuid, 16), (wire.read_bool, 1)])
def test_fixed_width_reads_past_the_end_fail_with_offset(reader, width):
    buf = b"\x01" * (width - 1)
    assert kind_of(lambda: reader(buf, 0)) == ("length_out_of_buffer", 0)
    value, pos = reader(b"\x00" + b"\x01" * width, 1)
    assert pos == width + 1


def test_fixed_width_big_endian_layouts():
    assert wire.read_int16(b"\xff\xfe", 0) == (-2, 2)
    assert wire.read_uint16(b"\xff\xfe", 0) == (65534, 2)
    assert wire.read_uint32(b"\xff\xff\xff\xff", 0) == (2**32 - 1, 4)
    assert wire.read_int64(bytes.fromhex("8000000000000000"), 0) == (-(2**63), 8)
    assert wire.read_bool(b"\x02", 0) == (True, 1)  # Kafka: readByte() != 0
    out = bytearray()
    wire.write_uint16(out, 19092)
    wire.write_bool(out, True)
    assert out.hex() == "4a9401"
    with pytest.raises(ValueError):
        wire.write_int8(bytearray(), 128)


def test_strings_classic_and_compact():
    out = bytearray()
    wire.write_string(out, "foo")
    wire.write_string(out, None)
    wire.write_compact_string(out, "foo")
    wire.write_compact_string(out, None)
    assert out.hex() == "0003666f6f" + "ffff" + "04666f6f" + "00"
    v, pos = wire.read_string(out, 0)
    assert v == "foo"
    v, pos = wire.read_string(out, pos, nullable=True)
    assert v is None
    v, pos = wire.read_compact_string(out, pos)
    assert v == "foo"
    v, pos = wire.read_compact_string(out, pos, nullable=True)
    assert (v, pos) == (None, len(out))


def test_string_errors():
    assert kind_of(lambda: wire.read_compact_string(b"\x00", 0, nullable=False)) == ("negative_length", 0)
    assert kind_of(lambda: wire.read_string(b"\xff\xff", 0)) == ("negative_length", 0)
    assert kind_of(lambda: wire.read_compact_string(b"\x05ab", 0)) == ("length_out_of_buffer", 0)
    assert kind_of(lambda: wire.read_compact_string(b"\x03\xff\xfe", 0)) == ("invalid_utf8", 1)
    too_long = wire.uvarint_bytes(0x8000 + 1)
    assert kind_of(lambda: wire.read_compact_string(too_long, 0)) == ("value_too_large", 0)
    with pytest.raises(ValueError):
        wire.write_compact_string(bytearray(), "x" * 0x8000)


def test_bytes_and_arrays():
    out = bytearray()
    wire.write_compact_bytes(out, b"\x01\x02")
    wire.write_bytes(out, None)
    wire.write_compact_array(out, [1, 2], wire.write_int32)
    wire.write_array(out, None, wire.write_int32)
    pos = 0
    v, pos = wire.read_compact_bytes(out, pos)
    assert v == b"\x01\x02"
    v, pos = wire.read_bytes(out, pos, nullable=True)
    assert v is None
    v, pos = wire.read_compact_array(out, pos, wire.read_int32)
    assert v == [1, 2]
    v, pos = wire.read_array(out, pos, wire.read_int32, nullable=True)
    assert (v, pos) == (None, len(out))


def test_array_errors():
    # "Tried to allocate a collection of size N, but there are only M bytes remaining."
    assert kind_of(lambda: wire.read_compact_array(b"\x64\x00", 0, wire.read_int8)) == ("length_out_of_buffer", 0)
    assert kind_of(lambda: wire.read_array(b"\xff\xff\xff\xff", 0, wire.read_int8)) == ("negative_length", 0)
    assert kind_of(lambda: wire.read_compact_bytes(b"\x00", 0)) == ("negative_length", 0)
    assert kind_of(lambda: wire.read_bytes(b"\x00\x00\x00\x09", 0)) == ("length_out_of_buffer", 0)
    assert kind_of(lambda: wire.read_raw(b"ab", 0, 3)) == ("length_out_of_buffer", 0)


@settings(max_examples=200, deadline=None)
@given(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1), st.integers(0, 2**32 - 1))
def test_varint_round_trips(i32, i64, u32):
    out = bytearray()
    wire.write_varint(out, i32)
    wire.write_varlong(out, i64)
    wire.write_uvarint(out, u32)
    a, pos = wire.read_varint(out, 0)
    b, pos = wire.read_varlong(out, pos)
    c, pos = wire.read_uvarint(out, pos)
    assert (a, b, c, pos) == (i32, i64, u32, len(out))
    assert wire.size_of_varint(i64) == len(wire.uvarint_bytes(((i64 << 1) ^ (i64 >> 63)) & (2**64 - 1)))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=24))
def test_random_bytes_only_ever_raise_corrupt_input(data):
    for reader in (wire.read_uvarint, wire.read_varint, wire.read_varlong, wire.read_compact_string,
                   wire.read_string, wire.read_compact_bytes, wire.read_bytes):
        try:
            reader(data, 0)
        except CorruptInput:
            pass
