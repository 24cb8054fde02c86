"""udfs.dump_log_text against Kafka's own kafka-dump-log output of the devsample __cluster_metadata files
(normal and --skip-record-metadata forms) and expected.json's metadataLog / metadataSnapshot records."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs.dump_log_text import iter_dump_log_batches, iter_dump_log_records, parse_dump_log

LOG_DIRS = {"broker101": "broker-101/kafka-logs", "broker102": "broker-102/kafka-logs-a",
            "broker103": "broker-103/kafka-logs", "broker104": "broker-104/kafka-logs"}
DUMP = "tool-output/{log_dir}/__cluster_metadata-0/{name}.DumpLogSegments{variant}.txt"


@pytest.fixture(scope="module")
def expected(devsample_dir):
    return json.loads((devsample_dir / "expected.json").read_text())


def _dump(devsample_dir, log_dir, name, variant=""):
    path = devsample_dir / DUMP.format(log_dir=log_dir, name=name, variant=variant)
    with path.open() as f:
        return parse_dump_log(f)


def _key(rec):
    """What expected.json holds for a record, in our field names (control records carry no top-level version)."""
    return {"offset": rec.offset, "batchBaseOffset": rec.batch_base_offset, "batchLastOffset": rec.batch_last_offset,
            "partitionLeaderEpoch": rec.leader_epoch, "isControl": rec.is_control, "timestamp": rec.timestamp,
            "type": rec.type, "version": None if rec.is_control else rec.version, "data": rec.data}


def _want(exp, with_timestamp=True):
    out = {k: exp.get(k) for k in ("offset", "batchBaseOffset", "batchLastOffset", "partitionLeaderEpoch", "isControl",
                                   "timestamp", "type", "version", "data")}
    if out["type"] == "LEADER_CHANGE":
        out["data"] = None  # DumpLogSegments prints only "controlType: LEADER_CHANGE(2)"
    if not with_timestamp:
        out.pop("timestamp")
    return out


@pytest.mark.parametrize("broker", sorted(LOG_DIRS))
def test_metadata_segments_equal_expected_records(devsample_dir, expected, broker):
    end = expected["metadataLog"][f"logEndOffset_{broker}"]
    want = [_want(r) for r in expected["metadataLog"]["records"] if r["offset"] < end]
    got = []
    for name in ("00000000000000000000.log", "00000000000000000026.log"):
        (section,) = _dump(devsample_dir, LOG_DIRS[broker], name)
        assert section.file_kind == "segment" and section.errors == [] and section.invalid_trailing_bytes is None
        assert section.log_start_offset == int(name[:20])
        assert section.path == f"{LOG_DIRS[broker]}/__cluster_metadata-0/{name}"
        assert all(r.error is None for r in section.records)
        got += [_key(r) for r in section.records]
    assert got == want
    assert len(got) == end


@pytest.mark.parametrize("broker", sorted(LOG_DIRS))
def test_snapshot_equals_expected_records(devsample_dir, expected, broker):
    snapshot = expected["metadataSnapshot"]
    (section,) = _dump(devsample_dir, LOG_DIRS[broker], snapshot["fileName"])
    assert (section.file_kind, section.snapshot_end_offset, section.snapshot_epoch) == ("snapshot", 44, 1)
    with_ts = broker == "broker101"  # per-node snapshot append times differ; expected.json has broker 101's
    assert [_want(_key_dict, with_ts) for _key_dict in map(_key, section.records)] == [
        _want(r, with_ts) for r in snapshot["records_broker101"]]


def test_control_records_keep_the_printed_json(devsample_dir):
    (section,) = _dump(devsample_dir, LOG_DIRS["broker101"], "00000000000000000044-0000000001.checkpoint")
    header, footer = section.records[0], section.records[-1]
    assert (header.type, header.api_key, header.version, header.data) == (
        "SNAPSHOT_HEADER", 3, 0, {"version": 0, "lastContainedLogTimestamp": 1738368004200})
    assert (footer.type, footer.api_key, footer.data) == ("SNAPSHOT_FOOTER", 4, {"version": 0})
    (log,) = _dump(devsample_dir, LOG_DIRS["broker101"], "00000000000000000000.log")
    leader = log.records[0]
    assert (leader.type, leader.api_key, leader.is_control, leader.data, leader.error) == ("LEADER_CHANGE", 2, True, None, None)
    assert list(log.records[5].data) == ["brokerId", "isMigratingZkBroker", "incarnationId", "brokerEpoch", "endPoints",
                                        "features", "rack", "fenced", "inControlledShutdown"]  # Kafka's key order
    assert log.records[5].api_key == 0 and log.records[14].api_key == 2


@pytest.mark.parametrize("name", ["00000000000000000000.log", "00000000000000000044-0000000001.checkpoint"])
def test_skip_record_metadata_form_infers_offsets(devsample_dir, name):
    (full,) = _dump(devsample_dir, LOG_DIRS["broker101"], name)
    (skip,) = _dump(devsample_dir, LOG_DIRS["broker101"], name, "-skip-record-metadata")
    assert skip.skip_record_metadata and not full.skip_record_metadata and skip.errors == []
    assert skip.batches == full.batches
    assert len(skip.records) == len(full.records)
    for a, b in zip(skip.records, full.records, strict=True):
        assert (a.offset, a.batch_base_offset, a.batch_last_offset, a.leader_epoch, a.timestamp, a.is_control) == (
            b.offset, b.batch_base_offset, b.batch_last_offset, b.leader_epoch, b.timestamp, b.is_control)
        if b.is_control:
            assert (a.type, a.data) == (None, None)  # printed as an empty line
        else:
            assert (a.type, a.version, a.data) == (b.type, b.version, b.data)


def test_bootstrap_checkpoint_dump(devsample_dir):
    with (devsample_dir / "tool-output/broker-101/kafka-logs/bootstrap.checkpoint.DumpLogSegments.txt").open() as f:
        (section,) = parse_dump_log(f)
    assert section.file_kind == "bootstrap"
    assert [(r.offset, r.type, r.data) for r in section.records] == [
        (0, "SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": 0}),
        (1, "FEATURE_LEVEL_RECORD", {"name": "metadata.version", "featureLevel": 14}),
        (2, "SNAPSHOT_FOOTER", {"version": 0})]


def test_batch_lines(devsample_dir):
    path = devsample_dir / DUMP.format(log_dir=LOG_DIRS["broker101"], name="00000000000000000000.log", variant="")
    with path.open() as f:
        batches = list(iter_dump_log_batches(f))
    assert len(batches) == 17
    first = dict(batches[0])
    first.pop("line")
    assert first == {"base_offset": 0, "last_offset": 0, "count": 1, "base_sequence": -1, "last_sequence": -1,
                     "producer_id": -1, "producer_epoch": -1, "partition_leader_epoch": 1, "is_transactional": False,
                     "is_control": True, "delete_horizon_ms": None, "position": 0, "timestamp_type": "CreateTime",
                     "max_timestamp": 1738368000000, "size": 106, "magic": 2, "compresscodec": "none",
                     "crc": 584238732, "is_valid": True}
    assert sum(b["size"] for b in batches) == batches[-1]["position"] + batches[-1]["size"]


def test_data_segment_markers(devsample_dir, expected):
    path = devsample_dir / "tool-output/broker-101/kafka-logs/inventory-0/00000000000000000006.log.DumpLogSegments.txt"
    with path.open() as f:
        records = list(iter_dump_log_records(f))
    marker = next(r for r in records if r.is_control)
    want = next(b for b in expected["dataBatches"]["inventory-0"] if b["baseOffset"] == marker.offset)
    assert (marker.type, marker.api_key, marker.data) == (want["controlType"], 0, {"version": 0, "coordinatorEpoch": 7})
    data = [r for r in records if not r.is_control]
    assert all(r.error.kind == "bad_json" and r.data is None for r in data)  # not metadata payloads


BATCH = ("baseOffset: {b} lastOffset: {l} count: {c} baseSequence: -1 lastSequence: -1 producerId: -1 "
         "producerEpoch: -1 partitionLeaderEpoch: 3 isTransactional: false isControl: {ctl} "
         "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1000 size: 99 magic: 2 compresscodec: none "
         "crc: 1 isvalid: true")
REC = "| offset: {o} CreateTime: 1000 keySize: {k} valueSize: 10 sequence: -1 headerKeys: []"


def test_kraft_version_voters_unknown_control_and_error_payloads():
    lines = [
        "Dumping /x/00000000000000000000-0000000001.checkpoint",
        "Snapshot end offset: 0, epoch: 1",
        BATCH.format(b=0, l=2, c=3, ctl="true"),
        REC.format(o=0, k=4) + ' KRaftVersion {"version":0,"kRaftVersion":1}',
        REC.format(o=1, k=4) + ' KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"3Adc4FjfTeypRWROmQDNIQ",'
                               '"endpoints":[{"name":"C","host":"h","port":9093}],"kRaftVersionFeature":'
                               '{"minSupportedVersion":0,"maxSupportedVersion":1}}]}',
        REC.format(o=2, k=4) + " controlType: UNKNOWN(9)",
        BATCH.format(b=3, l=6, c=4, ctl="false"),
        REC.format(o=3, k=-1) + " payload: Error at 3, skipping. Unknown metadata id 99",
        REC.format(o=4, k=-1) + " payload: Error at 4, skipping. Could not deserialize metadata record due to unknown "
                                "frame version 2(only frame version 1 is supported)",
        REC.format(o=5, k=-1) + " payload: Error at 5, skipping. null",
        REC.format(o=6, k=-1) + ' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}',
        "Found 17 invalid bytes at the end of 00000000000000000000-0000000001.checkpoint",
    ]
    (section,) = parse_dump_log(lines)
    r = section.records
    assert (r[0].type, r[0].api_key, r[0].data) == ("KRAFT_VERSION", 5, {"version": 0, "kRaftVersion": 1})
    assert (r[1].type, r[1].api_key, r[1].data["voters"][0]["voterId"]) == ("KRAFT_VOTERS", 6, 1)
    assert (r[2].type, r[2].api_key, r[2].error.kind) == ("UNKNOWN", 9, "unknown_api_key")
    assert [(x.offset, x.error.kind) for x in r[3:6]] == [(3, "unknown_api_key"), (4, "bad_frame_version"),
                                                         (5, "dump_log_error")]
    assert r[3].error.message == "Error at 3, skipping. Unknown metadata id 99" and r[3].data is None
    assert (r[6].type, r[6].api_key, r[6].version, r[6].data, r[6].error) == ("NO_OP_RECORD", 20, 0, {}, None)
    assert all(x.leader_epoch == 3 and x.timestamp == 1000 for x in r)
    assert section.invalid_trailing_bytes == 17
    assert [(e.kind, e.line) for e in section.errors] == [("truncated_batch", 12)]


def test_several_files_legacy_and_older_header_shapes():
    lines = [
        "Dumping a/00000000000000000000.log",
        "Starting offset: 0",  # before 3.3
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 5 size: 80 magic: 2 "
        "compresscodec: NONE crc: 7 isvalid: true",  # before 3.2: no deleteHorizonMs
        REC.format(o=0, k=-1) + ' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}',
        "Dumping b/00000000000000000010.log",
        "Log starting offset: 10",
        "offset: 10 position: 0 CreateTime: 9 size: 40 magic: 1 compresscodec: none crc: 3 isvalid: true",
        "baseOffset: 11 lastOffset: 11 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong[123] "
        "position: 40 LogAppendTime: 11 size: 80 magic: 2 compresscodec: zstd crc: 8 isvalid: false",
    ]
    a, b = parse_dump_log(lines)
    assert (a.path, a.log_start_offset, len(a.records), a.batches[0]["compresscodec"]) == ("a/00000000000000000000.log", 0, 1, "none")
    assert (b.path, b.log_start_offset, [x["base_offset"] for x in b.batches]) == ("b/00000000000000000010.log", 10, [10, 11])
    assert b.batches[0]["magic"] == 1 and b.batches[1]["delete_horizon_ms"] == 123
    assert b.batches[1]["timestamp_type"] == "LogAppendTime" and b.batches[1]["is_valid"] is False


def test_malformed_and_inconsistent_lines_are_reported_not_raised():
    lines = [
        REC.format(o=0, k=-1) + ' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}',  # before any batch
        "some stderr noise",
        BATCH.format(b=1, l=3, c=3, ctl="false"),
        REC.format(o=1, k=-1) + " payload: {not json",
        REC.format(o=2, k=-1) + ' payload: {"type":"X","version":"0","data":{}}',
        BATCH.format(b=4, l=4, c=1, ctl="false"),
        "| offset: x garbage",
    ]
    (section,) = parse_dump_log(lines)
    kinds = [(e.kind, e.line) for e in section.errors]
    assert ("malformed_line", 1) in kinds and ("malformed_line", 2) in kinds and ("malformed_line", 7) in kinds
    assert ("record_count_mismatch", 3) in kinds  # count 3, two record lines
    assert [r.error.kind for r in section.records if r.error] == ["bad_json", "bad_json"]


def test_skip_form_offsets_follow_base_offset_and_control_count():
    lines = [BATCH.format(b=7, l=7, c=1, ctl="true"), "",
             BATCH.format(b=8, l=9, c=2, ctl="false"),
             ' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}',
             ' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}',
             "", ""]  # trailing blank lines after a data batch are not records
    records = list(iter_dump_log_records(lines))
    assert [(r.offset, r.is_control) for r in records] == [(7, True), (8, False), (9, False)]
    (section,) = parse_dump_log(lines)
    assert section.errors == []
    gappy = parse_dump_log([BATCH.format(b=0, l=5, c=2, ctl="false"), ' payload: {"type":"NO_OP_RECORD","version":0,'
                            '"data":{}}', ' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}'])[0]
    assert [(e.kind, e.line) for e in gappy.errors] == [("record_count_mismatch", 2)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=80), max_size=20))
def test_random_lines_never_raise(lines):
    parse_dump_log(lines)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([BATCH.format(b=0, l=1, c=2, ctl="true"), BATCH.format(b=2, l=3, c=2, ctl="false"),
                                 REC.format(o=1, k=-1) + " payload: {}", " payload: Error at 1, skipping. x", "",
                                 "Dumping f.log", "Found 3 invalid bytes at the end of f.log", REC.format(o=0, k=4)]),
                max_size=25))
def test_random_shapes_never_raise(lines):
    for section in parse_dump_log(lines):
        outside = [r for r in section.records if not r.batch_base_offset <= r.offset <= r.batch_last_offset]
        assert len(outside) <= len([e for e in section.errors if e.kind == "malformed_line"])


def test_event_stream_announces_each_section_with_its_header_before_its_batches(devsample_dir):
    from udfs.dump_log_text import iter_dump_log_events

    path = devsample_dir / DUMP.format(log_dir=LOG_DIRS["broker101"], name="00000000000000000026.log", variant="")
    with path.open() as f:
        events = list(iter_dump_log_events(f))
    kinds = [k for k, _ in events]
    assert kinds[0] == "file" and kinds.count("file") == 1 and "error" not in kinds
    assert events[0][1].log_start_offset == 26 and events[0][1].file_kind == "segment"
    assert kinds.count("batch") == 22 and kinds.count("record") == 34


def test_deeply_nested_payload_is_an_error_not_a_crash():
    (section,) = parse_dump_log([BATCH.format(b=0, l=0, c=1, ctl="false"), REC.format(o=0, k=-1) + " payload: " + "[" * 100000])
    assert section.records[0].error.kind == "bad_json"
