"""Gold writes of the reconcile stage: findings kept across runs by MERGE, one run-summary row per run.

MERGE on finding_id (jobs.tables.delta_store builder):
- matched              -> the finding is still there: refresh texts, evidence, bytes, last_seen; status open
                          (a resolved finding that re-appears is re-opened; first_seen never moves);
- not matched          -> new finding: inserted with first_seen = this capture;
- not matched by source, same cluster, open, last seen no later than this capture -> resolved at this capture.
Re-running the same capture is idempotent; running an older capture after a newer one changes nothing
(the matched clause only moves forward in capture time).

Example::

    result = run_reconcile(spark, settings.catalogue, bronze, capture_id, run_id, capture_time)
    counts = write_findings(store, result, capture_id=capture_id, run_id=run_id, capture_time=capture_time)
    row = run_summary_values(counts, run_id=run_id, capture_id=capture_id, ...)   # the pipeline writes it
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Dict, Mapping, Optional, Sequence, Tuple

from pyspark.sql import DataFrame

from jobs.engine.local_frames import local_frame
from jobs.tables.gold import RUN_SUMMARY

from . import sql_functions as F
from .sql_functions import sql_text

UPDATED_ON_MATCH = ("check_id", "severity", "cluster_id", "broker_id", "broker_state", "log_dir", "dir_name",
                    "topic_name", "topic_id", "partition", "bytes", "since", "message", "evidence", "remediation",
                    "last_seen_capture", "last_seen", "run_id")


@dataclass
class MergeCounts:
    open_findings: int
    new_findings: int
    resolved_findings: int
    by_severity: Dict[str, int]
    by_check: Dict[str, int]
    bytes_reclaimable: int


def _sql_ts(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return f"TIMESTAMP {sql_text(value.astimezone(timezone.utc).strftime('%Y-%m-%d %H:%M:%S.%f') + '+00:00')}"


def merge_findings(store, findings: DataFrame, cluster_id: Optional[str], run_id: str, capture_time: datetime) -> int:
    """MERGE this capture's findings into gold_findings; returns the table version."""
    ts = _sql_ts(capture_time)
    same_cluster = "t.cluster_id IS NULL" if cluster_id is None else f"t.cluster_id = {sql_text(cluster_id)}"
    matched = {c: f"s.{c}" for c in UPDATED_ON_MATCH}
    matched.update({"status": "'open'", "resolved_at": "CAST(NULL AS TIMESTAMP)"})
    return (store.merge("gold_findings", findings, run_id=run_id)
            .when_matched_update(set=matched, condition="s.last_seen >= t.last_seen")
            .when_not_matched_insert_all()
            .when_not_matched_by_source_update(
                set={"status": "'resolved'", "resolved_at": ts, "run_id": sql_text(run_id)},
                condition=f"t.status = 'open' AND {same_cluster} AND t.last_seen <= {ts}")
            .execute())


def _counts_before_merge(store, findings: DataFrame, cluster_id: Optional[str], capture_time: datetime,
                        reclaimable: Sequence[str]) -> Tuple[Dict[str, int], Dict[str, int], int, int]:
    """Per check, per severity, reclaimable bytes (``reclaimable``: the catalogue's reclaimable checks) and
    how many open findings the MERGE will resolve (read from the table before it)."""
    f = findings.select("finding_id", "check_id", "severity", "bytes")
    per = f.groupBy("check_id", "severity").agg(F.count("*").alias("n"), F.sum("bytes").alias("bytes")).collect()
    by_check: Dict[str, int] = {}
    by_severity = {"critical": 0, "warning": 0, "info": 0}
    reclaimable_bytes = 0
    for r in per:
        by_check[r["check_id"]] = by_check.get(r["check_id"], 0) + r["n"]
        by_severity[r["severity"]] = by_severity.get(r["severity"], 0) + r["n"]
        if r["check_id"] in reclaimable:
            reclaimable_bytes += int(r["bytes"] or 0)
    resolved = 0
    if store.exists("gold_findings"):
        existing = store.read("gold_findings")
        cluster = F.col("cluster_id").isNull() if cluster_id is None else (F.col("cluster_id") == F.lit(cluster_id))
        open_before = existing.filter((F.col("status") == "open") & cluster).select("finding_id")
        resolved = (open_before.join(f, "finding_id", "left_anti")
                    .join(existing.filter(F.col("last_seen") <= F.lit(capture_time)).select("finding_id"), "finding_id")
                    .count())
    return dict(sorted(by_check.items())), by_severity, reclaimable_bytes, resolved


def run_summary_values(counts: MergeCounts, *, run_id: str, capture_id: str, cluster_id: Optional[str],
                       capture_time: datetime, started_at: datetime, bronze: Mapping[str, DataFrame],
                       stage_seconds: Mapping[str, float], finished_at: Optional[datetime] = None,
                       status: Optional[str] = None) -> Dict[str, object]:
    """The gold_run_summary row of one run (inputs counted from bronze: three small aggregates)."""
    files = {"ok": 0, "quarantined": 0}
    if "bronze_ingest_files" in bronze:
        for r in bronze["bronze_ingest_files"].groupBy("status").count().collect():
            files[r["status"]] = r["count"]
    metadata_records = bronze["bronze_metadata_records"].count() if "bronze_metadata_records" in bronze else 0
    replica_dirs = (bronze["bronze_dir_entries"].filter(F.col("entry_kind").isin("partition", "future", "delete", "stray"))
                    .count() if "bronze_dir_entries" in bronze else 0)
    row = {
        "run_id": run_id, "capture_id": capture_id, "cluster_id": cluster_id, "capture_time": capture_time,
        "started_at": started_at, "finished_at": finished_at or datetime.now(timezone.utc),
        "status": status or ("findings" if counts.open_findings else "ok"),
        "files_seen": sum(files.values()), "files_ok": files.get("ok", 0), "files_quarantined": files.get("quarantined", 0),
        "metadata_records": metadata_records, "replica_dirs": replica_dirs,
        "open_findings": counts.open_findings, "new_findings": counts.new_findings,
        "resolved_findings": counts.resolved_findings,
        "critical": counts.by_severity.get("critical", 0), "warning": counts.by_severity.get("warning", 0),
        "info": counts.by_severity.get("info", 0), "bytes_reclaimable": counts.bytes_reclaimable,
        "counts_by_check_json": json.dumps(counts.by_check, sort_keys=True),
        "stage_seconds_json": json.dumps(dict(stage_seconds), sort_keys=True),
    }
    return row


def run_summary_frame(spark, row: Mapping[str, object]) -> DataFrame:
    """One gold_run_summary row as a DataFrame (the table's schema, in order), a local relation: the quality stage
    queries it a dozen times, each of which ran a Python task over a ``createDataFrame`` row."""
    schema = RUN_SUMMARY.spark_schema()
    return local_frame(spark, [tuple(row[f.name] for f in schema.fields)], schema)


def write_findings(store, result, *, capture_id: str, run_id: str, capture_time: datetime) -> MergeCounts:
    """The one writer of gold_findings: MERGE this capture's findings and return the run's counts. "new" is
    read back from the table after the MERGE, so a re-run after a crash reports the same count."""
    if capture_time.tzinfo is None:
        capture_time = capture_time.replace(tzinfo=timezone.utc)
    by_check, by_severity, reclaimable_bytes, resolved = _counts_before_merge(
        store, result.findings, result.cluster_id, capture_time, result.catalogue.reclaimable())
    merge_findings(store, result.findings, result.cluster_id, run_id, capture_time)
    new = store.read("gold_findings").where((F.col("first_seen_capture") == capture_id)
                                            & (F.col("status") == "open")).count()
    return MergeCounts(sum(by_check.values()), new, resolved, by_severity, by_check, reclaimable_bytes)
