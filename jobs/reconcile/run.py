"""Entry point of the reconcile stage: bronze DataFrames in, silver tables and findings out.

Pure DataFrame transforms (no table I/O) so tests and notebooks can call it on any bronze::

    result = run_reconcile(spark, settings.catalogue, bronze, capture_id="c-1", run_id="r-1", capture_time=when)
    result.findings.show()
    write_findings(store, result, capture_id="c-1", run_id="r-1", capture_time=when)   # jobs.reconcile.gold

.. versionadded:: 0.1
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, Mapping, Optional, Sequence

from pyspark.sql import DataFrame, SparkSession

from jobs.driver_threads import map_at_once
from jobs.spark_session import session_actions_at_once, session_small_capture
from jobs.tables import bronze as bronze_tables
from jobs.tables import silver as silver_tables

from . import (
    checks_deletes,
    checks_leader_epochs,
    checks_log_dirs,
    checks_meta_properties,
    checks_metadata,
    checks_producer_ids,
    checks_reassignments,
    checks_replicas,
    checks_restart_hazards,
    checks_transactions,
    checks_truncation,
)
from . import sql_functions as F
from .catalogue import Catalogue
from .context import CheckContext
from .findings import assemble
from .frames import conform, conform_all, materialize, union_all
from .silver_build import (
    controller_view,
    silver_brokers,
    silver_log_dirs,
    silver_producer_ids,
    silver_replicas,
)
from .undecided import damaged_nodes_from_bronze, mark_undecided

# Every check function lives in one of these modules; each module's findings are computed by one action.
# One plan for all of them (~140 stages on a small capture) cost more: run interpreted, a stage's task carries the
# operator tree upstream of it, so its serialising and deserialising grew with the whole plan (docs/benchmarks.md).
# The modules are independent of each other: ``actions_at_once`` of them are built and run at a time.
CHECK_MODULES = (checks_replicas, checks_log_dirs, checks_deletes, checks_producer_ids, checks_metadata,
                 checks_restart_hazards, checks_transactions, checks_meta_properties, checks_reassignments,
                 checks_leader_epochs, checks_truncation)


@dataclass
class ReconcileResult:
    silver: Dict[str, DataFrame]   # silver table name -> DataFrame with the spec's columns
    findings: DataFrame            # gold_findings columns, status open, first_seen = last_seen = capture
    cluster_id: Optional[str]
    mode: str                      # kraft, migration, zookeeper, none
    catalogue: Catalogue


def _with_run(df: DataFrame, capture_id: str, run_id: str, cluster_id: Optional[str]) -> DataFrame:
    return (df.withColumn("capture_id", F.lit(capture_id)).withColumn("run_id", F.lit(run_id))
            .withColumn("cluster_id", F.lit(cluster_id).cast("string")))


def _in_memory(tables: Mapping[str, DataFrame], actions_at_once: int) -> Dict[str, DataFrame]:
    """A small capture's bronze tables, each computed once. Why: the checks read them from their Parquet files in
    every plan otherwise (a devsample reconcile: 67 scans, bronze_log_dirs alone 25), each scan planned again
    (file index, partition pruning, pushed filters) and read again, for a few hundred rows (docs/benchmarks.md,
    session 26: within the VM's noise alone, part of a ~3.5 s gain with the bronze suites run alongside). A large
    capture's tables stay where they are: held in memory they would add to the driver's and executors' peak."""
    names = sorted(tables)
    return dict(zip(names, map_at_once(lambda name: materialize(tables[name]), names, actions_at_once), strict=True))


def run_reconcile(spark: SparkSession, catalogue: Catalogue, bronze: Mapping[str, DataFrame], capture_id: str,
                  run_id: str, capture_time: datetime, actions_at_once: Optional[int] = None,
                  damaged_inputs: Optional[Sequence[Mapping[str, Any]]] = None) -> ReconcileResult:
    """Reconcile one capture.

    :param catalogue: the checks and their thresholds (conf/checks.yaml; ``Settings.catalogue``).
    :param bronze: bronze table name -> DataFrame; missing tables count as empty.
    :param capture_time: when the capture was taken (ages of deletes are measured to it).
    :param actions_at_once: independent actions (controller frames, silver tables, check modules) run at a
        time from driver threads; the findings are the same. Default: what ingest chose with the capture's
        profile (:func:`jobs.spark_session.session_actions_at_once`).
    :param damaged_inputs: the capture's damaged inputs with their nodes (``file``, ``node``, ``error_kind``),
        as ingest counted them; None: found in bronze_ingest_files. Their nodes' absence-based findings are
        undecided (:mod:`jobs.reconcile.undecided`).
    :return: silver DataFrames and the findings of this capture.
    """
    if capture_time.tzinfo is None:
        capture_time = capture_time.replace(tzinfo=timezone.utc)
    if actions_at_once is None:
        actions_at_once = session_actions_at_once(spark)
    b = conform_all(spark, bronze, bronze_tables.TABLES)
    if session_small_capture(spark):
        b.update(_in_memory({name: b[name] for name in bronze if name in b}, actions_at_once))
    view = controller_view(spark, b, catalogue.thresholds, actions_at_once)
    cluster = view.cluster_id

    def replica_chain():
        brokers = materialize(silver_brokers(view, b["bronze_log_dirs"]))
        log_dirs = materialize(silver_log_dirs(view, b["bronze_log_dirs"], b["bronze_dir_entries"], brokers,
                                               cluster))
        return brokers, log_dirs, materialize(silver_replicas(view, b["bronze_dir_entries"], brokers, log_dirs))

    def producer_ids():
        return materialize(silver_producer_ids(view, b["bronze_producer_states"], view.pid_blocks,
                                               catalogue.thresholds.producer_id_block_size))

    (brokers, log_dirs, replicas), in_use = map_at_once(lambda build: build(), [replica_chain, producer_ids],
                                                        actions_at_once)
    specs = {t.name: t for t in silver_tables.TABLES}
    silver = {
        "silver_brokers": brokers,
        "silver_topic_incarnations": view.incarnations,
        "silver_partition_assignments": view.assignments,
        "silver_producer_id_blocks": view.pid_blocks,
        "silver_log_dirs": log_dirs,
        "silver_node_registrations": view.registrations,
        "silver_replicas": replicas,
        "silver_producer_ids_in_use": in_use,
    }
    ctx = CheckContext(spark, catalogue, capture_id, run_id, capture_time, cluster, view, b, silver, replicas,
                       log_dirs)

    def module_rows(module) -> Optional[DataFrame]:
        rows = module.all_checks(ctx)
        return materialize(union_all(rows)) if rows else None

    parts = [p for p in map_at_once(module_rows, CHECK_MODULES, actions_at_once) if p is not None]
    if damaged_inputs is None:
        damaged_inputs = damaged_nodes_from_bronze(b["bronze_ingest_files"], b["bronze_log_dirs"])
    findings = materialize(mark_undecided(assemble(parts, catalogue, brokers, cluster, capture_id, run_id,
                                                   capture_time), catalogue, damaged_inputs))
    out = {name: conform(_with_run(df, capture_id, run_id, cluster), specs[name]) for name, df in silver.items()}
    return ReconcileResult(out, findings, cluster, view.mode, catalogue)
