"""Record batches against Kafka's own dump of the devsample segments, plus every corruption branch."""
from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path

import cramjam
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_dump_lines import parse_dump, tool_output_for

from udfs import compression
from udfs import record_batch as rb
from udfs.errors import CorruptInput, DecodeError
from udfs.record_encode import NewRecord, encode_batch, encode_record

DEVSAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "kafka-devsample"
ALL_LOGS = sorted(p for p in DEVSAMPLE.glob("broker-*/*/*/*.log"))
DATA_LOGS = [p for p in ALL_LOGS if "__cluster_metadata" not in str(p)]


def rel(p: Path) -> str:
    return str(p.relative_to(DEVSAMPLE))


def opt_long(value) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


@pytest.mark.parametrize("path", ALL_LOGS, ids=rel)
def test_header_scan_matches_dump_log_batch_lines(path):
    dump = parse_dump(tool_output_for(DEVSAMPLE, path))
    end = rb.SegmentEnd()
    headers = list(rb.scan_headers(path, end_info=end))
    assert all(isinstance(h, rb.BatchHeader) for h in headers)
    assert len(headers) == len(dump.batches)
    for h, want in zip(headers, dump.batches, strict=True):
        got = {"baseOffset": h.base_offset, "lastOffset": h.last_offset, "count": h.records_count,
               "baseSequence": h.base_sequence, "lastSequence": h.last_sequence, "producerId": h.producer_id,
               "producerEpoch": h.producer_epoch, "partitionLeaderEpoch": h.partition_leader_epoch,
               "isTransactional": str(h.is_transactional).lower(), "isControl": str(h.is_control).lower(),
               "deleteHorizonMs": opt_long(h.delete_horizon_ms), "position": h.position,
               h.timestamp_type: h.max_timestamp, "size": h.size, "magic": h.magic,
               "compresscodec": h.compression_name, "crc": h.crc}
        assert got == {k: (want.fields[k] if isinstance(v, str) else int(want.fields[k])) for k, v in got.items()}
    assert end.error is None and end.valid_bytes == path.stat().st_size and end.batches == len(headers)


@pytest.mark.parametrize("path", DATA_LOGS, ids=rel)
def test_data_records_match_dump_log_record_lines(path):
    dump = parse_dump(tool_output_for(DEVSAMPLE, path))
    batches = list(rb.read_batches(path))
    assert len(batches) == len(dump.batches)
    for batch, want in zip(batches, dump.batches, strict=True):
        assert batch.header.crc_valid is (want.fields["isvalid"] == "true")
        records = list(rb.iter_records(batch))
        assert len(records) == len(want.records)
        for rec, line in zip(records, want.records, strict=True):
            assert isinstance(rec, rb.Record)
            assert (rec.offset, rec.timestamp, rec.key_size, rec.value_size, rec.sequence) == (
                line.offset, line.timestamp, line.key_size, line.value_size, line.sequence)
            assert [k for k, _ in rec.headers] == line.header_keys
            if batch.header.is_control:
                name, data = line.control
                assert name == ("COMMIT" if struct.unpack(">hh", rec.key)[1] else "ABORT")
                assert struct.unpack(">hi", rec.value) == (0, data["coordinatorEpoch"])
            else:
                assert rec.key.decode() == line.key and rec.value.decode() == line.payload


def test_devsample_covers_gzip_transactional_and_both_markers():
    kinds = set()
    for path in DATA_LOGS:
        for b in rb.read_batches(path):
            h = b.header
            kinds.add((h.compression_name, h.is_transactional, h.is_control))
            if h.is_control:
                kinds.add(("marker", struct.unpack(">hh", next(rb.iter_records(b)).key)[1]))
    assert {("gzip", False, False), ("gzip", True, False), ("none", True, True), ("marker", 0),
            ("marker", 1)} <= kinds


@pytest.mark.parametrize("path", DATA_LOGS, ids=rel)
def test_encoder_reproduces_every_data_batch_byte_for_byte(path):
    for batch in rb.read_batches(path):
        h = batch.header
        records = [NewRecord(value=r.value, key=r.key, headers=r.headers, timestamp=r.timestamp)
                   for r in rb.iter_records(batch)]
        again = encode_batch(records, h.base_offset, partition_leader_epoch=h.partition_leader_epoch,
                             base_timestamp=h.base_timestamp, max_timestamp=h.max_timestamp,
                             producer_id=h.producer_id, producer_epoch=h.producer_epoch,
                             base_sequence=h.base_sequence, is_transactional=h.is_transactional,
                             is_control=h.is_control, compression_codec=h.compression)
        assert again == bytes(batch.data)


# ---- synthetic batches ---------------------------------------------------------------------------------------

def sample_batch(base_offset=0, codec="none", n=3, **kw) -> bytes:
    records = [NewRecord(value=b"value-%d" % i * 3, key=b"k%d" % i, headers=(("h", b"x"), ("n", None)),
                         timestamp=1_700_000_000_000 + i) for i in range(n)]
    return encode_batch(records, base_offset, producer_id=42, producer_epoch=1, base_sequence=10,
                        compression_codec=codec, **kw)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_round_trips(codec):
    data = sample_batch(codec=codec, n=50)
    (batch,) = rb.read_batches(data)
    assert batch.header.crc_valid and batch.header.compression_name == codec
    records = list(rb.iter_records(batch))
    assert [r.value for r in records] == [b"value-%d" % i * 3 for i in range(50)]
    assert records[-1].timestamp == 1_700_000_000_049 and records[3].sequence == 13
    assert records[0].headers == (("h", b"x"), ("n", None))


def test_snappy_reads_xerial_framing_and_raw_blocks():
    payload = b"kafka " * 20000  # > 32 KiB: several xerial blocks
    framed = compression.compress("snappy", payload)
    assert framed.startswith(compression.XERIAL_MAGIC)
    assert compression.decompress(compression.SNAPPY, framed) == payload
    raw = bytes(cramjam.snappy.compress_raw(payload))
    assert compression.decompress(compression.SNAPPY, raw) == payload


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompression_bomb_is_refused(codec):
    blob = compression.compress(codec, bytes(1_000_000))
    with pytest.raises(CorruptInput) as info:
        compression.decompress(compression.codec_id(codec), blob, max_bytes=10_000, offset=7)
    assert (info.value.error.kind, info.value.error.offset) == ("decompression_bomb", 7)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_corrupt_compressed_data_fails_as_data(codec):
    blob = bytearray(compression.compress(codec, b"some records " * 100))
    bad = bytes(blob[: len(blob) // 2])
    with pytest.raises(CorruptInput) as info:
        compression.decompress(compression.codec_id(codec), bad)
    assert info.value.error.kind == "decompression_failed"


def test_batch_with_unknown_codec_and_bomb_yield_errors():
    data = bytearray(sample_batch())
    data[rb.ATTRIBUTES_OFFSET + 1] |= 0x05  # codec id 5
    (batch,) = rb.read_batches(bytes(data), verify_crc=False)
    (error,) = list(rb.iter_records(batch))
    assert isinstance(error, DecodeError) and error.kind == "unsupported_compression"
    (big,) = rb.read_batches(sample_batch(codec="gzip", n=200))
    (error,) = list(rb.iter_records(big, max_decompressed_bytes=100))
    assert error.kind == "decompression_bomb"


def test_crc_is_checked_explicitly():
    data = bytearray(sample_batch())
    data[-1] ^= 0xFF
    (batch,) = rb.read_batches(bytes(data))
    assert batch.header.crc_valid is False
    assert batch.crc_error().kind == "crc_mismatch"
    assert f"stored crc = {batch.header.crc}" in batch.crc_error().message
    data = bytearray(sample_batch())
    data[rb.PARTITION_LEADER_EPOCH_OFFSET] ^= 0x01  # not covered by the CRC
    (batch,) = rb.read_batches(bytes(data))
    assert batch.header.crc_valid is True
    (header,) = rb.scan_headers(bytes(data))
    assert header.crc_valid is None  # a header scan never reads the body


def test_truncated_tail_is_reported_with_valid_bytes():
    one, two = sample_batch(0), sample_batch(3)
    # (a cut inside the leading zero bytes of baseOffset 3 looks like a zero tail, and is treated as one)
    for cut in (8, 16, 17, 60, len(two) - 1):
        end = rb.SegmentEnd()
        items = list(rb.scan_headers(one + two[:cut], end_info=end))
        assert isinstance(items[0], rb.BatchHeader)
        assert isinstance(items[-1], DecodeError) and items[-1].kind == "truncated_batch"
        assert items[-1].offset == len(one) == end.valid_bytes
        assert end.remaining_bytes == cut


def test_zero_filled_preallocated_tail_ends_the_segment_cleanly():
    data = sample_batch(0) + sample_batch(3) + bytes(4096)
    end = rb.SegmentEnd()
    items = list(rb.read_batches(data, end_info=end))
    assert len(items) == 2 and all(isinstance(b, rb.Batch) for b in items)
    assert (end.error, end.zero_tail_bytes, end.remaining_bytes) == (None, 4096, 0)
    short_zero_tail = sample_batch(0) + bytes(5)
    assert [type(i) for i in rb.scan_headers(short_zero_tail)] == [rb.BatchHeader]


def test_zero_header_followed_by_data_is_corruption():
    data = sample_batch(0) + bytes(100) + sample_batch(3)
    items = list(rb.scan_headers(data))
    assert items[-1].kind == "batch_too_small" and items[-1].offset == len(sample_batch(0))


def legacy_entry(offset: int, magic: int, value: bytes) -> bytes:
    body = struct.pack(">bb", magic, 0) + (struct.pack(">q", 1_600_000_000_000) if magic == 1 else b"")
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    crc = zlib.crc32(body) & 0xFFFFFFFF
    record = struct.pack(">I", crc) + body
    return struct.pack(">qi", offset, len(record)) + record


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_magic_is_detected_with_its_header(magic):
    data = legacy_entry(5, magic, b"old") + sample_batch(6)
    items = list(rb.scan_headers(data))
    legacy, header = items
    assert isinstance(legacy, rb.LegacyEntry) and isinstance(header, rb.BatchHeader)
    assert (legacy.offset, legacy.magic, legacy.position) == (5, magic, 0)
    assert legacy.timestamp == (1_600_000_000_000 if magic == 1 else None)
    assert legacy.error.kind == "legacy_magic" and "magic %d" % magic in legacy.error.message
    assert header.position == legacy.next_position
    with pytest.raises(CorruptInput) as info:
        rb.parse_batch(legacy_entry(5, magic, b"old"))
    assert info.value.error.kind == "legacy_magic"


def test_bad_magic_and_too_small_batches_stop_framing():
    data = bytearray(sample_batch())
    data[rb.MAGIC_OFFSET] = 3
    assert [i.kind for i in rb.scan_headers(bytes(data))] == ["bad_magic"]
    tiny = struct.pack(">qi", 0, 5) + bytes(20)
    assert [i.kind for i in rb.scan_headers(tiny)] == ["batch_too_small"]
    small_v2 = struct.pack(">qiib", 0, 30, 0, 2) + bytes(30)
    assert [i.kind for i in rb.scan_headers(small_v2)] == ["batch_too_small"]


def record_batch_with_body(body: bytes, count: int) -> bytes:
    """A valid-CRC batch around hand-made record bytes."""
    header = bytearray(rb.HEADER.pack(0, rb.RECORD_BATCH_OVERHEAD - rb.LOG_OVERHEAD + len(body), 0, 2, 0, 0,
                                      max(count - 1, 0), 0, 0, -1, -1, -1, count))
    out = header + body
    struct.pack_into(">i", out, 8, len(out) - rb.LOG_OVERHEAD)
    struct.pack_into(">I", out, rb.CRC_OFFSET, rb.crc32c(bytes(out[rb.ATTRIBUTES_OFFSET:])))
    return bytes(out)


def one_record(**kw) -> bytes:
    out = bytearray()
    encode_record(out, 0, 0, kw.get("key"), kw.get("value", b"v"), kw.get("headers", ()))
    return bytes(out)


@pytest.mark.parametrize("body,count,kind", [
    (one_record(), 2, "length_out_of_buffer"),  # fewer records than declared
    (one_record() + one_record(), 1, "record_count_mismatch"),  # bytes left after the declared count
    (bytes([0x10]) + one_record()[1:] + b"\x00", 1, "garbage_after_frame"),  # length 8, fields use 7
    (bytes([0x10, 0, 0, 0, 1, 2, 0x76, 0x02, 0x01]), 1, "negative_length"),  # header key length -1
    (bytes([0x7E]), 1, "length_out_of_buffer"),  # record length 63, past the end
    (bytes([0x01]), 1, "negative_length"),  # length -1
    (one_record(), -1, "record_count_mismatch"),
])
def test_corrupt_records_yield_one_error(body, count, kind):
    (batch,) = rb.read_batches(record_batch_with_body(body, count))
    items = list(rb.iter_records(batch))
    assert isinstance(items[-1], DecodeError) and items[-1].kind == kind
    assert all(isinstance(i, rb.Record) for i in items[:-1])


def test_log_append_time_sequences_and_delete_horizon():
    data = encode_batch([NewRecord(b"a", timestamp=5), NewRecord(b"b", timestamp=9)], 100,
                        log_append_time=True, max_timestamp=77, base_sequence=rb.INT32_MAX, producer_id=1,
                        producer_epoch=0, delete_horizon_ms=123)
    (batch,) = rb.read_batches(data)
    h = batch.header
    assert (h.timestamp_type, h.delete_horizon_ms, h.last_sequence) == ("LogAppendTime", 123, 0)
    records = list(rb.iter_records(batch))
    assert [(r.offset, r.timestamp, r.sequence) for r in records] == [(100, 77, rb.INT32_MAX), (101, 77, 0)]


# ---- streaming with bounded memory --------------------------------------------------------------------------

class CountingFile(io.RawIOBase):
    """A seekable file object without fileno(): every byte read is counted, as is the largest single read."""

    def __init__(self, inner):
        self.inner, self.total, self.largest = inner, 0, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, pos, whence=0):
        return self.inner.seek(pos, whence)

    def tell(self):
        return self.inner.tell()

    def read(self, n=-1):
        chunk = self.inner.read(n)
        self.total += len(chunk)
        self.largest = max(self.largest, len(chunk))
        return chunk


def test_header_scan_seeks_over_bodies_and_full_read_holds_one_batch(tmp_path):
    big = [encode_batch([NewRecord(os.urandom(1 << 20))], i) for i in range(4)]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(big))
    with open(path, "rb") as fh:
        counting = CountingFile(fh)
        headers = list(rb.scan_headers(counting))
        assert len(headers) == 4 and counting.total == 4 * rb.RECORD_BATCH_OVERHEAD
    with open(path, "rb") as fh:
        counting = CountingFile(fh)
        batches = list(rb.read_batches(counting))
        assert all(b.header.crc_valid for b in batches)
        assert counting.largest <= len(big[0])


def test_header_scan_of_a_10_gib_sparse_segment_reads_almost_nothing(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    head = sample_batch(0) + sample_batch(3)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(10 * 1024**3)  # preallocated and sparse: the rest is holes
    end = rb.SegmentEnd()
    assert len(list(rb.scan_headers(path, end_info=end))) == 2
    assert (end.valid_bytes, end.zero_tail_bytes, end.error) == (len(head), 10 * 1024**3 - len(head), None)
    with open(path, "rb") as fh:
        counting = CountingFile(fh)
        assert len(list(rb.scan_headers(counting))) == 2
        assert counting.total < 1 << 20


# ---- fuzzing: random and mutated bytes never raise and never hang ------------------------------------------

SEED_SEGMENT = (DEVSAMPLE / "broker-101/kafka-logs/events-0/00000000000000000000.log").read_bytes()


def consume(data: bytes) -> None:
    for item in rb.read_batches(data):
        if isinstance(item, rb.Batch):
            for _ in rb.iter_records(item, max_decompressed_bytes=1 << 20):
                pass
    for _ in rb.scan_headers(data):
        pass


@settings(max_examples=200, deadline=2000)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data):
    consume(data)


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(SEED_SEGMENT) - 1), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(0, len(SEED_SEGMENT)))
def test_mutated_segments_never_raise(flips, cut):
    data = bytearray(SEED_SEGMENT)
    for pos, value in flips:
        data[pos] = value
    consume(bytes(data[:cut]))
    consume(bytes(data))


def test_data_after_a_long_hole_is_not_mistaken_for_a_zero_tail(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    head = sample_batch(0)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.seek(len(head) + 1024**3)  # a 1 GiB hole, then stray bytes
        fh.write(b"\x07" * 100)
    items = list(rb.scan_headers(path))
    assert isinstance(items[0], rb.BatchHeader)
    assert items[-1].kind == "batch_too_small" and items[-1].offset == len(head)
