"""Stale-replica checks: one finding per replica dir (precedence in findings.py), plus per-partition
MISSING_REPLICA / DUPLICATE_REPLICA / TOPIC_ID_DIVERGENCE (log-dir findings: checks_log_dirs.py).

Kafka's own rule (LogManager.isStrayKraftReplica) is reproduced by silver_replicas.classification:
no topic id -> stray; id not in the image -> stray; broker not in replicas -> stray; else valid.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window

from . import sql_functions as F
from .check_rows import details, evidence, replica_dir_values, replica_key, rows
from .context import CheckContext
from .frames import basename, human_ms, iso, real_directory, small_side, union_all


def _dir_evidence(**more):
    return evidence(path=F.concat_ws("/", F.col("log_dir"), F.col("dir_name")), directory_id=F.col("directory_id"),
                    entry_kind=F.col("entry_kind"), partition_metadata=F.col("pm_status"),
                    partition_metadata_message=F.col("pm_message"), topic_id_on_disk=F.col("topic_id"),
                    id_state=F.col("id_state"), live_topic_id=F.col("live_topic_id"),
                    replicas=F.col("replicas"), segments=F.col("segment_count"), bytes=F.col("bytes"),
                    newest_mtime=iso(F.col("newest_mtime")), log_start_offset=F.col("log_start_offset"),
                    kafka_rule=F.col("reason"), **more)


def _id_state_text():
    return (F.when(F.col("id_state") == "deleted", F.concat(F.lit("deleted "), F.coalesce(iso(F.col("deleted_time")), F.lit("at an unknown time"))))
            .when(F.col("id_state") == "live", F.lit("live"))
            .when(F.col("id_state") == "none", F.lit("no topic id"))
            .otherwise(F.lit("never known to the controller")))


def per_dir_checks(ctx: CheckContext) -> DataFrame:
    r = ctx.replicas
    cls = F.col("classification")
    parts = []
    parts.append(rows(r.filter(cls == "missing_partition_metadata"), "MISSING_PARTITION_METADATA", replica_dir_values({
        "topic_id": F.lit(None), "since": F.col("newest_mtime"),
        "details": details(
            live_topic_id=F.coalesce(F.col("live_topic_id"), F.lit("<live topic id>")),
            live_note=F.when(F.col("live_topic_id").isNotNull(), F.concat(
                F.lit(" (live id "), F.col("live_topic_id"),
                F.when(F.col("assigned"), F.lit(", this broker is assigned)")).otherwise(F.lit(", this broker is not assigned)"))))
            .otherwise(F.lit(" (no live topic of that name)"))),
        "evidence": _dir_evidence(),
    })))
    consequence = (F.when(F.col("pm_status") == "log_dir_offline",
                          F.concat(F.lit("the whole log dir "), F.col("log_dir_name"),
                                   F.lit(" goes offline (KafkaStorageException) when the broker reads it")))
                   .otherwise(F.lit("the broker fails to start (Error starting LogManager)")))
    parts.append(rows(r.filter(cls == "corrupt_partition_metadata"), "CORRUPT_PARTITION_METADATA", replica_dir_values({
        "topic_id": F.lit(None), "since": F.col("newest_mtime"),
        "details": details(pm_message=F.col("pm_message"), consequence=consequence,
                           live_topic_id=F.coalesce(F.col("live_topic_id"), F.lit("<live topic id>"))),
        "evidence": _dir_evidence(consequence=consequence),
    })))
    parts.append(rows(r.filter(cls == "stale_topic_id"), "STALE_TOPIC_ID", replica_dir_values({
        "since": F.col("deleted_time"),
        "details": details(live_topic_id=F.col("live_topic_id"),
                           deleted_at=F.coalesce(iso(F.col("deleted_time")), F.lit("before the retained history"))),
        "evidence": _dir_evidence(deleted_time=iso(F.col("deleted_time"))),
    })))
    parts.append(rows(r.filter(cls == "orphan"), "ORPHAN_REPLICA", replica_dir_values({
        "since": F.col("newest_mtime"),
        "details": details(id_state=_id_state_text()),
        "evidence": _dir_evidence(),
    })))
    parts.append(rows(r.filter(cls == "stray_not_assigned"), "STRAY_NOT_ASSIGNED", replica_dir_values({
        "since": F.col("newest_mtime"),
        "details": details(reason=F.col("reason")),
        "evidence": _dir_evidence(),
    })))
    parts.append(rows(r.filter(cls == "stray_dir"), "STRAY_DIR", replica_dir_values({
        "since": F.col("newest_mtime"),
        "details": details(id_state=_id_state_text()),
        "evidence": _dir_evidence(),
    })))
    return union_all(parts)


def _removal_time(ctx: CheckContext, r: DataFrame) -> DataFrame:
    """When the dir's replica left the broker (the delete timer's start), and the broker's registration."""
    exits = ctx.view.exits.select("topic_id", "partition", "broker_id", "exit_time", "exit_offset", "exit_kind")
    renamed = ctx.view.renamed_for_delete.groupBy("broker_id", "dir_name").agg(F.max("renamed_time").alias("renamed_time"))
    inc = ctx.silver["silver_topic_incarnations"]
    requested = (inc.filter(F.col("delete_requested_time").isNotNull()).groupBy("topic_name")
                 .agg(F.max("delete_requested_time").alias("requested_time")))
    regs = ctx.silver["silver_brokers"].select("broker_id", "registration_time")
    bound = F.lit(ctx.view.ml.history_start_time).cast("timestamp")
    out = (r.join(exits, ["topic_id", "partition", "broker_id"], "left")
           .join(renamed, ["broker_id", "dir_name"], "left")
           .join(requested, "topic_name", "left")
           .join(regs, "broker_id", "left"))
    removal = F.coalesce(F.when(F.col("id_state") == "deleted", F.col("deleted_time")), F.col("exit_time"),
                         F.col("renamed_time"), F.col("requested_time"), bound)
    source = (F.when((F.col("id_state") == "deleted") & F.col("deleted_time").isNotNull(), F.lit("topic delete"))
              .when(F.col("exit_time").isNotNull(), F.concat(F.lit("replica "), F.col("exit_kind"), F.lit(" at offset "),
                                                              F.col("exit_offset").cast("string")))
              .when(F.col("renamed_time").isNotNull(), F.lit("rename logged in server.log"))
              .when(F.col("requested_time").isNotNull(), F.lit("ZooKeeper delete marker"))
              .when(bound.isNotNull(), F.lit("before the retained metadata history (upper bound)")))
    return (out.withColumn("removal_time", removal).withColumn("removal_source", source)
            .withColumn("timer_start", F.greatest("removal_time", "registration_time")))


def delete_dir_checks(ctx: CheckContext) -> DataFrame:
    """-delete dirs: LOCAL_DELETE_WITHOUT_CONTROLLER_DELETE when the controller still assigns the replica
    here, else LINGERING_DELETE_DIR once older than file.delete.delay.ms + grace."""
    r = ctx.replicas
    deletes = r.filter(F.col("classification") == "delete_dir")
    present = (r.filter(F.col("entry_kind").isin("partition", "future") & F.col("topic_id").isNotNull())
               .select("broker_id", "topic_id", "partition").distinct().withColumn("_has_copy", F.lit(True)))
    inc = ctx.silver["silver_topic_incarnations"]
    pending = inc.filter("delete_pending").select("topic_id").distinct().withColumn("_pending", F.lit(True))
    d = (deletes.join(present, ["broker_id", "topic_id", "partition"], "left")
         .join(pending, "topic_id", "left"))
    d = d.withColumn("_local", (F.col("id_state") == "live") & F.col("assigned") & F.col("_has_copy").isNull()
                     & F.col("_pending").isNull())
    local = d.filter("_local")
    limit = ctx.thresholds.delete_limit_ms
    parts = [rows(local, "LOCAL_DELETE_WITHOUT_CONTROLLER_DELETE", replica_dir_values({
        "since": F.col("newest_mtime"),
        "details": details(),
        "evidence": _dir_evidence(note=F.lit("topic live, broker in replicas, no other copy on the broker")),
    }))]
    rest = _removal_time(ctx, d.filter(~F.col("_local")))
    age = ctx.age_ms(F.col("timer_start"))
    lingering = rest.filter(F.col("timer_start").isNotNull() & (age > F.lit(limit)))
    parts.append(rows(lingering, "LINGERING_DELETE_DIR", replica_dir_values({
        "since": F.col("timer_start"),
        "details": details(age=human_ms(age), limit=human_ms(F.lit(limit))),
        "evidence": _dir_evidence(removal_time=iso(F.col("removal_time")), removal_source=F.col("removal_source"),
                                  broker_registration_time=iso(F.col("registration_time")),
                                  timer_start=iso(F.col("timer_start")), age_ms=age, limit_ms=F.lit(limit)),
    })))
    return union_all(parts)


def delete_incomplete(ctx: CheckContext) -> DataFrame:
    """Dirs (not renamed) of a deleted topic id, past the delete delay: one finding per topic id + broker."""
    r = ctx.replicas.filter(F.col("classification") == "deleted")
    regs = ctx.silver["silver_brokers"].select("broker_id", "registration_time")
    # a KRaft broker handles a missed delete at its next start (stray scan), so the clock restarts at its
    # latest registration; a ZooKeeper broker never removes such a dir by itself
    restart = F.col("registration_time") if ctx.view.kraft_rules else F.lit(None).cast("timestamp")
    t = r.join(regs, "broker_id", "left").withColumn("timer_start", F.greatest(F.col("deleted_time"), restart))
    limit = ctx.thresholds.delete_limit_ms
    # the grace is for a delete in progress; a fenced or stopped broker cannot progress it (a KRaft broker
    # renames the dirs -stray at its next start and keeps them), so it is reported at once
    stopped = F.coalesce(F.col("broker_state").isin("fenced", "absent", "unregistered"), F.lit(False))
    late = t.filter(F.col("timer_start").isNotNull()
                    & ((ctx.age_ms(F.col("timer_start")) > F.lit(limit)) | stopped))
    n = ctx.thresholds.evidence_max_items
    g = late.groupBy("broker_id", "topic_id").agg(
        F.first("broker_state", ignorenulls=True).alias("broker_state"),
        F.first("topic_name", ignorenulls=True).alias("topic_name"), F.sum("bytes").alias("bytes"),
        F.count("*").alias("dirs"), F.max("deleted_time").alias("deleted_time"),
        F.max("registration_time").alias("registration_time"),
        F.sort_array(F.collect_list(F.concat_ws("/", "log_dir", "dir_name"))).alias("paths"),
        F.collect_list(replica_key(F.col("broker_id"), F.col("log_dir"), F.col("dir_name"))).alias("keys"))
    out = rows(g, "DELETE_INCOMPLETE", {
        "broker_id": F.col("broker_id"), "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"),
        "bytes": F.col("bytes"), "since": F.col("deleted_time"),
        "details": details(dirs=F.col("dirs"), paths=F.array_join(F.slice("paths", 1, n), ", ")),
        "evidence": evidence(paths=F.slice("paths", 1, n), dirs=F.col("dirs"), bytes=F.col("bytes"),
                             broker_state=F.col("broker_state"), deleted_time=iso(F.col("deleted_time")),
                             broker_registration_time=iso(F.col("registration_time")), limit_ms=F.lit(limit)),
    })
    return out


def missing_replicas(ctx: CheckContext) -> DataFrame:
    """Assigned (topic id, partition, broker) with no dir on a captured broker."""
    # a decommissioned broker's dirs are reported per log dir (DECOMMISSIONED_BROKER_DATA), not per replica
    brokers = ctx.silver["silver_brokers"].filter("captured AND state <> 'unregistered'").select("broker_id")
    dir_ids = (ctx.bronze["bronze_log_dirs"].filter(F.col("directory_id").isNotNull())
               .select(F.col("broker_id").alias("_db"), F.col("directory_id").alias("_captured_dir"))
               .withColumn("_dir_seen", F.lit(True)))
    a = (ctx.silver["silver_partition_assignments"].filter(~F.col("marked_for_deletion"))
         .select("topic_id", "topic_name", "partition", "replicas", "directories", "last_change_time",
                 F.posexplode("replicas").alias("_i", "broker_id"))
         .withColumn("assigned_dir", F.try_element_at("directories", (F.col("_i") + 1).cast("int")))
         .join(brokers, "broker_id"))
    r = ctx.replicas
    by_id = (r.filter(F.col("entry_kind").isin("partition", "future", "delete") & F.col("topic_id").isNotNull())
             .select("broker_id", "topic_id", "partition"))
    by_name = (r.filter(F.col("entry_kind").isin("partition", "future"))
               .select("broker_id", F.col("topic_from_name").alias("topic_name"), "partition"))
    # anti joins: no dir by id, none by name (no distinct needed first, as a left join would)
    m = (a.join(by_id, ["broker_id", "topic_id", "partition"], "left_anti")
         .join(by_name, ["broker_id", "topic_name", "partition"], "left_anti")
         .join(dir_ids, (F.col("broker_id") == F.col("_db")) & (F.col("assigned_dir") == F.col("_captured_dir")), "left"))
    has_dirs = (ctx.bronze["bronze_log_dirs"].filter(F.col("directory_id").isNotNull())
                .select("broker_id").distinct().withColumn("_broker_has_dir_ids", F.lit(True)))
    m = m.join(has_dirs, "broker_id", "left")
    dir_visible = (~real_directory(F.col("assigned_dir")) | F.col("_dir_seen").isNotNull()
                   | F.col("_broker_has_dir_ids").isNull())
    missing = m.filter(dir_visible)
    return rows(missing, "MISSING_REPLICA", {
        "broker_id": F.col("broker_id"), "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"),
        "partition": F.col("partition"), "since": F.col("last_change_time"), "bytes": F.lit(0),
        "details": details(dir_hint=F.when(real_directory(F.col("assigned_dir")),
                                           F.concat(F.lit(" (assigned directory "), F.col("assigned_dir"), F.lit(")")))
                           .otherwise(F.lit(""))),
        "evidence": evidence(replicas=F.col("replicas"), assigned_directory_id=F.col("assigned_dir"),
                             last_change_time=iso(F.col("last_change_time"))),
    })


def duplicates_and_wrong_dirs(ctx: CheckContext) -> DataFrame:
    r = ctx.replicas
    valid = r.filter((F.col("classification") == "valid") & (F.col("entry_kind") == "partition"))
    # Kafka refuses two dirs of one TopicPartition (name and partition) on a broker, with or without topic ids
    # (a ZooKeeper topic before IBP 2.8 has none). The copies are counted on the three keys alone, so the wide
    # replica rows are not shuffled and sorted to find the (usually no) duplicates.
    key = ["broker_id", "topic_name", "partition"]
    dup_keys = small_side(valid.groupBy(*key).count().filter(F.col("count") > 1).select(*key))
    v = valid.withColumn("_in_assigned", F.coalesce(F.col("directory_id") == F.col("assigned_directory_id"),
                                                    F.lit(False)))
    dups = v.join(dup_keys, key, "left_semi")
    # the extra copy: not in the assigned dir; without directories, all but the first path
    pick = Window.partitionBy(*key).orderBy(F.col("_in_assigned").desc(), "log_dir")
    dups = dups.withColumn("_rank", F.row_number().over(pick))
    info = dups.groupBy(*key).agg(
        F.sort_array(F.collect_list("log_dir_name")).alias("_log_dirs"),
        F.sort_array(F.collect_list(F.concat_ws("/", "log_dir", "dir_name"))).alias("_paths"),
        F.max(F.when(F.col("_in_assigned"), F.col("log_dir_name"))).alias("_assigned_name"),
        F.sum(F.when(F.col("_rank") > 1, F.col("bytes"))).alias("_extra_bytes"),
        F.collect_list(F.when(F.col("_rank") > 1, F.concat_ws("/", "log_dir", "dir_name"))).alias("_extra"))
    extra = dups.filter(F.col("_rank") == 2).join(info, key)
    out = [rows(extra, "DUPLICATE_REPLICA", replica_dir_values({
        "bytes": F.col("_extra_bytes"), "since": F.col("newest_mtime"),
        "details": details(log_dirs=F.array_join("_log_dirs", " and "),
                           assigned_log_dir=F.coalesce(F.col("_assigned_name"), F.lit("no directory (not tracked)")),
                           extra_paths=F.array_join("_extra", ", ")),
        "evidence": evidence(paths=F.col("_paths"), assigned_directory_id=F.col("assigned_directory_id"),
                             kafka_error=F.format_string("Duplicate log directories for %s-%d are found in both %s",
                                                         F.col("topic_name"), F.col("partition"),
                                                         F.array_join("_paths", " and "))),
    }))]
    futures = (r.filter(F.col("entry_kind") == "future").select(
        F.col("broker_id").alias("_fb"), F.col("topic_id").alias("_ft"), F.col("partition").alias("_fp"),
        F.col("directory_id").alias("_future_dir")))
    dirs = ctx.bronze["bronze_log_dirs"].select("broker_id", F.col("directory_id").alias("assigned_directory_id"),
                                                basename(F.col("log_dir")).alias("_assigned_dir_name"))
    w = (v.join(dup_keys, key, "left_anti")
         .filter(real_directory(F.col("assigned_directory_id")) & F.col("directory_id").isNotNull()
                 & (F.col("directory_id") != F.col("assigned_directory_id")))
         .join(futures, (F.col("broker_id") == F.col("_fb")) & (F.col("topic_id") == F.col("_ft"))
               & (F.col("partition") == F.col("_fp")) & (F.col("_future_dir") == F.col("assigned_directory_id")),
               "left_anti")
         .join(dirs, ["broker_id", "assigned_directory_id"], "left"))
    out.append(rows(w, "WRONG_LOG_DIR", replica_dir_values({
        "since": F.col("newest_mtime"),
        "details": details(directory_id=F.col("directory_id"), assigned_directory_id=F.col("assigned_directory_id"),
                           assigned_log_dir_note=F.when(F.col("_assigned_dir_name").isNotNull(),
                                                        F.concat(F.lit(" ("), F.col("_assigned_dir_name"), F.lit(")")))
                           .otherwise(F.lit(" (not among the broker's captured log dirs)"))),
        "evidence": _dir_evidence(assigned_directory_id=F.col("assigned_directory_id"),
                                  assigned_log_dir=F.col("_assigned_dir_name")),
    })))
    return union_all(out)


def stuck_future_moves(ctx: CheckContext) -> DataFrame:
    """-future dirs whose copy stopped: newest write older than the threshold before the source replica's."""
    r = ctx.replicas
    src = (r.filter((F.col("entry_kind") == "partition") & F.col("topic_id").isNotNull())
           .select("broker_id", "topic_id", "partition", F.col("newest_mtime").alias("_src_mtime"),
                   F.col("log_dir_name").alias("_src_dir")))
    fut = r.filter((F.col("entry_kind") == "future") & F.col("topic_id").isNotNull()).join(
        src, ["broker_id", "topic_id", "partition"])
    lag = F.unix_millis(F.col("_src_mtime")) - F.unix_millis(F.col("newest_mtime"))
    stuck = fut.filter(lag > F.lit(ctx.thresholds.future_move_stuck_ms))
    return rows(stuck, "FUTURE_MOVE_STUCK", replica_dir_values({
        "since": F.col("newest_mtime"),
        "details": details(lag=human_ms(lag), source_log_dir=F.col("_src_dir")),
        "evidence": _dir_evidence(source_log_dir=F.col("_src_dir"), source_newest_mtime=iso(F.col("_src_mtime")),
                                  lag_ms=lag, limit_ms=F.lit(ctx.thresholds.future_move_stuck_ms)),
    }))


def unknown_entries(ctx: CheckContext) -> DataFrame:
    e = ctx.bronze["bronze_dir_entries"].filter((F.col("entry_kind") == "non_kafka") & F.coalesce(F.col("is_dir"), F.lit(True)))
    return rows(e, "UNKNOWN_LOG_DIR_ENTRY", {
        "broker_id": F.col("broker_id"), "log_dir": basename(F.col("log_dir")), "log_dir_path": F.col("log_dir"),
        "dir_name": F.col("entry_name"), "bytes": F.col("bytes"), "since": F.col("newest_mtime"),
        "replica_key": replica_key(F.col("broker_id"), F.col("log_dir"), F.col("entry_name")),
        "details": details(name_error=F.coalesce(F.split(F.col("name_error"), "\n").getItem(0),
                                                 F.lit("not topic-partition"))),
        "evidence": evidence(path=F.concat_ws("/", F.col("log_dir"), F.col("entry_name")), is_dir=F.col("is_dir"),
                             kafka_error=F.col("name_error"), bytes=F.col("bytes")),
    })


def special_entries(ctx: CheckContext) -> DataFrame:
    """Symlinks, FIFOs, sockets, devices in a log dir (``entry_kind`` special): what they are, never a replica
    (Kafka's LogManager.loadLogs follows a link to a directory; kafka-recon never does)."""
    e = ctx.bronze["bronze_dir_entries"].filter(F.col("entry_kind") == "special")
    return rows(e, "SPECIAL_LOG_DIR_ENTRY", {
        "broker_id": F.col("broker_id"), "log_dir": basename(F.col("log_dir")), "log_dir_path": F.col("log_dir"),
        "dir_name": F.col("entry_name"), "bytes": F.lit(None).cast("long"), "since": F.col("newest_mtime"),
        "replica_key": replica_key(F.col("broker_id"), F.col("log_dir"), F.col("entry_name")),
        "details": details(what=F.coalesce(F.col("name_error"), F.lit("special file"))),
        "evidence": evidence(path=F.concat_ws("/", F.col("log_dir"), F.col("entry_name")),
                             what=F.col("name_error")),
    })


def topic_id_divergence(ctx: CheckContext) -> DataFrame:
    """Replicas of one partition with different ids when the controller has no id to decide."""
    r = ctx.replicas.filter((F.col("entry_kind") == "partition") & F.col("topic_id").isNotNull()
                            & F.col("live_topic_id").isNull()
                            & F.col("classification").isin("valid", "stray_not_assigned", "no_controller_view"))
    g = r.groupBy(F.col("topic_from_name").alias("topic_name"), "partition").agg(
        F.countDistinct("topic_id").alias("_ids"),
        F.sort_array(F.collect_set("topic_id")).alias("ids"),
        F.sort_array(F.collect_list(F.concat(F.lit("broker "), F.col("broker_id").cast("string"), F.lit(": "),
                                             F.col("topic_id")))).alias("where"),
        F.sum("bytes").alias("bytes"))
    g = g.filter(F.col("_ids") > 1)
    return rows(g, "TOPIC_ID_DIVERGENCE", {
        "topic_name": F.col("topic_name"), "partition": F.col("partition"), "bytes": F.col("bytes"),
        "details": details(ids=F.array_join("ids", ", "), where=F.array_join("where", "; ")),
        "evidence": evidence(ids=F.col("ids"), replicas=F.col("where")),
    })


def all_checks(ctx: CheckContext):
    return [per_dir_checks(ctx), delete_dir_checks(ctx), delete_incomplete(ctx), missing_replicas(ctx),
            duplicates_and_wrong_dirs(ctx), stuck_future_moves(ctx), unknown_entries(ctx), special_entries(ctx),
            topic_id_divergence(ctx)]
