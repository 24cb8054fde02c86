"""The malformed-input corpus: one case per kind of bad input, as data.

Every case is real-format bytes written by the project's own encoders (record batches, metadata frames,
``partition.metadata``, ``meta.properties``, producer snapshots, packs ...) with one defect put in on
purpose. A case names the decoder that reads it, the ``DecodeError`` kind that decoder must report and where
(byte offset or line), how many good records come before and after the bad spot, and where the file sits in
a capture. The decoder tests (test_corpus_decoders.py), the ingest test (test_corpus_ingest.py) and the fuzz
seeds (tests/fuzz) all read this one table.

A few cases are odd but valid (an empty segment, a zero-filled preallocated tail, a 10 GiB sparse segment, a
symlink pointing outside): Kafka writes or tolerates them, so the expected outcome is "no error", and the
test checks that reading them stays cheap and bounded instead.

This module holds the cases (their defect builders) and the table; the good inputs and the tools that damage
them (prefixes, hand-made batches, bombs, pack members) live in corpus_builders.py.

``python -m tests.reliability.corpus DIR`` writes every case's file to DIR for inspection (the 10 GiB sparse
case as a sparse file).
"""
from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from udfs import compression, record_batch, wire
from udfs.metadata_log import encode_metadata_batch
from udfs.producer_state import encode_producer_snapshot
from udfs.properties_files import (
    write_leader_epoch_checkpoint,
    write_offset_checkpoint,
)
from udfs.record_batch import RECORD_BATCH_OVERHEAD

from .corpus_builders import (
    APPEND_MS,
    EPOCH,
    GOOD_RECORDS,
    PACK_ENTRIES,
    TOPIC_ID,
    Built,
    _frame_bytes,
    _member,
    _pack_with,
    _partition,
    _pm,
    _producer_entries,
    _record_case,
    _segment,
    _topic,
    _topic_body,
    _value_case,
    bomb_section,
    data_batch,
    frame,
    good_prefix,
    good_quorum,
    good_suffix,
    gzip_of_zeros,
    meta_props,
    quorum,
    raw_batch,
    real_pack_lines,
    record_bytes,
)

SPARSE_SIZE = 10 << 30  # the "10 GiB sparse segment"


@dataclass(frozen=True)
class Case:
    """One corpus entry.

    :param reader: key of ``tests.reliability.readers.READERS``
    :param kind: the DecodeError kind the reader must report first; None for odd-but-valid inputs
    :param good_before: records/entries decoded cleanly before the first error (all of them when no error)
    :param good_after: records decoded cleanly after the first error (reading goes on past a bad batch)
    :param place: where the file sits in a capture: ``metadata`` (a segment in __cluster_metadata-0),
        ``replica`` (a file in a replica dir), ``log_dir`` (a file at the top of a log dir), ``loose``
    :param file_name: the file's name there
    :param file_kind: the bronze_ingest_files.file_kind ingest gives it
    """

    name: str
    reader: str
    build: Callable[[], Built]
    kind: Optional[str]
    good_before: int
    place: str
    file_name: str
    file_kind: str
    good_after: int = 0
    why: str = ""
    sparse_size: Optional[int] = None  # written as a sparse file of this apparent size
    ingest_reads: bool = True  # False: ingest lists the file without decoding it (so it stays "ok")

    @property
    def ingest_kind(self) -> Optional[str]:
        """The error kind bronze_ingest_files must show for this file."""
        return self.kind if self.ingest_reads else None

    def write(self, path: Path) -> Path:
        """Write the case's file at ``path`` (sparse when the case says so)."""
        built = self.build()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as out:
            out.write(built.data)
            if self.sparse_size is not None:
                out.truncate(self.sparse_size)
        return path


# ---------------------------------------------------------------------------------------------- record batches

def truncated_mid_header() -> Built:
    return _segment(good_suffix()[:40])


def truncated_mid_record() -> Built:
    batch = encode_metadata_batch([_topic("a-long-topic-name-" * 4), _partition(0)], 3, EPOCH, APPEND_MS)
    return _segment(batch[:RECORD_BATCH_OVERHEAD + 20])


def length_past_eof() -> Built:
    batch = bytearray(good_suffix())
    struct.pack_into(">i", batch, 8, 0x7FFF0000)
    return _segment(bytes(batch))


def negative_batch_length() -> Built:
    batch = bytearray(good_suffix())
    struct.pack_into(">i", batch, 8, -1)
    return _segment(bytes(batch))


def batch_below_overhead() -> Built:
    header = bytearray(good_suffix()[:RECORD_BATCH_OVERHEAD])
    struct.pack_into(">i", header, 8, 30)  # >= the legacy minimum (14), < the magic-2 overhead (61)
    return _segment(bytes(header), good_suffix(20))


def crc_mismatch() -> Built:
    batch = bytearray(encode_metadata_batch([_partition(2)], 3, EPOCH, APPEND_MS))
    batch[-3] ^= 0x40  # a byte of the record value; the stored CRC stays
    return _segment(bytes(batch), good_suffix())


def wrong_magic() -> Built:
    batch = bytearray(good_suffix())
    batch[record_batch.MAGIC_OFFSET] = 5
    return _segment(bytes(batch))


def legacy_magic() -> Built:
    """A magic-1 message (LegacyRecord.java): offset, size, crc, magic, attributes, timestamp, key, value."""
    body = struct.pack(">bbq", 1, 0, APPEND_MS) + struct.pack(">i", -1) + struct.pack(">i", 5) + b"hello"
    entry = struct.pack(">qiI", 3, 4 + len(body), zlib.crc32(body)) + body
    return _segment(entry)


def zero_tail() -> Built:
    return Built(good_prefix() + bytes(256 * 1024))


def zero_tail_then_data() -> Built:
    prefix = good_prefix()
    return Built(prefix + bytes(1000) + good_suffix(), offset=len(prefix))


def empty() -> Built:
    return Built(b"")


def negative_record_length() -> Built:
    out = bytearray()
    wire.write_varint(out, -3)
    return _record_case(bytes(out) + b"\x00" * 8, 1)


def record_length_past_batch() -> Built:
    out = bytearray()
    wire.write_varint(out, 1000)
    return _record_case(bytes(out) + record_bytes(frame())[2:], 1)


def overlong_varint() -> Built:
    return _record_case(b"\xff" * 6 + b"\x01" + b"\x00" * 8, 1)


def too_few_records() -> Built:
    first, second = record_bytes(frame()), record_bytes(frame(*_partition(0)), offset_delta=1)
    return _record_case(first + second, 3, len(first) + len(second))


def too_many_records() -> Built:
    first, second = record_bytes(frame()), record_bytes(frame(*_partition(0)), offset_delta=1)
    return _record_case(first + second, 1, len(first))


def negative_record_count() -> Built:
    return _segment(raw_batch(record_bytes(frame()), -1), good_suffix())


def header_key_not_utf8() -> Built:
    rec = bytearray(record_bytes(frame(), headers=[(b"\xc3\x28", b"v")]))
    return _record_case(bytes(rec), 1, 0)


def negative_header_count() -> Built:
    body = bytearray(b"\x00")  # attributes
    wire.write_varlong(body, 0)
    wire.write_varint(body, 0)
    wire.write_varint(body, -1)  # null key
    value = frame()
    wire.write_varint(body, len(value))
    body += value
    wire.write_varint(body, -2)  # header count
    out = bytearray()
    wire.write_varint(out, len(body))
    return _record_case(bytes(out + body), 1, 0)


def bytes_left_in_record() -> Built:
    rec = bytearray(record_bytes(frame()))
    body = rec[1:] + b"\x00\x00"  # two bytes no field accounts for
    out = bytearray()
    wire.write_varint(out, len(body))
    return _record_case(bytes(out + body), 1, 0)


# ---------------------------------------------------------------------------------------------- compression

def bomb(codec: int) -> Callable[[], Built]:
    return lambda: _segment(raw_batch(bomb_section(codec), 1, codec=codec), good_suffix())


def compressed_garbage() -> Built:
    return _segment(raw_batch(b"\x1f\x8b\x08\x00garbage-not-deflate" * 3, 1, codec=compression.GZIP),
                    good_suffix())


def unknown_codec() -> Built:
    return _segment(raw_batch(record_bytes(frame()), 1, codec=6), good_suffix())


# ---------------------------------------------------------------------------------------------- metadata frames

def unknown_api_key() -> Built:
    return _value_case(_frame_bytes(1, 200, 0, b"\x00"))


def unknown_version() -> Built:
    return _value_case(_frame_bytes(1, 2, 9, _topic_body(b"orders")))


def garbage_after_frame() -> Built:
    return _value_case(frame() + b"\x00\x07")


def bad_frame_version() -> Built:
    return _value_case(_frame_bytes(0, 2, 0, _topic_body(b"orders")))


def frame_overlong_varint() -> Built:
    return _value_case(b"\x01" + b"\xff" * 5 + b"\x01")


def compact_string_past_buffer() -> Built:
    return _value_case(_frame_bytes(1, 2, 0, _topic_body(b"orders", length=200)))


def name_not_utf8() -> Built:
    return _value_case(_frame_bytes(1, 2, 0, _topic_body(b"ord\xff\xfers")))


def null_value() -> Built:
    return _value_case(None)


def unknown_control_type() -> Built:
    key = struct.pack(">hh", 0, 99)
    return _segment(raw_batch(record_bytes(b"\x00\x00", key=key), 1, control=True), good_suffix())


# ---------------------------------------------------------------------------------------------- data segments

def sparse_segment() -> Built:
    """One good data batch; the file is then extended to 10 GiB of holes (Case.sparse_size)."""
    return Built(data_batch())


def data_segment_truncated() -> Built:
    first = data_batch()
    return Built(first + data_batch(3)[:50], offset=len(first))


# ---------------------------------------------------------------------------------------------- text files

def producer_snapshot_crc() -> Built:
    data = bytearray(encode_producer_snapshot(_producer_entries()))
    data[-5] ^= 0x01
    return Built(bytes(data), offset=2)


def producer_snapshot_truncated() -> Built:
    data = encode_producer_snapshot(_producer_entries())
    return Built(data[:len(data) - 20])


def producer_snapshot_bad_version() -> Built:
    data = bytearray(encode_producer_snapshot(_producer_entries()))
    struct.pack_into(">h", data, 0, 7)
    return Built(bytes(data), offset=0)


def txn_index_partial() -> Built:
    entry = struct.pack(">hqqqq", 0, 4000, 10, 12, 13)
    return Built(entry + entry[:20], offset=len(entry))


def offset_checkpoint_bad_line() -> Built:
    good = write_offset_checkpoint([("orders", 0, 10), ("orders", 1, 12)]).decode()
    lines = good.splitlines()
    lines[3] = "orders one 12"
    return Built(("\n".join(lines) + "\n").encode(), line=4)


def leader_epoch_checkpoint_bad_count() -> Built:
    good = write_leader_epoch_checkpoint([(0, 0), (1, 6)]).decode().splitlines()
    good[1] = "5"  # says 5 entries, holds 2
    return Built(("\n".join(good) + "\n").encode())


def leader_epoch_checkpoint_negative_epoch() -> Built:
    """Parses, but LeaderEpochFileCache.assign throws IllegalArgumentException on load (the log fails)."""
    return Built(write_leader_epoch_checkpoint([(0, 0), (-1, 6)]), line=4)


def leader_epoch_checkpoint_epoch_not_a_number() -> Built:
    """Integer.parseInt in the formatter: a NumberFormatException Kafka does not wrap (the log fails)."""
    return Built(b"0\n2\n0 0\nseven 6\n", line=4)


def leader_epoch_checkpoint_three_fields() -> Built:
    return Built(b"0\n1\n0 0 12\n", line=3)


def leader_epoch_checkpoint_version_1() -> Built:
    return Built(b"1\n1\n0 0\n", line=1)


def dump_log_garbage() -> Built:
    text = ("Dumping /var/lib/kafka/__cluster_metadata-0/00000000000000000000.log\n"
            "Log starting offset: 0\n"
            "this is not a kafka-dump-log line\n")
    return Built(text.encode(), line=3)


def znode_dump_bad_line() -> Built:
    good = json.dumps({"path": "/brokers/topics/orders", "data": json.dumps(
        {"partitions": {"0": [101, 102]}, "topic_id": TOPIC_ID, "adding_replicas": {}, "removing_replicas": {},
         "version": 3}), "stat": {"czxid": 78, "mzxid": 78, "pzxid": 79, "ctime": APPEND_MS, "mtime": APPEND_MS,
                                  "version": 0, "cversion": 1, "aversion": 0, "ephemeralOwner": 0,
                                  "dataLength": 10, "numChildren": 1}})
    return Built((good + "\n" + '{"path": "/brokers/ids/1", "data": \n' + good + "\n").encode(), line=2)


def log_dirs_bad_json() -> Built:
    text = ("Querying brokers for log directories information\n"
            "Received log directory information from brokers 101\n"
            '{"version":1,"brokers":[{"broker":101,"logDirs":[{"logDir":"/var/lib/kafka"\n')
    return Built(text.encode(), line=3)


# ---------------------------------------------------------------------------------------------- packs

def pack_dotdot() -> Built:
    return _pack_with([_member("../../etc/cron.d/evil", content=b"* * * * * root sh\n")])


def pack_absolute() -> Built:
    return _pack_with([_member("/etc/passwd", content=b"root:x:0:0::/root:/bin/sh\n")])


def pack_symlink_with_content() -> Built:
    return _pack_with([_member("orders-0/leader-epoch-checkpoint", "symlink", content=b"0\n0\n",
                               target="/etc/shadow")])


def pack_device_with_content() -> Built:
    return _pack_with([_member("orders-0/00000000000000000000.index", "other", content=b"\x00" * 8,
                               mode=0o020644)])


def pack_size_beyond_int64() -> Built:
    """A listed file whose size no Java long can hold (it once crashed ingest's Arrow conversion)."""
    return _pack_with([_member("orders-0/00000000000000000100.log", size=10 ** 20)])


def pack_symlink_outside() -> Built:
    """A symlink member pointing outside, with no content: listed as data, never followed, not an error."""
    built = _pack_with([_member("orders-0/leader-epoch-checkpoint", "symlink", target="/etc/shadow")])
    return Built(built.data)


def pack_bomb() -> Built:
    """A pack whose second line inflates to 64 MiB (over the reader's 4 MiB line cap) from ~64 KiB."""
    head = (json.dumps(real_pack_lines()[0], separators=(",", ":")) + "\n").encode() + b'{"rec":"entry","path":"'
    return Built(gzip_of_zeros(head, 64, b'"}\n'), line=2)


def pack_truncated() -> Built:
    data = _pack_with([]).data
    return Built(data[: len(data) * 2 // 3])


# ---------------------------------------------------------------------------------------------- the table

def _seg(name: str, build, kind, good_before=GOOD_RECORDS, good_after=0, why="") -> Case:
    return Case(name, "metadata_log", build, kind, good_before, "metadata", "", "metadata_segment", good_after, why)


def _in(place: str, file_name: str, file_kind: str):
    def make(name: str, reader: str, build, kind, good_before=0, why="") -> Case:
        return Case(name, reader, build, kind, good_before, place, file_name, file_kind, why=why)
    return make


_pm_case = _in("replica", "partition.metadata", "partition_metadata")
_meta_case = _in("log_dir", "meta.properties", "meta_properties")
_quorum_case = _in("metadata_dir", "quorum-state", "quorum_state")
_ps_case = _in("replica", "00000000000000000010.snapshot", "producer_snapshot")

CASES: tuple = (
    # framing of a segment
    _seg("segment_truncated_mid_header", truncated_mid_header, "truncated_batch"),
    _seg("segment_truncated_mid_record", truncated_mid_record, "truncated_batch"),
    _seg("segment_batch_length_past_eof", length_past_eof, "truncated_batch"),
    _seg("segment_negative_batch_length", negative_batch_length, "batch_too_small"),
    _seg("segment_batch_below_overhead", batch_below_overhead, "batch_too_small"),
    _seg("segment_crc_mismatch", crc_mismatch, "crc_mismatch", good_after=1),
    _seg("segment_wrong_magic", wrong_magic, "bad_magic"),
    _seg("segment_legacy_magic", legacy_magic, "legacy_magic"),
    _seg("segment_empty", empty, None, 0, why="Kafka creates empty segments when it rolls; nothing to decode"),
    _seg("segment_zero_filled_tail", zero_tail, None,
         why="a preallocated segment (file.preallocate) ends in zeros; framing stops there cleanly"),
    _seg("segment_zeros_then_data", zero_tail_then_data, "batch_too_small"),
    # records inside a batch (CRC valid: the records themselves are bad)
    _seg("record_negative_length", negative_record_length, "negative_length", good_after=1),
    _seg("record_length_past_batch", record_length_past_batch, "length_out_of_buffer", good_after=1),
    _seg("record_overlong_varint", overlong_varint, "varint_too_long", good_after=1),
    _seg("record_count_above_records", too_few_records, "length_out_of_buffer", GOOD_RECORDS + 2, 1),
    _seg("record_count_below_records", too_many_records, "record_count_mismatch", GOOD_RECORDS + 1, 1),
    _seg("record_negative_count", negative_record_count, "record_count_mismatch", good_after=1),
    _seg("record_header_key_invalid_utf8", header_key_not_utf8, "invalid_utf8", good_after=1),
    _seg("record_negative_header_count", negative_header_count, "negative_length", good_after=1),
    _seg("record_bytes_left_over", bytes_left_in_record, "garbage_after_frame", good_after=1),
    # compression
    _seg("bomb_gzip", bomb(compression.GZIP), "decompression_bomb", good_after=1),
    _seg("bomb_zstd", bomb(compression.ZSTD), "decompression_bomb", good_after=1),
    _seg("bomb_lz4", bomb(compression.LZ4), "decompression_bomb", good_after=1),
    _seg("bomb_snappy", bomb(compression.SNAPPY), "decompression_bomb", good_after=1),
    _seg("compressed_garbage", compressed_garbage, "decompression_failed", good_after=1),
    _seg("unknown_codec", unknown_codec, "unsupported_compression", good_after=1),
    # metadata frames in record values
    _seg("frame_unknown_api_key", unknown_api_key, "unknown_api_key", good_after=1),
    _seg("frame_unknown_version", unknown_version, "unknown_version", good_after=1),
    _seg("frame_garbage_after", garbage_after_frame, "garbage_after_frame", good_after=1),
    _seg("frame_version_0", bad_frame_version, "bad_frame_version", good_after=1),
    _seg("frame_overlong_varint", frame_overlong_varint, "varint_too_long", good_after=1),
    _seg("frame_compact_string_past_buffer", compact_string_past_buffer, "length_out_of_buffer", good_after=1),
    _seg("frame_name_invalid_utf8", name_not_utf8, "invalid_utf8", good_after=1),
    _seg("frame_null_value", null_value, "negative_length", good_after=1),
    _seg("control_unknown_type", unknown_control_type, "unknown_api_key", good_after=1),
    # data segments (header scan only)
    Case("data_segment_sparse_10gib", "segment_headers", sparse_segment, None, 1, "replica",
         "00000000000000000000.log", "data_segment", sparse_size=SPARSE_SIZE,
         why="a header scan reads 61 bytes per batch and skips holes: 10 GiB costs a few reads"),
    Case("data_segment_truncated", "segment_headers", data_segment_truncated, "truncated_batch", 1, "replica",
         "00000000000000000000.log", "data_segment"),
    # partition.metadata, every variant
    _pm_case("pm_empty", "partition_metadata", _pm(b"", 1), "empty_file"),
    _pm_case("pm_one_line", "partition_metadata", _pm(b"version: 0\n", 2), "malformed_line"),
    _pm_case("pm_bad_version", "partition_metadata", _pm(b"version: -1\ntopic_id: " + TOPIC_ID.encode(), 1),
             "bad_version"),
    _pm_case("pm_version_not_a_number", "partition_metadata",
             _pm(b"version: zero\ntopic_id: " + TOPIC_ID.encode(), 1), "malformed_line"),
    _pm_case("pm_zero_id", "partition_metadata", _pm(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 2),
             "zero_uuid"),
    _pm_case("pm_23_char_id", "partition_metadata", _pm(b"version: 0\ntopic_id: " + TOPIC_ID.encode() + b"A", 2),
             "invalid_uuid"),
    _pm_case("pm_non_base64_id", "partition_metadata", _pm(b"version: 0\ntopic_id: xWt6cg*LDx4r6BAz2rYsCg", 2),
             "invalid_uuid"),
    _pm_case("pm_no_separator", "partition_metadata", _pm(b"version: 0\ntopic_id:" + TOPIC_ID.encode(), 2),
             "malformed_line"),
    _pm_case("pm_invalid_utf8", "partition_metadata", _pm(b"version: 0\ntopic_id: \xff\xfe", None), "invalid_utf8"),
    # meta.properties
    _meta_case("meta_missing_node_id", "meta_properties", meta_props(drop="node.id"), "missing_key"),
    _meta_case("meta_missing_cluster_id", "meta_properties", meta_props(drop="cluster.id"), "missing_key"),
    _meta_case("meta_unknown_version", "meta_properties", meta_props(version="7"), "bad_version"),
    _meta_case("meta_node_id_not_a_number", "meta_properties", meta_props(node_id="one"), "malformed_line"),
    _meta_case("meta_bad_directory_id", "meta_properties", meta_props(directory_id="not-a-uuid"), "invalid_uuid"),
    # quorum-state
    _quorum_case("quorum_bad_json", "quorum_state", quorum(b'{"leaderId":1,"data_version":'), "bad_json"),
    _quorum_case("quorum_empty", "quorum_state", quorum(b"", None), "empty_file"),
    _quorum_case("quorum_not_an_object", "quorum_state", quorum(b"[1,2,3]"), "bad_json"),
    _quorum_case("quorum_no_data_version", "quorum_state", quorum(b'{"leaderId":1}'), "missing_key"),
    _quorum_case("quorum_unknown_version", "quorum_state",
                 quorum(good_quorum().replace(b'"data_version":1', b'"data_version":9')), "bad_version"),
    # producer state, transaction index, checkpoints
    _ps_case("producer_snapshot_crc", "producer_snapshot", producer_snapshot_crc, "crc_mismatch", 2),
    _ps_case("producer_snapshot_truncated", "producer_snapshot", producer_snapshot_truncated,
             "length_out_of_buffer"),
    _ps_case("producer_snapshot_bad_version", "producer_snapshot", producer_snapshot_bad_version, "bad_version"),
    _ps_case("producer_snapshot_empty", "producer_snapshot", lambda: Built(b"", offset=0), "empty_file"),
    Case("txn_index_partial_entry", "txn_index", txn_index_partial, "truncated_batch", 1, "replica",
         "00000000000000000000.txnindex", "txnindex", ingest_reads=False,
         why="ingest lists .txnindex files without decoding them: nothing downstream reads aborted transactions"),
    Case("offset_checkpoint_bad_line", "offset_checkpoint", offset_checkpoint_bad_line, "malformed_line", 1,
         "log_dir", "recovery-point-offset-checkpoint", "checkpoint"),
    Case("leader_epoch_checkpoint_bad_count", "leader_epoch_checkpoint", leader_epoch_checkpoint_bad_count,
         "record_count_mismatch", 2, "replica", "leader-epoch-checkpoint", "checkpoint"),
    Case("leader_epoch_checkpoint_negative_epoch", "leader_epoch_checkpoint", leader_epoch_checkpoint_negative_epoch,
         "malformed_line", 1, "replica", "leader-epoch-checkpoint", "checkpoint"),
    Case("leader_epoch_checkpoint_epoch_not_a_number", "leader_epoch_checkpoint",
         leader_epoch_checkpoint_epoch_not_a_number, "malformed_line", 1, "replica", "leader-epoch-checkpoint",
         "checkpoint"),
    Case("leader_epoch_checkpoint_three_fields", "leader_epoch_checkpoint", leader_epoch_checkpoint_three_fields,
         "malformed_line", 0, "replica", "leader-epoch-checkpoint", "checkpoint"),
    Case("leader_epoch_checkpoint_version_1", "leader_epoch_checkpoint", leader_epoch_checkpoint_version_1,
         "bad_version", 0, "replica", "leader-epoch-checkpoint", "checkpoint"),
    # loose files
    Case("dump_log_garbage_line", "dump_log_text", dump_log_garbage, "malformed_line", 0, "loose",
         "metadata-dump.txt", "dump_log_text"),
    Case("znode_dump_bad_line", "znode_dump", znode_dump_bad_line, "bad_json", 1, "loose", "zk-znodes.jsonl",
         "zk_znodes", good_after=1),
    Case("log_dirs_bad_json", "log_dirs_json", log_dirs_bad_json, "bad_json", 0, "loose", "log-dirs.txt",
         "log_dirs_json"),
    # packed snapshots (hostile)
    Case("pack_dotdot_path", "pack", pack_dotdot, "unsafe_path", PACK_ENTRIES, "loose", "broker-990.jsonl.gz",
         "packed_snapshot"),
    Case("pack_absolute_path", "pack", pack_absolute, "unsafe_path", PACK_ENTRIES, "loose", "broker-990.jsonl.gz",
         "packed_snapshot"),
    Case("pack_symlink_with_content", "pack", pack_symlink_with_content, "unsafe_member", PACK_ENTRIES, "loose",
         "broker-990.jsonl.gz", "packed_snapshot"),
    Case("pack_device_with_content", "pack", pack_device_with_content, "unsafe_member", PACK_ENTRIES, "loose",
         "broker-990.jsonl.gz", "packed_snapshot"),
    Case("pack_size_beyond_int64", "pack", pack_size_beyond_int64, "bad_entry", PACK_ENTRIES, "loose",
         "broker-990.jsonl.gz", "packed_snapshot"),
    Case("pack_symlink_outside", "pack", pack_symlink_outside, None, PACK_ENTRIES + 1, "loose", "broker-990.jsonl.gz",
         "packed_snapshot", why="a symlink is data in a pack: recorded with its target, never followed"),
    Case("pack_decompression_bomb", "pack", pack_bomb, "decompression_bomb", 0, "loose", "broker-990.jsonl.gz",
         "packed_snapshot"),
    Case("pack_truncated", "pack", pack_truncated, "truncated_pack", 0, "loose", "broker-990.jsonl.gz",
         "packed_snapshot"),
)

BY_NAME = {case.name: case for case in CASES}


def write_corpus(directory: Path) -> list:
    """Write every case to ``directory/<name>/<file name>``; returns the paths."""
    paths = []
    for case in CASES:
        paths.append(case.write(directory / case.name / (case.file_name or "00000000000000000000.log")))
    return paths


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "malformed-corpus")
    for written in write_corpus(target):
        print(f"{os.stat(written).st_size:>12} {written}")
