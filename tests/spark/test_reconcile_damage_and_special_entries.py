"""Reconcile on the real devsample's bronze (tests/spark/bronze_builders.py, from Kafka's expected.json) with
what issue #65 adds: symlinks and FIFOs in broker 101's log dir are SPECIAL_LOG_DIR_ENTRY findings that say
what they are, never replica findings; a damaged input of broker 102 makes its absence-based findings
undecided (info) while every other finding stays Kafka's truth (tests/devsample_truth.py)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from bronze_builders import devsample_tables, to_frames

from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from tests import devsample_truth

pytestmark = pytest.mark.spark
WHEN = datetime(2026, 11, 23, tzinfo=timezone.utc)
SPECIAL = {"evil-0": "symlink to '/etc'", "dangling-0": "symlink to '/gone/away'", "pipe-0": "FIFO (named pipe)"}


@pytest.fixture(scope="module")
def result(spark, devsample_dir):
    tables = devsample_tables(devsample_dir / "expected.json")
    model = next(r for r in tables["bronze_dir_entries"] if r["broker_id"] == 101)
    for name, what in SPECIAL.items():
        tables["bronze_dir_entries"].append({
            **{k: model[k] for k in ("capture_id", "run_id", "cluster_id", "broker_id", "log_dir", "directory_id")},
            "entry_name": name, "entry_kind": "special", "is_dir": False, "name_error": what, "bytes": 4,
            "newest_mtime": WHEN, "pm_status": "not_applicable"})
    damaged = [{"file": "broker-102.jsonl.gz", "node": 102, "error_kind": "truncated_pack"}]
    found = run_reconcile(spark, default_catalogue(), to_frames(spark, tables), "dev", "dev-run", WHEN,
                          damaged_inputs=damaged)
    return [r.asDict() for r in found.findings.collect()]


def test_special_entries_are_their_own_finding_and_never_a_replica(result):
    special = {r["dir_name"]: r for r in result if r["check_id"] == "SPECIAL_LOG_DIR_ENTRY"}
    assert set(special) == set(SPECIAL)
    for name, what in SPECIAL.items():
        assert special[name]["broker_id"] == 101 and special[name]["severity"] == "warning"
        assert f"is a {what}: not followed" in special[name]["message"]
    others = [r for r in result if r["dir_name"] in SPECIAL and r["check_id"] != "SPECIAL_LOG_DIR_ENTRY"]
    assert others == []  # no ORPHAN_REPLICA "topic id ?" for a link


def test_the_damaged_nodes_absence_findings_are_undecided_and_the_rest_is_kafkas_truth(result):
    kafka = [r for r in result if r["check_id"] != "SPECIAL_LOG_DIR_ENTRY"]
    assert devsample_truth.from_rows(kafka) == devsample_truth.FINDINGS  # nothing lost, nothing added
    severities = default_catalogue().severities()
    for row in kafka:
        if row["broker_id"] == 102 and row["check_id"] in default_catalogue().absence_based():
            assert row["severity"] == "info" and row["message"].startswith("Undecided: input damaged "
                                                                          "(broker-102.jsonl.gz: truncated_pack)")
            assert row["remediation"].startswith("Collect broker 102 again")
        else:
            assert row["severity"] == severities[row["check_id"]] and "Undecided" not in row["message"]
    assert any(r["broker_id"] == 102 and r["check_id"] == "MISSING_PARTITION_METADATA" for r in kafka)


def test_damaged_nodes_are_found_in_bronze_alone(spark):
    """run_reconcile called on bronze only (a notebook, no ingest facts): a cut pack's node is the broker of the
    log dirs it holds (``<pack>!<log dir>``), a log dir listed in part is its own broker's."""
    from jobs.reconcile.undecided import damaged_nodes_from_bronze

    files = spark.createDataFrame([
        ("broker-5.jsonl.gz", "packed_snapshot", None, "quarantined", "truncated_pack", "pack ends early"),
        ("broker-6.jsonl.gz", "packed_snapshot", None, "quarantined", "unsafe_member", "symlink content"),
        ("broker-7/kafka-logs/x-0/00.log", "data_segment", "broker-7/kafka-logs", "quarantined", "io_error",
         "vanished: gone between listing and read")],
        "path string, file_kind string, log_dir string, status string, error_kind string, error_message string")
    dirs = spark.createDataFrame([
        ("broker-5.jsonl.gz!/data/a", 5, None, None), ("broker-5.jsonl.gz!/data/b", 5, None, None),
        ("broker-6.jsonl.gz!/data/a", 6, None, None), ("broker-7/kafka-logs", 7, None, None),
        ("broker-8/kafka-logs", 8, "io_error", "incomplete: [Errno 5] Input/output error")],
        "log_dir string, broker_id int, error_kind string, error_message string")
    found = damaged_nodes_from_bronze(files, dirs)
    assert sorted((d["node"], d["file"], d["error_kind"]) for d in found) == [
        (5, "broker-5.jsonl.gz", "truncated_pack"), (8, "broker-8/kafka-logs", "io_error")]
