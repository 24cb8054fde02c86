"""Gold writes of the reconcile stage: findings kept across runs by MERGE, one run-summary row per capture.

gold_findings is a function of the *set* of captures a cluster has had, never of the order they were run in:
for a finding seen in captures S of a cluster whose captures are K,

- ``first_seen`` = min(S), ``last_seen`` = max(S) (texts, evidence and bytes from that last capture);
- open while max(S) is the cluster's newest capture; otherwise resolved at the first capture of K after max(S).

Each run adds one capture T to K with one MERGE on finding_id (``n`` = the first known capture after T, or
none when T is the newest):

- matched, T >= last_seen   -> refresh from T, last_seen = T, resolved at ``n`` (open when there is none);
- matched, T <  first_seen  -> only first_seen moves back to T (a backfill of an older capture);
- not matched (new)         -> inserted with first_seen = last_seen = T, resolved at ``n``;
- not matched by source, same cluster, last_seen < T, open or resolved after T -> resolved at T.

So a re-run of a capture changes nothing, an older capture after a newer one fills in history (first_seen,
resolved_at) without reopening what the newer capture resolved, and any order of the same captures ends in
the table the capture-time order gives. K is read from gold_run_summary and gold_findings' own times
(:func:`known_capture_times`); a run that died between its MERGE and its summary row is complete again once
it is re-run.

The run's counts describe its capture, whatever the run order: open = the capture's findings, new = findings
first seen in it, resolved = findings resolved at it. The report reads the same rows (:func:`findings_as_of`),
so summary.json and gold_run_summary agree.

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
from jobs.tables.gold import FINDINGS, RUN_SUMMARY

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


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _sql_ts(value: Optional[datetime]) -> str:
    if value is None:
        return "CAST(NULL AS TIMESTAMP)"
    return f"TIMESTAMP {sql_text(_utc(value).strftime('%Y-%m-%d %H:%M:%S.%f') + '+00:00')}"


def _same_cluster(cluster_id: Optional[str], prefix: str = "") -> str:
    column = f"{prefix}cluster_id"
    return f"{column} IS NULL" if cluster_id is None else f"{column} = {sql_text(cluster_id)}"


def known_capture_times(store, cluster_id: Optional[str]) -> Tuple[datetime, ...]:
    """Capture times the cluster already had, sorted: gold_run_summary's rows plus every time gold_findings
    holds for the cluster (first_seen, last_seen, resolved_at: a capture whose run died before its summary row
    still counts when it left a trace in the findings). One small aggregate query per table."""
    times = set()
    where = _same_cluster(cluster_id)
    if store.exists("gold_run_summary"):
        times |= {r[0] for r in store.read("gold_run_summary").where(where).select("capture_time").distinct()
                  .collect() if r[0] is not None}
    if store.exists("gold_findings"):
        cluster = store.read("gold_findings").where(where)
        stamps = cluster.select(F.explode(F.array("first_seen", "last_seen", "resolved_at")).alias("t"))
        times |= {r[0] for r in stamps.where("t IS NOT NULL").distinct().collect()}
    return tuple(sorted(_utc(t) for t in times))


def next_capture_after(times: Sequence[datetime], capture_time: datetime) -> Optional[datetime]:
    """The first of ``times`` strictly after ``capture_time`` (None: ``capture_time`` is the newest)."""
    later = [t for t in times if _utc(t) > _utc(capture_time)]
    return min(later) if later else None


def merge_findings(store, findings: DataFrame, cluster_id: Optional[str], run_id: str, capture_time: datetime,
                   next_capture: Optional[datetime] = None) -> int:
    """MERGE this capture's findings into gold_findings (clauses: the module docstring); returns the version.

    :param next_capture: the cluster's first known capture after ``capture_time`` (None: this is the newest).
    """
    ts, after = _sql_ts(capture_time), _sql_ts(next_capture)
    status = "'open'" if next_capture is None else "'resolved'"
    earlier = "s.first_seen < t.first_seen"
    refreshed = {c: f"s.{c}" for c in UPDATED_ON_MATCH}
    refreshed.update({"status": status, "resolved_at": after,
                      "first_seen": f"CASE WHEN {earlier} THEN s.first_seen ELSE t.first_seen END",
                      "first_seen_capture": f"CASE WHEN {earlier} THEN s.first_seen_capture ELSE t.first_seen_capture END"})
    inserted = {c: f"s.{c}" for c in FINDINGS.column_names}
    inserted.update({"status": status, "resolved_at": after})
    return (store.merge("gold_findings", findings, run_id=run_id)
            .when_matched_update(set=refreshed, condition="s.last_seen >= t.last_seen")
            .when_matched_update(set={"first_seen": "s.first_seen", "first_seen_capture": "s.first_seen_capture",
                                      "run_id": "s.run_id"}, condition=earlier)
            .when_not_matched_insert(values=inserted)
            .when_not_matched_by_source_update(
                set={"status": "'resolved'", "resolved_at": ts, "run_id": sql_text(run_id)},
                condition=f"{_same_cluster(cluster_id, 't.')} AND t.last_seen < {ts} "
                          f"AND (t.resolved_at IS NULL OR t.resolved_at > {ts})")
            .execute())


def _capture_counts(findings: DataFrame, reclaimable: Sequence[str]) -> Tuple[Dict[str, int], Dict[str, int], int]:
    """Per check, per severity and reclaimable bytes (``reclaimable``: the catalogue's reclaimable checks) of
    this capture's findings."""
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
    return dict(sorted(by_check.items())), by_severity, reclaimable_bytes


def findings_as_of(store, findings: DataFrame, cluster_id: Optional[str], capture_time: datetime) -> DataFrame:
    """gold_findings as the capture at ``capture_time`` saw them, in the table's columns: each of its findings
    (``findings``, its own texts) open, with the first_seen the table knows; plus the cluster's findings
    resolved at this capture. What the report of a run shows and counts, so a backfill of an old capture
    reports that capture, not the cluster's current state."""
    gold = store.read("gold_findings")
    first = gold.select("finding_id", F.col("first_seen").alias("_fs"), F.col("first_seen_capture").alias("_fsc"))
    seen = (findings.join(first, "finding_id", "left")
            .withColumn("first_seen", F.coalesce(F.col("_fs"), F.col("first_seen")))
            .withColumn("first_seen_capture", F.coalesce(F.col("_fsc"), F.col("first_seen_capture")))
            .selectExpr(*[f"`{c}`" for c in FINDINGS.column_names]))
    resolved = gold.where(f"{_same_cluster(cluster_id)} AND resolved_at = {_sql_ts(capture_time)}")
    return seen.unionByName(resolved.join(findings.select("finding_id"), "finding_id", "left_anti")
                            .selectExpr(*[f"`{c}`" for c in FINDINGS.column_names]))


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
    """The one writer of gold_findings: MERGE this capture's findings and return the capture's counts. "new"
    and "resolved" are read back from the table after the MERGE (first seen in / resolved at this capture),
    so a re-run, a crash and re-run, or a backfill report what the capture-time order reports."""
    capture_time = _utc(capture_time)
    cluster_id = result.cluster_id
    by_check, by_severity, reclaimable_bytes = _capture_counts(result.findings, result.catalogue.reclaimable())
    after = next_capture_after(known_capture_times(store, cluster_id), capture_time)
    merge_findings(store, result.findings, cluster_id, run_id, capture_time, next_capture=after)
    ts = _sql_ts(capture_time)
    row = (store.read("gold_findings").where(_same_cluster(cluster_id))
           .selectExpr(f"count_if(first_seen_capture = {sql_text(capture_id)}) AS new",
                       f"count_if(resolved_at = {ts}) AS resolved").first())
    return MergeCounts(sum(by_check.values()), int(row["new"] or 0), int(row["resolved"] or 0), by_severity,
                       by_check, reclaimable_bytes)
