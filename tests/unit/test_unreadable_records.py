"""Records a newer Kafka wrote: the bronze row keeps their bytes, the run names them, and copies are compared
on what the brokers wrote.

Kafka's own rule for a version its schemas lack is to refuse the record ("Can't read version N of X",
MetadataRecordSerde / AbstractApiMessageSerde.read); kafka-recon keeps going and says what it could not read.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from jobs.ingest.metadata_copies import _batch_flags
from jobs.ingest.metadata_rows import metadata_row
from jobs.run_outcome import gaps_unreadable_metadata_records
from tests.kafka_renumber import renumber_file
from udfs import message_codec, metadata_log
from udfs.message_spec import load_schema

REGISTER = load_schema("metadata_records").by_name("RegisterBrokerRecord")


def test_a_version_newer_than_the_schemas_keeps_its_bytes_and_a_typed_error(tmp_path: Path, devsample_dir: Path):
    segment = tmp_path / "00000000000000000000.log"
    original = devsample_dir / "broker-101/kafka-logs/__cluster_metadata-0/00000000000000000000.log"
    segment.write_bytes(original.read_bytes())
    before = list(metadata_log.iter_metadata_records(str(segment)))
    assert renumber_file(segment, api_key=0, new_version=99) == 4
    after = list(metadata_log.iter_metadata_records(str(segment)))
    assert [r.offset for r in after] == [r.offset for r in before]  # nothing dropped, the replay goes on
    for old, new in zip(before, after, strict=True):
        if old.type != "REGISTER_BROKER_RECORD":
            assert (new.error, new.data) == (None, old.data)
            continue
        assert (new.type, new.api_key, new.version, new.data) == ("REGISTER_BROKER_RECORD", 0, 99, None)
        assert new.error.kind == "unknown_version" and "version 99 of RegisterBrokerRecord" in new.error.message
        row = metadata_row(new, {"copy_id": "c"})
        assert row["error_kind"] == "unknown_version" and row["payload_json"] is None
        # the bytes Kafka wrote (frame 1, apiKey 0, version 99, body): the body is the original record's
        raw = row["raw_value"]
        assert raw[:3] == b"\x01\x00\x63"
        assert message_codec.decode(REGISTER, old.version, raw, 3) == (old.data, len(raw))
        assert metadata_row(old, {"copy_id": "c"})["raw_value"] is None  # decoded rows carry no bytes


def test_the_gap_names_type_version_count_first_offset_and_the_upgrade():
    gaps = gaps_unreadable_metadata_records([
        {"record_type": "REGISTER_BROKER_RECORD", "api_key": 0, "version": 99, "error_kind": "unknown_version",
         "is_control": False, "count": 8, "first_offset": 5},
        {"record_type": None, "api_key": 40, "version": 0, "error_kind": "unknown_api_key", "is_control": False,
         "count": 1, "first_offset": 2}], "4.3")
    assert [g["reason"] for g in gaps] == ["unreadable_metadata_records"] * 2
    assert [(g["api_key"], g["first_offset"]) for g in gaps] == [(40, 2), (0, 5)]  # in log order
    assert gaps[1]["message"].startswith("8 REGISTER_BROKER_RECORD version 99 record(s) from offset 5")
    assert "kafka-recon needs an upgrade" in gaps[1]["message"] and "newer than 4.3" in gaps[1]["message"]
    assert gaps[0]["message"].startswith("1 metadata record type 40 record(s) from offset 2")
    assert gaps_unreadable_metadata_records([], "4.3") == []


def _flags(entries):
    """_batch_flags over one base offset's entries -> {copy_id: bad}."""
    struct = pa.struct([("copy_id", pa.string()), ("last_offset", pa.int64()), ("leader_epoch", pa.int32()),
                        ("crc", pa.int64()), ("crc_valid", pa.bool_()), ("source_kind", pa.string()),
                        ("source_broker_id", pa.int32())])
    batch = pa.RecordBatch.from_arrays([pa.array([7], pa.int64()), pa.array([entries], pa.list_(struct))],
                                       names=["base_offset", "e"])
    out = next(_batch_flags([batch])).to_pydict()
    return dict(zip(out["copy_id"], out["bad"], strict=True))


def _entry(copy_id, crc, kind="segment", epoch=1):
    return {"copy_id": copy_id, "last_offset": 7, "leader_epoch": epoch, "crc": crc, "crc_valid": True,
            "source_kind": kind, "source_broker_id": None}


def test_brokers_disks_outvote_dump_log_text_of_other_bytes():
    # four broker copies rewritten (new CRC 900) and four dump-log texts of the old bytes (CRC 100): the texts
    # are exports of other bytes, never evidence against the disks; the lower CRC used to win the tie
    disks = [_entry(f"b{i}", 900) for i in range(4)]
    texts = [_entry(f"t{i}", 100, kind="dump_log_text") for i in range(4)]
    flags = _flags(disks + texts)
    assert {c: flags[c] for c in ("b0", "b1", "b2", "b3")} == dict.fromkeys(("b0", "b1", "b2", "b3"), False)
    assert all(flags[f"t{i}"] for i in range(4))


def test_the_highest_epoch_still_wins_and_then_the_majority_of_disks():
    flags = _flags([_entry("b0", 5), _entry("b1", 5), _entry("b2", 6, epoch=2)])
    assert flags == {"b0": True, "b1": True, "b2": False}  # a newer leader overwrote the older batch
    flags = _flags([_entry("b0", 5), _entry("b1", 5), _entry("b2", 6), _entry("t0", 6, kind="dump_log_text"),
                    _entry("t1", 6, kind="dump_log_text")])
    assert (flags["b0"], flags["b1"], flags["b2"]) == (False, False, True)
