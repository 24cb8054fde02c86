"""Producer-state snapshots and transaction indexes against Kafka's DumpLogSegments output."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_dump_lines import parse_producer_snapshot_dump, parse_txnindex_dump, tool_output_for

from udfs import producer_state as ps
from udfs.errors import DecodeError

DEVSAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "kafka-devsample"
SNAPSHOTS = sorted(DEVSAMPLE.glob("broker-*/*/*/*.snapshot"))
TXN_INDEXES = sorted(DEVSAMPLE.glob("broker-*/*/*/*.txnindex"))


def rel(p: Path) -> str:
    return str(p.relative_to(DEVSAMPLE))


def opt_long(value: int) -> str:
    return f"OptionalLong[{value}]" if value >= 0 else "OptionalLong.empty"


@pytest.mark.parametrize("path", SNAPSHOTS, ids=rel)
def test_snapshot_equals_kafkas_dump_and_re_encodes_byte_for_byte(path):
    data = path.read_bytes()
    snap = ps.decode_producer_snapshot(data)
    assert snap.error is None and snap.crc_valid and snap.version == 1
    want = parse_producer_snapshot_dump(tool_output_for(DEVSAMPLE, path))
    assert len(snap.entries) == len(want)
    for e, line in zip(snap.entries, want, strict=True):
        got = {"producerId": str(e.producer_id), "producerEpoch": str(e.epoch),
               "coordinatorEpoch": str(e.coordinator_epoch),
               "currentTxnFirstOffset": opt_long(e.current_txn_first_offset), "lastTimestamp": str(e.timestamp)}
        if e.has_batch_metadata:
            got.update(firstSequence=str(e.first_sequence), lastSequence=str(e.last_sequence),
                       lastOffset=str(e.last_offset), offsetDelta=str(e.offset_delta), timestamp=str(e.timestamp))
        assert got == line
    assert ps.encode_producer_snapshot(snap.entries) == data


def test_fixtures_include_several_producers():
    entries = [e for p in SNAPSHOTS for e in ps.decode_producer_snapshot(p.read_bytes()).entries]
    assert {1234, 101, 1500, 3333, 1777} <= {e.producer_id for e in entries}


@pytest.mark.parametrize("path", TXN_INDEXES, ids=rel)
def test_txnindex_equals_kafkas_dump(path):
    data = path.read_bytes()
    entries = list(ps.iter_txn_index(data))
    want = parse_txnindex_dump(tool_output_for(DEVSAMPLE, path))
    assert [e.as_dict() for e in entries] == want
    assert ps.encode_txn_index(entries) == data


def test_snapshot_corruption_is_reported_not_raised():
    good = ps.encode_producer_snapshot([ps.ProducerEntry(7, 1, 5, 10, 2, 1000, 3, -1)])
    flipped = bytearray(good)
    flipped[-1] ^= 1
    bad = ps.decode_producer_snapshot(bytes(flipped))
    assert bad.error.kind == "crc_mismatch" and "Snapshot is corrupt (CRC is no longer valid)" in bad.error.message
    assert len(bad.entries) == 1  # still readable, for forensics
    assert ps.decode_producer_snapshot(b"").error.kind == "empty_file"
    assert ps.decode_producer_snapshot(b"\x00").error.kind == "truncated_batch"
    assert ps.decode_producer_snapshot(b"\x00\x02" + good[2:]).error.message == (
        "Snapshot contained an unknown file version 2")
    truncated = ps.decode_producer_snapshot(good[:-3])
    assert truncated.error.kind == "length_out_of_buffer"
    assert truncated.error.message.startswith("Snapshot failed schema validation")


def test_first_sequence_wraps_like_kafka():
    assert ps.ProducerEntry(1, 0, 2, 5, 4, 0, 0, -1).first_sequence == 2**31 - 2
    assert ps.ProducerEntry(1, 0, 9, 5, 4, 0, 0, -1).first_sequence == 5


def test_txnindex_partial_tail_and_future_version():
    entry = ps.AbortedTxn(0, 1500, 6, 8, 9)
    data = ps.encode_txn_index([entry, entry])
    items = list(ps.iter_txn_index(data + b"\x00\x00\x01"))
    assert [type(i) for i in items] == [ps.AbortedTxn, ps.AbortedTxn, DecodeError]
    assert items[-1].kind == "truncated_batch" and items[-1].offset == 68
    future = ps.ABORTED_TXN.pack(1, 1, 1, 1, 1)
    assert [i.kind for i in ps.iter_txn_index(future)] == ["bad_version"]


@settings(max_examples=200, deadline=2000)
@given(st.binary(max_size=80))
def test_random_bytes_never_raise(data):
    ps.decode_producer_snapshot(data)
    list(ps.iter_txn_index(data))


@settings(max_examples=50, deadline=2000)
@given(st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**15), 2**15 - 1),
                          st.integers(-(2**31), 2**31 - 1)), max_size=5))
def test_snapshot_round_trip(rows):
    entries = [ps.ProducerEntry(pid, epoch, seq, pid, seq, pid, seq, -1) for pid, epoch, seq in rows]
    snap = ps.decode_producer_snapshot(ps.encode_producer_snapshot(entries))
    assert snap.error is None and list(snap.entries) == entries
