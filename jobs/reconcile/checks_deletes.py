"""Delete checks: DELETE_WITHOUT_CREATE, ZK_DELETE_STUCK, TOPIC_ID_CHANGED_WITHOUT_DELETE.

(DELETE_INCOMPLETE and LOCAL_DELETE_WITHOUT_CONTROLLER_DELETE are decided per replica dir in
checks_replicas, where precedence keeps one finding per dir.)
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window

from . import sql_functions as F
from . import zk_view
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import iso, union_all


def delete_without_create(ctx: CheckContext) -> DataFrame:
    """A RemoveTopicRecord whose topic id has no TopicRecord, only where snapshot + log provably cover
    the topic's whole life (a create that lies only in the snapshot is a match)."""
    ml = ctx.view.ml
    inc = ctx.silver["silver_topic_incarnations"]
    if not ml.present or ml.history_start is None:
        return rows(inc.limit(0), "DELETE_WITHOUT_CREATE", {})
    snap_end, start = ml.snapshot_end, ml.history_start
    removes = ml.history.filter(F.col("record_type") == "REMOVE_TOPIC_RECORD").select(
        "topic_id", "offset", "append_time", "source_file")
    created = inc.filter(F.col("in_snapshot") | F.col("created_offset").isNotNull()).select("topic_id").distinct()
    covered = F.lit(start == 0)
    if snap_end is not None and start <= snap_end:
        covered = covered | (F.col("offset") >= F.lit(snap_end))
    bad = removes.join(created, "topic_id", "left_anti").filter(covered)
    return rows(bad, "DELETE_WITHOUT_CREATE", {
        "topic_id": F.col("topic_id"), "since": F.col("append_time"), "key_extra": F.col("offset").cast("string"),
        "details": details(offset=F.col("offset"), snapshot_end=F.lit(snap_end if snap_end is not None else "none"),
                           log_start=F.lit(start)),
        "evidence": evidence(remove_topic_record_offset=F.col("offset"), file=F.col("source_file"),
                             snapshot_end_offset=F.lit(snap_end).cast("long"), log_start_offset=F.lit(start),
                             authoritative_copy=F.lit(ml.authoritative_copy)),
    })


def zk_delete_stuck(ctx: CheckContext) -> DataFrame:
    """/admin/delete_topics/<t> still there: halted by TopicDeletionManager, or older than the threshold."""
    events = ctx.bronze["bronze_zk_events"]
    markers = zk_view.delete_markers(events)
    topics = zk_view.topic_znodes(events)
    registered = zk_view.brokers(events).select("broker_id").withColumn("_up", F.lit(True))
    replicas = topics.select("topic_name", F.explode("replicas").alias("broker_id")).distinct()
    offline = (replicas.join(registered, "broker_id", "left").filter(F.col("_up").isNull())
               .groupBy("topic_name").agg(F.sort_array(F.collect_set("broker_id")).alias("offline")))
    lines = zk_view.deletion_lines(events).filter(F.col("kind").isin("started", "halted"))
    latest = lines.groupBy("topic_name").agg(F.max_by("kind", "event_time").alias("last_kind"),
                                             F.max_by("message", "event_time").alias("last_line"),
                                             F.max_by("source_file", "event_time").alias("last_file"))
    tid = topics.groupBy("topic_name").agg(F.first("topic_id", ignorenulls=True).alias("topic_id"))
    held = (ctx.replicas.filter(F.col("entry_kind").isin("partition", "future"))
            .groupBy(F.col("topic_from_name").alias("topic_name"))
            .agg(F.sort_array(F.collect_set("broker_id")).alias("holding"), F.sum("bytes").alias("bytes")))
    m = (markers.join(offline, "topic_name", "left").join(latest, "topic_name", "left")
         .join(tid, "topic_name", "left").join(held, "topic_name", "left"))
    age = ctx.age_ms(F.col("marked_time"))
    halted = F.coalesce(F.col("last_kind") == "halted", F.lit(False))
    old = F.coalesce(age > F.lit(ctx.thresholds.zk_delete_stuck_after_ms), F.lit(False))
    stuck = m.filter(halted | old)
    offline_text = F.when(F.size(F.coalesce("offline", F.array())) > 0,
                          F.array_join(F.col("offline").cast("array<string>"), ", ")).otherwise(F.lit("(none offline)"))
    reason = F.concat_ws("; ",
                         F.when(halted, F.concat(F.lit("the controller halted it: "), F.col("last_line"))),
                         F.when(F.size(F.coalesce("offline", F.array())) > 0,
                                F.concat(F.lit("replicas on unregistered brokers "), offline_text)),
                         F.when(F.size(F.coalesce("holding", F.array())) > 0,
                                F.concat(F.lit("replica dirs still on brokers "),
                                         F.array_join(F.col("holding").cast("array<string>"), ", "))))
    return rows(stuck, "ZK_DELETE_STUCK", {
        "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"), "since": F.col("marked_time"),
        "bytes": F.col("bytes"),
        "details": details(reason=reason, offline_brokers=offline_text),
        "evidence": evidence(znode=F.concat(F.lit("/admin/delete_topics/"), F.col("topic_name")),
                             marked_time=iso(F.col("marked_time")), age_ms=age, last_deletion_line=F.col("last_line"),
                             log_file=F.col("last_file"), offline_brokers=F.col("offline"),
                             brokers_holding_replicas=F.col("holding")),
    })


def topic_id_changed(ctx: CheckContext) -> DataFrame:
    """A live name whose id changed with no delete: ZooKeeper dirs classified ``topic_id_changed``, or a
    KRaft TopicRecord re-using a live name whose old id was never removed."""
    n = ctx.thresholds.evidence_max_items
    r = ctx.replicas.filter(F.col("classification") == "topic_id_changed")
    inc = ctx.silver["silver_topic_incarnations"].filter("is_live").select(
        F.col("topic_id").alias("live_topic_id"), "topic_name", F.col("created_time").alias("_live_since"))
    zk = (r.groupBy("topic_name", "live_topic_id").agg(
        F.count("*").alias("dirs"), F.sort_array(F.collect_set("topic_id")).alias("old_ids"),
        F.sort_array(F.collect_list(F.concat_ws("/", F.concat(F.lit("broker-"), F.col("broker_id").cast("string")),
                                                F.col("dir_name")))).alias("paths"),
        F.sum("bytes").alias("bytes"))
        .join(inc, ["topic_name", "live_topic_id"], "left"))
    parts = [rows(zk, "TOPIC_ID_CHANGED_WITHOUT_DELETE", {
        "topic_name": F.col("topic_name"), "topic_id": F.col("live_topic_id"), "bytes": F.col("bytes"),
        "since": F.col("_live_since"),
        "details": details(old_ids=F.array_join("old_ids", ", "),
                           where=F.concat(F.col("dirs").cast("string"), F.lit(" replica dir(s) still hold it: "),
                                          F.array_join(F.slice("paths", 1, n), ", "))),
        "evidence": evidence(controller_topic_id=F.col("live_topic_id"), ids_on_disk=F.col("old_ids"),
                             dirs=F.slice("paths", 1, n), delete_recorded=F.lit(False)),
    })]
    ml = ctx.view.ml
    if ml.present:
        img_topics = ml.image.filter((F.col("record_type") == "TOPIC_RECORD") & (F.col("pos") < 0)).select(
            "topic_name", "topic_id", F.lit(-1).cast("long").alias("offset"), F.lit(None).cast("timestamp").alias("t"))
        hist_topics = ml.history.filter(F.col("record_type") == "TOPIC_RECORD").select(
            "topic_name", "topic_id", "offset", F.col("append_time").alias("t"))
        topics = (img_topics.unionByName(hist_topics).groupBy("topic_name", "topic_id")
                  .agg(F.min("offset").alias("offset"), F.min("t").alias("t")))
        removes = ml.history.filter(F.col("record_type") == "REMOVE_TOPIC_RECORD").groupBy("topic_id").agg(
            F.min("offset").alias("_removed_at"))
        w = Window.partitionBy("topic_name").orderBy("offset")
        seq = (topics.join(removes, "topic_id", "left")
               .withColumn("_prev_id", F.lag("topic_id").over(w))
               .withColumn("_prev_removed", F.lag("_removed_at").over(w)))
        changed = seq.filter(F.col("_prev_id").isNotNull() & (F.col("offset") >= 0)
                             & (F.col("_prev_removed").isNull() | (F.col("_prev_removed") > F.col("offset"))))
        parts.append(rows(changed, "TOPIC_ID_CHANGED_WITHOUT_DELETE", {
            "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"), "since": F.col("t"),
            "details": details(old_ids=F.col("_prev_id"),
                               where=F.concat(F.lit("the TopicRecord at offset "), F.col("offset").cast("string"),
                                              F.lit(" re-used the name with no RemoveTopicRecord before it"))),
            "evidence": evidence(topic_record_offset=F.col("offset"), previous_topic_id=F.col("_prev_id"),
                                 previous_removed_at=F.col("_prev_removed")),
        }))
    return union_all(parts)


def all_checks(ctx: CheckContext):
    return [delete_without_create(ctx), zk_delete_stuck(ctx), topic_id_changed(ctx)]
