"""What the reports show, computed by Spark; only small aggregates and bounded row lists reach the driver.

- :func:`report_scope`: the findings a run reports on — open ones, plus the ones this run resolved.
- :func:`collect_report_data`: one grouped aggregation (check x severity x broker x status x new), the first
  ``max_rows_in_html`` findings in report order, the most recent producer-id blocks and the last runs of
  ``gold_run_summary`` — each bounded by ``conf/report.yaml``.
- :func:`ordered_findings`: the report order, shared by the HTML table and findings.csv.

Timestamps leave Spark as epoch microseconds (``unix_micros``) and are formatted in UTC here, so the driver's
local time zone never shifts them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .settings import ReportSettings

SEVERITIES = ("critical", "warning", "info")
SEVERITY_RANK = {"critical": 3, "warning": 2, "info": 1}
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

ROW_COLUMNS = ("finding_id", "check_id", "severity", "cluster_id", "broker_id", "broker_state", "log_dir",
               "dir_name", "topic_name", "topic_id", "partition", "bytes", "message", "evidence", "remediation",
               "first_seen_capture", "status")
TIME_COLUMNS = ("since", "first_seen", "last_seen", "resolved_at")


def to_utc(value: Any) -> Optional[datetime]:
    """A datetime (naive = UTC) or ISO-8601 text as an aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if not isinstance(value, datetime):
        raise TypeError(f"expected a datetime or ISO-8601 text, got {type(value).__name__}: {value!r}")
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def micros(value: Any) -> Optional[int]:
    moment = to_utc(value)
    if moment is None:
        return None
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def iso_from_micros(us: Optional[int]) -> Optional[str]:
    if us is None:
        return None
    return (EPOCH + timedelta(microseconds=int(us))).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso(value: Any) -> Optional[str]:
    return iso_from_micros(micros(value))


@dataclass
class RunInfo:
    run_id: str
    capture_id: Optional[str]
    cluster_id: Optional[str]
    capture_time: Optional[str]  # ISO-8601 UTC
    capture_us: Optional[int]
    started_at: Optional[str] = None
    finished_at: Optional[str] = None


@dataclass
class ReportData:
    run: RunInfo
    by_severity: Dict[str, int]
    by_check: Dict[str, Dict[str, Any]]
    by_broker: Dict[str, Dict[str, int]]
    reclaimable: Dict[str, Any]
    findings_open: int
    findings_new: int
    findings_resolved: int
    rows: List[Dict[str, Any]]
    rows_total: int
    pid_blocks: List[Dict[str, Any]] = field(default_factory=list)
    pid_blocks_total: int = 0
    trend: List[Dict[str, Any]] = field(default_factory=list)
    # per check and per broker across the trend's runs (same order as ``trend``): open findings and bytes
    # reclaimable, from gold_findings' first_seen / resolved_at
    trend_by_check: Dict[str, List[int]] = field(default_factory=dict)
    trend_by_broker: Dict[str, Dict[str, List[int]]] = field(default_factory=dict)

    @property
    def rows_truncated(self) -> bool:
        return self.rows_total > len(self.rows)


def run_info(run_summary: Dict[str, Any]) -> RunInfo:
    run_id = run_summary.get("run_id")
    if not run_id:
        raise ValueError(f"run_summary needs a run_id; got keys {sorted(run_summary)}")
    capture_us = micros(run_summary.get("capture_time"))
    return RunInfo(
        run_id=str(run_id),
        capture_id=run_summary.get("capture_id"),
        cluster_id=run_summary.get("cluster_id"),
        capture_time=iso_from_micros(capture_us),
        capture_us=capture_us,
        started_at=iso(run_summary.get("started_at")),
        finished_at=iso(run_summary.get("finished_at")),
    )


def report_scope(findings_df, run: RunInfo):
    """Open findings of the run's cluster, plus those resolved by this run (run_id or resolution time)."""
    from pyspark.sql import functions as F

    df = findings_df
    if run.cluster_id and "cluster_id" in df.columns:
        df = df.where(F.col("cluster_id") == F.lit(run.cluster_id))
    resolved_now = F.col("run_id") == F.lit(run.run_id)
    if run.capture_us is not None:
        resolved_now = resolved_now | (F.unix_micros("resolved_at") == F.lit(run.capture_us))
    keep = (F.col("status") == "open") | ((F.col("status") == "resolved") & F.coalesce(resolved_now, F.lit(False)))
    return df.where(keep)


def ordered_findings(scope_df):
    """Report order: open first, then severity (critical first), check, broker, log dir, dir, topic, partition."""
    from pyspark.sql import functions as F

    rank = F.coalesce(
        *[F.when(F.col("severity") == s, F.lit(r)) for s, r in SEVERITY_RANK.items()], F.lit(0))
    return scope_df.orderBy(
        F.when(F.col("status") == "open", 0).otherwise(1), rank.desc(),
        F.col("check_id").asc_nulls_last(), F.col("broker_id").asc_nulls_last(), F.col("log_dir").asc_nulls_last(),
        F.col("dir_name").asc_nulls_last(), F.col("topic_name").asc_nulls_last(), F.col("partition").asc_nulls_last(),
        F.col("finding_id").asc_nulls_last(),
    )


def _counts(scope_df, run: RunInfo, settings: ReportSettings) -> Dict[str, Any]:
    from pyspark.sql import functions as F

    is_new_capture = F.col("first_seen_capture") == F.lit(run.capture_id) if run.capture_id else F.lit(None)
    is_new_time = (F.unix_micros("first_seen") == F.lit(run.capture_us)) if run.capture_us is not None else F.lit(None)
    is_new = (F.col("status") == "open") & F.coalesce(is_new_capture, is_new_time, F.lit(False))
    grouped = (scope_df.groupBy("check_id", "severity", "broker_id", "status", is_new.alias("is_new"))
               .agg(F.count(F.lit(1)).alias("n"), F.sum(F.coalesce(F.col("bytes"), F.lit(0))).alias("bytes"))
               .collect())
    by_severity = {s: 0 for s in SEVERITIES}
    by_check: Dict[str, Dict[str, Any]] = {}
    by_broker: Dict[str, Dict[str, int]] = {}
    reclaim_broker: Dict[str, int] = {}
    reclaim_check: Dict[str, int] = {}
    opened = new = resolved = total = 0
    reclaimable = set(settings.reclaimable_checks)
    for g in grouped:
        n, nbytes = int(g["n"]), int(g["bytes"] or 0)
        total += n
        if g["status"] != "open":
            resolved += n
            continue
        opened += n
        new += n if g["is_new"] else 0
        sev = g["severity"] or "info"
        by_severity[sev] = by_severity.get(sev, 0) + n
        check = g["check_id"] or "UNKNOWN"
        entry = by_check.setdefault(check, {"count": 0, "severity": sev, "bytes": 0})
        entry["count"] += n
        entry["bytes"] += nbytes
        if SEVERITY_RANK.get(sev, 0) > SEVERITY_RANK.get(entry["severity"], 0):
            entry["severity"] = sev
        broker = "unknown" if g["broker_id"] is None else str(g["broker_id"])
        b = by_broker.setdefault(broker, {"critical": 0, "warning": 0, "info": 0, "total": 0})
        b[sev] = b.get(sev, 0) + n
        b["total"] += n
        if check in reclaimable and nbytes:
            reclaim_broker[broker] = reclaim_broker.get(broker, 0) + nbytes
            reclaim_check[check] = reclaim_check.get(check, 0) + nbytes
    return {
        "by_severity": by_severity,
        "by_check": dict(sorted(by_check.items(), key=lambda kv: (-kv[1]["count"], kv[0]))),
        "by_broker": dict(sorted(by_broker.items(), key=lambda kv: _broker_key(kv[0]))),
        "reclaimable": {
            "total": sum(reclaim_broker.values()),
            "by_broker": dict(sorted(reclaim_broker.items(), key=lambda kv: _broker_key(kv[0]))),
            "by_check": dict(sorted(reclaim_check.items())),
        },
        "open": opened, "new": new, "resolved": resolved, "total": total,
    }


def _broker_key(broker: str):
    return (0, int(broker), "") if broker.lstrip("-").isdigit() else (1, 0, broker)


def _bounded_rows(scope_df, limit: int) -> List[Dict[str, Any]]:
    from pyspark.sql import functions as F

    if limit <= 0:
        return []
    cols = [F.col(c) for c in ROW_COLUMNS if c in scope_df.columns]
    cols += [F.unix_micros(c).alias(f"{c}_us") for c in TIME_COLUMNS if c in scope_df.columns]
    rows = ordered_findings(scope_df).limit(limit).select(*cols).collect()
    out = []
    for r in rows:
        d = r.asDict()
        for c in TIME_COLUMNS:
            d[c] = iso_from_micros(d.pop(f"{c}_us", None))
        out.append(d)
    return out


# silver_producer_id_blocks names -> the timeline's names (a frame may already use the latter)
PID_ALIASES = {"block_start": "first_producer_id", "block_end": "last_producer_id", "offset": "seq",
               "allocated_at": "event_time"}


def normalize_pid_blocks(pid_df):
    """silver_producer_id_blocks (or any frame with broker_id, block_start, block_end[, source, offset,
    allocated_at]) as allocations only, with the timeline's column names."""
    from pyspark.sql import functions as F

    have = set(pid_df.columns)
    df = pid_df
    if "is_allocation" in have:  # pointers to the next block are not blocks
        df = df.where(F.coalesce(F.col("is_allocation"), F.lit(True)))
    for name, silver_name in PID_ALIASES.items():
        if name not in have and silver_name in have:
            df = df.withColumnRenamed(silver_name, name)
    have = set(df.columns)
    missing = {"broker_id", "block_start", "block_end"} - have
    if missing:
        raise ValueError(f"pid_blocks_df lacks columns {sorted(missing)} (or their silver names "
                         f"{[PID_ALIASES[m] for m in sorted(missing) if m in PID_ALIASES]}); it has {sorted(pid_df.columns)}")
    return df


def _pid_blocks(pid_df, limit: int):
    from pyspark.sql import functions as F

    if pid_df is None:
        return [], 0
    df = normalize_pid_blocks(pid_df)
    total = df.count()
    if limit <= 0:
        return [], total
    have = set(df.columns)
    order = []
    if "allocated_at" in have:
        order.append(F.col("allocated_at").desc_nulls_last())
    if "offset" in have:
        order.append(F.col("offset").desc_nulls_last())
    order += [F.col("block_start").desc(), F.col("broker_id").desc()]
    cols = [F.col("broker_id"), F.col("block_start"), F.col("block_end")]
    cols.append(F.col("source").cast("string") if "source" in have else F.lit(None).cast("string").alias("source"))
    cols.append(F.col("offset").cast("long") if "offset" in have else F.lit(None).cast("long").alias("offset"))
    cols.append(F.unix_micros("allocated_at").alias("allocated_us") if "allocated_at" in have
                else F.lit(None).cast("long").alias("allocated_us"))
    rows = df.orderBy(*order).limit(limit).select(*cols).collect()
    blocks = [{"broker_id": r["broker_id"], "block_start": r["block_start"], "block_end": r["block_end"],
               "source": r["source"], "offset": r["offset"], "allocated_at": iso_from_micros(r["allocated_us"])}
              for r in reversed(rows)]
    return blocks, total


def _trend(history_df, run: RunInfo, limit: int, current: Dict[str, Any]) -> List[Dict[str, Any]]:
    from pyspark.sql import functions as F

    points: List[Dict[str, Any]] = []
    if history_df is not None and limit > 0:
        df = history_df
        if run.cluster_id and "cluster_id" in df.columns:
            df = df.where(F.col("cluster_id") == F.lit(run.cluster_id))
        other = F.col("run_id") != F.lit(run.run_id)
        if run.capture_id and "capture_id" in df.columns:  # an earlier run of this capture is this point
            other = other & (F.col("capture_id") != F.lit(run.capture_id))
        rows = (df.where(other)
                .select("run_id", F.unix_micros("capture_time").alias("t"), "open_findings", "critical", "warning",
                        "info", "new_findings", "resolved_findings", "status")
                .orderBy(F.col("t").desc_nulls_last(), F.col("run_id").desc())
                .limit(max(0, limit - 1)).collect())
        for r in reversed(rows):
            points.append({"run_id": r["run_id"], "capture_time": iso_from_micros(r["t"]),
                           "open": int(r["open_findings"] or 0), "critical": int(r["critical"] or 0),
                           "warning": int(r["warning"] or 0), "info": int(r["info"] or 0),
                           "new": int(r["new_findings"] or 0), "resolved": int(r["resolved_findings"] or 0),
                           "status": r["status"], "current": False})
    points.append({**current, "current": True})
    points.sort(key=lambda p: (p["capture_time"] or "", p["current"]))
    return points


def _history_by_check_and_broker(findings_df, run: RunInfo, trend: List[Dict[str, Any]],
                                 reclaimable: Sequence[str]) -> Tuple[Dict[str, List[int]], Dict[str, Dict[str, List[int]]]]:
    """Open findings per check and per broker (and reclaimable bytes per broker) at each trend run's capture time.

    A finding was open at time T when it was first seen at or before T and not resolved at or before T. One
    Spark action; the result is at most (runs x (checks + brokers)) rows."""
    from pyspark.sql import functions as F

    from jobs.engine.local_frames import local_frame

    times = [(i, micros(p.get("capture_time"))) for i, p in enumerate(trend)]
    times = [(i, t) for i, t in times if t is not None]
    if not times or findings_df is None:
        return {}, {}
    df = findings_df
    if run.cluster_id and "cluster_id" in df.columns:
        df = df.where(F.col("cluster_id") == F.lit(run.cluster_id))
    runs = local_frame(df.sparkSession, times, "i int, t long")  # no Python task to read the trend's times
    f = df.select("check_id", F.col("broker_id").cast("string").alias("broker"),
                  F.coalesce(F.col("bytes"), F.lit(0)).alias("bytes"),
                  F.unix_micros("first_seen").alias("first_us"), F.unix_micros("resolved_at").alias("resolved_us"))
    open_at = f.crossJoin(F.broadcast(runs)).where(
        (F.col("first_us") <= F.col("t")) & (F.col("resolved_us").isNull() | (F.col("resolved_us") > F.col("t"))))
    reclaim = F.when(F.col("check_id").isin(list(reclaimable)), F.col("bytes")).otherwise(F.lit(0))
    by_check = open_at.groupBy("i", F.lit("check").alias("kind"), F.col("check_id").alias("key")).agg(
        F.count(F.lit(1)).alias("n"), F.lit(0).cast("long").alias("b"))
    by_broker = open_at.where(F.col("broker").isNotNull()).groupBy(
        "i", F.lit("broker").alias("kind"), F.col("broker").alias("key")).agg(
        F.count(F.lit(1)).alias("n"), F.sum(reclaim).cast("long").alias("b"))
    rows = by_check.unionByName(by_broker).collect()
    n = len(trend)
    checks: Dict[str, List[int]] = {}
    brokers: Dict[str, Dict[str, List[int]]] = {}
    for r in rows:
        if r["kind"] == "check":
            checks.setdefault(r["key"], [0] * n)[r["i"]] = int(r["n"])
        else:
            entry = brokers.setdefault(r["key"], {"open": [0] * n, "reclaimable": [0] * n})
            entry["open"][r["i"]] = int(r["n"])
            entry["reclaimable"][r["i"]] = int(r["b"] or 0)
    return (dict(sorted(checks.items())),
            dict(sorted(brokers.items(), key=lambda kv: _broker_key(kv[0]))))


def collect_report_data(findings_df, run_summary: Dict[str, Any], history_df, pid_blocks_df,
                        settings: ReportSettings, history_findings_df=None) -> ReportData:
    """The report of one run: counts and rows from ``findings_df``, the trend from ``history_df`` and
    ``history_findings_df`` (default ``findings_df``: the whole cluster's gold_findings)."""
    run = run_info(run_summary)
    scope = report_scope(findings_df, run)
    counts = _counts(scope, run, settings)
    rows = _bounded_rows(scope, settings.max_rows_in_html)
    blocks, blocks_total = _pid_blocks(pid_blocks_df, settings.max_pid_blocks)
    current = {"run_id": run.run_id, "capture_time": run.capture_time, "open": counts["open"],
               **counts["by_severity"], "new": counts["new"], "resolved": counts["resolved"],
               "status": "findings" if counts["open"] else "ok"}
    trend = _trend(history_df, run, settings.trend_runs, current)
    history = findings_df if history_findings_df is None else history_findings_df
    trend_by_check, trend_by_broker = _history_by_check_and_broker(history, run, trend,
                                                                   settings.reclaimable_checks)
    return ReportData(
        run=run, by_severity=counts["by_severity"], by_check=counts["by_check"], by_broker=counts["by_broker"],
        reclaimable=counts["reclaimable"], findings_open=counts["open"], findings_new=counts["new"],
        findings_resolved=counts["resolved"], rows=rows, rows_total=counts["total"],
        pid_blocks=blocks, pid_blocks_total=blocks_total, trend=trend,
        trend_by_check=trend_by_check, trend_by_broker=trend_by_broker,
    )
