"""Segment summaries (collector): the log end and transaction markers of a data segment from its batch
headers, checked against Kafka's own record of the batches it wrote (kafka-devsample expected.json)."""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

import collector
from collector import (
    CollectOptions,
    last_index_entry,
    summarize_segment,
    summary_targets,
    walk_log_dirs,
    write_pack,
)
from jobs.ingest.log_dir_rows import segment_end_columns
from jobs.simulate import codec
from udfs import log_index
from udfs.pack_reader import read_pack


def _reader(data: bytes):
    return lambda offset, n: data[offset:offset + n]


def _summary(data: bytes, scan_bytes: int = collector.DEFAULT_SEGMENT_SCAN_BYTES) -> dict:
    return summarize_segment(_reader(data), len(data), scan_bytes)


def _segments(devsample_dir: Path):
    for log in sorted(devsample_dir.glob("broker-*/kafka-logs*/*/*.log")):
        if log.parent.name != "__cluster_metadata-0":
            yield log


def test_every_real_segment_matches_kafkas_batches(devsample_dir: Path):
    """next_offset = the last batch's lastOffset + 1 and markers = the last control batch per producer, for every
    data segment Kafka wrote, against expected.json's dataBatches (Kafka's own view of the same bytes)."""
    truth = json.loads((devsample_dir / "expected.json").read_text())["dataBatches"]
    checked = 0
    for log in _segments(devsample_dir):
        partition = log.parent.name.split(".")[0]
        if partition not in truth:
            continue
        bases = sorted(int(p.name[:20]) for p in log.parent.glob("*.log"))
        base = int(log.name[:20])
        following = [b for b in bases if b > base]
        summary = _summary(log.read_bytes())
        inside = [b for b in truth[partition] if b["baseOffset"] >= base
                  and (not following or b["baseOffset"] < following[0])]
        if len(inside) != summary["batches"]:
            continue  # a lagging or moved replica holds fewer batches than the leader Kafka recorded
        expected_end = inside[-1]["lastOffset"] + 1 if inside else None
        markers = {}
        for b in inside:
            if b["isControl"]:
                markers[b["producerId"]] = [b["producerId"], b["producerEpoch"], b["baseOffset"]]
        assert summary["next_offset"] == expected_end, log
        assert summary["markers"] == [markers[p] for p in sorted(markers)], log
        assert summary["end"] == "eof" and summary["valid_bytes"] == log.stat().st_size
        checked += 1
    assert checked >= 10


def test_zero_tail_corrupt_tail_and_cap(devsample_dir: Path):
    log = next(p for p in _segments(devsample_dir) if p.parent.name == "inventory-0" and p.name.endswith("6.log"))
    data = log.read_bytes()
    whole = _summary(data)
    assert _summary(data + bytes(10 * 1024 * 1024))["next_offset"] == whole["next_offset"]
    assert _summary(data + bytes(4096))["end"] == "zeros"
    cut = _summary(data[:-5])  # the last batch lost its tail: Kafka's recovery would truncate to the one before
    assert cut["end"] == "corrupt" and cut["batches"] == whole["batches"] - 1
    assert cut["next_offset"] < whole["next_offset"]
    capped = _summary(data, scan_bytes=1)
    assert capped["end"] == "cap" and capped["batches"] == 1
    assert _summary(b"")["next_offset"] is None and _summary(b"")["end"] == "eof"


def test_control_batch_written_by_the_simulator_is_a_marker():
    data = (codec.data_batch([(b"k", b"v", 1000)], 10, 0, 42, 3, 0, True)
            + codec.txn_marker_batch(11, 0, 1040, 42, 3, True, 5))
    s = _summary(data)
    assert s["next_offset"] == 12 and s["markers"] == [[42, 3, 11]] and s["batches"] == 2


def test_last_index_entry_in_trimmed_and_preallocated_indexes():
    entries = [(5, 4200), (11, 8400), (19, 12700)]
    trimmed = log_index.encode_offset_index(entries)
    assert last_index_entry(_reader(trimmed), len(trimmed)) == (19, 12700)
    for used in range(0, len(entries) + 1):
        prealloc = log_index.encode_offset_index(entries[:used]) + bytes(8 * 1000)
        expected = entries[used - 1] if used else None
        assert last_index_entry(_reader(prealloc), len(prealloc)) == expected
    assert last_index_entry(_reader(b""), 0) is None


def test_summary_targets_the_newest_segment_and_those_after_the_newest_snapshot():
    names = ["%020d.log" % b for b in (0, 100, 200, 300)] + ["%020d.snapshot" % s for s in (100, 250)]
    assert summary_targets(names) == (200, 300)
    assert summary_targets(["%020d.log" % b for b in (0, 100)]) == (100,)
    assert summary_targets(["%020d.snapshot" % 5]) == ()
    assert summary_targets(["%020d.log" % 7, "%020d.snapshot" % 3]) == (7,)


def test_walk_and_pack_carry_the_same_summaries(devsample_dir: Path):
    dirs = [str(p) for p in sorted(devsample_dir.glob("broker-102/kafka-logs*"))]
    raw = [e for e in walk_log_dirs(dirs) if e["segment"] is not None]
    out = io.BytesIO()
    write_pack(out, dirs, CollectOptions(), capture_time="2026-11-26T00:00:00Z", host="h")
    reader = read_pack(io.BytesIO(out.getvalue()))
    packed = [e for e in reader if e["segment"] is not None]
    assert reader.complete and raw and packed == raw
    assert {e["path"].split("/")[0] for e in raw} >= {"inventory-0", "events-0"}
    none = [e for e in walk_log_dirs(dirs, CollectOptions(segment_scan_bytes=0)) if e["segment"] is not None]
    assert none == []


@pytest.mark.parametrize("bad", [
    {"end": "eof", "next_offset": "10"},
    {"end": "sideways"},
    {"end": "eof", "markers": [[1, 2]]},
    {"end": "eof", "markers": [[1, 2, True]]},
    {"end": "eof", "index_last": [1, 2 ** 40]},
    {"end": "eof", "batches": -1},
    "a string",
])
def test_a_hostile_segment_summary_is_rejected(bad):
    lines = [json.dumps({"rec": "header", "format": collector.FORMAT_NAME, "version": 1, "log_dirs": ["/d"],
                         "capture_time": "2026-11-26T00:00:00.000Z"}),
             json.dumps({"rec": "entry", "log_dir": "/d", "path": "t-0/00000000000000000000.log", "kind": "file",
                         "size": 10, "segment": bad}),
             json.dumps({"rec": "entry", "log_dir": "/d", "path": "", "kind": "dir"}),
             json.dumps({"rec": "trailer", "entries": 2, "parts": 0})]
    reader = read_pack(io.BytesIO(gzip.compress(("\n".join(lines) + "\n").encode())))
    entries = list(reader)
    assert [e["path"] for e in entries] == [""]
    assert [e.kind for e in reader.errors] == ["bad_entry"]
    assert "segment" in reader.errors[0].message


def test_end_columns_follow_kafkas_read_next_offset():
    eof = {"end": "eof", "next_offset": 120, "index_last": [7, 900], "markers": []}
    empty = {"end": "zeros", "next_offset": None, "index_last": None, "markers": []}
    cap = {"end": "cap", "next_offset": 50, "index_last": None, "markers": []}
    assert segment_end_columns({100: (eof, 1000, "p")}, 100) == {
        "log_end_offset": 120, "tail_scanned": True, "newest_segment_bytes": 1000, "index_last_position": 900}
    assert segment_end_columns({100: (empty, 0, "p")}, 100)["log_end_offset"] == 100  # empty: its base offset
    capped = segment_end_columns({100: (cap, 1 << 31, "p")}, 100)
    assert capped["log_end_offset"] is None and capped["tail_scanned"] is False
    assert segment_end_columns({}, 100)["log_end_offset"] is None
    assert segment_end_columns({}, None)["tail_scanned"] is None
