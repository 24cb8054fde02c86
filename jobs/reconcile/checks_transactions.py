"""Transactions: HANGING_TRANSACTION (KIP-664), one finding per partition and producer.

A replica's newest producer-state snapshot (``<offset>.snapshot``) lists each producer's ongoing transaction
(``CurrentTxnFirstOffset`` >= 0). The transaction hangs when its producer last wrote longer ago than
``transaction.max.timeout.ms`` (the coordinator would have aborted it by then) and no replica of the partition
holds a later transaction marker from that producer. Markers come from the collector's segment summaries, which
read every segment from the one holding the snapshot's offset on; a replica whose summaries stopped early
(``tail_scanned`` false) cannot prove a hang, so the partition is not judged.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window

from . import sql_functions as F
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import human_ms, iso


def _replicas(ctx: CheckContext) -> DataFrame:
    return ctx.replicas.filter(F.col("entry_kind") == "partition").select(
        "broker_id", "log_dir", F.col("dir_name").alias("entry_name"), "topic_name", "topic_id", "partition",
        "tail_scanned")


def hanging_transactions(ctx: CheckContext) -> DataFrame:
    states = ctx.bronze["bronze_producer_states"]
    newest = Window.partitionBy("log_dir", "entry_name")
    snapshots = (states.filter(F.col("source_kind") == "producer_snapshot")
                 .withColumn("_newest", F.max("snapshot_offset").over(newest))
                 .filter((F.col("snapshot_offset") == F.col("_newest")) & (F.col("current_txn_first_offset") >= 0))
                 .select("log_dir", "entry_name", "producer_id", "producer_epoch", "timestamp", "snapshot_offset",
                         F.col("current_txn_first_offset").alias("first_offset"), "source_file"))
    replicas = _replicas(ctx)
    ongoing = snapshots.join(replicas.withColumnRenamed("topic_id", "_tid"), ["log_dir", "entry_name"])
    markers = (states.filter(F.col("source_kind") == "txn_marker")
               .select("log_dir", "entry_name", "producer_id", "last_offset")
               .join(replicas.select("log_dir", "entry_name", "topic_name", "partition"), ["log_dir", "entry_name"])
               .groupBy("topic_name", "partition", "producer_id")
               .agg(F.max("last_offset").alias("_marker_offset")))
    limit = ctx.thresholds.transaction_max_timeout_ms
    aged = (ongoing.join(markers, ["topic_name", "partition", "producer_id"], "left")
            .filter(F.col("_marker_offset").isNull() | (F.col("_marker_offset") < F.col("first_offset"))))
    grouped = (aged.groupBy("topic_name", "partition", "producer_id", "first_offset")
               .agg(F.first("_tid", ignorenulls=True).alias("topic_id"), F.max("producer_epoch").alias("epoch"),
                    F.max("timestamp").alias("last_write"), F.min(F.coalesce("tail_scanned", F.lit(False))).alias("_all"),
                    F.sort_array(F.collect_set("broker_id")).alias("_brokers"),
                    F.sort_array(F.collect_set(F.col("source_file"))).alias("_files"),
                    F.max("snapshot_offset").alias("snapshot_offset"))
               .filter(F.col("_all") & (ctx.age_ms(F.col("last_write")) > F.lit(limit))))
    brokers = F.array_join(F.transform("_brokers", lambda b: b.cast("string")), ", ")
    return rows(grouped, "HANGING_TRANSACTION", {
        "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"), "partition": F.col("partition"),
        "bytes": F.lit(0), "since": F.col("last_write"),
        "key_extra": F.concat(F.lit("pid="), F.col("producer_id").cast("string"), F.lit(" first="),
                              F.col("first_offset").cast("string")),
        "details": details(producer_id=F.col("producer_id"), epoch=F.col("epoch"), first_offset=F.col("first_offset"),
                           age=human_ms(ctx.age_ms(F.col("last_write"))), brokers=brokers,
                           timeout=human_ms(F.lit(limit))),
        "evidence": evidence(producer_id=F.col("producer_id"), producer_epoch=F.col("epoch"),
                             current_txn_first_offset=F.col("first_offset"), last_write=iso(F.col("last_write")),
                             snapshot_offset=F.col("snapshot_offset"), replicas=F.col("_brokers"),
                             snapshots=F.col("_files"), transaction_max_timeout_ms=F.lit(limit)),
    })


def all_checks(ctx: CheckContext):
    return [hanging_transactions(ctx)]
