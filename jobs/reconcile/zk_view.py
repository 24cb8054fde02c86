"""The ZooKeeper controller's view from bronze_zk_events: topic znodes, delete markers, broker
registrations, producer-id blocks, and the controller/server log lines that date creations and deletions.

Paths are Kafka's (kafka-formats.md §7): /brokers/topics/<t>, /brokers/topics/<t>/partitions/<p>/state,
/admin/delete_topics/<t>, /brokers/ids/<id>, /latest_producer_id_block, /cluster/id.
"""
from __future__ import annotations

from pyspark.sql import DataFrame

from . import sql_functions as F

TOPIC_PATH = r"^/brokers/topics/([^/]+)$"
STATE_PATH = r"^/brokers/topics/([^/]+)/partitions/([0-9]+)/state$"
DELETE_PATH = r"^/admin/delete_topics/([^/]+)$"
BROKER_PATH = r"^/brokers/ids/([0-9]+)$"


def _znodes(events: DataFrame) -> DataFrame:
    return events.filter(F.col("source_kind") == "znode_dump")


def _lines(events: DataFrame) -> DataFrame:
    return events.filter(F.col("source_kind") != "znode_dump")


def topic_znodes(events: DataFrame) -> DataFrame:
    """One row per (topic, partition) of every /brokers/topics/<t> znode."""
    z = _znodes(events).filter(F.col("zk_path").rlike(TOPIC_PATH) | (F.col("event_type") == "topic_znode"))
    name = F.coalesce(F.col("topic_name"), F.regexp_extract("zk_path", TOPIC_PATH, 1))
    tid = F.coalesce(F.col("topic_id"), F.get_json_object("payload_json", "$.topic_id"))
    parts_map = F.from_json(F.get_json_object("payload_json", "$.partitions"), "map<string,array<int>>")
    adding = F.from_json(F.get_json_object("payload_json", "$.adding_replicas"), "map<string,array<int>>")
    removing = F.from_json(F.get_json_object("payload_json", "$.removing_replicas"), "map<string,array<int>>")
    base = z.select(name.alias("topic_name"), tid.alias("topic_id"), "partition", "replicas", "event_time",
                    "zk_version", parts_map.alias("_parts"), adding.alias("_add"), removing.alias("_rem"))
    per_row = base.filter(F.col("partition").isNotNull() & F.col("replicas").isNotNull()).select(
        "topic_name", "topic_id", "partition", "replicas", "event_time", "zk_version",
        F.try_element_at("_add", F.col("partition").cast("string")).alias("adding_replicas"),
        F.try_element_at("_rem", F.col("partition").cast("string")).alias("removing_replicas"))
    from_map = (base.filter(F.col("partition").isNull() & F.col("_parts").isNotNull())
                .select("topic_name", "topic_id", "event_time", "zk_version", "_add", "_rem",
                        F.explode("_parts").alias("_p", "replicas"))
                .select("topic_name", "topic_id", F.col("_p").cast("int").alias("partition"), "replicas",
                        "event_time", "zk_version",
                        F.try_element_at("_add", F.col("_p")).alias("adding_replicas"),
                        F.try_element_at("_rem", F.col("_p")).alias("removing_replicas")))
    return per_row.unionByName(from_map).dropDuplicates(["topic_name", "partition"])


def delete_markers(events: DataFrame) -> DataFrame:
    z = _znodes(events).filter(F.col("zk_path").rlike(DELETE_PATH) | (F.col("event_type") == "delete_marker"))
    return (z.select(F.coalesce("topic_name", F.regexp_extract("zk_path", DELETE_PATH, 1)).alias("topic_name"),
                     F.col("event_time").alias("marked_time"))
            .groupBy("topic_name").agg(F.min("marked_time").alias("marked_time")))


def deletion_lines(events: DataFrame) -> DataFrame:
    """topic_name, kind (started/halted/completed), event_time, message: TopicDeletionManager lines."""
    kinds = {"topic_deletion_requested": "started", "topic_deletion_started": "started",
             "topic_deletion_halted": "halted", "topic_deletion_completed": "completed", "topic_removed": "completed"}
    kind = F.lit(None).cast("string")
    for k, v in kinds.items():
        kind = F.when(F.col("event_type") == k, F.lit(v)).otherwise(kind)
    lines = _lines(events).withColumn("kind", kind).filter(F.col("kind").isNotNull() & F.col("topic_name").isNotNull())
    return lines.select("topic_name", "kind", "event_time", "message", "source_file", "broker_id", "payload_json")


def incarnations(events: DataFrame) -> DataFrame:
    topics = topic_znodes(events)
    live = topics.groupBy("topic_name").agg(F.first("topic_id", ignorenulls=True).alias("topic_id"),
                                            F.count("*").cast("int").alias("partition_count"),
                                            F.min("event_time").alias("znode_time"))
    markers = delete_markers(events)
    created = (_lines(events).filter((F.col("event_type") == "topic_created") & F.col("topic_name").isNotNull())
               .groupBy("topic_name", "topic_id").agg(F.min("event_time").alias("created_time")))
    deletions = deletion_lines(events)
    completed = deletions.filter(F.col("kind") == "completed").groupBy("topic_name").agg(
        F.max("event_time").alias("completed_time"))
    live_rows = (live.join(markers, "topic_name", "left").join(created, ["topic_name", "topic_id"], "left")
                 .select("topic_id", "topic_name", F.lit("zookeeper").alias("source"), F.lit(False).alias("in_snapshot"),
                         F.lit(None).cast("long").alias("created_offset"),
                         F.coalesce("created_time", "znode_time").alias("created_time"),
                         F.col("created_time").isNull().alias("created_before_history"),
                         F.lit(False).alias("deleted"), F.lit(None).cast("long").alias("deleted_offset"),
                         F.lit(None).cast("timestamp").alias("deleted_time"),
                         F.col("marked_time").isNotNull().alias("delete_pending"),
                         F.col("marked_time").alias("delete_requested_time"),
                         F.lit(True).alias("is_live"), "partition_count",
                         F.col("partition_count").alias("initial_partition_count"),
                         F.lit(None).cast("string").alias("partition_count_changes_json"),
                         F.lit(False).alias("whole_life_in_history")))
    # ids created in the logs that are no longer the live id of their name: deleted when a completion follows
    gone = (created.join(live.select("topic_name", F.col("topic_id").alias("_live_id")), "topic_name", "left")
            .filter(F.col("_live_id").isNull() | (F.col("_live_id") != F.col("topic_id")) | F.col("topic_id").isNull())
            .filter(F.col("topic_id").isNotNull() | F.col("_live_id").isNull())
            .join(completed, "topic_name", "left")
            .select("topic_id", "topic_name", F.lit("zookeeper").alias("source"), F.lit(False).alias("in_snapshot"),
                    F.lit(None).cast("long").alias("created_offset"), "created_time",
                    F.lit(False).alias("created_before_history"),
                    (F.col("completed_time") > F.col("created_time")).alias("deleted"),
                    F.lit(None).cast("long").alias("deleted_offset"),
                    F.when(F.col("completed_time") > F.col("created_time"), F.col("completed_time")).alias("deleted_time"),
                    F.lit(False).alias("delete_pending"), F.lit(None).cast("timestamp").alias("delete_requested_time"),
                    F.lit(False).alias("is_live"), F.lit(None).cast("int").alias("partition_count"),
                    F.lit(None).cast("int").alias("initial_partition_count"),
                    F.lit(None).cast("string").alias("partition_count_changes_json"),
                    F.lit(True).alias("whole_life_in_history")))
    # names whose deletion completed with no creation line and no live znode: an incarnation of unknown id
    anon = (completed.join(live.select("topic_name"), "topic_name", "left_anti")
            .join(created.select("topic_name"), "topic_name", "left_anti")
            .select(F.lit(None).cast("string").alias("topic_id"), "topic_name", F.lit("zookeeper").alias("source"),
                    F.lit(False).alias("in_snapshot"), F.lit(None).cast("long").alias("created_offset"),
                    F.lit(None).cast("timestamp").alias("created_time"), F.lit(True).alias("created_before_history"),
                    F.lit(True).alias("deleted"), F.lit(None).cast("long").alias("deleted_offset"),
                    F.col("completed_time").alias("deleted_time"), F.lit(False).alias("delete_pending"),
                    F.lit(None).cast("timestamp").alias("delete_requested_time"), F.lit(False).alias("is_live"),
                    F.lit(None).cast("int").alias("partition_count"), F.lit(None).cast("int").alias("initial_partition_count"),
                    F.lit(None).cast("string").alias("partition_count_changes_json"),
                    F.lit(False).alias("whole_life_in_history")))
    return live_rows.unionByName(gone).unionByName(anon)


def assignments(events: DataFrame) -> DataFrame:
    topics = topic_znodes(events)
    states = (_znodes(events).filter(F.col("zk_path").rlike(STATE_PATH) | (F.col("event_type") == "partition_state"))
              .select(F.coalesce("topic_name", F.regexp_extract("zk_path", STATE_PATH, 1)).alias("topic_name"),
                      F.coalesce(F.col("partition"), F.regexp_extract("zk_path", STATE_PATH, 2).cast("int")).alias("partition"),
                      F.from_json(F.get_json_object("payload_json", "$.isr"), "array<int>").alias("isr"),
                      F.get_json_object("payload_json", "$.leader").cast("int").alias("leader"),
                      F.get_json_object("payload_json", "$.leader_epoch").cast("int").alias("leader_epoch"),
                      F.col("event_time").alias("state_time"))
              .dropDuplicates(["topic_name", "partition"]))
    counts = topics.groupBy("topic_name").agg(F.count("*").cast("int").alias("partition_count"))
    marked = delete_markers(events).select("topic_name", F.lit(True).alias("_marked"))
    return (topics.join(states, ["topic_name", "partition"], "left").join(counts, "topic_name")
            .join(marked, "topic_name", "left")
            .select("topic_id", "topic_name", "partition", "partition_count", "replicas", "isr", "leader",
                    F.coalesce("adding_replicas", F.array().cast("array<int>")).alias("adding_replicas"),
                    F.coalesce("removing_replicas", F.array().cast("array<int>")).alias("removing_replicas"),
                    F.lit(None).cast("array<string>").alias("directories"),
                    F.lit(None).cast("long").alias("last_change_offset"),
                    F.greatest("event_time", "state_time").alias("last_change_time"),
                    F.coalesce("_marked", F.lit(False)).alias("marked_for_deletion"),
                    F.lit("zookeeper").alias("source"), "leader_epoch"))


def brokers(events: DataFrame) -> DataFrame:
    z = _znodes(events).filter(F.col("zk_path").rlike(BROKER_PATH))
    return z.select(
        F.regexp_extract("zk_path", BROKER_PATH, 1).cast("int").alias("broker_id"),
        F.lit(True).alias("registered"), F.lit(False).alias("unregistered"), F.lit(False).alias("fenced"),
        F.lit(None).cast("long").alias("broker_epoch"), F.lit(None).cast("long").alias("registration_offset"),
        F.col("event_time").alias("registration_time"), F.lit(None).cast("array<string>").alias("registered_log_dirs"),
        F.lit(None).cast("array<string>").alias("known_log_dirs"),
        F.lit("zookeeper").alias("source")).dropDuplicates(["broker_id"])


def cluster_id(events: DataFrame) -> DataFrame:
    z = _znodes(events).filter(F.col("zk_path") == "/cluster/id")
    return z.select(F.get_json_object("payload_json", "$.id").alias("cluster_id")).filter(F.col("cluster_id").isNotNull())


def renamed_for_delete(events: DataFrame) -> DataFrame:
    """broker_id, dir_name, event_time of 'Log for partition ... is renamed to ...-delete' lines."""
    lines = _lines(events).filter(F.col("event_type") == "log_renamed_for_delete")
    path = F.coalesce(F.get_json_object("payload_json", "$.dir"), F.regexp_extract("message", r"renamed to (\S+?-delete)", 1))
    return lines.select("broker_id", F.regexp_extract(path, r"([^/\\]+)/*$", 1).alias("dir_name"),
                        F.col("event_time").alias("renamed_time")).filter(F.col("dir_name") != "")


def producer_id_blocks(events: DataFrame, migrating: bool) -> DataFrame:
    """The /latest_producer_id_block znode and 'Acquired new producerId block' lines as blocks.

    In dual-write (migration) a znode with broker -1 names the NEXT, unallocated block (kafka-formats §6.5)."""
    znode = _znodes(events).filter((F.col("zk_path") == "/latest_producer_id_block")
                                   | (F.col("event_type") == "producer_id_block"))
    start = F.coalesce(F.col("block_start"), F.get_json_object("payload_json", "$.block_start").cast("long"))
    end = F.coalesce(F.col("block_end"), F.get_json_object("payload_json", "$.block_end").cast("long"))
    owner = F.coalesce(F.col("broker_id"), F.get_json_object("payload_json", "$.broker").cast("int"))
    z = znode.select(F.lit("zk_znode").alias("source"), F.col("seq"), owner.alias("broker_id"),
                     start.alias("first_producer_id"), end.alias("last_producer_id"), "event_time", "source_file",
                     F.coalesce("payload_json", "message").alias("detail"))
    z = z.withColumn("is_allocation", ~((F.col("broker_id") == -1) & F.lit(migrating)))
    acquired = _lines(events).filter(F.col("event_type") == "producer_id_block_acquired")
    a = acquired.select(F.lit("zk_log").alias("source"), "seq", "broker_id",
                        F.col("block_start").alias("first_producer_id"), F.col("block_end").alias("last_producer_id"),
                        "event_time", "source_file", F.col("message").alias("detail"), F.lit(True).alias("is_allocation"))
    both = z.unionByName(a)
    return both.select("source", "seq", "is_allocation", "broker_id", F.lit(None).cast("long").alias("broker_epoch"),
                       "first_producer_id", "last_producer_id",
                       (F.col("last_producer_id") + 1).alias("next_producer_id"), "event_time", "source_file", "detail")

