"""Batch summaries of metadata files (what copies are compared by) and the configured decompression limit."""
from __future__ import annotations

from jobs.ingest.log_dir_rows import FileOutcome
from jobs.ingest.metadata_files import record_blocks
from udfs import metadata_log

TOPIC = ("TopicRecord", 0, {"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})


def _segment() -> bytes:
    first = metadata_log.encode_metadata_batch([TOPIC] * 3, 0, 5, 1_700_000_000_000)
    second = metadata_log.encode_metadata_batch([TOPIC] * 200, 3, 6, 1_700_000_001_000, compression_codec="gzip")
    return first + second


def test_batch_summaries_give_offsets_epoch_and_a_verified_crc():
    summaries = list(metadata_log.iter_metadata_batches(_segment()))
    assert [(b["base_offset"], b["last_offset"], b["records"], b["leader_epoch"]) for b in summaries] == \
        [(0, 2, 3, 5), (3, 202, 200, 6)]
    assert all(b["crc_valid"] and b["error"] is None for b in summaries)


def test_a_flipped_byte_is_a_crc_mismatch_in_the_summary():
    data = bytearray(_segment())
    data[70] ^= 0xFF  # inside the first batch's records
    first = next(metadata_log.iter_metadata_batches(bytes(data)))
    assert first["crc_valid"] is False and first["error"].kind == "crc_mismatch"


def test_a_truncated_file_ends_with_a_framing_error_entry():
    data = _segment()[:-10]
    *_, last = metadata_log.iter_metadata_batches(data)
    assert last["base_offset"] is None and last["error"].kind == "truncated_batch"


def test_the_configured_decompression_limit_is_applied_to_metadata_records():
    outcome = FileOutcome()
    rows = [row for block in record_blocks(_segment(), outcome, {"copy_id": "c"}, max_decompressed_bytes=1024)
            for row in block.to_pylist()]
    assert [r["error_kind"] for r in rows[3:]] == ["decompression_bomb"]
    assert outcome.status == "quarantined" and outcome.error.kind == "decompression_bomb"
    generous = FileOutcome()
    assert sum(map(len, record_blocks(_segment(), generous, {"copy_id": "c"}))) == 203 and generous.status == "ok"


def test_a_value_that_does_not_fit_its_column_is_nulled_and_explained_not_fatal():
    from jobs.ingest.tagged_rows import to_batch

    good = {"copy_id": "c", "offset": 1, "leader_epoch": 3}
    bad = {"copy_id": "c", "offset": 2, "leader_epoch": 99_999_999_999}  # past int32: hostile dump text
    batch = to_batch("bronze_metadata_records", [good, bad]).to_pylist()
    rows = [r["bronze_metadata_records"] for r in batch]
    assert rows[0]["leader_epoch"] == 3 and rows[0]["error_kind"] is None
    assert rows[1]["leader_epoch"] is None and rows[1]["offset"] == 2
    assert rows[1]["error_kind"] == "value_too_large" and "leader_epoch" in rows[1]["error_message"]
