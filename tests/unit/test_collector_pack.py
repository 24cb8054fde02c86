"""Broker-side collector, pack writer: pack == raw walk == disk, header identity, parts, caps, bounded memory.

Runs on copies of the real Kafka-written devsample tree (tests/fixtures/kafka-devsample).
"""
from __future__ import annotations

import gzip
import io
import os
import stat
import tracemalloc
from pathlib import Path

import pytest
from collector_trees import CLUSTER_ID, FS_CLASSES, by_key, disk_listing, pack_bytes, read_all

import collector
from collector import (
    ENTRY_FIELDS,
    CollectOptions,
    LocalFileSystem,
    PathFileSystem,
    walk_log_dirs,
    write_pack,
)

# -------------------------------------------------------------------------------- pack and read back


def test_pack_then_read_gives_every_entry_with_sizes_and_bytes(b102):
    reader, entries = read_all(pack_bytes(b102))

    assert reader.errors == [] and reader.complete
    got = {k: (e["kind"], e["size"], e["content"]) for k, e in by_key(entries).items()}
    assert got == disk_listing(b102)
    assert len(entries) == len(got) == reader.trailer["entries"]
    for e in entries:
        assert list(e) == list(ENTRY_FIELDS)
        assert e["flags"] == [] and e["error"] is None
        if e["kind"] == "file":
            assert e["alloc"] is not None and e["mtime_ms"] > 0 and stat.S_ISREG(e["mode"])


def test_header_records_identity_from_meta_properties(b102):
    reader, _ = read_all(pack_bytes(b102))
    h = reader.header
    assert (h["format"], h["version"], h["broker_id"], h["cluster_id"]) == ("kafka-recon-pack", 1, 102, CLUSTER_ID)
    assert h["log_dirs"] == b102
    assert h["host"] == "test-host" and h["capture_time"] == "2026-11-22T08:32:56.000Z"
    assert h["log_dir_ids"] == {b102[0]: "nKuNR3LmZUuB0M1ReqkepA", b102[1]: "Pt-uz-EuG-YYlKGr7dcT1Q"}
    assert h["warnings"] == []
    assert h["options"] == {"max_file_bytes": 1 << 20, "include_metadata_log": False,
                            "max_metadata_file_bytes": 1 << 30, "segment_scan_bytes": 1 << 30}


def test_real_devsample_facts_survive_the_pack(b102):
    _, entries = read_all(pack_bytes(b102))
    e = by_key(entries)
    a, b = b102
    assert e[(a, "events-1/partition.metadata")]["content"].startswith(b"version: 0\ntopic_id: ")
    assert b"node.id=102" in e[(a, "meta.properties")]["content"]
    assert (a, "clicks-0/partition.metadata") not in e  # the replica whose partition.metadata is missing
    future = "events-1.96cc2e120fcaecf473a7e5b7b7d57964-future"
    assert e[(b, future)]["kind"] == "dir" and e[(b, future + "/partition.metadata")]["content"] is not None
    assert e[(a, "__cluster_metadata-0/quorum-state")]["content"].startswith(b"{")
    assert e[(a, "inventory-0/00000000000000000006.txnindex")]["content"] is None  # listed only
    assert e[(a, "__cluster_metadata-0/00000000000000000000.log")]["content"] is None  # not requested


def test_metadata_log_embedded_on_request(b101):
    options = CollectOptions(include_metadata_log=True)
    reader, entries = read_all(pack_bytes(b101, options))
    assert reader.complete
    got = {k: (e["kind"], e["size"], e["content"]) for k, e in by_key(entries).items()}
    assert got == disk_listing(b101, include_metadata_log=True)
    md = Path(b101[0]) / "__cluster_metadata-0"
    e = by_key(entries)
    assert e[(b101[0], "__cluster_metadata-0/00000000000000000044-0000000001.checkpoint")]["content"] == (
        md / "00000000000000000044-0000000001.checkpoint"
    ).read_bytes()
    assert e[(b101[0], "__cluster_metadata-0/00000000000000000026.log")]["content"] == (
        md / "00000000000000000026.log"
    ).read_bytes()


def test_post_order_children_before_their_directory_and_log_dir_last(b102):
    entries = list(walk_log_dirs(b102))
    seen_dirs = set()
    for e in entries:
        top = e["path"].split("/")[0]
        if "/" in e["path"]:
            assert (e["log_dir"], top) not in seen_dirs
        elif e["kind"] == "dir":
            seen_dirs.add((e["log_dir"], top))
    roots = [i for i, e in enumerate(entries) if e["path"] == ""]
    last_of = {e["log_dir"]: i for i, e in enumerate(entries)}
    assert roots == [last_of[d] for d in b102]


@pytest.mark.parametrize("fs_cls", FS_CLASSES)
def test_raw_walk_equals_pack_read(b102, fs_cls):
    options = CollectOptions(include_metadata_log=True)
    raw = list(walk_log_dirs(b102, options, fs_cls()))
    reader, packed = read_all(pack_bytes(b102, options, fs_cls()))
    assert reader.complete
    assert packed == raw


def test_both_filesystem_adapters_yield_the_same_entries(b102):
    local = sorted(walk_log_dirs(b102, fs=LocalFileSystem()), key=lambda e: (e["log_dir"], e["path"]))
    path = sorted(walk_log_dirs(b102, fs=PathFileSystem()), key=lambda e: (e["log_dir"], e["path"]))
    assert local == path


def test_large_embedded_file_is_split_into_parts_and_reassembled(tmp_path):
    log_dir = tmp_path / "kafka-logs"
    md = log_dir / "__cluster_metadata-0"
    md.mkdir(parents=True)
    segment = os.urandom(2 * collector.PART_BYTES + 12345)
    (md / "00000000000000000000.log").write_bytes(segment)
    data = pack_bytes([str(log_dir)], CollectOptions(include_metadata_log=True))

    lines = gzip.decompress(data).split(b"\n")
    assert max(len(line) for line in lines) < 1.5 * collector.PART_BYTES
    assert sum(1 for line in lines if line.startswith(b'{"rec":"part"')) == 2
    reader, entries = read_all(data)
    assert reader.complete and reader.trailer["parts"] == 2
    assert by_key(entries)[(str(log_dir), "__cluster_metadata-0/00000000000000000000.log")]["content"] == segment


def test_over_cap_file_listed_with_flag_not_embedded(b102):
    reader, entries = read_all(pack_bytes(b102, CollectOptions(max_file_bytes=100)))
    e = by_key(entries)[(b102[0], "__cluster_metadata-0/quorum-state")]  # 161 bytes
    assert (e["content"], e["flags"], e["size"]) == (None, ["over_cap"], 161)
    small = by_key(entries)[(b102[0], "inventory-0/partition.metadata")]
    assert small["content"] is not None and small["flags"] == []


# ------------------------------------------------------------------------------------ bounded memory


def _synthetic_tree(root: Path, partitions: int) -> str:
    log_dir = root / ("kafka-logs-%d" % partitions)
    log_dir.mkdir()
    (log_dir / "meta.properties").write_bytes(b"node.id=7\ncluster.id=x\nversion=1\n")
    body = b"version: 0\ntopic_id: xWt6cg-LDx4r6BAz2rYsCg"
    for n in range(partitions):
        d = log_dir / ("topic-%d-%d" % (n // 100, n % 100))
        d.mkdir()
        fd = os.open(d / "partition.metadata", os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, body)
        os.close(fd)
    return str(log_dir)


class _NullSink(io.RawIOBase):
    def writable(self):
        return True

    def write(self, b):
        return len(b)


def _peak_while_packing(log_dir: str) -> tuple[int, int]:
    tracemalloc.start()
    try:
        trailer = write_pack(_NullSink(), [log_dir], host="h", capture_time="2026-01-01T00:00:00.000Z")
        return tracemalloc.get_traced_memory()[1], trailer["entries"]
    finally:
        tracemalloc.stop()


def test_packing_memory_does_not_grow_with_partition_count(tmp_path):
    small, large = _synthetic_tree(tmp_path, 5000), _synthetic_tree(tmp_path, 20000)
    peak_small, n_small = _peak_while_packing(small)
    peak_large, n_large = _peak_while_packing(large)
    assert (n_small, n_large) == (2 * 5000 + 2, 2 * 20000 + 2)
    assert peak_large < 3 << 20
    assert peak_large < peak_small * 1.25 + (128 << 10)  # 4x the partitions, same memory


def test_packing_a_large_metadata_segment_holds_its_bytes_once(tmp_path):
    """A 1 GiB segment must not cost ~4 GiB on a controller (all its base64 lines, their join, the encode)."""
    md = tmp_path / "kafka-logs" / "__cluster_metadata-0"
    md.mkdir(parents=True)
    size = 24 * collector.PART_BYTES + 7
    (md / "00000000000000000000.log").write_bytes(os.urandom(size))
    tracemalloc.start()
    try:
        trailer = write_pack(_NullSink(), [str(md.parent)], CollectOptions(include_metadata_log=True),
                             host="h", capture_time="2026-01-01T00:00:00.000Z")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (trailer["embedded"], trailer["parts"]) == (1, 24)
    assert peak < size + 10 * collector.PART_BYTES  # the file once, plus one line's copies in flight (~8 MiB)
