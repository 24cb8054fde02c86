"""The KRaft controller's view, replayed in Spark from the metadata log (no driver loops).

Replay rule: per key, the last non-null value of each field ordered by ``pos`` (snapshot first, then log
offsets); a PartitionRecord restarts a partition; a RemoveTopicRecord ends a topic id.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window

from . import sql_functions as F
from .metadata_log import MetadataLog

T = "record_type"


def _type(df: DataFrame, *names: str) -> DataFrame:
    return df.filter(F.col(T).isin(*names))


def live_topics(ml: MetadataLog) -> DataFrame:
    """topic_id, topic_name of every topic in the image at capture."""
    topics = _type(ml.image, "TOPIC_RECORD").select("topic_id", "topic_name", "pos")
    removed = _type(ml.image, "REMOVE_TOPIC_RECORD").select("topic_id", F.col("pos").alias("rpos"))
    return (topics.join(removed, "topic_id", "left").filter(F.col("rpos").isNull() | (F.col("rpos") < F.col("pos")))
            .groupBy("topic_id").agg(F.max_by("topic_name", "pos").alias("topic_name")))


def _record_leader_epoch():
    """A PartitionRecord's LeaderEpoch from its payload (Kafka's JSON, with or without the ``data`` wrapper)."""
    return F.coalesce(F.get_json_object("payload_json", "$.leaderEpoch"),
                      F.get_json_object("payload_json", "$.data.leaderEpoch")).cast("int")


def assignments(ml: MetadataLog) -> DataFrame:
    """The image's partitions of live topics: replicas, isr, leader, adding/removing, directories."""
    parts = _type(ml.image, "PARTITION_RECORD", "PARTITION_CHANGE_RECORD").filter(F.col("topic_id").isNotNull())
    restart = Window.partitionBy("topic_id", "partition_id")
    parts = (parts.withColumn("_start", F.max(F.when(F.col(T) == "PARTITION_RECORD", F.col("pos"))).over(restart))
             .filter(F.col("_start").isNotNull() & (F.col("pos") >= F.col("_start"))))

    def last(name: str, cond=None):
        c = F.col(name)
        ok = c.isNotNull() if cond is None else (c.isNotNull() & cond)
        return F.max_by(c, F.when(ok, F.col("pos")))

    state = parts.groupBy("topic_id", "partition_id").agg(
        last("replicas").alias("replicas"),
        last("isr").alias("isr"),
        last("leader", F.col("leader") != -2).alias("leader"),
        last("adding_replicas").alias("adding_replicas"),
        last("removing_replicas").alias("removing_replicas"),
        last("directories").alias("directories"),
        F.max_by(_record_leader_epoch(), F.when(F.col(T) == "PARTITION_RECORD", F.col("pos"))).alias("_epoch0"),
        F.count(F.when((F.col(T) == "PARTITION_CHANGE_RECORD") & F.col("leader").isNotNull()
                       & (F.col("leader") != -2), True)).alias("_epoch_bumps"),
        F.max("pos").alias("_last_pos"),
        F.max_by("append_time", "pos").alias("_last_time"),
    )
    live = live_topics(ml)
    counts = state.groupBy("topic_id").agg(F.count("*").cast("int").alias("partition_count"))
    return (state.join(live, "topic_id").join(counts, "topic_id")
            .select("topic_id", "topic_name", F.col("partition_id").alias("partition"), "partition_count",
                    "replicas", "isr", "leader", "adding_replicas", "removing_replicas", "directories",
                    F.when(F.col("_last_pos") >= 0, F.col("_last_pos")).alias("last_change_offset"),
                    F.when(F.col("_last_pos") >= 0, F.col("_last_time")).alias("last_change_time"),
                    F.lit(False).alias("marked_for_deletion"), F.lit("kraft").alias("source"),
                    (F.col("_epoch0") + F.col("_epoch_bumps")).cast("int").alias("leader_epoch")))


def incarnations(ml: MetadataLog) -> DataFrame:
    """One row per topic id seen in the snapshot or the retained log."""
    hist, img = ml.history, ml.image
    snap_topics = _type(img.filter(F.col("pos") < 0), "TOPIC_RECORD").select(
        "topic_id", F.col("topic_name").alias("snap_name"))
    hist_topics = _type(hist, "TOPIC_RECORD").groupBy("topic_id").agg(
        F.min_by("topic_name", "offset").alias("hist_name"), F.min("offset").alias("created_offset"),
        F.min_by("append_time", "offset").alias("created_time"), F.min_by("group_key", "offset").alias("_cgk"))
    removes = _type(hist, "REMOVE_TOPIC_RECORD").groupBy("topic_id").agg(
        F.max("offset").alias("deleted_offset"), F.max_by("append_time", "offset").alias("deleted_time"))
    live = live_topics(ml).select("topic_id", F.lit(True).alias("is_live"))

    prs = _type(hist, "PARTITION_RECORD").select("topic_id", "partition_id", "offset", "append_time", "group_key")
    snap_prs = _type(img.filter(F.col("pos") < 0), "PARTITION_RECORD").select("topic_id", "partition_id")
    all_parts = prs.select("topic_id", "partition_id").unionByName(snap_prs).distinct()
    counts = all_parts.groupBy("topic_id").agg(F.count("*").cast("int").alias("partition_count"))
    creation = hist_topics.select("topic_id", "_cgk", "created_offset")
    adds = (prs.join(creation, "topic_id", "left")
            .filter(F.col("_cgk").isNull() | (F.col("group_key") != F.col("_cgk")))
            .groupBy("topic_id", "group_key").agg(F.min("offset").alias("offset"), F.min("append_time").alias("time"),
                                                  F.countDistinct("partition_id").alias("n")))
    later = Window.partitionBy("topic_id").orderBy(F.col("offset").desc()).rowsBetween(Window.unboundedPreceding, -1)
    adds = (adds.join(counts, "topic_id").withColumn("_later", F.coalesce(F.sum("n").over(later), F.lit(0)))
            .withColumn("to", (F.col("partition_count") - F.col("_later")).cast("int"))
            .withColumn("from", (F.col("to") - F.col("n")).cast("int")))
    changes = adds.groupBy("topic_id").agg(
        F.to_json(F.array_sort(F.collect_list(F.struct("offset", F.col("time"), "from", "to")))).alias(
            "partition_count_changes_json"),
        F.min_by("from", "offset").alias("_first_from"))

    ids = (snap_topics.select("topic_id").unionByName(hist_topics.select("topic_id"))
           .unionByName(removes.select("topic_id")).distinct())
    out = (ids.join(snap_topics, "topic_id", "left").join(hist_topics, "topic_id", "left")
           .join(removes, "topic_id", "left").join(live, "topic_id", "left").join(counts, "topic_id", "left")
           .join(changes, "topic_id", "left"))
    return out.select(
        "topic_id",
        F.coalesce("hist_name", "snap_name").alias("topic_name"),
        F.when(F.col("snap_name").isNotNull() & F.col("created_offset").isNull(), "snapshot")
        .otherwise("log").alias("source"),
        F.col("snap_name").isNotNull().alias("in_snapshot"),
        "created_offset", "created_time",
        (F.col("created_offset").isNull()).alias("created_before_history"),
        F.col("deleted_offset").isNotNull().alias("deleted"),
        "deleted_offset", "deleted_time",
        F.lit(False).alias("delete_pending"),
        F.lit(None).cast("timestamp").alias("delete_requested_time"),
        F.coalesce("is_live", F.lit(False)).alias("is_live"),
        "partition_count",
        F.coalesce("_first_from", "partition_count").alias("initial_partition_count"),
        "partition_count_changes_json",
        F.col("created_offset").isNotNull().alias("whole_life_in_history"),
    )


REGISTRATION_TYPES = ("REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD", "FENCE_BROKER_RECORD",
                      "UNFENCE_BROKER_RECORD", "UNREGISTER_BROKER_RECORD", "REGISTER_CONTROLLER_RECORD")


def _dir_change():
    """A record's LogDirs when it changes them: every RegisterBrokerRecord (v3+), a BrokerRegistrationChangeRecord
    only when it carries the tagged LogDirs (v2+, written when a dir goes offline); absent means no change."""
    return (F.when(F.col(T) == "REGISTER_BROKER_RECORD", F.col("directories"))
            .when((F.col(T) == "BROKER_REGISTRATION_CHANGE_RECORD") & (F.size("directories") > 0),
                  F.col("directories")))


def _fence_value():
    """Fenced after this record (True/False), or null when the record does not say."""
    return (F.when(F.col(T) == "REGISTER_BROKER_RECORD", F.col("fenced") == 1)
            .when(F.col(T) == "FENCE_BROKER_RECORD", F.lit(True))
            .when(F.col(T) == "UNFENCE_BROKER_RECORD", F.lit(False))
            .when((F.col(T) == "BROKER_REGISTRATION_CHANGE_RECORD") & (F.col("fenced") == 1), F.lit(True))
            .when((F.col(T) == "BROKER_REGISTRATION_CHANGE_RECORD") & (F.col("fenced") == -1), F.lit(False)))


def brokers(ml: MetadataLog) -> DataFrame:
    """Registration state per broker in the image, with the time of its latest registration, the log dirs it
    lists now (its latest RegisterBrokerRecord, narrowed by a later BrokerRegistrationChangeRecord LogDirs when
    a dir failed) and every directory id it ever listed (an offline dir is one that left that list)."""
    img = ml.image
    regs = _type(img, "REGISTER_BROKER_RECORD").filter(F.col("broker_id").isNotNull())
    latest = regs.groupBy("broker_id").agg(
        F.max("pos").alias("reg_pos"), F.max_by("broker_epoch", "pos").alias("broker_epoch"),
        F.max_by("append_time", "pos").alias("_reg_time"))
    dir_changes = (_type(img, "REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD")
                   .filter(F.col("broker_id").isNotNull()).withColumn("_dirs", _dir_change())
                   .filter(F.col("_dirs").isNotNull()))
    current_dirs = dir_changes.groupBy("broker_id").agg(F.max_by("_dirs", "pos").alias("registered_log_dirs"))
    cols = ("record_type", "broker_id", "directories")
    ever = (_type(ml.image.select(*cols).unionByName(ml.history.select(*cols)), "REGISTER_BROKER_RECORD",
                  "BROKER_REGISTRATION_CHANGE_RECORD")
            .filter(F.col("broker_id").isNotNull() & F.col("directories").isNotNull())
            .select("broker_id", F.explode("directories").alias("_d")).groupBy("broker_id")
            .agg(F.sort_array(F.collect_set("_d")).alias("known_log_dirs")))
    unreg = _type(img, "UNREGISTER_BROKER_RECORD").groupBy("broker_id").agg(F.max("pos").alias("unreg_pos"))
    fencing = (_type(img, "REGISTER_BROKER_RECORD", "FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD",
                     "BROKER_REGISTRATION_CHANGE_RECORD")
               .withColumn("_f", _fence_value()).filter(F.col("_f").isNotNull())
               .groupBy("broker_id").agg(F.max_by("_f", "pos").alias("fenced"), F.max("pos").alias("_fpos")))
    hist_regs = (_type(ml.history, "REGISTER_BROKER_RECORD")
                 .groupBy("broker_id", "broker_epoch").agg(F.max("offset").alias("_hoff"),
                                                           F.max_by("append_time", "offset").alias("_htime")))
    bound = F.lit(ml.snapshot_time_bound).cast("timestamp")
    out = (latest.join(unreg, "broker_id", "left").join(fencing, "broker_id", "left")
           .join(current_dirs, "broker_id", "left").join(ever, "broker_id", "left")
           .join(hist_regs, ["broker_id", "broker_epoch"], "left"))
    registered = F.col("unreg_pos").isNull() | (F.col("unreg_pos") < F.col("reg_pos"))
    return out.select(
        F.col("broker_id").cast("int").alias("broker_id"),
        registered.alias("registered"),
        (~registered).alias("unregistered"),
        F.coalesce("fenced", F.lit(True)).alias("fenced"),
        "broker_epoch",
        F.when(F.col("reg_pos") >= 0, F.col("reg_pos")).otherwise(F.col("_hoff")).alias("registration_offset"),
        F.when(F.col("reg_pos") >= 0, F.col("_reg_time")).otherwise(F.coalesce("_htime", bound))
        .alias("registration_time"),
        "registered_log_dirs",
        "known_log_dirs",
        F.lit("kraft").alias("source"),
    )


CORDONS_SCHEMA = "broker_id int, directory_id string, cordoned_since timestamp, cordoned_offset long"


def cordons(ml: MetadataLog) -> DataFrame:
    """The log dirs each broker has cordoned now (KIP-1066, Kafka 4.3) and since when.

    A broker's cordoned dirs are the CordonedLogDirs of its latest RegisterBrokerRecord (v4+; a v4 record
    without the field: none), replaced by each later BrokerRegistrationChangeRecord that carries the field
    (v3+; absent: no change), as ClusterControlManager.replay applies them. A dir's cordon starts at the
    first record of the unbroken run of lists that hold it up to the latest one, read from the retained log;
    a broker whose cordons no retained record changed has them from the snapshot, and they held since the
    retained log's start at least (a lower bound of the cordon's age: a snapshot keeps no record times)."""

    def cordon_lists(df: DataFrame) -> DataFrame:
        regs = _type(df, "REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD").filter(
            F.col("broker_id").isNotNull())
        return regs.select(
            F.col("broker_id").cast("int").alias("broker_id"), "pos", "offset", "append_time",
            F.when(F.col(T) == "REGISTER_BROKER_RECORD",
                   F.when(F.col("version") >= 4,
                          F.coalesce(F.col("cordoned_log_dirs"), F.array().cast("array<string>"))))
            .otherwise(F.col("cordoned_log_dirs")).alias("_cordoned")).filter(F.col("_cordoned").isNotNull())

    logged = cordon_lists(ml.history)
    start = F.lit(ml.history_start_time).cast("timestamp")
    from_snapshot = (cordon_lists(ml.image.filter(F.col("pos") < 0)).join(logged.select("broker_id").distinct(),
                                                                          "broker_id", "left_anti")
                     .withColumn("append_time", start)
                     .withColumn("offset", F.lit(ml.history_start if ml.history_start is not None else 0).cast("long")))
    lists = logged.unionByName(from_snapshot)
    current = lists.groupBy("broker_id").agg(F.max_by("_cordoned", "pos").alias("_now"))
    held = current.select("broker_id", F.explode("_now").alias("directory_id"))
    pairs = (held.join(lists, "broker_id")
             .withColumn("_has", F.array_contains("_cordoned", F.col("directory_id"))))
    gaps = pairs.groupBy("broker_id", "directory_id").agg(F.max(F.when(~F.col("_has"), F.col("pos"))).alias("_gap"))
    run = (pairs.join(gaps, ["broker_id", "directory_id"])
           .filter(F.col("_has") & (F.col("_gap").isNull() | (F.col("pos") > F.col("_gap")))))
    return run.groupBy("broker_id", "directory_id").agg(
        F.min_by("append_time", "pos").alias("cordoned_since"), F.min_by("offset", "pos").alias("cordoned_offset"))


def controllers(ml: MetadataLog) -> DataFrame:
    """node_id of every controller that registered (RegisterControllerRecord, KIP-919), image or history."""
    both = ml.image.select("record_type", "broker_id").unionByName(ml.history.select("record_type", "broker_id"))
    return (_type(both, "REGISTER_CONTROLLER_RECORD").filter(F.col("broker_id").isNotNull())
            .select(F.col("broker_id").cast("int").alias("node_id")).distinct())


def registration_events(ml: MetadataLog) -> DataFrame:
    """Every registration, fencing, LogDirs change and unregistration in the retained log and the snapshot:
    a node's history as the controller recorded it (silver_node_registrations)."""
    hist = _type(ml.history, *REGISTRATION_TYPES).select(
        F.col("offset").alias("pos"), "offset", "append_time", "record_type", "broker_id", "broker_epoch", "fenced",
        "directories", F.lit("log").alias("source"))
    snap = _type(ml.image.filter(F.col("pos") < 0), *REGISTRATION_TYPES).select(
        "pos", F.lit(None).cast("long").alias("offset"), F.lit(None).cast("timestamp").alias("append_time"),
        "record_type", "broker_id", "broker_epoch", "fenced", "directories", F.lit("snapshot").alias("source"))
    both = hist.unionByName(snap)
    event = (F.when(F.col(T) == "REGISTER_CONTROLLER_RECORD", F.lit("controller_registered"))
             .when(F.col(T) == "REGISTER_BROKER_RECORD", F.lit("registered"))
             .when(F.col(T) == "UNREGISTER_BROKER_RECORD", F.lit("unregistered"))
             .when(F.col(T) == "FENCE_BROKER_RECORD", F.lit("fenced"))
             .when(F.col(T) == "UNFENCE_BROKER_RECORD", F.lit("unfenced"))
             .when(F.size("directories") > 0, F.lit("log_dirs_changed"))
             .when(F.col("fenced") == 1, F.lit("fenced"))
             .when(F.col("fenced") == -1, F.lit("unfenced"))
             .otherwise(F.lit("changed")))
    return both.select(
        F.col("broker_id").cast("int").alias("node_id"),
        F.when(F.col(T) == "REGISTER_CONTROLLER_RECORD", F.lit("controller")).otherwise(F.lit("broker")).alias("role"),
        "source", F.col("pos").alias("seq"), "offset", F.col("append_time").alias("event_time"),
        F.col(T).alias("record_type"), event.alias("event"), "broker_epoch",
        _fence_value().alias("fenced"),
        _dir_change().alias("log_dirs"))


def replica_exits(ml: MetadataLog) -> DataFrame:
    """When each broker last left a partition's replica set or moved its replica to another directory:
    the start of a -delete dir's timer when the topic itself was not deleted."""
    parts = _type(ml.history, "PARTITION_RECORD", "PARTITION_CHANGE_RECORD").filter(
        F.col("topic_id").isNotNull() & (F.col("replicas").isNotNull() | F.col("directories").isNotNull()))
    upto = Window.partitionBy("topic_id", "partition_id").orderBy("offset").rowsBetween(
        Window.unboundedPreceding, Window.currentRow)
    by_offset = Window.partitionBy("topic_id", "partition_id").orderBy("offset")
    state = (parts.withColumn("_r", F.last("replicas", ignorenulls=True).over(upto))
             .withColumn("_d", F.last("directories", ignorenulls=True).over(upto))
             .withColumn("_pairs", F.transform("_r", lambda b, i: F.concat_ws(
                 ":", b.cast("string"), F.coalesce(F.try_element_at(F.col("_d"), (i + 1).cast("int")), F.lit("?")))))
             .withColumn("_prev_r", F.lag("_r").over(by_offset))
             .withColumn("_prev_pairs", F.lag("_pairs").over(by_offset)))
    left = state.select("topic_id", "partition_id", "offset", "append_time",
                        F.explode(F.array_except(F.coalesce("_prev_r", F.array().cast("array<int>")),
                                                 F.coalesce("_r", F.array().cast("array<int>")))).alias("broker_id"),
                        F.lit("removed").alias("kind"))
    moved = (state.select("topic_id", "partition_id", "offset", "append_time",
                          F.explode(F.array_except(F.coalesce("_prev_pairs", F.array().cast("array<string>")),
                                                   F.coalesce("_pairs", F.array().cast("array<string>")))).alias("_p"))
             .filter(~F.col("_p").endswith(":?"))
             .select("topic_id", "partition_id", "offset", "append_time",
                     F.split("_p", ":").getItem(0).cast("int").alias("broker_id"), F.lit("moved").alias("kind")))
    return (left.unionByName(moved).groupBy("topic_id", F.col("partition_id").alias("partition"), "broker_id")
            .agg(F.max("offset").alias("exit_offset"), F.max_by("append_time", "offset").alias("exit_time"),
                 F.max_by("kind", "offset").alias("exit_kind")))


def producer_id_records(ml: MetadataLog, block_size: int) -> DataFrame:
    """ProducerIdsRecords as blocks [NextProducerId - size, NextProducerId - 1]."""
    hist = _type(ml.history, "PRODUCER_IDS_RECORD").select(
        F.when((F.col("broker_epoch") == -1) & (F.col("broker_id") >= 0), "migration").otherwise("kraft_log").alias("source"),
        F.col("offset").alias("seq"), "broker_id", "broker_epoch", "next_producer_id", F.col("append_time").alias("event_time"),
        "source_file", F.coalesce("payload_json", F.lit("")).alias("detail"))
    snap = _type(ml.image.filter(F.col("pos") < 0), "PRODUCER_IDS_RECORD").select(
        F.lit("kraft_snapshot").alias("source"), F.col("offset").alias("seq"), "broker_id", "broker_epoch",
        "next_producer_id", F.lit(None).cast("timestamp").alias("event_time"), "source_file",
        F.coalesce("payload_json", F.lit("")).alias("detail"))
    both = hist.unionByName(snap)
    return both.select(
        "source", "seq", (F.col("source") == "kraft_log").alias("is_allocation"), "broker_id", "broker_epoch",
        (F.col("next_producer_id") - block_size).alias("first_producer_id"),
        (F.col("next_producer_id") - 1).alias("last_producer_id"), "next_producer_id", "event_time", "source_file",
        "detail")
