"""Metadata segments, snapshots and bootstrap files against Kafka's DumpLogSegments output, record by record;
frame errors with Kafka's wording; encoders that reproduce Kafka's files byte for byte."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_dump_lines import parse_dump, parse_skip_metadata_payloads, tool_output_for

from udfs import metadata_log as ml
from udfs import record_batch as rb
from udfs.metadata_record import MetadataRecord
from udfs.record_encode import NewRecord, encode_batch

DEVSAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "kafka-devsample"
METADATA_FILES = sorted(
    list(DEVSAMPLE.glob("broker-*/*/__cluster_metadata-0/*.log"))
    + list(DEVSAMPLE.glob("broker-*/*/__cluster_metadata-0/*.checkpoint"))
    + list(DEVSAMPLE.glob("broker-*/*/bootstrap.checkpoint")))
EXPECTED = json.loads((DEVSAMPLE / "expected.json").read_text())


def rel(p: Path) -> str:
    return str(p.relative_to(DEVSAMPLE))


def test_metadata_record_field_order_used_positionally():
    # records_of_batch builds MetadataRecord positionally (speed); a reordered dataclass must fail here
    import dataclasses

    assert [f.name for f in dataclasses.fields(MetadataRecord)] == [
        "offset", "batch_base_offset", "batch_last_offset", "leader_epoch", "timestamp", "is_control", "type",
        "api_key", "version", "data", "error", "raw_value", "position"]


def test_fixture_inventory():
    assert len(METADATA_FILES) == 4 * 3 + 5  # 4 nodes x (2 segments + snapshot) + 5 log dirs with bootstrap
    assert sum(1 for p in METADATA_FILES if p.name == "bootstrap.checkpoint") == 5


@pytest.mark.parametrize("path", METADATA_FILES, ids=rel)
def test_every_record_equals_kafkas_dump(path):
    dump = parse_dump(tool_output_for(DEVSAMPLE, path))
    records = list(ml.iter_metadata_records(path))
    by_batch: dict = {}
    for r in records:
        assert r.error is None, r
        by_batch.setdefault(r.batch_base_offset, []).append(r)
    assert len(by_batch) == len(dump.batches)
    for want in dump.batches:
        got = by_batch[want.int("baseOffset")]
        first = got[0]
        batch_fields = {"baseOffset": first.batch_base_offset, "lastOffset": first.batch_last_offset,
                        "count": len(got), "position": first.position, "CreateTime": first.timestamp,
                        "partitionLeaderEpoch": first.leader_epoch, "isControl": str(first.is_control).lower()}
        assert batch_fields == {k: (want.fields[k] if isinstance(v, str) else want.int(k))
                                for k, v in batch_fields.items()}
        assert len(got) == len(want.records)
        for rec, line in zip(got, want.records, strict=True):
            assert rec.offset == line.offset and rec.timestamp == line.timestamp
            if rec.is_control:
                name, data = line.control
                assert rec.type == name
                if data is not None:  # Kafka decodes every control type except LEADER_CHANGE
                    assert rec.data == data
                    assert rec.payload_json() == json.dumps(data, separators=(",", ":"))
            else:
                kafka = line.metadata_json
                assert (rec.type, rec.version, rec.data) == (kafka["type"], kafka["version"], kafka["data"])
                # byte-equal JSON, not just equal values: key order and number forms too
                assert line.payload.endswith('"data":' + rec.payload_json() + "}")


@pytest.mark.parametrize("path", METADATA_FILES, ids=rel)
def test_batch_lines_crc_size_and_flags_equal_kafkas_dump(path):
    dump = parse_dump(tool_output_for(DEVSAMPLE, path))
    batches = list(rb.read_batches(path))
    assert [b.header.crc for b in batches] == [b.int("crc") for b in dump.batches]
    assert [b.header.size for b in batches] == [b.int("size") for b in dump.batches]
    assert [b.header.is_transactional for b in batches] == [b.bool("isTransactional") for b in dump.batches]
    assert all(b.header.crc_valid for b in batches)


@pytest.mark.parametrize("name", ["__cluster_metadata-0/00000000000000000000.log",
                                  "__cluster_metadata-0/00000000000000000044-0000000001.checkpoint"])
def test_skip_record_metadata_payloads(name):
    path = DEVSAMPLE / "broker-101/kafka-logs" / name
    want = parse_skip_metadata_payloads(tool_output_for(DEVSAMPLE, path, "DumpLogSegments-skip-record-metadata"))
    got = [{"type": r.type, "version": r.version, "data": r.data} for r in ml.iter_metadata_records(path)
           if not r.is_control]
    assert got == want


def test_leader_change_is_decoded_although_kafkas_dump_does_not():
    path = DEVSAMPLE / "broker-101/kafka-logs/__cluster_metadata-0/00000000000000000000.log"
    first = next(ml.iter_metadata_records(path))
    assert (first.type, first.is_control, first.api_key) == ("LEADER_CHANGE", True, 2)
    assert first.data == EXPECTED["metadataLog"]["records"][0]["data"]


def test_log_records_equal_expected_json_ground_truth():
    log_dir = DEVSAMPLE / "broker-101/kafka-logs/__cluster_metadata-0"
    got = [r for seg in sorted(log_dir.glob("*.log")) for r in ml.iter_metadata_records(seg)]
    want = EXPECTED["metadataLog"]["records"]
    assert len(got) == len(want) == EXPECTED["metadataLog"]["logEndOffset_broker101"]
    for r, w in zip(got, want, strict=True):
        assert (r.offset, r.batch_base_offset, r.batch_last_offset, r.leader_epoch, r.is_control, r.timestamp,
                r.type, r.data) == (w["offset"], w["batchBaseOffset"], w["batchLastOffset"],
                                    w["partitionLeaderEpoch"], w["isControl"], w["timestamp"], w["type"], w["data"])
        if not r.is_control:
            assert r.version == w["version"]


def test_snapshot_records_equal_expected_json_ground_truth():
    snap = EXPECTED["metadataSnapshot"]
    path = DEVSAMPLE / "broker-101/kafka-logs/__cluster_metadata-0" / snap["fileName"]
    assert ml.parse_snapshot_file_name(path.name) == (snap["endOffsetExclusive"], snap["epoch"])
    got = [(r.offset, r.type, r.data) for r in ml.iter_metadata_records(path)]
    assert got == [(w["offset"], w["type"], w["data"]) for w in snap["records_broker101"]]


# ---- encoders ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", METADATA_FILES, ids=rel)
def test_encoders_reproduce_every_batch_byte_for_byte(path):
    for batch in rb.read_batches(path):
        h = batch.header
        records = list(ml.records_of_batch(batch))
        if h.is_control:
            again = ml.encode_control_batch([(r.type, r.data) for r in records], h.base_offset,
                                            h.partition_leader_epoch, h.max_timestamp)
        else:
            again = ml.encode_metadata_batch([(r.type, r.version, r.data) for r in records], h.base_offset,
                                             h.partition_leader_epoch, h.max_timestamp)
        assert again == bytes(batch.data)


@pytest.mark.parametrize("path", [p for p in METADATA_FILES if p.suffix == ".checkpoint"], ids=rel)
def test_encode_snapshot_reproduces_snapshot_and_bootstrap_files(path):
    records = list(ml.iter_metadata_records(path))
    header = records[0]
    data = [(r.type, r.version, r.data) for r in records if not r.is_control]
    if path.name == "bootstrap.checkpoint":
        # each batch of a bootstrap file has its own timestamp, so compare batch by batch
        batches = list(rb.read_batches(path))
        assert ml.encode_control_batch([("SNAPSHOT_HEADER", header.data)], 0, 0,
                                       batches[0].header.max_timestamp) == bytes(batches[0].data)
        assert ml.encode_metadata_batch(data, 1, 0, batches[1].header.max_timestamp) == bytes(batches[1].data)
        return
    end_offset, epoch = ml.parse_snapshot_file_name(path.name)
    again = ml.encode_snapshot(data, end_offset, epoch, header.data["lastContainedLogTimestamp"],
                               append_time_ms=header.timestamp)
    assert again == path.read_bytes()
    assert ml.snapshot_file_name(end_offset, epoch) == path.name


def test_encode_leader_change_batch_matches_the_first_batch_of_the_log():
    path = DEVSAMPLE / "broker-101/kafka-logs/__cluster_metadata-0/00000000000000000000.log"
    first = next(rb.read_batches(path))
    again = ml.encode_leader_change_batch(0, 1, 1738368000000, leader_id=101, voters=[101, 102, 103],
                                          granting_voters=[101, 102])
    assert again == bytes(first.data)


def test_encode_metadata_frame_golden_bytes():
    # kafka-formats.md §4.2 worked example, 24 bytes
    frame = ml.encode_metadata_frame("TOPIC_RECORD", 0, {"name": "foo", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})
    assert frame.hex() == "010200" "04666f6f" "30a5f1d5f224432d89f635c784af26d7" "00"
    assert ml.encode_metadata_frame("TopicRecord", 0, {"name": "foo", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}) == frame


def test_snapshot_with_kraft_version_and_voters_and_split_batches():
    voters = [{"voterId": 1, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAQ",
               "endpoints": [{"name": "CONTROLLER", "host": "h1", "port": 9093}],
               "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]
    records = [("NO_OP_RECORD", 0, {})] * 50
    blob = ml.encode_snapshot(records, 51, 3, 1000, append_time_ms=2000, kraft_version=1, voters=voters,
                              max_batch_bytes=300)
    decoded = list(ml.iter_metadata_records(blob))
    assert [r.type for r in decoded[:3]] == ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS"]
    assert decoded[2].data == {"version": 0, "voters": voters}
    assert decoded[-1].type == "SNAPSHOT_FOOTER" and decoded[-1].offset == 53
    assert [r.offset for r in decoded] == list(range(54))
    assert len({r.batch_base_offset for r in decoded}) > 3  # data split over several batches
    assert {r.leader_epoch for r in decoded} == {3}


def test_txn_marker_batch_round_trip():
    blob = ml.encode_txn_marker_batch(8, 0, 1738368005771, 1500, 0, commit=False, coordinator_epoch=7)
    (rec,) = ml.iter_metadata_records(blob)
    assert (rec.type, rec.data, rec.is_control) == ("ABORT", {"version": 0, "coordinatorEpoch": 7}, True)
    data_file = DEVSAMPLE / "broker-101/kafka-logs/inventory-0/00000000000000000006.log"
    marker = [b for b in rb.read_batches(data_file) if b.header.is_control][0]
    assert blob == bytes(marker.data)


# ---- frame errors ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,kind,text", [
    (bytes([0x00, 0x02, 0x00]), "bad_frame_version", "frame version 0. Note that upgrades"),
    (bytes([0x0F, 0x02, 0x00]), "bad_frame_version", "unknown frame version 15(only frame version 1"),
    (bytes([0x80, 0x80, 0x80, 0x80, 0x80]), "varint_too_long", "Error while reading frame version"),
    (bytes([0x01, 0x80, 0x80, 0x02, 0x00]), "value_too_large", "Value for type was too large."),
    (bytes([0x01, 0x02, 0x80, 0x80, 0x02]), "value_too_large", "Value for version was too large."),
    (bytes([0x01, 0x06, 0x00]), "unknown_api_key", "Unknown metadata id 6"),
    (bytes([0x01, 0x02, 0x07, 0x00]), "unknown_version", "Can't read version 7 of TopicRecord"),
    (bytes([0x01, 0x14, 0x00, 0x00, 0xAA]), "garbage_after_frame", "Found 1 byte(s) of garbage after 20"),
    (bytes([0x01, 0x02, 0x00, 0x04, 0x66]), "length_out_of_buffer", "string"),
    (bytes([0x01]), "length_out_of_buffer", "Error while reading type"),
])
def test_frame_errors_keep_kafkas_wording(value, kind, text):
    type_name, api_key, version, data, error = ml.decode_metadata_value(value)
    assert data is None and error.kind == kind and text in error.message


def metadata_batch_with_values(values) -> bytes:
    return encode_batch([NewRecord(value=v) for v in values], 10, partition_leader_epoch=2,
                        base_timestamp=5, max_timestamp=5)


def test_bad_records_are_yielded_with_raw_bytes_and_the_rest_continues():
    good = ml.encode_metadata_frame("NO_OP_RECORD", 0, {})
    unknown = bytes([0x01, 0x06, 0x00, 0xAB])
    records = list(ml.iter_metadata_records(metadata_batch_with_values([good, unknown, None, good])))
    assert [r.type for r in records] == ["NO_OP_RECORD", None, None, "NO_OP_RECORD"]
    opaque = records[1]
    assert (opaque.api_key, opaque.version, opaque.raw_value, opaque.error.kind) == (6, 0, unknown, "unknown_api_key")
    assert opaque.error.message.startswith("Error at 11, skipping. Unknown metadata id 6")
    assert records[2].error.kind == "negative_length"
    assert opaque.as_json_line()["error"]["kind"] == "unknown_api_key"


def test_batch_level_problems_become_error_records():
    good = ml.encode_metadata_batch([("NO_OP_RECORD", 0, {})], 0, 1, 100)
    corrupt = bytearray(good)
    corrupt[rb.CRC_OFFSET] ^= 0x40  # the stored CRC is wrong, the records themselves are intact
    end = rb.SegmentEnd()
    records = list(ml.iter_metadata_records(good + bytes(corrupt[:]) + good[:30], end_info=end))
    assert [(r.type, r.error.kind if r.error else None) for r in records] == [
        ("NO_OP_RECORD", None), (None, "crc_mismatch"), (None, "truncated_batch")]
    assert records[1].offset == 0 and records[1].error.offset == len(good)
    assert records[2].position == 2 * len(good) == end.valid_bytes
    (trusted,) = ml.iter_metadata_records(bytes(corrupt), trust_bad_crc=True)
    assert (trusted.type, trusted.error) == ("NO_OP_RECORD", None)


def test_control_record_problems():
    assert ml.decode_control_record(b"\x00", b"")[4].kind == "length_out_of_buffer"
    assert ml.decode_control_record(b"\xff\xff\x00\x01", b"")[4].kind == "bad_version"
    unknown = ml.decode_control_record(b"\x00\x00\x00\x63", b"x")
    assert unknown[0] == "UNKNOWN" and unknown[4].kind == "unknown_api_key"
    assert ml.decode_control_record(b"\x00\x00\x00\x01", b"\x00")[4].kind == "length_out_of_buffer"
    assert ml.decode_control_record(b"\x00\x00\x00\x01", b"\xff\xff\x00\x00\x00\x01")[4].kind == "bad_version"
    assert ml.decode_control_record(b"\x00\x00\x00\x03", b"\x00")[4].kind == "length_out_of_buffer"


def test_legacy_entries_in_a_metadata_file():
    from test_record_batch import legacy_entry

    (rec,) = list(ml.iter_metadata_records(legacy_entry(0, 1, b"x")))
    assert rec.error.kind == "legacy_magic" and rec.timestamp == 1_600_000_000_000


# ---- fuzzing ----------------------------------------------------------------------------------------------------

SEED = (DEVSAMPLE / "broker-101/kafka-logs/__cluster_metadata-0/00000000000000000000.log").read_bytes()


@settings(max_examples=200, deadline=2000)
@given(st.binary(max_size=64))
def test_random_values_never_raise(value):
    result = ml.decode_metadata_value(value)
    assert len(result) == 5 and (result[3] is None) == (result[4] is not None)


@settings(max_examples=200, deadline=3000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(SEED) - 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_mutated_segments_never_raise(flips):
    data = bytearray(SEED)
    for pos, value in flips:
        data[pos] = value
    for rec in ml.iter_metadata_records(bytes(data), trust_bad_crc=True):
        assert isinstance(rec, MetadataRecord)
        rec.as_json_line()
