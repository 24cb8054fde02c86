"""The nightly pipeline as one function: ingest -> reconcile -> data quality -> report.

``jobs/nightly.py`` parses the command line, builds the typed :class:`jobs.settings.Settings` once and maps the
outcome to an exit code; this module only wires the stages (each stage's logic lives in its own package, and
each is handed only the settings sections it reads) and keeps the per-stage timings.
"""
from __future__ import annotations

import hashlib
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

from pyspark.sql import functions as F

from jobs.engine.job_labels import label_jobs, stage_label
from jobs.settings import Settings
from jobs.stage_log import StageReport, StageTimer, get_logger

SILVER_AND_GOLD_SLICE = "capture_id"


@dataclass
class PipelineResult:
    run_id: str
    capture_id: str
    capture_time: datetime
    counts_by_severity: Dict[str, int]
    report_html: Optional[str]
    summary: dict = field(default_factory=dict)
    stage_seconds: Dict[str, float] = field(default_factory=dict)
    exit_code: int = 0  # as summary.json says (0, 10, or 3 for an incomplete capture)


def derive_capture_id(captures: Sequence[str], capture_time: Optional[datetime]) -> str:
    """Stable for a re-run of the same capture (same roots, same time): re-ingesting replaces its slice."""
    roots = "|".join(sorted(c.rstrip("/") for c in captures))
    when = capture_time.astimezone(timezone.utc).isoformat() if capture_time else ""
    digest = hashlib.sha256(f"{roots}#{when}".encode()).hexdigest()[:16]
    return f"cap-{digest}"


def _late_gaps(store, result, run_id: str, capture_id: str, files_seen: int, min_ratio: float) -> List[dict]:
    """Input gaps only reconcile can tell (two small aggregates): registered brokers the capture lacks, and a
    capture that shrank against the previous run of the same cluster."""
    from jobs.run_outcome import gaps_after_reconcile

    missing = [r["broker_id"] for r in result.silver["silver_brokers"].where(
        F.col("state").isin("active", "fenced") & ~F.col("captured") & (F.col("role") != "controller")
    ).select("broker_id").collect()]
    previous = [] if not store.exists("gold_run_summary") else (store.read("gold_run_summary")
                .where(F.col("cluster_id").eqNullSafe(result.cluster_id) & (F.col("capture_id") != capture_id)
                       & (F.col("run_id") != run_id) & (F.col("status") != "error"))
                .orderBy(F.col("capture_time").desc(), F.col("finished_at").desc()).select("files_seen").limit(1)
                .collect())
    return gaps_after_reconcile(missing, files_seen, previous[0]["files_seen"] if previous else None, min_ratio)


def _unreadable_record_gaps(bronze) -> List[dict]:
    """Records of the authoritative metadata sequence no schema could read (a Kafka newer than kafka-recon),
    grouped by type and version (one small aggregate over the decode errors only)."""
    from jobs.run_outcome import UNREADABLE_KINDS, gaps_unreadable_metadata_records
    from udfs.message_spec import load_schema

    records = bronze.get("bronze_metadata_records")
    if records is None:
        return []
    groups = (records.where(F.col("error_kind").isin(*UNREADABLE_KINDS)
                            & F.coalesce(F.col("in_authoritative_sequence"), F.lit(False)))
              .groupBy("record_type", "api_key", "version", "error_kind", "is_control")
              .agg(F.count(F.lit(1)).alias("count"), F.min("offset").alias("first_offset")).collect())
    return gaps_unreadable_metadata_records([g.asDict() for g in groups],
                                            load_schema("metadata_records").upstream_release)


@contextmanager
def _stage(timer: StageTimer, spark, name: str) -> Iterator[StageReport]:
    """``timer.stage(name)``, its Spark jobs named ``kafka-recon <name>`` (jobs/engine/job_labels.py)."""
    with timer.stage(name) as report:
        label_jobs(spark, stage_label(name))
        yield report


def sweep_in_background(store, max_age_hours: float) -> threading.Thread:
    """Delete staging folders killed runs left (``storage.staging_max_age_hours``), on a thread: on an object
    store it is a listing per table, which need not delay the ingest. Logged when something was deleted; a
    failure is a warning, never the run's outcome."""

    def sweep() -> None:
        try:
            swept = store.sweep_staging(max_age_hours)
        except Exception as exc:  # housekeeping: the run's tables are not at stake
            get_logger().warning("stage=storage staging_sweep=failed reason=%s", str(exc).splitlines()[0][:200])
            return
        if swept:
            get_logger().info("stage=storage stale_staging_folders_deleted=%d tables=%s",
                              sum(len(v) for v in swept.values()), ",".join(sorted(swept)))

    thread = threading.Thread(target=sweep, name="kafka-recon-staging-sweep", daemon=True)
    thread.start()
    return thread


def run_pipeline(settings: Settings, captures: List[str], out_dir: str, capture_time: Optional[datetime], run_id: str,
                 fail_on: str, run_quality: bool = True, timer: Optional[StageTimer] = None,
                 spark=None, units=None, allow_partial: bool = False) -> PipelineResult:
    """Raises :class:`jobs.run_outcome.IncompleteCapture` after ingest when the capture has no log dir or no
    controller view (unless ``allow_partial``); later gaps end the run with status ``incomplete``."""
    from jobs.ingest.stage import run_ingest
    from jobs.reconcile.gold import findings_as_of, run_summary_frame, run_summary_values, write_findings
    from jobs.reconcile.run import run_reconcile
    from jobs.report.writer import write_reports
    from jobs.spark_session import get_spark_for_capture, session_small_capture
    from jobs.tables.delta_store import DeltaStore
    from jobs.tables.parallel_writes import write_each

    timer = timer or StageTimer()
    started_at = datetime.now(timezone.utc)
    if run_quality and settings.quality.enabled:
        from jobs.quality.gx_context import preload_in_background

        preload_in_background()  # GX's import overlaps the session's start and the ingest
    spark = spark or get_spark_for_capture(settings.spark, units)
    store = DeltaStore.from_settings(spark, settings.storage)
    evolved = store.prepare_tables()  # a table the job cannot use stops the run before anything is committed
    if evolved:
        get_logger().info("stage=tables columns_added=%s", json.dumps(evolved, sort_keys=True))
    sweeper = sweep_in_background(store, settings.storage.staging_max_age_hours)
    capture_id = derive_capture_id(captures, capture_time)
    out = Path(out_dir)

    from jobs.run_outcome import IncompleteCapture, gaps_after_ingest, gaps_from_damaged_inputs

    with _stage(timer, spark, "ingest") as st:
        ingest = run_ingest(spark, settings.ingest, store, captures, capture_id, run_id, capture_time, units=units,
                            execution=settings.spark)
        files = ingest.files_summary()
        st.rows = files["seen"]
        gaps = gaps_after_ingest(ingest.rows_emitted, ingest.has_metadata_log)
        if gaps and not allow_partial:
            ingest.release()
            raise IncompleteCapture(gaps)
        damaged = gaps_from_damaged_inputs(ingest.damaged_inputs)  # the run goes on: the report names them
    when = ingest.capture_time or capture_time or started_at

    def this_capture(names):
        return {name: store.read(name).where(F.col("capture_id") == capture_id) for name in names}

    bronze = this_capture(ingest.tables)
    quality, validated_early = None, ()
    if run_quality and settings.quality.enabled:
        from jobs.quality.runner import QualityRun

        quality = QualityRun(spark, settings.quality, run_id, capture_id, docs_dir=out / "dq")
        if session_small_capture(spark):  # bronze is complete: validated while reconcile runs (one core idles)
            validated_early = tuple(bronze)
            quality.validate_in_background(bronze, label=stage_label("quality"))
            get_logger().info("stage=quality validated_during=reconcile tables=%d", len(validated_early))

    with _stage(timer, spark, "reconcile") as st:
        result = run_reconcile(spark, settings.catalogue, bronze, capture_id, run_id, when,
                               damaged_inputs=ingest.damaged_inputs)
        write_each(result.silver, lambda name: store.replace_slice(name, result.silver[name],
                                                                   slice={"capture_id": capture_id}),
                   store.write_parallelism)
        counts = write_findings(store, result, capture_id=capture_id, run_id=run_id, capture_time=when)
        st.rows = counts.open_findings
        late = _late_gaps(store, result, run_id, capture_id, files["seen"], settings.run.min_capture_ratio)
        late += _unreadable_record_gaps(bronze)
        status = "incomplete" if (late or damaged) and not allow_partial else None
        gaps = gaps + damaged + late
    ingest.release()

    # the run's gold_run_summary row, validated by the quality stage and written after it with the final timings
    summary_row = run_summary_values(counts, run_id=run_id, capture_id=capture_id, cluster_id=result.cluster_id,
                                     capture_time=when, started_at=started_at, bronze=bronze,
                                     stage_seconds=timer.seconds, status=status)
    dq = None
    if quality is not None:
        with _stage(timer, spark, "quality") as st:
            from jobs.quality.runner import dq_results_frame

            tables = this_capture(n for n in (*ingest.tables, *result.silver) if n not in validated_early)
            tables["gold_findings"] = store.read("gold_findings").where(F.col("last_seen_capture") == capture_id)
            tables["gold_run_summary"] = run_summary_frame(spark, summary_row)
            dq = quality.finish(tables, docs_in_background=True)
            store.replace_slice("gold_dq_results", dq_results_frame(spark, dq.rows), slice={"run_id": run_id})
            st.rows = len(dq.rows)

    findings = store.read("gold_findings")
    summary_row.update(finished_at=datetime.now(timezone.utc), stage_seconds_json=json.dumps(timer.seconds,
                                                                                            sort_keys=True))
    # one row per capture: a re-run of a capture replaces its row (the trend has one point per capture)
    store.replace_slice("gold_run_summary", run_summary_frame(spark, summary_row), slice={"capture_id": capture_id},
                        run_id=run_id)

    with _stage(timer, spark, "report"):
        paths = write_reports(spark, settings.report, settings.catalogue, out,
                              findings_as_of(store, result.findings, result.cluster_id, when),
                              {**summary_row, "fail_on": fail_on, "input_gaps": gaps, "allow_partial": allow_partial},
                              history_df=store.read("gold_run_summary"),
                              pid_blocks_df=store.read("silver_producer_id_blocks")
                              .where(F.col("capture_id") == capture_id),
                              dq_summary=dq.summary if dq else None, fail_on=fail_on,
                              history_findings_df=findings.where(F.col("cluster_id").eqNullSafe(result.cluster_id)),
                              log_dirs_df=store.read("bronze_log_dirs").where(F.col("capture_id") == capture_id))
        if dq is not None:
            dq.wait_for_docs()  # built while the rows and the report were written; the report links to it
    sweeper.join()
    return PipelineResult(run_id=run_id, capture_id=capture_id, capture_time=when,
                          counts_by_severity=paths.counts_by_severity, report_html=str(paths.report_html),
                          summary=paths.summary, stage_seconds=dict(timer.seconds),
                          exit_code=int(paths.summary["exit_code"]))
