"""Stuck partition reassignments (KIP-455): adding/removing replicas non-empty for longer than
``reconcile.reassignment_stuck_ms``.

KRaft: ReplicationControlManager writes the reassignment into the partition (PartitionChangeRecord
replicas = target + removing, addingReplicas, removingReplicas); PartitionChangeBuilder completes it
(PartitionReassignmentReplicas.maybeCompleteReassignment) at the first change where every target replica
(replicas minus removing) is in the ISR and the ISR minus removing is not empty, writing empty adding/removing.
ZooKeeper: KafkaController keeps it in the topic znode's adding_replicas/removing_replicas and completes it when
isReassignmentComplete (target replicas a subset of the partition state's ISR).

``since`` is when the reassignment began: the append time of the record that made adding/removing non-empty
(the latest such start in the retained log), else the start of the retained log (it was in progress all along),
else the snapshot's time bound; in ZooKeeper mode the topic znode's mtime (the controller's last write of it).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window

from jobs.reconcile import zk_view

from . import sql_functions as F
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import int_list_text

INT_ARRAY = "array<int>"


def _arr(name: str) -> Column:
    return F.coalesce(F.col(name), F.array().cast(INT_ARRAY))


def in_progress(adding: Column, removing: Column) -> Column:
    """PartitionReassignmentReplicas.isReassignmentInProgress."""
    return (F.size(F.coalesce(adding, F.array().cast(INT_ARRAY))) > 0) | (
        F.size(F.coalesce(removing, F.array().cast(INT_ARRAY))) > 0)


def blocking_replicas(replicas: Column, removing: Column, isr: Column) -> Column:
    """The target replicas (replicas minus removing) not in the ISR: what keeps the reassignment open."""
    target = F.filter(F.coalesce(replicas, F.array().cast(INT_ARRAY)),
                      lambda r: ~F.array_contains(F.coalesce(removing, F.array().cast(INT_ARRAY)), r))
    return F.filter(target, lambda r: ~F.coalesce(F.array_contains(isr, r), F.lit(False)))


def kraft_starts(ctx: CheckContext, open_now: DataFrame) -> DataFrame:
    """(topic_id, partition) -> append time of the latest record that began a reassignment in the retained log,
    for the partitions in ``open_now`` (those in progress at capture: few, so the history is cut to them first)."""
    keys = open_now.select("topic_id", F.col("partition").alias("partition_id")).distinct()
    h = (ctx.view.ml.history.filter(F.col("record_type").isin("PARTITION_RECORD", "PARTITION_CHANGE_RECORD")
                                    & F.col("topic_id").isNotNull())
         .join(F.broadcast(keys), ["topic_id", "partition_id"]))
    upto = (Window.partitionBy("topic_id", "partition_id").orderBy("offset")
            .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    prev = Window.partitionBy("topic_id", "partition_id").orderBy("offset")
    sets = F.col("adding_replicas").isNotNull() | F.col("removing_replicas").isNotNull()
    state = (h.withColumn("_add", F.last("adding_replicas", ignorenulls=True).over(upto))
             .withColumn("_rem", F.last("removing_replicas", ignorenulls=True).over(upto))
             .withColumn("_on", in_progress(F.col("_add"), F.col("_rem")))
             .withColumn("_was", F.lag("_on").over(prev)))
    starts = state.filter(F.col("_on") & sets & ~F.coalesce(F.col("_was"), F.lit(False)))
    return starts.groupBy("topic_id", F.col("partition_id").alias("partition")).agg(
        F.max_by("append_time", "offset").alias("start_time"), F.max("offset").alias("start_offset"))


def _kraft(ctx: CheckContext) -> DataFrame:
    ml = ctx.view.ml
    bound = ml.history_start_time or ml.snapshot_time_bound
    a = ctx.view.assignments.filter(in_progress(F.col("adding_replicas"), F.col("removing_replicas")))
    a = a.join(kraft_starts(ctx, a), ["topic_id", "partition"], "left")
    exact = F.col("start_time").isNotNull()
    return a.select("topic_id", "topic_name", "partition", "replicas", "isr", "leader", "adding_replicas",
                    "removing_replicas", F.coalesce("start_time", F.lit(bound).cast("timestamp")).alias("since"),
                    F.when(exact, F.concat(F.lit("PartitionChangeRecord at offset "),
                                           F.col("start_offset").cast("string")))
                    .when(F.lit(bound is not None), F.lit("in progress since before the retained metadata log began "
                                                          "(at the latest then)"))
                    .otherwise(F.lit("in progress in the snapshot")).alias("since_source"))


def _zookeeper(ctx: CheckContext) -> DataFrame:
    topics = zk_view.topic_znodes(ctx.bronze["bronze_zk_events"]).select(
        "topic_name", "partition", F.col("event_time").alias("_znode_time"))
    a = ctx.view.assignments.filter(in_progress(F.col("adding_replicas"), F.col("removing_replicas")))
    return a.join(topics, ["topic_name", "partition"], "left").select(
        "topic_id", "topic_name", "partition", "replicas", "isr", "leader", "adding_replicas", "removing_replicas",
        F.col("_znode_time").alias("since"),
        F.lit("the topic znode's mtime (the controller's write of adding_replicas/removing_replicas)")
        .alias("since_source"))


def reassignments(ctx: CheckContext) -> DataFrame:
    """Every partition with a reassignment in progress at capture, with when it began."""
    if ctx.view.mode in ("kraft", "migration"):
        return _kraft(ctx)
    if ctx.view.mode == "zookeeper":
        return _zookeeper(ctx)
    return ctx.view.assignments.limit(0).select(
        "topic_id", "topic_name", "partition", "replicas", "isr", "leader", "adding_replicas", "removing_replicas",
        F.lit(None).cast("timestamp").alias("since"), F.lit(None).cast("string").alias("since_source"))


def _states(ctx: CheckContext, r: DataFrame) -> DataFrame:
    """Per partition: ``4 (fenced, captured)`` for each blocking broker, from silver_brokers."""
    brokers = ctx.silver["silver_brokers"].select(
        F.col("broker_id").alias("_b"), F.col("state").alias("_state"), F.col("captured").alias("_captured"))
    per = (r.select("topic_name", "partition", F.posexplode("blocking").alias("_i", "_b"))
           .join(brokers, "_b", "left")
           .select("topic_name", "partition", "_i", F.concat(
               F.col("_b").cast("string"), F.lit(" ("), F.coalesce("_state", F.lit("absent")),
               F.when(F.coalesce("_captured", F.lit(False)), F.lit(", its disks are in the capture"))
               .otherwise(F.lit(", not in the capture")), F.lit(")")).alias("_text")))
    return per.groupBy("topic_name", "partition").agg(
        F.array_join(F.transform(F.array_sort(F.collect_list(F.struct("_i", "_text"))), lambda s: s["_text"]), "; ")
        .alias("blocking_states"))


def stuck_reassignments(ctx: CheckContext) -> DataFrame:
    limit = ctx.thresholds.reassignment_stuck_ms
    r = reassignments(ctx).withColumn("age_ms", ctx.age_ms(F.col("since")))
    r = r.filter(F.col("since").isNotNull() & (F.col("age_ms") > F.lit(limit)))
    r = r.withColumn("blocking", blocking_replicas(F.col("replicas"), F.col("removing_replicas"), F.col("isr")))
    r = r.join(_states(ctx, r), ["topic_name", "partition"], "left")
    target = F.filter(_arr("replicas"), lambda x: ~F.array_contains(_arr("removing_replicas"), x))
    hours = F.format_number(F.col("age_ms") / F.lit(3_600_000.0), 1)
    why = (F.when(F.size("blocking") > 0, F.concat(
        F.lit("target replica(s) "), int_list_text(F.col("blocking")), F.lit(" not in the ISR: "),
        F.col("blocking_states")))
           .otherwise(F.lit("every target replica is in the ISR; the controller completes it at the partition's "
                            "next change (e.g. a leader election)")))
    return rows(r, "STUCK_REASSIGNMENT", {
        "broker_id": F.element_at("blocking", 1), "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"),
        "partition": F.col("partition"), "since": F.col("since"),
        "details": details(adding=int_list_text(_arr("adding_replicas")),
                           removing=int_list_text(_arr("removing_replicas")),
                           replicas=int_list_text(_arr("replicas")), isr=int_list_text(_arr("isr")),
                           target=int_list_text(target), blocking=int_list_text(F.col("blocking")),
                           why=why, hours=hours, since_source=F.col("since_source")),
        "evidence": evidence(adding=F.col("adding_replicas"), removing=F.col("removing_replicas"),
                             replicas=F.col("replicas"), isr=F.col("isr"), leader=F.col("leader"), target=target,
                             not_in_isr=F.col("blocking"), not_in_isr_states=F.col("blocking_states"),
                             since_source=F.col("since_source"), age_ms=F.col("age_ms"),
                             threshold_ms=F.lit(limit)),
    })


def all_checks(ctx: CheckContext):
    return [stuck_reassignments(ctx)]
