"""The machinery behind the malformed-input corpus (corpus.py): good real-format inputs and the tools to damage them.

Good bytes come from the project's own encoders (metadata batches and frames, data batches, ``meta.properties``,
``quorum-state``, producer snapshots, a real pack written by ``collector.write_pack``); the helpers here wrap a
defect in a good prefix/suffix, build hand-made batches and records (re-sealing their CRC), inflate zero runs
into decompression bombs cheaply, and insert members into a real pack. corpus.py holds the cases built with them.
"""
from __future__ import annotations

import base64
import gzip
import io
import json
import struct
import tempfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

import lz4.frame
import zstandard

from collector import write_pack
from udfs import compression, record_batch, record_encode, wire
from udfs.json_state_files import write_quorum_state
from udfs.metadata_log import encode_metadata_batch, encode_metadata_frame
from udfs.partition_metadata import encode_partition_metadata
from udfs.producer_state import ProducerEntry
from udfs.properties_files import (
    write_meta_properties,
)
from udfs.record_batch import ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD

TOPIC_ID = "xWt6cg-LDx4r6BAz2rYsCg"  # a real id from tests/fixtures/kafka-devsample
OTHER_TOPIC_ID = "MKXx1fIkQy2J9jXHhK8m1w"
CLUSTER_ID = "EKJ41Lv86vWjqGSh58Dg2w"
DIRECTORY_ID = "Zq3vSxKUoccnQSccqw4OyQ"  # not a devsample dir id: corpus log dirs never pose as real ones
APPEND_MS = 1795390720000
# Leader epoch 0: below every real metadata record's epoch (the devsample's start at 1), so a corpus segment
# placed next to real copies of the metadata log always loses raft's highest-epoch rule and never becomes the
# authoritative copy.
EPOCH = 0
WHEN = datetime(2026, 11, 22, 8, 32, 56, tzinfo=timezone.utc)
META_NODE = 980  # node.id of the corpus meta.properties (no real broker has this id)
PACK_NODE = 990  # the broker a corpus pack claims to come from (no real broker has this id)
BOMB_BYTES = 128 << 20  # decompressed size of every bomb: over the 64 MiB default limit


@dataclass(frozen=True)
class Built:
    """A case's bytes and where its defect is (byte offset for binary files, 1-based line for text)."""

    data: bytes
    offset: Optional[int] = None
    line: Optional[int] = None


# ---------------------------------------------------------------------------------------------- record batches

def _topic(name: str = "orders", topic_id: str = TOPIC_ID) -> tuple:
    return ("TOPIC_RECORD", 0, {"name": name, "topicId": topic_id})


def _partition(pid: int, topic_id: str = TOPIC_ID) -> tuple:
    return ("PARTITION_RECORD", 0, {"partitionId": pid, "topicId": topic_id, "replicas": [101, 102],
                                    "isr": [101, 102], "leader": 101, "leaderEpoch": 0, "partitionEpoch": 0})


def good_prefix() -> bytes:
    """Two good metadata batches (3 records) at offsets 0..2: what every segment case starts with."""
    return (encode_metadata_batch([_topic(), _partition(0)], 0, EPOCH, APPEND_MS)
            + encode_metadata_batch([_partition(1)], 2, EPOCH, APPEND_MS + 1))


GOOD_RECORDS = 3


def good_suffix(base_offset: int = 10) -> bytes:
    """One good batch (1 record) placed after a bad spot that does not stop framing."""
    return encode_metadata_batch([_topic("payments", OTHER_TOPIC_ID)], base_offset, EPOCH, APPEND_MS + 2)


def record_bytes(value: Optional[bytes], key: Optional[bytes] = None, headers=(), offset_delta: int = 0) -> bytes:
    out = bytearray()
    record_encode.encode_record(out, offset_delta, 0, key, value, headers)
    return bytes(out)


def frame(type_name: str = "TOPIC_RECORD", version: int = 0, data: Optional[dict] = None) -> bytes:
    return encode_metadata_frame(type_name, version, data if data is not None else _topic()[2])


def raw_batch(section: bytes, count: int, base_offset: int = 5, codec: int = 0, magic: int = 2,
              batch_length: Optional[int] = None, last_offset_delta: Optional[int] = None,
              control: bool = False) -> bytes:
    """A batch around a hand-made records section; header fields as given, CRC computed over the result."""
    attributes = codec | (record_batch.CONTROL_FLAG_MASK if control else 0)
    total = RECORD_BATCH_OVERHEAD + len(section)
    length = total - LOG_OVERHEAD if batch_length is None else batch_length
    lod = max(count - 1, 0) if last_offset_delta is None else last_offset_delta
    out = bytearray(HEADER.pack(base_offset, length, EPOCH, magic, 0, attributes, lod, APPEND_MS, APPEND_MS, -1, -1, -1,
                                count))
    out += section
    return reseal(out)


def reseal(batch) -> bytes:
    """Recompute a batch's CRC-32C after an edit (so the edit, not the CRC, is what the reader meets)."""
    out = bytearray(batch)
    struct.pack_into(">I", out, CRC_OFFSET, record_batch.crc32c(bytes(out[ATTRIBUTES_OFFSET:])))
    return bytes(out)


def _segment(bad: bytes, suffix: bytes = b"", at_record: int = 0) -> Built:
    """good prefix + bad bytes (+ suffix); the defect offset is the bad batch position + ``at_record``."""
    prefix = good_prefix()
    return Built(prefix + bad + suffix, offset=len(prefix) + at_record)


def _value_case(value: Optional[bytes]) -> Built:
    """A batch of one record holding ``value`` (a broken metadata frame): errors carry the batch position."""
    return _segment(raw_batch(record_bytes(value), 1), good_suffix())


def _record_case(section: bytes, count: int, at: int = 0, suffix: bool = True) -> Built:
    """A batch with a hand-made records section whose defect is ``at`` bytes into the section."""
    return _segment(raw_batch(section, count), good_suffix() if suffix else b"", RECORD_BATCH_OVERHEAD + at)


# ---------------------------------------------------------------------------------------------- compression

def _bomb_record_prefix(n_zero: int) -> tuple:
    """The record framing around a value of ``n_zero`` zero bytes: (bytes before the value, bytes after)."""
    body_head = bytearray(b"\x00")
    wire.write_varlong(body_head, 0)
    wire.write_varint(body_head, 0)
    wire.write_varint(body_head, -1)
    wire.write_varint(body_head, n_zero)
    body_len = len(body_head) + n_zero + 1
    head = bytearray()
    wire.write_varint(head, body_len)
    return bytes(head + body_head), b"\x00"  # header count 0


def gzip_of_zeros(prefix: bytes, n_mib: int, suffix: bytes) -> bytes:
    """A valid gzip member of prefix + n MiB of zeros + suffix, built without compressing the zeros n times.

    A full flush resets deflate's history, so the compressed form of one 1 MiB run of zeros is a
    self-contained piece that can be repeated; the trailer holds the real CRC-32 and size.
    """
    zeros = bytes(1 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    piece = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    tail = c.compress(suffix) + c.flush(zlib.Z_FINISH)
    crc = zlib.crc32(prefix)
    for _ in range(n_mib):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(suffix, crc)
    size = (len(prefix) + (n_mib << 20) + len(suffix)) & 0xFFFFFFFF
    member = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + head + piece * n_mib + tail
    return member + struct.pack("<II", crc, size)


def _stream_zeros(compressor, prefix: bytes, n_mib: int, suffix: bytes) -> bytes:
    zeros = bytes(1 << 20)
    out = bytearray(compressor.compress(prefix))
    for _ in range(n_mib):
        out += compressor.compress(zeros)
    out += compressor.compress(suffix)
    out += compressor.flush()
    return bytes(out)


def bomb_section(codec: int, n_bytes: int = BOMB_BYTES) -> bytes:
    """A records section holding one record with an ``n_bytes`` zero value, compressed with ``codec``."""
    head, tail = _bomb_record_prefix(n_bytes)
    n_mib = n_bytes >> 20
    if codec == compression.GZIP:
        return gzip_of_zeros(head, n_mib, tail)
    if codec == compression.ZSTD:
        return _stream_zeros(zstandard.ZstdCompressor(level=3).compressobj(), head, n_mib, tail)
    if codec == compression.LZ4:
        c = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX64KB)
        return c.begin() + _stream_zeros(c, head, n_mib, tail)
    if codec == compression.SNAPPY:
        # A raw snappy block states its uncompressed length first: a 2 GiB claim backed by a few bytes.
        out = bytearray()
        wire.write_uvarint(out, 2 << 30)
        return bytes(out) + b"\x00\x00\x00\x00"
    raise ValueError(codec)


# ---------------------------------------------------------------------------------------------- metadata frames

def _frame_bytes(frame_version: int, api_key: int, version: int, body: bytes) -> bytes:
    out = bytearray()
    for v in (frame_version, api_key, version):
        wire.write_uvarint(out, v)
    return bytes(out) + body


def _topic_body(name_bytes: bytes, length: Optional[int] = None) -> bytes:
    """TopicRecord v0 body (flexible): compact string name, uuid, empty tagged fields."""
    out = bytearray()
    wire.write_uvarint(out, (len(name_bytes) if length is None else length) + 1)
    out += name_bytes
    out += base64.urlsafe_b64decode(TOPIC_ID + "==")
    out += b"\x00"
    return bytes(out)


# ---------------------------------------------------------------------------------------------- data segments

def data_batch(base_offset: int = 0, producer_id: int = 4000) -> bytes:
    values = [record_encode.NewRecord(value=b"v%d" % i, key=b"k", timestamp=APPEND_MS + i) for i in range(3)]
    return record_encode.encode_batch(values, base_offset, producer_id=producer_id, producer_epoch=0,
                                      base_sequence=0)


# ---------------------------------------------------------------------------------------------- text files

def _pm(text: bytes, line: Optional[int]) -> Callable[[], Built]:
    return lambda: Built(text, line=line)


def meta_props(drop: str = "", **changes) -> Callable[[], Built]:
    def build() -> Built:
        good = write_meta_properties(1, META_NODE, CLUSTER_ID, DIRECTORY_ID, when=WHEN).decode("latin-1")
        lines = [ln for ln in good.splitlines() if not (drop and ln.startswith(drop + "="))]
        for key, value in changes.items():
            key = key.replace("_", ".")
            lines = [f"{key}={value}" if ln.startswith(key + "=") else ln for ln in lines]
        return Built(("\n".join(lines) + "\n").encode("latin-1"))
    return build


def quorum(text: bytes, line: Optional[int] = 1) -> Callable[[], Built]:
    return lambda: Built(text, line=line)


def good_quorum() -> bytes:
    return write_quorum_state(1, leader_id=101, leader_epoch=1, voted_id=-1, current_voters=None)


def _producer_entries() -> list:
    return [ProducerEntry(4000, 0, 2, 2, 2, APPEND_MS, -1, -1), ProducerEntry(4001, 0, 5, 9, 5, APPEND_MS, -1, -1)]


# ---------------------------------------------------------------------------------------------- packs

def _small_log_dir(root: Path) -> Path:
    log_dir = root / "kafka-logs"
    (log_dir / "orders-0").mkdir(parents=True)
    (log_dir / "meta.properties").write_bytes(write_meta_properties(1, PACK_NODE, CLUSTER_ID, DIRECTORY_ID, when=WHEN))
    (log_dir / "orders-0" / "partition.metadata").write_bytes(encode_partition_metadata(TOPIC_ID))
    (log_dir / "orders-0" / "00000000000000000000.log").write_bytes(data_batch())
    return log_dir


def real_pack_lines() -> list:
    """The JSON lines of a real pack (written by collector.write_pack) of a small log dir."""
    with tempfile.TemporaryDirectory() as tmp:
        log_dir = _small_log_dir(Path(tmp))
        buf = io.BytesIO()
        write_pack(buf, [str(log_dir)], host="broker-990", capture_time="2026-11-22T08:32:56.000Z")
    lines = gzip.decompress(buf.getvalue()).decode().splitlines()
    header = json.loads(lines[0])
    header["log_dirs"] = ["/var/lib/kafka/data"]  # the temp path would make the bytes differ per run
    header["log_dir_ids"] = {"/var/lib/kafka/data": DIRECTORY_ID}
    header.pop("finish_time", None)
    out = [header]
    for line in lines[1:]:
        rec = json.loads(line)
        if rec.get("rec") == "entry":
            rec["log_dir"] = "/var/lib/kafka/data"
            rec["mtime_ms"] = APPEND_MS
        if rec.get("rec") == "trailer":
            rec["finish_time"] = "2026-11-22T08:32:57.000Z"
            rec["elapsed_ms"] = 1
        out.append(rec)
    return out


PACK_ENTRIES = 5  # meta.properties, orders-0/partition.metadata, orders-0/<segment>, orders-0, the log dir


def _pack_with(extra: list, before_trailer: int = 2) -> Built:
    """A real pack with ``extra`` entry records inserted before its last entries; trailer counts kept true."""
    recs = real_pack_lines()
    trailer = recs[-1]
    trailer["entries"] += len(extra)
    at = len(recs) - before_trailer
    recs[at:at] = extra
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs)
    return Built(gzip.compress(text.encode(), mtime=0), line=at + 1)


def _member(path: str, kind: str = "file", content: Optional[bytes] = None, **fields) -> dict:
    rec = {"rec": "entry", "log_dir": "/var/lib/kafka/data", "path": path, "kind": kind, "size": 0,
           "mtime_ms": APPEND_MS}
    if content is not None:
        rec.update(size=len(content), content_size=len(content), content_b64=base64.b64encode(content).decode())
    rec.update(fields)
    return rec


