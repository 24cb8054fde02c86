"""Gold tables: findings kept across runs by MERGE, per-run summaries, data-quality results."""
from __future__ import annotations

from .spec import TableSpec, cols

FINDINGS = TableSpec(
    name="gold_findings",
    layer="gold",
    description="One row per finding, kept across runs by MERGE on finding_id: open while seen, resolved when gone.",
    keys=("finding_id",),
    partition_by=(),
    slice_column="cluster_id",
    columns=cols(
        ("finding_id", "string", "sha256 of check id and natural keys: stable across runs"),
        ("check_id", "string", "stable check id, e.g. STALE_TOPIC_ID"),
        ("severity", "string", "critical, warning, info"),
        ("cluster_id", "string", ""),
        ("broker_id", "int", ""),
        ("broker_state", "string", "active, fenced, absent (at capture time)"),
        ("log_dir", "string", ""),
        ("dir_name", "string", ""),
        ("topic_name", "string", ""),
        ("topic_id", "string", ""),
        ("partition", "int", ""),
        ("bytes", "long", "bytes on disk concerned (reclaimable for leftover data)"),
        ("since", "timestamp", "since when the problem exists (delete time, registration, block allocation...)"),
        ("message", "string", "what is wrong, in one sentence"),
        ("evidence", "string", "JSON: records, offsets and files that prove it"),
        ("remediation", "string", "what to do"),
        ("first_seen_capture", "string", ""),
        ("first_seen", "timestamp", "capture time of the first capture showing it"),
        ("last_seen_capture", "string", ""),
        ("last_seen", "timestamp", ""),
        ("status", "string", "open, resolved"),
        ("resolved_at", "timestamp", "capture time of the first capture no longer showing it"),
        ("run_id", "string", "last run that touched the row"),
    ),
)

RUN_SUMMARY = TableSpec(
    name="gold_run_summary",
    layer="gold",
    description="One row per capture (its latest run: a re-run replaces it): inputs, counts by check and severity, "
                "bytes, durations.",
    keys=("run_id",),
    slice_column="run_id",
    columns=cols(
        ("run_id", "string", ""),
        ("capture_id", "string", ""),
        ("cluster_id", "string", ""),
        ("capture_time", "timestamp", ""),
        ("started_at", "timestamp", ""),
        ("finished_at", "timestamp", ""),
        ("status", "string", "ok, findings, incomplete (the capture has gaps: summary.json inputs), error"),
        ("files_seen", "long", ""),
        ("files_ok", "long", ""),
        ("files_quarantined", "long", ""),
        ("metadata_records", "long", ""),
        ("replica_dirs", "long", ""),
        ("open_findings", "long", ""),
        ("new_findings", "long", ""),
        ("resolved_findings", "long", ""),
        ("critical", "long", ""),
        ("warning", "long", ""),
        ("info", "long", ""),
        ("bytes_reclaimable", "long", ""),
        ("counts_by_check_json", "string", "JSON object check_id -> open count"),
        ("stage_seconds_json", "string", "JSON object stage -> seconds"),
    ),
)

DQ_RESULTS = TableSpec(
    name="gold_dq_results",
    layer="gold",
    description="Great Expectations results, one row per expectation per run.",
    keys=("run_id", "suite", "expectation", "column_name"),
    slice_column="run_id",
    columns=cols(
        ("run_id", "string", ""),
        ("capture_id", "string", ""),
        ("suite", "string", ""),
        ("table_name", "string", ""),
        ("expectation", "string", "expectation type"),
        ("column_name", "string", ""),
        ("kwargs_json", "string", ""),
        ("success", "boolean", ""),
        ("unexpected_count", "long", ""),
        ("element_count", "long", ""),
        ("unexpected_sample", "string", ""),
        ("evaluated_at", "timestamp", ""),
    ),
)

TABLES = (FINDINGS, RUN_SUMMARY, DQ_RESULTS)
