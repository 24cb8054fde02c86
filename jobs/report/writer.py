"""The report stage: findings + run summary + history -> findings.csv, report.md, report.html, summary.json.

Example::

    paths = write_reports(spark, settings.report, settings.catalogue, "/reports/2026-11-22", findings_df,
                          run_summary, history_df=spark.read...gold_run_summary,
                          pid_blocks_df=silver_pid_blocks_df, dq_summary=dq.summary)
    sys.exit(paths.exit_code)

Each file is written to a hidden temp name and renamed into place, and summary.json is written last, so a
dashboard polling the folder never reads a half-written file or a summary whose report is missing.
"""
from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from .aggregates import collect_report_data, report_scope, run_info
from .csv_out import csv_records, write_csv
from .html_page import render_html
from .markdown import render_markdown
from .remediation import broker_path, build_plan
from .settings import ReportSettings
from .summary import build_summary

if TYPE_CHECKING:
    from jobs.reconcile.catalogue import Catalogue

FILE_NAMES = {"summary_json": "summary.json", "findings_csv": "findings.csv", "report_md": "report.md",
              "report_html": "report.html"}


@dataclass(frozen=True)
class ReportPaths:
    """Where the reports went and what they say (exit code included)."""

    out_dir: Path
    summary_json: Path
    findings_csv: Path
    report_md: Path
    report_html: Path
    data_docs: Optional[Path]
    status: str
    exit_code: int
    counts_by_severity: Dict[str, int] = field(default_factory=dict)
    summary: Dict[str, Any] = field(default_factory=dict)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _docs_link(out_dir: Path, dq_summary: Optional[Dict[str, Any]]) -> Optional[str]:
    """The Data Docs index relative to out_dir (links must stay inside the report folder), else None."""
    index = (dq_summary or {}).get("data_docs_index")
    if not index:
        return None
    try:
        rel = Path(index).resolve().relative_to(out_dir.resolve())
    except ValueError:
        return None
    return rel.as_posix()


def log_dir_paths(log_dirs_df, limit: int = 100_000) -> Dict[Tuple[str, str], str]:
    """(broker id, log-dir name) -> log dir as captured, from bronze_log_dirs (one row per log dir: small)."""
    from pyspark.sql import functions as F

    if log_dirs_df is None:
        return {}
    rows = (log_dirs_df.where(F.col("broker_id").isNotNull() & F.col("log_dir").isNotNull())
            .select("broker_id", "log_dir").distinct().limit(limit).collect())
    out: Dict[Tuple[str, str], str] = {}
    for r in rows:
        path = broker_path(r["log_dir"]) or ""
        out[(str(r["broker_id"]), posixpath.basename(path.rstrip("/")))] = r["log_dir"]
    return out


def write_reports(spark, report: ReportSettings, catalogue: Catalogue, out_dir, findings_df,
                  run_summary: Dict[str, Any], history_df=None, pid_blocks_df=None,
                  dq_summary: Optional[Dict[str, Any]] = None, fail_on: Optional[str] = None,
                  log_dirs_df=None, history_findings_df=None) -> ReportPaths:
    """Write the four report files into ``out_dir``.

    :param report: the ``report`` section (``Settings.report``: its fail_on is run.fail_on).
    :param catalogue: the run's check catalogue: reclaimable checks, and the explanations check ids link to.
    :param findings_df: ``gold_findings`` (any superset: rows are scoped to the run's cluster, open ones plus
        the ones this run resolved); the pipeline hands the capture's view (``jobs.reconcile.gold.findings_as_of``).
    :param history_findings_df: the cluster's ``gold_findings`` for the per-check and per-broker trend (None:
        ``findings_df``).
    :param run_summary: this run's ``gold_run_summary`` row as a dict (run_id required; capture_time etc. as
        datetimes — naive means UTC — or ISO text); ``stage_seconds_json`` or ``stages`` for timings.
    :param history_df: ``gold_run_summary`` for the trend (None: only this run).
    :param pid_blocks_df: producer-id blocks: broker_id, block_start, block_end [, source, offset, allocated_at].
    :param dq_summary: ``DqRun.summary`` from :func:`jobs.quality.run_quality`, or None when DQ did not run.
    :param fail_on: info | warning | critical | never (default: run_summary["fail_on"], then ``report.fail_on``).
    :param log_dirs_df: this capture's ``bronze_log_dirs`` (broker_id, log_dir): gives the plan the broker's own
        log-dir paths when findings name a log dir by its basename (None: commands relative to the log dir).
    :return: :class:`ReportPaths`, including ``exit_code`` (0 / 10 / 1) and ``summary`` (the summary.json dict).
    """
    del spark  # the DataFrames carry their session; kept for a uniform stage signature
    chosen = fail_on or run_summary.get("fail_on")
    settings = replace(report, fail_on=chosen) if chosen else report
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    generated_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    data = collect_report_data(findings_df, run_summary, history_df, pid_blocks_df, settings,
                               history_findings_df=history_findings_df)
    links: Dict[str, Optional[str]] = dict(FILE_NAMES)
    links["data_docs"] = _docs_link(out, dq_summary)
    summary = build_summary(data, run_summary, settings.fail_on, dq_summary, links, generated_at)
    for point in data.trend:
        if point.get("current"):
            point["status"] = summary["status"]
    plans = build_plan(data.rows, settings, data.run.capture_id or data.run.run_id, log_dir_paths(log_dirs_df))

    csv_path = out / FILE_NAMES["findings_csv"]
    tmp = csv_path.with_name(f".{csv_path.name}.tmp")
    write_csv(tmp, csv_records(report_scope(findings_df, run_info(run_summary))))
    os.replace(tmp, csv_path)
    _atomic_write(out / FILE_NAMES["report_md"], render_markdown(data, summary, plans, settings, dq_summary, links))
    _atomic_write(out / FILE_NAMES["report_html"],
                  render_html(data, summary, plans, settings, dq_summary, links, catalogue))
    _atomic_write(out / FILE_NAMES["summary_json"], json.dumps(summary, indent=2, sort_keys=False) + "\n")

    return ReportPaths(
        out_dir=out, summary_json=out / FILE_NAMES["summary_json"], findings_csv=csv_path,
        report_md=out / FILE_NAMES["report_md"], report_html=out / FILE_NAMES["report_html"],
        data_docs=(out / links["data_docs"]) if links["data_docs"] else None,
        status=summary["status"], exit_code=summary["exit_code"],
        counts_by_severity=dict(data.by_severity), summary=summary,
    )
