"""bronze_metadata_records rows built column by column (RecordColumns) and decoded in byte ranges."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pytest

from jobs.ingest.log_dir_rows import FileOutcome
from jobs.ingest.metadata_files import RECORDS_STRUCT, record_blocks
from jobs.ingest.metadata_rows import RecordColumns, record_hash, typed_columns
from udfs import metadata_log
from udfs.metadata_record import MetadataRecord

SOURCE = {"copy_id": "103:/k", "source_broker_id": 103, "source_file": "f.log", "source_kind": "segment",
          "section": "log", "snapshot_end_offset": None}


def _segments(devsample_dir: Path) -> list[Path]:
    return sorted(devsample_dir.glob("broker-*/kafka-logs/__cluster_metadata-0/*.log"))


def _expected_row(record: MetadataRecord) -> dict:
    """The row spelled out field by field, independently of the builder's column lists."""
    payload = record.payload_json()
    row = dict(SOURCE, offset=record.offset, batch_base_offset=record.batch_base_offset,
               leader_epoch=record.leader_epoch,
               append_time=datetime.fromtimestamp(record.timestamp / 1000, tz=timezone.utc),
               is_control=record.is_control, record_type=record.type, api_key=record.api_key,
               version=record.version, payload_json=payload, record_hash=record_hash(record, payload),
               error_kind=None, error_message=None, raw_value=None,
               in_authoritative_sequence=None)  # set by the driver once the copies are compared
    row.update(typed_columns(record.type, record.data))
    return row


def test_columns_equal_the_rows_spelled_out_for_every_real_record(devsample_dir):
    checked = 0
    for path in _segments(devsample_dir):
        records = list(metadata_log.iter_metadata_records(str(path)))
        columns = RecordColumns(capacity=7)  # small: the builder must grow past its capacity
        for record in records:
            columns.add(record, SOURCE)
        block = columns.take(RECORDS_STRUCT)
        assert len(columns) == 0 and block.type == RECORDS_STRUCT
        got = block.to_pylist()
        assert got == [_expected_row(r) for r in records]
        checked += len(got)
    assert checked > 150


def test_a_value_that_does_not_fit_is_nulled_and_explained_not_lost():
    record = MetadataRecord(offset=5, batch_base_offset=5, batch_last_offset=5, leader_epoch=1, timestamp=0,
                            is_control=False, type="PARTITION_RECORD", api_key=3, version=0,
                            data={"partitionId": 1 << 40, "topicId": "x", "replicas": [1]})
    columns = RecordColumns()
    columns.add(record, SOURCE)
    (row,) = columns.take(RECORDS_STRUCT).to_pylist()
    assert row["partition_id"] is None and row["topic_id"] == "x" and row["replicas"] == [1]
    assert row["error_kind"] == "value_too_large" and "partition_id" in row["error_message"]


def test_byte_ranges_at_batch_starts_split_a_file_without_losing_or_repeating_a_record(devsample_dir):
    path = max(_segments(devsample_dir), key=lambda p: p.stat().st_size)
    data = path.read_bytes()
    positions = [b["position"] for b in metadata_log.iter_metadata_batches(data)]
    assert len(positions) > 4
    cuts = [0, positions[len(positions) // 3], positions[2 * len(positions) // 3], None]
    whole = pa.concat_arrays(list(record_blocks(data, FileOutcome(), SOURCE))).to_pylist()
    parts = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        outcome = FileOutcome()
        parts += [row for block in record_blocks(data, outcome, SOURCE, start=start, end=end)
                  for row in block.to_pylist()]
        assert outcome.status == "ok"
    assert parts == whole and len(whole) == sum(1 for _ in metadata_log.iter_metadata_records(data))


def test_parts_of_one_file_fold_into_one_outcome_with_the_first_error():
    from jobs.ingest.metadata_files import merge_decoded

    parts = [(10, None, '{"start": 0}'),
             (3, "crc_mismatch", '{"start": 9000, "message": "late", "offset": 9100, "line": null}'),
             (7, "truncated_batch", '{"start": 4000, "message": "early", "offset": 4200, "line": null}')]
    records, kind, detail = merge_decoded(parts)
    assert (records, kind) == (20, "truncated_batch") and json.loads(detail)["message"] == "early"
    assert merge_decoded([(4, None, '{"start": 0}'), (5, None, None)]) == (9, None, None)


def test_a_batch_at_a_time_gives_the_rows_of_one_record_at_a_time(devsample_dir):
    """add_many over each batch's list (single-type batches column by column, mixed ones per record) builds
    exactly the rows of add() per record, and the lists hold exactly iter_metadata_records' records."""
    single = mixed = 0
    for path in _segments(devsample_dir):
        lists = list(metadata_log.iter_metadata_record_lists(str(path)))
        records = list(metadata_log.iter_metadata_records(str(path)))
        assert [r for batch in lists for r in batch] == records
        by_batch, by_record = RecordColumns(capacity=5), RecordColumns(capacity=5)
        for batch in lists:
            by_batch.add_many(batch, SOURCE)
            single += len({r.type for r in batch}) == 1
            mixed += len({r.type for r in batch}) > 1
        for record in records:
            by_record.add(record, SOURCE)
        assert by_batch.take(RECORDS_STRUCT).to_pylist() == by_record.take(RECORDS_STRUCT).to_pylist() \
            == [_expected_row(r) for r in records]
    assert single > 10 and mixed > 0


def test_untrusted_records_of_one_type_are_coerced_column_by_column():
    """A batch of one type whose data did not come from the generated decoders (dump text, the checked
    decoder) goes through every coercion: a bool becomes 0/1, a wrongly shaped value becomes null."""
    def record(offset, data):
        return MetadataRecord(offset=offset, batch_base_offset=0, batch_last_offset=2, leader_epoch=1, timestamp=5,
                              is_control=False, type="REGISTER_BROKER_RECORD", api_key=0, version=3, data=data)

    batch = [record(0, {"brokerId": 1, "brokerEpoch": 7, "fenced": True, "logDirs": ["a", "b"]}),
             record(1, {"brokerId": "2", "brokerEpoch": None, "fenced": False, "logDirs": "not-a-list"}),
             record(2, {"brokerId": [3], "fenced": 1, "logDirs": [1, 2]})]
    columns = RecordColumns()
    columns.add_many(batch, SOURCE)
    rows = columns.take(RECORDS_STRUCT).to_pylist()
    assert [(r["broker_id"], r["broker_epoch"], r["fenced"], r["directories"]) for r in rows] == [
        (1, 7, 1, ["a", "b"]), (2, None, 0, None), (None, None, 1, ["1", "2"])]
    assert rows == [_expected_row(r) for r in batch]


def test_append_time_is_null_where_no_datetime_exists_and_exact_elsewhere():
    millis = [-1, 0, 1_700_000_000_123, 253_402_300_799_999, 253_402_300_800_000, None]
    batch = [MetadataRecord(offset=i, batch_base_offset=i, batch_last_offset=i, leader_epoch=0, timestamp=m,
                            is_control=False, type=None, api_key=None, version=None, data=None)
             for i, m in enumerate(millis)]
    columns = RecordColumns()
    columns.add_many(batch, SOURCE)
    got = [r["append_time"] for r in columns.take(RECORDS_STRUCT).to_pylist()]
    assert got == [None, datetime(1970, 1, 1, tzinfo=timezone.utc),
                   datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=timezone.utc),
                   datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=timezone.utc), None, None]


def test_record_hash_is_sha256_of_type_version_and_payload(devsample_dir):
    import hashlib

    records = [r for path in _segments(devsample_dir) for r in metadata_log.iter_metadata_records(str(path))
               if not r.is_control and r.data is not None]
    assert len({(r.type, r.version) for r in records}) > 3
    for record in records:
        text = f"{record.type}|{record.version}|{record.payload_json()}"
        assert record_hash(record) == hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def test_rows_straight_from_the_decoder_equal_the_rows_of_its_records(devsample_dir):
    """add_batch over the decoder's fused BatchRows (JSON text and typed fields per record, no MetadataRecord or
    dict) builds exactly add_many's rows of the same records, for every devsample segment and for one with a
    corrupt batch (an error row in its place, among the fused rows of its neighbours)."""
    from jobs.ingest.metadata_rows import ROW_FIELDS
    from udfs.metadata_record import BatchRows

    path = max(_segments(devsample_dir), key=lambda p: p.stat().st_size)
    corrupt = bytearray(path.read_bytes())
    middle = [b["position"] for b in metadata_log.iter_metadata_batches(bytes(corrupt))]
    corrupt[middle[len(middle) // 2] + 70] ^= 0xFF  # inside a record: the batch's CRC no longer matches
    sources = [str(p) for p in _segments(devsample_dir)] + [bytes(corrupt)]
    plain = with_others = 0
    for source in sources:
        batches = list(metadata_log.iter_metadata_batch_rows(source))
        fused = list(metadata_log.iter_metadata_batch_rows(source, row_fields=ROW_FIELDS))
        assert all(isinstance(b, BatchRows) for b in batches) and all(b.fused for b in fused)
        assert [b.others for b in fused] == [b.others for b in batches]
        plain += sum(1 for b in batches if not b.others)
        with_others += sum(1 for b in batches if b.others)
        direct, via_records = RecordColumns(capacity=5), RecordColumns(capacity=5)
        for batch, fused_batch in zip(batches, fused, strict=True):
            direct.add_batch(fused_batch, SOURCE)
            via_records.add_many(batch.records(), SOURCE)
        records = list(metadata_log.iter_metadata_records(source))
        assert [r for b in batches for r in b.records()] == records
        expected = [dict(_expected_row(r), error_kind=r.error.kind, error_message=r.error.message) if r.error
                    else _expected_row(r) for r in records]
        assert direct.take(RECORDS_STRUCT).to_pylist() == via_records.take(RECORDS_STRUCT).to_pylist() == expected
    assert plain > 10 and with_others > 1
    errors = [r for r in metadata_log.iter_metadata_records(bytes(corrupt)) if r.error is not None]
    assert [e.error.kind for e in errors] == ["crc_mismatch"]


def test_typed_columns_of_decoded_records_of_every_type_and_version_equal_the_plans():
    """The generated fillers (decoded records' typed columns, a batch at a time: from the decoders' dicts and
    from the fused row functions' values) against ``typed_columns`` (the plan read per record) for every record
    type with typed columns at every version, each record encoded from a few values: tagged fields left out
    (BrokerRegistrationChange's Fenced defaults to 0 in the column), booleans as 0/1, arrays and uuids as
    decoded."""
    from jobs.ingest.metadata_rows import ROW_FIELDS
    from jobs.tables.record_columns import COLUMN_SOURCES, source_key
    from udfs import message_codec
    from udfs.message_spec import load_schema
    from udfs.message_writer import encode
    from udfs.metadata_record import BatchRows

    schema = load_schema("metadata_records")
    values = {"bool": True, "int8": 1, "int16": 7, "int32": 42, "uint16": 9, "int64": 1 << 40,
              "string": "a-name", "uuid": "AAAAAAAAAAAAAAAAAAAAAQ", "[]int32": [3, 1, 2],
              "[]uuid": ["AAAAAAAAAAAAAAAAAAAAAQ"], "[]string": ["x"]}
    records, fused, checked_fenced_default = [], [], False
    for record_type, sources in COLUMN_SOURCES.items():
        spec = schema.by_name(record_type)
        fields = {f.json_name: f for f in spec.fields}
        for version in range(spec.valid_versions.lowest, spec.valid_versions.highest + 1):
            for filled in (True, False):  # every mapped field given, or only the untagged ones
                data = {}
                for source in sources.values():
                    f = fields[source_key(source)]
                    tagged = f.tag is not None and f.tagged_versions.contains(version)
                    if f.versions.contains(version) and (filled or not tagged) and f.type in values:
                        data[f.json_name] = values[f.type]
                body = encode(spec, version, data)
                decoded, _, writer = message_codec.generated(spec, version).fast_decoder(body, 0)
                if spec.is_flexible(version):
                    text, _, row = message_codec.row_decoder(spec, version, dict(ROW_FIELDS)[record_type])(body, 0)
                    frame = (record_type, None, spec.api_key, version)
                    fused.append((BatchRows(0, 0, 1, 0, None, [(len(records), frame, text, row)], True), decoded))
                record = MetadataRecord(offset=len(records), batch_base_offset=0, batch_last_offset=0,
                                        leader_epoch=1, timestamp=0, is_control=False, type=record_type,
                                        api_key=spec.api_key, version=version, data=decoded)
                record._json_writer = writer
                records.append(record)
                checked_fenced_default |= record_type == "BROKER_REGISTRATION_CHANGE_RECORD" and "fenced" not in decoded
    columns = RecordColumns()
    columns.add_many(records, SOURCE)
    rows = columns.take(RECORDS_STRUCT).to_pylist()
    typed = list(typed_columns(None, None))
    assert [{c: row[c] for c in typed} for row in rows] == [typed_columns(r.type, r.data) for r in records]
    assert checked_fenced_default and any(row["fenced"] == 1 for row in rows)
    assert {r.type for r in records} == set(COLUMN_SOURCES)
    from_rows = RecordColumns()
    for batch, _ in fused:
        from_rows.add_batch(batch, SOURCE)
    rows = from_rows.take(RECORDS_STRUCT).to_pylist()
    assert [{c: row[c] for c in typed} for row in rows] == [
        typed_columns(batch.rows[0][1][0], decoded) for batch, decoded in fused]
    assert {batch.rows[0][1][0] for batch, _ in fused} == set(COLUMN_SOURCES)


def test_a_record_off_the_fast_path_keeps_its_place_among_fused_rows():
    """A data batch whose middle record carries a tag its version does not know (the fast path hands it to the
    reference decoder, which keeps the tag): fused rows before and after it, the record itself in between, and
    the batch's rows equal add_many's of its records (which Kafka's files in the fixtures never mix)."""
    from jobs.ingest.metadata_rows import ROW_FIELDS
    from udfs import message_codec
    from udfs.message_values import MessageData

    topic = {"name": "t", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}
    spec = metadata_log.metadata_spec("TOPIC_RECORD")
    body = metadata_log.encode_metadata_frame("TOPIC_RECORD", 0, topic)[3:-1] + bytes([1, 7, 1, 0xAB])
    tagged, _ = message_codec.decode(spec, 0, body)
    assert isinstance(tagged, MessageData) and tagged.unknown_tagged_fields
    change = {"partitionId": 0, "topicId": topic["topicId"], "isr": [1, 2]}
    batch = metadata_log.encode_metadata_batch(
        [("PARTITION_CHANGE_RECORD", 1, change), ("TOPIC_RECORD", 0, tagged),
         ("PARTITION_CHANGE_RECORD", 1, dict(change, leader=2)), ("TOPIC_RECORD", 0, topic)], 40, 3, 1_700_000_000_000)
    [fused] = list(metadata_log.iter_metadata_batch_rows(batch, row_fields=ROW_FIELDS))
    assert [type(row) is tuple for row in fused.rows] == [True, False, True, True] and fused.others == 1
    with pytest.raises(ValueError, match="fused rows hold no record dicts"):
        fused.records()
    records = list(metadata_log.iter_metadata_records(batch))
    direct, via_records = RecordColumns(capacity=2), RecordColumns(capacity=2)
    direct.add_batch(fused, SOURCE)
    via_records.add_many(records, SOURCE)
    rows = direct.take(RECORDS_STRUCT).to_pylist()
    assert rows == via_records.take(RECORDS_STRUCT).to_pylist() == [_expected_row(r) for r in records]
    assert [row["offset"] for row in rows] == [40, 41, 42, 43] and rows[1]["topic_name"] == "t"
