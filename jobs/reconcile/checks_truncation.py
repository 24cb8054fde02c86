"""Records a follower will truncate when it next fetches from its partition's current leader (leader_epochs family):

REPLICA_TRUNCATION_ACKNOWLEDGED    the truncation point is below the high watermark the follower recorded
                                   (replication-offset-checkpoint): records acknowledged as committed are lost;
REPLICA_TRUNCATION_UNACKNOWLEDGED  only records above that high watermark are cut (Kafka's normal treatment of
                                   an unreplicated tail, reported because those records exist on no other replica).

The truncation point is Kafka's own: :func:`udfs.leader_epochs.follower_truncation` replays the leader's
``LeaderEpochFileCache.endOffsetFor`` and the follower's ``AbstractFetcherThread.getOffsetTruncationState`` over
both replicas' leader-epoch-checkpoints (the entries Kafka keeps on load) and log end offsets. The leader is the
one the controller's metadata names (KRaft replay or the ZooKeeper state znode). Only replica dirs of the live
incarnation are judged, and only when both files were read (a file Kafka cannot load has its own finding), both
log ends are known, and the follower's latest epoch differs from the leader's or it has none: a follower in the
leader's current epoch copied every record of it from that leader, which answers with its own growing log end.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from udfs import leader_epochs

from . import sql_functions as F
from .check_rows import details, evidence, replica_dir_values, rows
from .checkpoint_entries import HIGH_WATERMARK, this_incarnation
from .context import CheckContext

EPOCH_FILE = "leader-epoch-checkpoint"
RESULT_TYPE = StructType([StructField("offset", LongType()), StructField("rule", StringType()),
                          StructField("epochs", ArrayType(IntegerType())),
                          StructField("steps", ArrayType(ArrayType(LongType())))])


def _truncation(follower, follower_leo, follower_hw, leader, leader_leo, leader_start):
    t = leader_epochs.follower_truncation([(e["epoch"], e["start_offset"]) for e in follower or []], follower_leo,
                                          follower_hw, [(e["epoch"], e["start_offset"]) for e in leader or []],
                                          leader_leo, leader_start or 0)
    return t.offset, t.rule, list(t.epochs), [list(s) for s in t.steps]



def _replicas(ctx: CheckContext) -> DataFrame:
    """Live-incarnation replica dirs whose log end is known and whose leader-epoch-checkpoint Kafka loads, with
    the entries it keeps (ascending) and the high watermark the dir's log dir recorded for this incarnation."""
    read = ctx.bronze["bronze_ingest_files"].filter(
        (F.col("status") == "ok") & F.col("path").endswith("/" + EPOCH_FILE)).select(
        F.col("path").alias("_epoch_path"))
    kept = ctx.bronze["bronze_leader_epochs"].filter(F.col("kafka_keeps")).groupBy(
        "log_dir", F.col("entry_name").alias("dir_name")).agg(
        F.array_sort(F.collect_list(F.struct("epoch", "start_offset"))).alias("entries"))
    r = ctx.replicas.filter((F.col("entry_kind") == "partition") & (F.col("id_state") == "live")
                            & (F.col("topic_id") == F.col("live_topic_id")) & F.col("assigned")
                            & F.col("log_end_offset").isNotNull())
    r = (r.withColumn("_epoch_path", F.concat_ws("/", F.col("log_dir"), F.col("dir_name"), F.lit(EPOCH_FILE)))
         .join(read, "_epoch_path").join(kept, ["log_dir", "dir_name"], "left"))
    hw = this_incarnation(ctx, HIGH_WATERMARK).select("log_dir", "dir_name", F.col("offset").alias("high_watermark"),
                                                        F.col("checkpoint_file").alias("hw_file"))
    return r.join(hw, ["log_dir", "dir_name"], "left").withColumn(
        "entries", F.coalesce(F.col("entries"), F.array().cast("array<struct<epoch:int,start_offset:bigint>>")))


def _pairs(ctx: CheckContext) -> DataFrame:
    r = _replicas(ctx)
    asg = ctx.view.assignments.filter(F.col("leader").isNotNull() & (F.col("leader") >= 0)).select(
        "topic_id", "partition", F.col("leader").alias("leader_id"), F.col("leader_epoch").alias("controller_epoch"),
        F.col("source").alias("_source"))
    leaders = r.select("topic_id", "partition", F.col("broker_id").alias("leader_id"),
                       F.col("entries").alias("leader_entries"), F.col("log_end_offset").alias("leader_leo"),
                       F.col("log_start_offset").alias("leader_log_start"), F.col("log_dir").alias("leader_log_dir"))
    followers = r.join(asg, ["topic_id", "partition"]).filter(F.col("broker_id") != F.col("leader_id"))
    pairs = followers.join(leaders, ["topic_id", "partition", "leader_id"])
    latest = F.element_at(F.col("entries"), -1)["epoch"]
    leader_latest = F.element_at(F.col("leader_entries"), -1)["epoch"]
    # what Kafka cannot cut leaves the UDF out: a follower in the leader's current epoch, or without epochs at or
    # under its high watermark
    candidate = F.when(F.size("entries") == 0,
                       F.coalesce(F.col("high_watermark"), F.col("log_start_offset"), F.lit(0)) < F.col("log_end_offset")
                       ).otherwise(F.coalesce(leader_latest != latest, F.lit(True)))
    pairs = pairs.filter(candidate)
    # Partition.createLog: no checkpointed high watermark reads as 0; UnifiedLog.updateHighWatermark clamps it to
    # [log start, log end]
    start = F.coalesce(F.col("log_start_offset"), F.lit(0))
    hw = F.least(F.greatest(F.coalesce(F.col("high_watermark"), F.lit(0)), start), F.col("log_end_offset"))
    return (pairs.withColumn("_hw", hw)
            .withColumn("_t", F.udf(_truncation, RESULT_TYPE)(F.col("entries"), F.col("log_end_offset"), F.col("_hw"),
                                              F.col("leader_entries"), F.col("leader_leo"),
                                              F.col("leader_log_start")))
            .filter(F.col("_t.offset") < F.col("log_end_offset")))


def _entries_text(name: str):
    return F.array_join(F.transform(name, lambda e: F.format_string("%d@%d", e["epoch"], e["start_offset"])), ", ")


def _check(d: DataFrame, check_id: str) -> DataFrame:
    cut = F.col("_t.offset")
    acknowledged = F.when(F.col("high_watermark").isNotNull(),
                          F.greatest(F.least(F.col("high_watermark"), F.col("log_end_offset")) - cut, F.lit(0)))
    steps = F.array_join(F.transform("_t.steps", lambda s: F.format_string(
        "fetch epoch %d -> leader epoch %d ending at %d -> truncate to %d", s[0], s[1], s[2], s[3])), "; ")
    return rows(d, check_id, replica_dir_values({
        "details": details(truncate_to=cut, log_end_offset=F.col("log_end_offset"),
                           lost=F.col("log_end_offset") - cut, last_lost=F.col("log_end_offset") - 1,
                           epochs=F.array_join(F.col("_t.epochs").cast("array<string>"), ", "),
                           leader=F.col("leader_id"), controller_epoch=F.col("controller_epoch"),
                           high_watermark=F.coalesce(F.col("high_watermark").cast("string"), F.lit("not recorded")),
                           acknowledged=F.coalesce(acknowledged, F.lit(0)), rule=F.col("_t.rule"),
                           follower_epochs=_entries_text("entries"), leader_epochs=_entries_text("leader_entries"),
                           leader_log_end=F.col("leader_leo"), steps=F.when(F.size("_t.steps") > 0, steps)
                           .otherwise(F.lit("none (truncateToHighWatermark)"))),
        "evidence": evidence(follower_log_dir=F.col("log_dir"), follower_epochs=F.col("entries"),
                             follower_log_end_offset=F.col("log_end_offset"), high_watermark=F.col("high_watermark"),
                             high_watermark_file=F.col("hw_file"), leader=F.col("leader_id"),
                             leader_log_dir=F.col("leader_log_dir"), leader_epochs=F.col("leader_entries"),
                             leader_log_end_offset=F.col("leader_leo"), leader_log_start_offset=F.col("leader_log_start"),
                             controller_leader_epoch=F.col("controller_epoch"), controller_source=F.col("_source"),
                             truncate_to=cut, rule=F.col("_t.rule"), rounds=F.col("_t.steps")),
    }, precedence=False))


def all_checks(ctx: CheckContext):
    d = _pairs(ctx)
    acknowledged = F.col("high_watermark").isNotNull() & (F.col("_t.offset") < F.col("high_watermark"))
    return [_check(d.filter(acknowledged), "REPLICA_TRUNCATION_ACKNOWLEDGED"),
            _check(d.filter(~acknowledged), "REPLICA_TRUNCATION_UNACKNOWLEDGED")]
