"""Silver builders: the controller's view (KRaft replay or ZooKeeper znodes) and every replica dir joined
to it by topic id. Pure DataFrame transforms; the few driver collects are scalars (cluster id, mode)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pyspark.sql import DataFrame, SparkSession, Window

from jobs.driver_threads import map_at_once
from jobs.engine.local_frames import local_frame

from . import kraft_view, zk_view
from . import sql_functions as F
from .catalogue import Thresholds
from .frames import (
    assigned_element,
    basename,
    empty,
    int_list_text,
    materialize,
    one_row,
    real_directory,
    small_side,
)
from .metadata_log import MetadataLog, build_metadata_log

REPLICA_KINDS = ("partition", "future", "delete", "stray")
REPLICA_EXITS_SCHEMA = ("topic_id string, partition int, broker_id int, exit_offset long, exit_time timestamp, "
                        "exit_kind string")  # kraft_view.replica_exits; empty without a KRaft log
BROKER_VIEW_SCHEMA = ("broker_id int, registered boolean, unregistered boolean, fenced boolean, broker_epoch long, "
                      "registration_offset long, registration_time timestamp, registered_log_dirs array<string>, "
                      "known_log_dirs array<string>, source string")
# log dir states (silver_log_dirs.state); the last three keep their replica dirs out of per-replica checks
LOG_DIR_STATES = ("registered", "cordoned", "unregistered", "offline", "no_dir_registration", "controller_metadata",
                  "decommissioned", "foreign")
UNRECONCILED_STATES = ("controller_metadata", "decommissioned", "foreign")


@dataclass
class ControllerView:
    mode: str                  # kraft, migration, zookeeper, none
    cluster_id: Optional[str]
    ml: MetadataLog
    incarnations: DataFrame
    assignments: DataFrame
    brokers: DataFrame
    exits: DataFrame           # topic_id, partition, broker_id, exit_offset, exit_time, exit_kind
    pid_blocks: DataFrame
    renamed_for_delete: DataFrame
    controllers: DataFrame     # node_id of every registered controller (RegisterControllerRecord)
    registrations: DataFrame   # silver_node_registrations rows (without run columns)
    cordons: Optional[DataFrame] = None  # kraft_view.CORDONS_SCHEMA: dirs cordoned now (KIP-1066), since when

    @property
    def kraft_rules(self) -> bool:
        """Brokers apply KRaft's stray rules (a dir without topic id is stray)."""
        return self.mode in ("kraft", "migration")

    @property
    def known(self) -> bool:
        return self.mode != "none"


def controller_view(spark: SparkSession, bronze: dict, thresholds: Thresholds, at_once: int = 1) -> ControllerView:
    """The controller's side of the capture, from whichever of the KRaft log and ZooKeeper it has; its frames are
    materialized up to ``at_once`` at a time (jobs.driver_threads)."""
    ml = build_metadata_log(spark, bronze["bronze_metadata_records"], bronze["bronze_metadata_copies"],
                            bronze.get("bronze_metadata_batches"))
    events, log_dirs = bronze["bronze_zk_events"], bronze["bronze_log_dirs"]
    named = log_dirs.filter(F.col("cluster_id").isNotNull()).groupBy("cluster_id").count()
    probe = one_row(  # null where a frame has no rows
        events.agg(F.max(F.col("source_kind") == "znode_dump").alias("has_zk")),
        zk_view.cluster_id(events).agg(F.first("cluster_id").alias("zk_cluster")),
        ml.image.agg(F.count(F.lit(1)).alias("image_rows")),
        ml.image.filter(F.col("record_type") == "ZK_MIGRATION_STATE_RECORD").agg(
            F.max_by("zk_migration_state", "pos").alias("state")),
        log_dirs.agg(F.max(F.col("meta_version") == 0).alias("zk_dirs")),
        # the cluster id most log dirs name (ties: the smallest), for a capture without a ZooKeeper dump
        named.agg(F.min_by("cluster_id", F.struct(-F.col("count"), F.col("cluster_id"))).alias("disk_cluster")))
    has_zk = bool(probe["has_zk"])
    has_kraft = ml.present and probe["image_rows"] > 0
    migrating = has_kraft and (has_zk or bool(probe["zk_dirs"]) or probe["state"] in (1, 2))
    mode = "migration" if migrating else "kraft" if has_kraft else "zookeeper" if has_zk else "none"
    zk_cluster = probe["zk_cluster"] if has_zk else None
    cluster = zk_cluster if zk_cluster is not None else probe["disk_cluster"]

    size = thresholds.producer_id_block_size
    if has_kraft:
        inc, asg, brk = kraft_view.incarnations(ml), kraft_view.assignments(ml), kraft_view.brokers(ml)
        exits = kraft_view.replica_exits(ml)
        pids = kraft_view.producer_id_records(ml, size)
        if has_zk:
            pids = pids.unionByName(zk_view.producer_id_blocks(events, migrating=True))
    elif has_zk:
        inc, asg, brk = zk_view.incarnations(events), zk_view.assignments(events), zk_view.brokers(events)
        exits = local_frame(spark, [], REPLICA_EXITS_SCHEMA)
        pids = zk_view.producer_id_blocks(events, migrating=False)
    else:
        inc = _empty_like(spark, "silver_topic_incarnations")
        asg = _empty_like(spark, "silver_partition_assignments")
        brk = local_frame(spark, [], BROKER_VIEW_SCHEMA)
        exits = local_frame(spark, [], REPLICA_EXITS_SCHEMA)
        pids = _empty_like(spark, "silver_producer_id_blocks")
    if has_kraft:
        ctl, regs = kraft_view.controllers(ml), kraft_view.registration_events(ml)
    else:
        ctl = local_frame(spark, [], "node_id int")
        regs = _empty_like(spark, "silver_node_registrations").drop("capture_id", "run_id", "cluster_id")
    inc, asg, brk, exits, pids, renamed, ctl = map_at_once(
        materialize, [inc, asg, brk, exits, pids, zk_view.renamed_for_delete(events), ctl], at_once)
    cordons = kraft_view.cordons(ml) if has_kraft else local_frame(spark, [], kraft_view.CORDONS_SCHEMA)
    return ControllerView(mode, cluster, ml, inc, asg, brk, exits, pids, renamed, ctl, regs, cordons)


def _empty_like(spark: SparkSession, name: str) -> DataFrame:
    from jobs.tables.registry import spec
    return empty(spark, spec(name))


def silver_brokers(view: ControllerView, log_dirs: DataFrame) -> DataFrame:
    """Every node seen in the metadata, on disk or in a replica set, with its role and state at capture time.
    A dedicated controller (RegisterControllerRecord, no broker registration) is role ``controller``, state
    ``controller``: it has no replicas and is never an absent broker."""
    captured = log_dirs.filter(F.col("broker_id").isNotNull()).groupBy("broker_id").agg(
        F.count("*").cast("int").alias("log_dir_count"))
    assigned = view.assignments.select(F.explode("replicas").alias("broker_id")).distinct()
    ctl = view.controllers.select(F.col("node_id").alias("broker_id"), F.lit(True).alias("_controller"))
    ids = (view.brokers.select("broker_id").unionByName(captured.select("broker_id"))
           .unionByName(assigned.select("broker_id")).unionByName(ctl.select("broker_id")).distinct())
    out = (ids.join(view.brokers, "broker_id", "left").join(captured, "broker_id", "left")
           .join(ctl, "broker_id", "left"))
    registered = F.coalesce(F.col("registered"), F.lit(False))
    fenced = F.coalesce(F.col("fenced"), F.lit(False))
    is_broker = F.col("source").isNotNull()
    is_controller = F.coalesce(F.col("_controller"), F.lit(False))
    role = (F.when(is_broker & is_controller, "broker+controller").when(is_controller, "controller")
            .otherwise("broker"))
    state = (F.when(registered & fenced, "fenced").when(registered, "active")
             .when(F.coalesce(F.col("unregistered"), F.lit(False)), "unregistered")
             .when(is_controller, "controller").otherwise("absent"))
    return out.select(
        F.col("broker_id").cast("int").alias("broker_id"),
        role.alias("role"),
        state.alias("state"),
        registered.alias("registered"), (registered & fenced).alias("fenced"),
        "broker_epoch", "registration_offset", "registration_time", "registered_log_dirs", "known_log_dirs",
        F.col("log_dir_count").isNotNull().alias("captured"),
        F.coalesce("log_dir_count", F.lit(0)).alias("log_dir_count"),
        F.coalesce("source", F.when(is_controller, F.lit("kraft")), F.lit("capture")).alias("source"),
    )


def _assigned_dirs(view: ControllerView) -> DataFrame:
    """(broker_id, directory_id) -> partitions the metadata assigns to that directory (real ids only)."""
    a = (view.assignments.filter(~F.col("marked_for_deletion"))
         .select("topic_name", "partition", F.posexplode("replicas").alias("_i", "broker_id"), "directories")
         .withColumn("directory_id", F.try_element_at("directories", (F.col("_i") + 1).cast("int")))
         .filter(real_directory(F.col("directory_id"))))
    return a.groupBy("broker_id", "directory_id").agg(
        F.count("*").cast("int").alias("assigned_partitions"),
        F.sort_array(F.collect_list(F.concat_ws("-", "topic_name", F.col("partition").cast("string"))))
        .alias("assigned_list"))


def silver_log_dirs(view: ControllerView, log_dirs: DataFrame, dir_entries: DataFrame, brokers: DataFrame,
                    cluster_id: Optional[str]) -> DataFrame:
    """Every captured log dir with its state, plus one row per offline dir (a directory its broker registered
    or is assigned replicas in, missing from its latest registration and not captured).

    registered: in its broker's latest registration (RegisterBrokerRecord LogDirs, narrowed by a later
    BrokerRegistrationChangeRecord); cordoned: registered, and cordoned by its broker (KIP-1066, Kafka 4.3:
    CordonedLogDirs; Kafka places no new replica there, the ones inside stay served); unregistered: the broker listed it before (or the metadata assigns
    replicas to it) but not now - a dir that failed and came back; offline: such a dir that is not in the
    capture; no_dir_registration: registrations carry no LogDirs (ZooKeeper, KRaft before 3.7);
    controller_metadata: a controller's metadata dir (RegisterControllerRecord, or a node that never
    registered as a broker holding only __cluster_metadata-0); decommissioned: its broker was unregistered;
    foreign: another cluster, a directory.id another broker registered, or one no broker ever registered."""
    entries = dir_entries.filter(F.col("entry_kind").isin(*REPLICA_KINDS))
    sizes = dir_entries.groupBy("log_dir").agg(F.sum("bytes").alias("bytes"))
    counts = entries.groupBy("log_dir").agg(F.count("*").cast("int").alias("replica_dirs"))
    nodes = brokers.select("broker_id", "role", F.col("state").alias("broker_state"), "registered_log_dirs",
                           "known_log_dirs", F.col("source").alias("_node_source"))
    owners = (brokers.select("broker_id", F.explode_outer("known_log_dirs").alias("directory_id"))
              .filter(F.col("directory_id").isNotNull())
              .groupBy("directory_id").agg(F.sort_array(F.collect_set("broker_id")).alias("_owners")))
    any_listed = F.lit(brokers.filter(F.size(F.coalesce("known_log_dirs", F.array())) > 0).limit(1).count() > 0)
    asg = _assigned_dirs(view)
    cordons = view.cordons.select("broker_id", "directory_id", "cordoned_since", "cordoned_offset") \
        if view.cordons is not None else None
    d = (log_dirs.select("broker_id", "log_dir", "cluster_id", "directory_id", "has_metadata_log")
         .join(sizes, "log_dir", "left").join(counts, "log_dir", "left")
         .join(nodes, "broker_id", "left").join(owners, "directory_id", "left")
         .join(asg, ["broker_id", "directory_id"], "left"))
    if cordons is not None:
        d = d.join(cordons, ["broker_id", "directory_id"], "left")
    else:
        d = d.withColumn("cordoned_since", F.lit(None).cast("timestamp")).withColumn(
            "cordoned_offset", F.lit(None).cast("long"))
    cordoned = F.col("cordoned_offset").isNotNull()
    replica_dirs = F.coalesce(F.col("replica_dirs"), F.lit(0))
    other_cluster = F.lit(False) if cluster_id is None else (
        F.col("cluster_id").isNotNull() & (F.col("cluster_id") != F.lit(cluster_id)))
    is_broker_node = F.col("_node_source").isin("kraft", "zookeeper") & (F.col("role") != "controller")
    controller_dir = ((F.col("role") == "controller")
                      | (~F.coalesce(is_broker_node, F.lit(False)) & F.coalesce(F.col("has_metadata_log"), F.lit(False))
                         & (replica_dirs == 0)))
    in_current = F.coalesce(F.array_contains("registered_log_dirs", F.col("directory_id")), F.lit(False))
    known_here = (F.coalesce(F.array_contains("known_log_dirs", F.col("directory_id")), F.lit(False))
                  | F.col("assigned_partitions").isNotNull())
    other_owner = (F.col("_owners").isNotNull() & ~F.coalesce(F.array_contains("_owners", F.col("broker_id")),
                                                               F.lit(False)))
    listed = any_listed & F.col("directory_id").isNotNull()
    state = (F.when(other_cluster, "foreign")
             .when(controller_dir, "controller_metadata")
             .when(F.col("broker_state") == "unregistered", "decommissioned")
             .when(listed & other_owner, "foreign")
             .when(listed & in_current & cordoned, "cordoned")
             .when(listed & in_current, "registered")
             .when(listed & known_here, "unregistered")
             .when(listed, "foreign")
             .otherwise("no_dir_registration"))
    reason = (F.when(other_cluster, F.concat(F.lit("cluster.id "), F.col("cluster_id"), F.lit(" is not "),
                                             F.lit(cluster_id)))
              .when(controller_dir, F.concat(F.lit("metadata dir of controller "), F.col("broker_id").cast("string"),
                                             F.lit(": holds a copy of __cluster_metadata-0 and no replicas")))
              .when(F.col("broker_state") == "unregistered",
                    F.concat(F.lit("broker "), F.col("broker_id").cast("string"),
                             F.lit(" was unregistered (UnregisterBrokerRecord): nothing will ever read this dir")))
              .when(listed & other_owner, F.concat(F.lit("directory.id "), F.col("directory_id"),
                                                   F.lit(" is registered by broker "),
                                                   F.array_join(F.col("_owners").cast("array<string>"), ", "),
                                                   F.lit(" (meta.properties says node.id "),
                                                   F.col("broker_id").cast("string"), F.lit(")")))
              .when(listed & in_current & cordoned, F.concat(
                  F.lit("in the broker's latest registration, cordoned (CordonedLogDirs) since offset "),
                  F.col("cordoned_offset").cast("string")))
              .when(listed & in_current, F.lit("in the broker's latest registration"))
              .when(listed & known_here, F.concat(
                  F.lit("directory.id "), F.col("directory_id"), F.lit(" is not in broker "),
                  F.col("broker_id").cast("string"), F.lit("'s latest registration (LogDirs "),
                  F.array_join(F.coalesce("registered_log_dirs", F.array()), ", "), F.lit(")")))
              .when(listed, F.concat(F.lit("directory.id "), F.col("directory_id"),
                                     F.lit(" is registered by no broker (meta.properties says node.id "),
                                     F.col("broker_id").cast("string"), F.lit(")")))
              .otherwise(F.lit("registrations list no log dirs (ZooKeeper or KRaft before 3.7)")))
    captured = d.select(
        "broker_id", F.coalesce("role", F.lit("broker")).alias("node_role"), "broker_state", "log_dir",
        basename(F.col("log_dir")).alias("log_dir_name"), "directory_id", state.alias("state"), reason.alias("reason"),
        F.lit(True).alias("captured"), F.coalesce("has_metadata_log", F.lit(False)).alias("has_metadata_log"),
        replica_dirs.alias("replica_dirs"), F.coalesce("bytes", F.lit(0)).cast("long").alias("bytes"),
        F.coalesce("assigned_partitions", F.lit(0)).alias("assigned_partitions"),
        F.coalesce("assigned_list", F.array().cast("array<string>")).alias("assigned_list"),
        F.when(state == "cordoned", F.col("cordoned_since")).alias("cordoned_since"))
    # offline: dirs of a captured, registered broker that left its registration (or never were in it) but still
    # have replicas assigned, and are not in the capture
    seen = log_dirs.filter(F.col("directory_id").isNotNull()).select(
        "broker_id", "directory_id", F.lit(True).alias("_seen"))
    live = brokers.filter(F.col("registered") & F.col("captured")).select(
        "broker_id", "role", F.col("state").alias("broker_state"), "registered_log_dirs", "known_log_dirs")
    gone = (asg.join(live, "broker_id").join(seen, ["broker_id", "directory_id"], "left")
            .filter(F.col("_seen").isNull() & F.col("registered_log_dirs").isNotNull()
                    & ~F.array_contains("registered_log_dirs", F.col("directory_id"))))
    offline = gone.select(
        "broker_id", F.coalesce("role", F.lit("broker")).alias("node_role"), "broker_state",
        F.lit(None).cast("string").alias("log_dir"), F.lit(None).cast("string").alias("log_dir_name"), "directory_id",
        F.lit("offline").alias("state"),
        F.concat(F.lit("directory "), F.col("directory_id"), F.lit(" is not in broker "),
                 F.col("broker_id").cast("string"), F.lit("'s latest registration (LogDirs "),
                 F.array_join(F.coalesce("registered_log_dirs", F.array()), ", "),
                 F.lit(") and is not in the capture: Kafka marked it offline")).alias("reason"),
        F.lit(False).alias("captured"), F.lit(False).alias("has_metadata_log"), F.lit(0).alias("replica_dirs"),
        F.lit(0).cast("long").alias("bytes"), "assigned_partitions", "assigned_list",
        F.lit(None).cast("timestamp").alias("cordoned_since"))
    return captured.unionByName(offline)


def silver_replicas(view: ControllerView, dir_entries: DataFrame, brokers: DataFrame,
                    log_dirs: Optional[DataFrame] = None) -> DataFrame:
    """Every replica dir joined to its incarnation (by topic id), the live id of its name, and its assignment.
    Dirs of foreign, decommissioned and controller log dirs (silver_log_dirs) are left out: one finding per log
    dir speaks for them."""
    if log_dirs is not None:
        skip = log_dirs.filter(F.col("state").isin(*UNRECONCILED_STATES) & F.col("log_dir").isNotNull())
        dir_entries = dir_entries.join(small_side(skip.select("log_dir")), "log_dir", "left_anti")
    d = (dir_entries.filter(F.col("entry_kind").isin(*REPLICA_KINDS))
         .select("broker_id", "log_dir", basename(F.col("log_dir")).alias("log_dir_name"), "directory_id",
                 F.col("entry_name").alias("dir_name"), "entry_kind", F.col("topic").alias("topic_from_name"),
                 "partition", "topic_id", "pm_status", "pm_message", "bytes", "segment_count", "newest_mtime",
                 "log_start_offset", "newest_segment_offset", "log_end_offset", "tail_scanned",
                 "newest_segment_bytes", "index_last_position"))
    inc = view.incarnations
    by_id = (inc.filter(F.col("topic_id").isNotNull()).groupBy("topic_id").agg(
        F.first("topic_name", ignorenulls=True).alias("inc_name"), F.max("is_live").alias("_live"),
        F.max("deleted").alias("_deleted"), F.max("deleted_time").alias("_deleted_time")))
    live_names = (inc.filter("is_live").groupBy("topic_name")
                  .agg(F.first("topic_id", ignorenulls=True).alias("live_topic_id"))
                  .withColumn("_name_live", F.lit(True)))
    name_deleted = (inc.filter("deleted OR delete_pending").groupBy("topic_name")
                    .agg(F.max("deleted_time").alias("_name_deleted_time"),
                         F.max(F.col("deleted")).alias("_name_deleted"))
                    .withColumn("name_delete_evidence", F.lit(True)))
    parsed_name = F.when(F.col("entry_kind").isin("partition", "future"), F.col("topic_from_name"))
    r = (d.join(small_side(by_id), "topic_id", "left")
         .withColumn("topic_name", F.coalesce("inc_name", "topic_from_name"))
         .join(small_side(live_names), "topic_name", "left")
         .join(small_side(name_deleted), "topic_name", "left"))
    zk_only = F.lit(view.mode == "zookeeper")
    id_state = (F.when(F.col("topic_id").isNull(), "none")
                .when(F.col("_live"), "live")
                .when(F.col("_deleted"), "deleted")
                .when(zk_only & F.col("inc_name").isNull() & F.coalesce("_name_deleted", F.lit(False))
                      & parsed_name.isNotNull(), "deleted")
                .otherwise("unknown"))
    deleted_time = F.when(F.col("_deleted"), F.col("_deleted_time")).otherwise(F.col("_name_deleted_time"))
    r = r.withColumn("id_state", id_state).withColumn("deleted_time", F.when(F.col("id_state") == "deleted", deleted_time))

    asg = view.assignments
    by_id_asg = asg.filter(F.col("topic_id").isNotNull()).select(
        "topic_id", "partition", F.col("replicas").alias("_r1"), F.col("isr").alias("_i1"),
        F.col("directories").alias("_d1"), F.col("partition_count").alias("_c1"))
    # by name only where ids cannot decide (a dir without partition.metadata, a ZooKeeper topic without id);
    # one row per name and partition even if a name has two live ids
    by_name_asg = asg.groupBy("topic_name", "partition").agg(
        F.max_by(F.struct(F.col("topic_id").alias("_asg_tid"), F.col("replicas").alias("_r2"), F.col("isr").alias("_i2"),
                          F.col("directories").alias("_d2"), F.col("partition_count").alias("_c2")),
                 F.coalesce(F.col("last_change_offset"), F.lit(-1))).alias("_n")).select("topic_name", "partition", "_n.*")
    counts = asg.groupBy("topic_id").agg(F.max("partition_count").alias("_count_by_id"))
    name_counts = asg.groupBy("topic_name").agg(F.max("partition_count").alias("_count_by_name"))
    # per partition: not broadcast (a million partitions would be a large broadcast built on the driver)
    r = (r.join(by_id_asg, ["topic_id", "partition"], "left")
         .join(by_name_asg, ["topic_name", "partition"], "left")
         .join(small_side(counts), "topic_id", "left").join(small_side(name_counts), "topic_name", "left"))
    use_name = F.col("topic_id").isNull() | F.col("_asg_tid").isNull()
    replicas = F.when(F.col("_r1").isNotNull(), F.col("_r1")).when(use_name, F.col("_r2"))
    isr = F.when(F.col("_r1").isNotNull(), F.col("_i1")).when(use_name, F.col("_i2"))
    dirs = F.when(F.col("_r1").isNotNull(), F.col("_d1")).when(use_name, F.col("_d2"))
    r = (r.withColumn("_replicas", replicas)
         .withColumn("assigned", F.coalesce(F.array_contains("_replicas", F.col("broker_id")), F.lit(False)))
         .withColumn("in_isr", F.coalesce(F.array_contains(isr, F.col("broker_id")), F.lit(False)))
         .withColumn("assigned_directory_id", assigned_element(dirs, F.col("_replicas"), F.col("broker_id")))
         .withColumn("partition_count", F.when(F.col("id_state") == "live", F.col("_count_by_id"))
                     .otherwise(F.col("_count_by_name"))))
    r = r.join(small_side(brokers.select("broker_id", F.col("state").alias("broker_state"))), "broker_id", "left")

    name_live = F.coalesce(F.col("_name_live"), F.lit(False))
    kraft = F.lit(view.kraft_rules)
    not_assigned_reason = F.when(
        F.col("_replicas").isNull(),
        F.format_string("partition %d is beyond the topic's %d partitions", F.col("partition"),
                        F.coalesce(F.col("partition_count"), F.lit(0))),
    ).otherwise(F.format_string("the current replica assignment %s does not contain the local brokerId %d",
                                int_list_text(F.col("_replicas")), F.col("broker_id")))
    by_assignment = F.when(F.col("assigned"), F.lit("valid")).otherwise(F.lit("stray_not_assigned"))
    cls = (F.when(F.col("entry_kind") == "stray", "stray_dir")
           .when(F.col("entry_kind") == "delete", "delete_dir")
           .when((F.col("pm_status") == "missing") & kraft, "missing_partition_metadata")
           .when(F.col("pm_status").isin("log_dir_offline", "broker_start_fails"), "corrupt_partition_metadata")
           .when(F.lit(not view.known), "no_controller_view")
           .when(F.col("id_state") == "live", by_assignment)
           .when(name_live & (F.col("topic_id").isNull() | F.col("live_topic_id").isNull()), by_assignment)
           .when(name_live & (F.col("id_state") == "deleted"), "stale_topic_id")
           .when(name_live & zk_only & ~F.coalesce("name_delete_evidence", F.lit(False)), "topic_id_changed")
           .when(name_live, "stale_topic_id")
           .when(F.col("id_state") == "deleted", "deleted")
           .otherwise("orphan"))
    r = r.withColumn("classification", cls)
    reason = (F.when(F.col("classification") == "stray_not_assigned", not_assigned_reason)
              .when(F.col("classification") == "missing_partition_metadata",
                    F.lit("The topicId does not exist in the log, Kafka treats it as a stray log"))
              .when(F.col("classification") == "corrupt_partition_metadata", F.col("pm_message"))
              .when(F.col("classification").isin("stale_topic_id", "orphan", "deleted"),
                    F.format_string("the topicId %s does not exist in the metadata image", F.col("topic_id")))
              .when(F.col("classification") == "topic_id_changed",
                    F.format_string("topic id %s differs from the controller's %s and no delete is recorded",
                                    F.col("topic_id"), F.col("live_topic_id"))))
    r = r.withColumn("reason", reason)
    cols = ["broker_id", "broker_state", "log_dir", "log_dir_name", "directory_id", "dir_name", "entry_kind",
            "topic_from_name", "partition", "topic_id", "pm_status", "pm_message", "bytes", "segment_count",
            "newest_mtime", "log_start_offset", "newest_segment_offset", "log_end_offset", "tail_scanned",
            "newest_segment_bytes", "index_last_position", "topic_name", "id_state", "deleted_time",
            "live_topic_id", F.coalesce("name_delete_evidence", F.lit(False)).alias("name_delete_evidence"),
            "assigned", "in_isr", "assigned_directory_id", "partition_count", "classification", "reason",
            F.col("_replicas").alias("replicas")]
    return r.select(*cols)


def silver_producer_ids(view: ControllerView, producer_states: DataFrame, blocks: DataFrame,
                        block_size: int = 1000) -> DataFrame:
    """Producer ids on brokers with the allocation holding each: an equi-join on block-sized buckets (each
    allocation exploded to the buckets it touches), not a range join."""
    # transaction markers name the same producers as their data batches; they end transactions, see checks_transactions
    used = producer_states.filter(F.col("producer_id").isNotNull() & (F.col("producer_id") >= 0)
                                  & (F.col("source_kind") != "txn_marker")).select(
        "producer_id", "producer_epoch", "broker_id", "log_dir", "entry_name", "topic", "topic_id", "partition",
        "source_kind", "source_file", F.col("timestamp").alias("last_timestamp"),
        F.floor(F.col("producer_id") / block_size).cast("long").alias("_bucket"))
    first_bucket = F.floor(F.col("first_producer_id") / block_size).cast("long")
    alloc = (blocks.filter("is_allocation").filter(F.col("first_producer_id") <= F.col("last_producer_id"))
             .select(F.col("first_producer_id").alias("_first"), F.col("last_producer_id").alias("_last"),
                     F.col("broker_id").alias("block_broker_id"),
                     F.explode(F.sequence(first_bucket, F.least(F.floor(F.col("last_producer_id") / block_size)
                                                                .cast("long"), first_bucket + 1000))).alias("_bucket")))
    high_water = blocks.agg(F.max("next_producer_id").alias("_hw"))
    joined = used.join(alloc, (used["_bucket"] == alloc["_bucket"]) & (F.col("producer_id") >= F.col("_first"))
                       & (F.col("producer_id") <= F.col("_last")), "left").drop(alloc["_bucket"])
    one = Window.partitionBy("broker_id", "log_dir", "entry_name", "source_file", "producer_id").orderBy(
        F.col("_first").desc_nulls_last())
    joined = joined.withColumn("_rn", F.row_number().over(one)).filter("_rn = 1").crossJoin(F.broadcast(high_water))
    return joined.select(
        "producer_id", "producer_epoch", "broker_id", "log_dir", "entry_name", "topic", "topic_id", "partition",
        "source_kind", "source_file", "last_timestamp",
        (F.col("_first").isNotNull() | (F.col("_hw").isNotNull() & (F.col("producer_id") < F.col("_hw")))).alias("in_block"),
        F.col("_first").alias("block_first"), "block_broker_id", F.col("_hw").alias("high_water"))
