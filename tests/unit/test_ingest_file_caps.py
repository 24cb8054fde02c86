"""Ingest's caps decide which embedded files it holds in memory, for packs as for raw trees.

A pack embeds what its collector's caps allowed; ingest reads it with its own caps
(``ingest.max_metadata_file_bytes`` / ``max_embedded_file_bytes``), so a pack from a collector with a larger
cap cannot make an executor hold more than ingest was configured for: the member is rejected and the pack
quarantined with the reason, the other members still read.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from collector import CollectOptions, collect
from jobs.ingest.log_dir_rows import DecodeOptions
from tests.reliability.conftest import ingest_rows
from tests.settings_from import settings_from

SEGMENT = "__cluster_metadata-0/00000000000000000026.log"  # 3496 bytes, the largest file of broker 101


def _pack(devsample_dir: Path, tmp_path: Path) -> Path:
    broker = tmp_path / "tree" / "broker-101"
    shutil.copytree(devsample_dir / "broker-101", broker)
    capture = tmp_path / "capture"
    capture.mkdir()
    collect([str(broker / "kafka-logs")], str(capture / "broker-101.jsonl.gz"),
            CollectOptions(include_metadata_log=True), capture_time="2026-11-22T09:00:00Z", host="h")
    return capture


def _records_from(rows, suffix):
    return [r for r in rows.get("bronze_metadata_records", []) if r["source_file"].endswith(suffix)]


def test_default_caps_read_every_metadata_file_of_a_pack(devsample_dir, tmp_path):
    rows = ingest_rows(_pack(devsample_dir, tmp_path))
    (pack,) = [r for r in rows["bronze_ingest_files"] if r["file_kind"] == "packed_snapshot"]
    assert (pack["status"], pack["error_kind"]) == ("ok", None)
    assert _records_from(rows, SEGMENT) and _records_from(rows, "00000000000000000000.log")


def test_a_member_over_ingests_cap_quarantines_the_pack_and_the_rest_is_still_read(devsample_dir, tmp_path):
    capped = DecodeOptions.from_settings(settings_from().ingest, max_embedded_file_bytes=3000,
                                         max_metadata_file_bytes=3000, defer_metadata_records=False)
    rows = ingest_rows(_pack(devsample_dir, tmp_path), capped)
    (pack,) = [r for r in rows["bronze_ingest_files"] if r["file_kind"] == "packed_snapshot"]
    assert (pack["status"], pack["error_kind"]) == ("quarantined", "decompression_bomb")
    assert "3496 bytes over max_content_bytes=3000" in pack["error_message"] and SEGMENT in pack["error_message"]
    assert not _records_from(rows, SEGMENT)
    assert _records_from(rows, "00000000000000000000.log")  # 2367 bytes: under the cap, still decoded
