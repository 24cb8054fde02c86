"""Ingest building blocks that need no Spark: discovery, task planning, file classification, row mapping."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jobs.ingest.discover import discover, plan_tasks
from jobs.ingest.loose_files import broker_of_log_path, classify_loose
from jobs.ingest.metadata_rows import COLUMN_SOURCES, COLUMN_TYPES, metadata_row, typed_columns
from jobs.tables import bronze
from udfs import metadata_log


@pytest.fixture()
def odd_layout(tmp_path: Path, devsample_dir: Path) -> Path:
    """The devsample log dirs under folder names that say nothing about the broker."""
    shutil.copytree(devsample_dir / "broker-101" / "kafka-logs", tmp_path / "hostA" / "var" / "lib" / "kafka" / "data-a")
    shutil.copytree(devsample_dir / "broker-102" / "kafka-logs-b", tmp_path / "broker-1" / "disk")
    headless = tmp_path / "lost" / "logs"
    shutil.copytree(devsample_dir / "broker-103" / "kafka-logs", headless)
    (headless / "meta.properties").unlink()
    (tmp_path / "zk").mkdir()
    (tmp_path / "zk" / "zk-znodes.jsonl").write_text('{"path": "/", "data": null, "stat": {}}\n')
    return tmp_path


def test_discovery_stops_at_log_dirs_and_flags_headless_ones(odd_layout: Path):
    units = discover(str(odd_layout))
    log_dirs = {u.rel_path: u.headless for u in units if u.kind == "log_dir"}
    assert log_dirs == {"hostA/var/lib/kafka/data-a": False, "broker-1/disk": False, "lost/logs": True}
    # nothing inside a log dir is listed by the driver; a *.jsonl may be a pack (a non-pack falls back to loose)
    others = [(u.kind, u.rel_path) for u in units if u.kind != "log_dir"]
    assert others == [("pack", "zk/zk-znodes.jsonl")]


def test_plan_tasks_gives_log_dirs_own_tasks_and_groups_loose_files():
    from jobs.ingest.discover import WorkUnit

    units = [WorkUnit("log_dir", "/r", f"/r/d{i}", f"d{i}") for i in range(3)]
    units += [WorkUnit("file", "/r", f"/r/f{i}", f"f{i}", 1) for i in range(10)]
    tasks = plan_tasks(units, files_per_task=4)
    assert [len(t) for t in tasks] == [1, 1, 1, 4, 4, 2]


def test_plan_tasks_caps_whole_unit_tasks_balancing_bytes():
    """With a file per task and table (the direct first pass), packs share tasks: largest first, each to the
    task with the fewest bytes so far; every unit lands in exactly one task; loose files keep their groups."""
    from jobs.ingest.discover import WorkUnit

    sizes = [90, 10, 40, 40, 30, 30, 20, 20, 10]
    units = [WorkUnit("pack", "/r", f"/r/p{i}", f"p{i}", size) for i, size in enumerate(sizes)]
    units += [WorkUnit("file", "/r", f"/r/f{i}", f"f{i}", 1) for i in range(5)]
    tasks = plan_tasks(units, files_per_task=4, max_whole_tasks=3)
    whole, loose = tasks[:3], tasks[3:]
    assert sorted(u.path for t in whole for u in t) == sorted(f"/r/p{i}" for i in range(len(sizes)))
    assert sorted(sum(u.size for u in t) for t in whole) == [90, 100, 100]
    assert [len(t) for t in loose] == [4, 1]
    # no more units than the cap: a task each, as without one
    assert [len(t) for t in plan_tasks(units[:2], files_per_task=4, max_whole_tasks=3)] == [1, 1]


@pytest.mark.parametrize("name,parent,head,kind", [
    ("capture.json", "c", b"{}", "capture_record"),
    ("00000000000000000000.log", "__cluster_metadata-0", b"", "metadata_segment"),
    ("00000000000000000000.log", "orders-0", b"", "data_segment"),
    ("00000000000000000044-0000000001.checkpoint", "x", b"", "metadata_snapshot"),
    ("dump.txt", "x", b"# comment\nDumping a/__cluster_metadata-0/0.log\n", "dump_log_text"),
    ("zk.jsonl", "x", b'{"path": "/brokers", "data": null, "stat": {"version": 0}}\n', "zk_znodes"),
    ("logdirs.txt", "x", b"Querying brokers for log directories information\n", "log_dirs_json"),
    ("controller.log", "broker-2", b"[2026-01-01 00:00:00,000] INFO x (y)\n", "zk_log"),
    ("stdout.log", "broker-2", b"[2026-01-01 00:00:00,000] INFO x (y)\n", "other"),
    ("expected.json", "x", b'{"path": 1, "stat": 2}', "other"),
])
def test_classify_loose_files(name, parent, head, kind):
    assert classify_loose(name, parent, head) == kind


def test_broker_of_zk_log_comes_from_a_broker_folder():
    assert broker_of_log_path("zk/logs/broker-12/controller.log") == 12
    assert broker_of_log_path("logs/controller.log") is None


def test_column_mapping_covers_only_real_columns():
    names = set(bronze.METADATA_RECORDS.column_names)
    assert set(COLUMN_TYPES) <= names
    for sources in COLUMN_SOURCES.values():
        assert set(sources) <= set(COLUMN_TYPES)


def test_typed_columns_of_real_records(devsample_dir: Path):
    segment = devsample_dir / "broker-101" / "kafka-logs" / "__cluster_metadata-0" / "00000000000000000000.log"
    rows = {}
    for record in metadata_log.iter_metadata_records(str(segment)):
        rows.setdefault(record.type, metadata_row(record, {"copy_id": "c"}))
    topic = rows["TOPIC_RECORD"]
    assert topic["topic_name"] and len(topic["topic_id"]) == 22 and topic["partition_id"] is None
    part = rows["PARTITION_RECORD"]
    assert part["replicas"] and part["isr"] and part["leader"] in part["replicas"]
    broker = rows["REGISTER_BROKER_RECORD"]
    assert broker["broker_id"] == 101 and broker["fenced"] in (0, 1) and broker["broker_epoch"] is not None
    pids = rows["PRODUCER_IDS_RECORD"]
    assert pids["next_producer_id"] == 1000 and pids["broker_id"] == 101
    assert rows["FEATURE_LEVEL_RECORD"]["feature_name"] == "metadata.version"
    assert typed_columns("BROKER_REGISTRATION_CHANGE_RECORD", {"brokerId": 1, "brokerEpoch": 5})["fenced"] == 0
    assert typed_columns("PARTITION_CHANGE_RECORD", {"partitionId": 0, "topicId": "x"})["leader"] is None


def test_a_replica_dir_is_first_written_when_kafka_wrote_its_partition_metadata():
    """bronze_dir_entries.first_written: partition.metadata's mtime (PartitionMetadataFile is written once, when
    the log is created), else the oldest file inside the dir; the dir's own (rename) time and newer files do not
    count. Checkpoint entries are judged against it (jobs/reconcile/checkpoint_entries.py)."""
    from datetime import datetime, timezone

    from collector.pack_format import KIND_DIR, KIND_FILE
    from jobs.ingest.log_dir_rows import DecodeOptions, LogDirDecoder
    from tests.settings_from import settings_from

    class Sink:
        def __init__(self):
            self.rows = []

        def add(self, table, row):
            self.rows.append((table, row))

        def seen_time(self, moment):
            pass

    pm = b"version: 0\ntopic_id: 2xJTa4V9RzKLfD2YJtCugA\n"
    sink = Sink()
    decoder = LogDirDecoder(sink, DecodeOptions.from_settings(settings_from().ingest), "broker-1/kafka-logs")
    for entry in [
        {"path": "orders-0/00000000000000000000.log", "kind": KIND_FILE, "size": 0, "mtime_ms": 5_000},
        {"path": "orders-0/partition.metadata", "kind": KIND_FILE, "size": len(pm), "mtime_ms": 7_000, "content": pm},
        {"path": "orders-0", "kind": KIND_DIR, "mtime_ms": 9_000},
        {"path": "clicks-0/00000000000000000000.log", "kind": KIND_FILE, "size": 0, "mtime_ms": 4_000},
        {"path": "clicks-0/leader-epoch-checkpoint", "kind": KIND_FILE, "size": 0, "mtime_ms": 3_000,
         "content": b""},
        {"path": "clicks-0", "kind": KIND_DIR, "mtime_ms": 8_000},
    ]:
        decoder.feed(entry)
    dirs = {r["entry_name"]: r for t, r in sink.rows if t == "bronze_dir_entries"}
    ms = datetime.fromtimestamp
    assert dirs["orders-0"]["first_written"] == ms(7, tz=timezone.utc)  # partition.metadata, not the older .log
    assert dirs["clicks-0"]["first_written"] == ms(3, tz=timezone.utc)  # no partition.metadata: the oldest file
