"""Every decoder entry point as a fuzz target: ``bytes -> None`` (the output is consumed fully), plus seeds.

A target either is a public "never raises" function (``allowed`` is empty: any exception is a bug) or an
internal reader documented to raise :class:`udfs.errors.CorruptInput` (``allowed`` names it). Seeds are real
files: the Kafka-written fixtures in tests/fixtures and the malformed corpus (tests/reliability/corpus.py).
"""
from __future__ import annotations

import gzip
import json
import tarfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import collector
from udfs import (
    compression,
    dump_log_text,
    java_text,
    json_state_files,
    kafka_uuid,
    log_dir_names,
    log_dirs_describe,
    log_index,
    message_codec,
    message_writer,
    metadata_log,
    pack_reader,
    partition_metadata,
    producer_state,
    properties_files,
    record_batch,
    wire,
    zookeeper,
)
from udfs.errors import CorruptInput

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DEVSAMPLE = FIXTURES / "kafka-devsample"
ZK_SAMPLE = FIXTURES / "kafka-zk-sample" / "Z1.tar.gz"
MAX_SEED_BYTES = 64 * 1024
FUZZ_DECOMPRESS_LIMIT = 1 << 20  # keeps one execution cheap; the limit logic is the same at any size


@dataclass(frozen=True)
class Target:
    name: str
    run: Callable[[bytes], object]
    seeds: Callable[[], List[bytes]]
    allowed: Tuple[type, ...] = ()  # exceptions the entry point documents; anything else is a crash


def _drain(iterable) -> int:
    n = 0
    for _ in iterable:
        n += 1
    return n


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _lines(data: bytes) -> List[str]:
    return _text(data).splitlines()


# ---------------------------------------------------------------------------------------------- runners

def _metadata_records(data: bytes) -> None:
    for rec in metadata_log.iter_metadata_records(data):
        rec.payload_json()
        rec.as_json_line()


def _batch_records(data: bytes) -> None:
    for item in record_batch.read_batches(data):
        if isinstance(item, record_batch.Batch):
            item.header.as_dict()
            _drain(record_batch.iter_records(item, FUZZ_DECOMPRESS_LIMIT))
            _drain(metadata_log.records_of_batch(item, trust_bad_crc=True))


def _scan_headers(data: bytes) -> None:
    end = record_batch.SegmentEnd()
    _drain(record_batch.scan_headers(data, end_info=end))
    if end.valid_bytes + end.zero_tail_bytes + end.remaining_bytes != end.file_size:
        raise AssertionError(f"segment accounting broken: {end}")


def _parse_batch(data: bytes) -> None:
    batch = record_batch.parse_batch(data)
    _drain(record_batch.record_tuples(batch, FUZZ_DECOMPRESS_LIMIT))


def _metadata_value(data: bytes) -> None:
    metadata_log.decode_metadata_value(data)
    metadata_log.decode_metadata_value(memoryview(data))


def _control_record(data: bytes) -> None:
    split = data[0] % 8 if data else 0
    metadata_log.decode_control_record(data[1:1 + split] if data else None, data[1 + split:])


@lru_cache(maxsize=None)
def _all_specs() -> tuple:
    specs = []
    for schema in ("metadata_records", "control_records", "producer_snapshot"):
        try:
            from udfs.message_spec import load_schema

            specs.extend(load_schema(schema).messages)
        except (FileNotFoundError, KeyError, ValueError):
            continue
    return tuple(specs)


def _message_codec(data: bytes) -> None:
    """First byte picks a spec, second a version; the rest is the body."""
    specs = _all_specs()
    if len(data) < 2 or not specs:
        return
    spec = specs[data[0] % len(specs)]
    low, high = spec.valid_versions.lowest, spec.valid_versions.highest
    version = low + data[1] % (high - low + 1)
    value, _ = message_codec.decode(spec, version, data, 2)
    message_writer.encode(spec, version, value)  # whatever decodes must encode again


def _wire(data: bytes) -> None:
    if not data:
        return
    readers = (wire.read_uvarint, wire.read_varint, wire.read_varlong, wire.read_string, wire.read_compact_string,
               wire.read_bytes, wire.read_compact_bytes, wire.read_uuid, wire.read_bool,
               lambda b, p: wire.read_string(b, p, nullable=True),
               lambda b, p: wire.read_compact_string(b, p, nullable=True),
               lambda b, p: wire.read_compact_array(b, p, wire.read_varint),
               lambda b, p: wire.read_array(b, p, wire.read_uvarint, nullable=True))
    readers[data[0] % len(readers)](data, 1)


def _decompress(data: bytes) -> None:
    if data:
        compression.decompress(data[0] % 8, data[1:], FUZZ_DECOMPRESS_LIMIT)


def _producer_snapshot(data: bytes) -> None:
    result = producer_state.decode_producer_snapshot(data)
    if result.error is None:
        producer_state.encode_producer_snapshot(result.entries)


def _pack(data: bytes) -> None:
    for source in (data, gzip.compress(data, mtime=0)):
        reader = pack_reader.read_pack(source, max_line_bytes=1 << 20, max_total_bytes=8 << 20)
        _drain(reader)
        reader.close()


def _ingest_pack(data: bytes) -> None:
    """The ingest executor's own path over a pack's entries (log_dir_rows): what a hostile pack reaches."""
    from jobs.ingest.log_dir_rows import DecodeOptions, decode_entries
    from jobs.ingest.tagged_rows import RowSink
    from jobs.settings import Settings

    reader = pack_reader.read_pack(data, max_line_bytes=1 << 20, max_total_bytes=8 << 20)
    sink = RowSink(64)
    options = DecodeOptions.from_settings(Settings.shipped().ingest, decompression_limit_bytes=FUZZ_DECOMPRESS_LIMIT)
    _drain(decode_entries(iter(reader), sink, options, display=lambda log_dir: f"pack!{log_dir}"))
    _drain(sink.drain())


def _names(data: bytes) -> None:
    name = _text(data[:300])
    log_dir_names.classify_entry(name)
    log_dir_names.classify_entry(name, is_dir=True, log_dir="/var/lib/kafka")
    log_dir_names.parse_topic_partition_name(name)
    log_dir_names.classify_partition_file(name)
    log_dir_names.kafka_name_error(name)
    metadata_log.parse_snapshot_file_name(name)
    pack_reader.path_problem(name)
    log_dirs_describe.split_topic_partition(name)


def _uuid(data: bytes) -> None:
    text = _text(data[:64])
    kafka_uuid.parse(text)
    kafka_uuid.parse_uuid_text(text)
    java_text.parse_int(text)
    java_text.parse_long(text)
    java_text.java_trim(text)


def _java_text(data: bytes) -> None:
    java_text.decode_utf8_like_java(data)
    java_text.decode_utf8_like_java(data, lines_needed=2)
    java_text.read_lines(_text(data))


def _zk_log(data: bytes) -> None:
    for kind in ("controller_log", "state_change_log", "server_log"):
        zookeeper.parse_zk_log(_lines(data), f"{kind}.log", kind, broker_id=1)


def _znode_values(data: bytes) -> None:
    text = _text(data)
    zookeeper.decode_topic_znode(text)
    zookeeper.decode_partition_state(text)
    zookeeper.decode_producer_id_block(text)


def _dump_log(data: bytes) -> None:
    for section in dump_log_text.parse_dump_log(_lines(data)):
        for rec in section.records:
            rec.payload_json()
    _drain(dump_log_text.iter_dump_log_batches(_lines(data)))


# ---------------------------------------------------------------------------------------------- seeds

def _files(*patterns: str) -> List[bytes]:
    out = []
    for pattern in patterns:
        for path in sorted(DEVSAMPLE.glob(pattern)):
            if path.is_file():
                out.append(path.read_bytes()[:MAX_SEED_BYTES])
    return out


@lru_cache(maxsize=None)
def _zk_members() -> Dict[str, bytes]:
    wanted = {}
    with tarfile.open(ZK_SAMPLE) as tar:
        for member in tar.getmembers():
            if not member.isfile() or member.size == 0:
                continue
            name = member.name.rsplit("/", 1)[-1]
            if name in ("zk-znodes.jsonl", "controller.log", "state-change.log", "server.log") \
                    and name not in wanted:
                handle = tar.extractfile(member)
                wanted[name] = handle.read(MAX_SEED_BYTES) if handle else b""
    return wanted


def _corpus(*readers: str) -> List[bytes]:
    from tests.reliability.corpus import CASES

    out = []
    for case in CASES:
        if case.reader in readers:
            data = case.build().data
            if len(data) <= MAX_SEED_BYTES:
                out.append(data)
    return out


def _metadata_seeds() -> List[bytes]:
    return (_files("broker-101/*/__cluster_metadata-0/*.log", "broker-101/*/__cluster_metadata-0/*.checkpoint",
                   "broker-101/*/bootstrap.checkpoint") + _corpus("metadata_log"))


def _batch_seeds() -> List[bytes]:
    return _files("broker-101/*/*-[0-9]/*.log") + _metadata_seeds()[:4] + _corpus("segment_headers")


def _single_batches() -> List[bytes]:
    out = []
    for seed in _batch_seeds():
        for item in record_batch.read_batches(seed):
            if isinstance(item, record_batch.Batch):
                out.append(bytes(item.data))
                break
    return out


def _values() -> List[bytes]:
    out = []
    for seed in _metadata_seeds()[:3]:
        for item in record_batch.read_batches(seed):
            if isinstance(item, record_batch.Batch) and not item.header.is_control:
                out.extend(bytes(t[2]) for t in record_batch.record_tuples(item) if t[2] is not None)
    return out[:40]


def _control_seeds() -> List[bytes]:
    out = []
    for seed in _metadata_seeds()[:3]:
        for item in record_batch.read_batches(seed):
            if isinstance(item, record_batch.Batch) and item.header.is_control:
                for t in record_batch.record_tuples(item):  # (offset_delta, key, value, ...)
                    key, value = bytes(t[1] or b""), bytes(t[2] or b"")
                    out.append(bytes([len(key)]) + key + value)
    return out[:20]


def _codec_seeds() -> List[bytes]:
    plain = _metadata_seeds()[0][:4096]
    return [bytes([codec]) + compression.compress(codec, plain) for codec in (0, 1, 2, 3, 4)]


def _pack_seeds() -> List[bytes]:
    from tests.reliability.corpus_builders import real_pack_lines

    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in real_pack_lines())
    out = [text.encode()]
    for data in _corpus("pack"):
        try:
            out.append(gzip.decompress(data))
        except (OSError, EOFError):
            continue
    return out


def _ingest_pack_seeds() -> List[bytes]:
    """A real pack of a devsample broker with its metadata log embedded (so segments reach the decoders)."""
    import io
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(DEVSAMPLE / "broker-103", Path(tmp) / "b")
        buf = io.BytesIO()
        collector.write_pack(buf, [str(Path(tmp) / "b" / "kafka-logs")],
                             collector.CollectOptions(include_metadata_log=True), host="h",
                             capture_time="2026-11-22T08:32:56.000Z")
    return [gzip.decompress(buf.getvalue())[:MAX_SEED_BYTES]]


def _text_seed(name: str) -> Callable[[], List[bytes]]:
    return lambda: [_zk_members().get(name, b"")]


def _dump_seeds() -> List[bytes]:
    tool = DEVSAMPLE / "tool-output"
    paths = sorted(tool.glob("broker-101/*/__cluster_metadata-0/*.log.DumpLogSegments*.txt"))
    paths += sorted(tool.glob("broker-101/*/*.DumpLogSegments.txt"))
    return [p.read_bytes()[:MAX_SEED_BYTES] for p in paths] + _corpus("dump_log_text")


def _znode_value_seeds() -> List[bytes]:
    out = []
    for line in _zk_members().get("zk-znodes.jsonl", b"").splitlines()[:200]:
        try:
            data = json.loads(line).get("data")
        except ValueError:
            continue
        if isinstance(data, str) and data.startswith("{"):
            out.append(data.encode())
    return out[:30]


def _name_seeds() -> List[bytes]:
    names = {p.name for p in DEVSAMPLE.rglob("*")}
    names |= {"orders-0.0123456789abcdef0123456789abcdef-delete", "orders-1.0123456789abcdef0123456789abcdef-stray",
              "00000000000000000044-0000000001.checkpoint", "orders-+3", "-0", "a-b-c-7"}
    return [n.encode() for n in sorted(names)]


TARGETS: Tuple[Target, ...] = (
    Target("metadata_log", _metadata_records, _metadata_seeds),
    Target("batch_records", _batch_records, _batch_seeds),
    Target("scan_headers", _scan_headers, _batch_seeds),
    Target("parse_batch", _parse_batch, _single_batches, (CorruptInput,)),
    Target("metadata_value", _metadata_value, _values),
    Target("control_record", _control_record, _control_seeds),
    Target("message_codec", _message_codec, lambda: [b"\x02\x00" + v[3:] for v in _values()], (CorruptInput,)),
    Target("wire", _wire, lambda: [b"\x04" + v[3:] for v in _values()[:10]], (CorruptInput,)),
    Target("decompress", _decompress, _codec_seeds, (CorruptInput,)),
    Target("partition_metadata", lambda d: partition_metadata.read_partition_metadata(d).kafka_read(),
           lambda: _files("broker-101/*/*/partition.metadata")[:3] + _corpus("partition_metadata")),
    Target("meta_properties", properties_files.parse_meta_properties,
           lambda: _files("*/*/meta.properties") + _corpus("meta_properties")),
    Target("load_properties", properties_files.load_properties, lambda: _files("*/*/meta.properties")),
    Target("collector_properties", lambda d: collector.parse_properties(_text(d)), lambda: _files("*/*/meta.properties")),
    Target("quorum_state", json_state_files.parse_quorum_state,
           lambda: _files("*/*/__cluster_metadata-0/quorum-state") + _corpus("quorum_state")),
    Target("clean_shutdown", json_state_files.parse_clean_shutdown,
           lambda: [json_state_files.write_clean_shutdown(42), b'{"version":0,"brokerEpoch":"7"}']),
    Target("offset_checkpoint", properties_files.parse_offset_checkpoint,
           lambda: _files("*/*/*-offset-checkpoint") + _corpus("offset_checkpoint")),
    Target("leader_epoch_checkpoint", properties_files.parse_leader_epoch_checkpoint,
           lambda: _files("broker-101/*/*/leader-epoch-checkpoint")[:4] + _corpus("leader_epoch_checkpoint")),
    Target("producer_snapshot", _producer_snapshot,
           lambda: _files("broker-101/*/*/*.snapshot") + _corpus("producer_snapshot")),
    Target("txn_index", lambda d: _drain(producer_state.iter_txn_index(d)),
           lambda: _files("*/*/*/*.txnindex") + _corpus("txn_index")),
    Target("offset_index", lambda d: _drain(log_index.iter_offset_index(d)),
           lambda: [b[:4096] for b in _files("broker-101/*/*/*.index")[:4]]),
    Target("time_index", lambda d: _drain(log_index.iter_time_index(d)),
           lambda: [b[:4096] for b in _files("broker-101/*/*/*.timeindex")[:4]]),
    Target("dump_log_text", _dump_log, _dump_seeds),
    Target("znode_dump", lambda d: zookeeper.parse_znode_dump(_lines(d), "zk-znodes.jsonl"),
           lambda: _text_seed("zk-znodes.jsonl")() + _corpus("znode_dump")),
    Target("znode_values", _znode_values, _znode_value_seeds),
    Target("zk_log", _zk_log, lambda: _text_seed("controller.log")() + _text_seed("state-change.log")()
           + _text_seed("server.log")()),
    Target("log_dirs_json", lambda d: log_dirs_describe.parse_log_dirs_output(_text(d)),
           lambda: _corpus("log_dirs_json") + [b'Querying brokers for log directories information\n'
                                               b'{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/k",'
                                               b'"error":null,"partitions":[{"partition":"orders-0","size":1,'
                                               b'"offsetLag":0,"isFuture":false}]}]}]}\n']),
    Target("pack", _pack, _pack_seeds),
    Target("ingest_pack", _ingest_pack, lambda: _pack_seeds() + _ingest_pack_seeds()),
    Target("names", _names, _name_seeds),
    Target("uuid_and_numbers", _uuid, lambda: [b"xWt6cg-LDx4r6BAz2rYsCg", b"AAAAAAAAAAAAAAAAAAAAAQ", b"+2147483647",
                                               b"0123e4567-e89b-12d3-a456-426614174000"]),
    Target("java_text", _java_text, lambda: [b"version: 0\r\ntopic_id: x\n", b"\xc3\x28\n", b"a\rb\r\nc"]),
)

BY_NAME: Dict[str, Target] = {t.name: t for t in TARGETS}


# ---------------------------------------------------------------------------------------------- harness self-test

def _planted_crash(data: bytes) -> None:
    if b"\x13" in data:
        raise ValueError("planted bug")


def _planted_hang(data: bytes) -> None:
    if b"\xff" in data:
        while True:
            pass


def _planted_hog(data: bytes) -> None:
    if b"\x00" in data:
        bytearray(8 << 30)


# Targets with planted bugs: ``run_fuzz --self-test`` must report each one (a harness that cannot fail proves
# nothing).
SELF_TEST_TARGETS: Tuple[Target, ...] = (
    Target("planted_crash", _planted_crash, lambda: [b"\x12\x12\x12\x12"]),
    Target("planted_hang", _planted_hang, lambda: [b"hang"]),
    Target("planted_hog", _planted_hog, lambda: [b"hog"]),
)
