"""Malformed inputs are quarantined with their reason and never fail the run; re-ingest is idempotent.

The capture is real devsample data with damage done to copies of its files, plus broken loose files.
It is written through the DeltaStore (embedded backend) twice under one capture id, then once more under
another capture id.
"""
from __future__ import annotations

import gzip
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from collector import CollectOptions, collect
from jobs.ingest import run_ingest
from jobs.tables.delta_store import DeltaStore
from tests.settings_from import settings_from

pytestmark = pytest.mark.spark

# relative path -> error kind it must be quarantined with
DAMAGED = {
    "broker-1/logs/__cluster_metadata-0/00000000000000000026.log": "truncated_batch",
    "broker-1/logs/inventory-0/partition.metadata": "malformed_line",
    "broker-1/logs/events-0/00000000000000000007.snapshot": "crc_mismatch",
    "broker-1/logs/recovery-point-offset-checkpoint": "malformed_line",
    "broker-2/logs/meta.properties": "bad_version",
    "broker-2/logs/inventory-1/partition.metadata": "malformed_line",  # already truncated in the devsample
    "zk/zk-znodes.jsonl": "bad_json",
    "capture.json": "bad_json",
    "log-dirs.txt": "bad_json",
    "dump/metadata.txt": "malformed_line",
    "packs/broker-9.jsonl.gz": "truncated_pack",
}


def _damage(root: Path, devsample: Path) -> None:
    shutil.copytree(devsample / "broker-101" / "kafka-logs", root / "broker-1" / "logs")
    shutil.copytree(devsample / "broker-104" / "kafka-logs", root / "broker-2" / "logs")
    shutil.copytree(devsample / "broker-103" / "kafka-logs", root / "lost" / "logs")
    (root / "lost" / "logs" / "meta.properties").unlink()  # a headless log dir
    b1 = root / "broker-1" / "logs"
    segment = b1 / "__cluster_metadata-0" / "00000000000000000026.log"
    segment.write_bytes(segment.read_bytes()[: segment.stat().st_size // 2])
    (b1 / "inventory-0" / "partition.metadata").write_bytes(b"version 0\ntopic_id xWt6cg")
    snapshot = b1 / "events-0" / "00000000000000000007.snapshot"
    data = bytearray(snapshot.read_bytes())
    data[-1] ^= 0xFF
    snapshot.write_bytes(bytes(data))
    (b1 / "recovery-point-offset-checkpoint").write_text("0\n1\nnot a checkpoint line\n")
    (root / "broker-2" / "logs" / "meta.properties").write_bytes(b"version=banana\nnode.id=104\n")
    (root / "zk").mkdir()
    (root / "zk" / "zk-znodes.jsonl").write_text(
        '{"path": "/admin/delete_topics/orders", "data": null, "stat": {"version": 0, "mtime": 1}}\n'
        "{this is not json\n"
        '{"path": "/brokers/topics/orders", "data": "{\\"version\\":3,\\"partitions\\":{\\"0\\":[1]}}", '
        '"stat": {"version": 0, "mtime": 1}}\n')
    (root / "capture.json").write_text("{not json")
    (root / "log-dirs.txt").write_text("Querying brokers for log directories information\n"
                                       "Received log directory information from brokers 1\n{\"version\":1,\"brok")
    dump = (devsample / "tool-output" / "broker-101" / "kafka-logs" / "__cluster_metadata-0"
            / "00000000000000000000.log.DumpLogSegments.txt").read_text()
    (root / "dump").mkdir()
    (root / "dump" / "metadata.txt").write_text(dump.replace("\nbaseOffset: 5 ", "\nthis line is garbage\nbaseOffset: 5 ", 1))
    (root / "packs").mkdir()
    pack = root / "packs" / "broker-9.jsonl.gz"
    collect([str(devsample / "broker-102" / "kafka-logs-b")], str(pack), CollectOptions(), host="h9")
    raw = gzip.decompress(pack.read_bytes())
    pack.write_bytes(gzip.compress(raw[: len(raw) * 2 // 3]))  # cut mid-stream: truncated pack


@pytest.fixture(scope="module")
def store_runs(spark, tmp_path_factory, devsample_dir: Path):
    base = tmp_path_factory.mktemp("malformed")
    root = base / "capture"
    _damage(root, devsample_dir)
    s = settings_from(f"storage.root={base / 'tables'}", "storage.backend=embedded")
    store = DeltaStore.from_settings(spark, s.storage)
    first = run_ingest(spark, s.ingest, store, [str(root)], "cap-a", "run-1", execution=s.spark)
    tables = list(first.tables)
    snap1 = {t: [r.asDict() for r in store.read(t).collect()] for t in tables}
    first.release()
    second = run_ingest(spark, s.ingest, store, [str(root)], "cap-a", "run-2", execution=s.spark)
    second.release()
    snap2 = {t: [r.asDict() for r in store.read(t).collect()] for t in tables}
    third = run_ingest(spark, s.ingest, store, [str(root / "capture.json")], "cap-b", "run-3", execution=s.spark)
    third.release()
    snap3 = {t: [r.asDict() for r in store.read(t).collect()] for t in tables}
    return root, first, snap1, snap2, snap3


def test_malformed_files_are_quarantined_with_their_reason(store_runs):
    root, first, snap1, _, _ = store_runs
    files = {r["path"]: r for r in snap1["bronze_ingest_files"]}
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert on_disk <= set(files)  # plus the members read from the truncated pack
    assert {p for p, r in files.items() if r["status"] == "quarantined"} == set(DAMAGED)
    for path, kind in DAMAGED.items():
        assert files[path]["error_kind"] == kind, (path, files[path]["error_message"])
        assert files[path]["error_message"]
    assert all(r["status"] in ("ok", "quarantined") for r in files.values())
    # capture.json is unreadable: the time comes from the collector's record in the (truncated) pack's header
    assert first.capture_time_source == "capture_record"
    assert abs((datetime.now(timezone.utc) - first.capture_time).total_seconds()) < 3600


def test_the_rest_is_ingested(store_runs):
    _, _, snap1, _, _ = store_runs
    log_dirs = {r["log_dir"]: r for r in snap1["bronze_log_dirs"]}
    assert log_dirs["broker-1/logs"]["broker_id"] == 101 and log_dirs["broker-1/logs"]["error_kind"] is None
    assert log_dirs["broker-2/logs"]["broker_id"] is None and log_dirs["broker-2/logs"]["error_kind"] == "bad_version"
    assert log_dirs["lost/logs"]["error_kind"] == "missing_key"
    # broker-1's copy: segment 0 whole, segment 26 cut short (read batch by batch up to the cut)
    batches = [r for r in snap1["bronze_metadata_batches"] if r["copy_id"] == "broker-1/logs/__cluster_metadata-0"
               and r["section"] == "log"]
    spans = sorted((r["base_offset"], r["last_offset"]) for r in batches if r["error_kind"] is None)
    covered = [o for base, last in spans for o in range(base, last + 1)]
    assert covered[:26] == list(range(26)) and len(covered) < 60
    assert any(r["error_kind"] == "truncated_batch" for r in batches)
    # so the complete copy on broker-2's disk is the one decoded
    copies = {r["copy_id"]: r for r in snap1["bronze_metadata_copies"]}
    assert copies["broker-2/logs/__cluster_metadata-0"]["is_authoritative"]
    assert copies["broker-1/logs/__cluster_metadata-0"]["last_offset"] == covered[-1]
    sequence = sorted(r["offset"] for r in snap1["bronze_metadata_records"] if r["in_authoritative_sequence"])
    assert sequence == list(range(60))
    entries = {(r["log_dir"], r["entry_name"]): r for r in snap1["bronze_dir_entries"]}
    assert entries[("broker-1/logs", "inventory-0")]["pm_status"] == "log_dir_offline"
    assert entries[("broker-1/logs", "events-1")]["pm_status"] == "ok"
    assert ("lost/logs", "clicks-0") in entries
    zk = snap1["bronze_zk_events"]
    assert {r["event_type"] for r in zk} >= {"delete_marker", "topic_znode"}
    dumped = [r for r in snap1["bronze_metadata_batches"] if r["source_file"] == "dump/metadata.txt"]
    assert sum(r["last_offset"] - r["base_offset"] + 1 for r in dumped) == 26  # the garbage line costs no batch
    pack_members = [p for p in (r["path"] for r in snap1["bronze_ingest_files"]) if p.startswith("packs/broker-9")]
    assert len(pack_members) > 1  # entries before the cut were ingested


def test_re_ingest_replaces_the_slice_and_a_new_capture_adds(store_runs):
    _, _, snap1, snap2, snap3 = store_runs

    def without_run(rows):
        return sorted(repr(sorted((k, v) for k, v in r.items() if k != "run_id")) for r in rows)

    for table, rows in snap1.items():
        assert without_run(snap2[table]) == without_run(rows), table
        assert {r["run_id"] for r in snap2[table]} <= {"run-2"}
    assert len(snap3["bronze_ingest_files"]) == len(snap1["bronze_ingest_files"]) + 1
    assert {r["capture_id"] for r in snap3["bronze_ingest_files"]} == {"cap-a", "cap-b"}
    assert without_run([r for r in snap3["bronze_dir_entries"] if r["capture_id"] == "cap-a"]) == \
        without_run(snap1["bronze_dir_entries"])


def test_a_first_pass_over_nothing_emits_no_rows(spark, tmp_path):
    """No work unit (nothing discovered): no decoding job, no rows, and the tables' frames are empty with their
    columns, so the run goes on to report the gap instead of failing."""
    from jobs.ingest.stage import IngestSteps

    s = settings_from(f"storage.root={tmp_path / 'tables'}", "storage.backend=embedded")
    steps = IngestSteps(spark, s.ingest, s.spark, DeltaStore.from_settings(spark, s.storage), "cap-none", "run-none")
    first = steps.first_pass([], multi_root=False)
    try:
        assert first.rows_emitted == {}
        assert first.tagged.count() == 0
        entries = first.part("bronze_dir_entries")
        assert entries.collect() == [] and "entry_name" in entries.columns
    finally:
        for df in steps.persisted:
            df.unpersist()


def test_conform_as_sql_text_gives_what_columns_give(spark):
    """Ingest conforms each bronze table with one selectExpr of SQL text; the rows and types are those a Column
    per field gives (F.lit constants, casts to the spec's types), quotes and a capture time included."""
    from datetime import datetime, timezone

    from pyspark.sql import functions as F

    from jobs.ingest.stage import _conform
    from jobs.tables import bronze

    spec = bronze.LOG_DIRS
    df = spark.createDataFrame([("a'b\\c", "7"), (None, None)], "cluster_id string, broker_id string")
    constants = {"capture_time": datetime(2026, 11, 28, 13, 52, 4, 123456, tzinfo=timezone.utc)}
    text = _conform(df, spec, "cap-'1'", "run\\1", constants)
    values = {"capture_id": "cap-'1'", "run_id": "run\\1", **constants}
    types = {f.name: f.dataType for f in spec.spark_schema().fields}
    columns = df.select(*[(F.lit(values[n]) if n in values else F.col(n) if n in df.columns else F.lit(None))
                          .cast(types[n]).alias(n) for n in spec.column_names])
    assert text.schema == columns.schema
    assert sorted(map(repr, text.collect())) == sorted(map(repr, columns.collect()))
    assert {(r.capture_id, r.cluster_id, r.broker_id) for r in text.collect()} == {
        ("cap-'1'", "a'b\\c", 7), ("cap-'1'", None, None)}
