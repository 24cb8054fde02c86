"""Ingest of a real ZooKeeper-mode capture (Z2: topic ``orders`` deleted while broker 3 was down)."""
from __future__ import annotations

import os
import tarfile
from datetime import datetime
from pathlib import Path

import pytest

from jobs.ingest import run_ingest
from tests.settings_from import settings_from

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def z2(tmp_path_factory, fixtures_dir: Path) -> Path:
    dest = tmp_path_factory.mktemp("zk")
    with tarfile.open(fixtures_dir / "kafka-zk-sample" / "Z2.tar.gz") as tar:
        tar.extractall(dest, filter="data")  # keeps the brokers' pre-allocated sparse index files sparse
    return dest / "Z2"


@pytest.fixture(scope="module")
def ingested(spark, z2: Path):
    s = settings_from()
    result = run_ingest(spark, s.ingest, None, str(z2), "z2", "run-1", execution=s.spark)
    rows = {name: [r.asDict() for r in df.collect()] for name, df in result.tables.items()}
    result.release()
    return result, rows


def test_zk_capture_log_dirs_files_and_capture_time(ingested, z2: Path):
    result, rows = ingested
    assert result.capture_time_source == "capture_record"
    assert result.capture_time.replace(tzinfo=None) == datetime(2026, 11, 22, 9, 3, 40, 576000)
    log_dirs = {r["log_dir"]: r for r in rows["bronze_log_dirs"]}
    assert {k: (v["broker_id"], v["meta_version"]) for k, v in log_dirs.items()} == {
        "broker-1": (1, 0), "broker-2": (2, 0), "broker-3": (3, 0)}
    on_disk = {str(p.relative_to(z2)): p for p in z2.rglob("*") if p.is_file()}
    files = {r["path"]: r for r in rows["bronze_ingest_files"]}
    assert set(files) == set(on_disk)
    assert all(r["status"] == "ok" for r in files.values())
    sparse = [p for p, f in on_disk.items() if f.suffix == ".index" and os.path.getsize(f) == 10 * 1024 * 1024]
    assert sparse and all(files[p]["bytes"] == 10 * 1024 * 1024 for p in sparse)  # apparent size, not blocks
    assert {files[p]["broker_id"] for p in sparse} <= {1, 2, 3}


def test_zk_capture_dirs_and_events(ingested):
    _, rows = ingested
    entries = [r for r in rows["bronze_dir_entries"] if r["topic"] == "orders"]
    deleted = {(r["broker_id"], r["partition"]) for r in entries if r["entry_kind"] == "delete"}
    live = {(r["broker_id"], r["partition"]) for r in entries if r["entry_kind"] == "partition"}
    assert {b for b, _ in deleted} == {1, 2} and live == {(3, 0), (3, 1), (3, 2)}
    assert all(r["topic_id"] == "jk6zGe0fSeuuEFT6wo3IpA" for r in entries if r["pm_status"] == "ok")
    events = rows["bronze_zk_events"]
    markers = [e for e in events if e["event_type"] == "delete_marker"]
    assert [(m["topic_name"], m["source_kind"]) for m in markers] == [("orders", "znode_dump")]
    halted = [e for e in events if e["event_type"] == "topic_deletion_halted"]
    assert halted and {e["topic_name"] for e in halted} == {"orders"} and {e["broker_id"] for e in halted} == {2}
    assert any(e["event_type"] == "producer_id_block" for e in events)
    assert {e["capture_id"] for e in events} == {"z2"}
