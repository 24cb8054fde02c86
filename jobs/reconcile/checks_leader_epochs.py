"""Leader-epoch history checks, from each replica dir's ``leader-epoch-checkpoint`` (bronze_leader_epochs):

LEADER_EPOCH_CHECKPOINT_UNREADABLE  Kafka cannot load the file (quarantined by ingest with Kafka's message);
LEADER_EPOCH_NOT_MONOTONIC          entries out of order: LeaderEpochFileCache drops some when it loads them;
LEADER_EPOCH_DIVERGENCE             two replicas of one partition disagree on where an epoch starts;
LEADER_EPOCH_AHEAD_OF_METADATA      a replica holds an epoch newer than the controller's current one.

Only entries Kafka keeps on load (``kafka_keeps``) feed the last two, and only replica dirs of the live
incarnation (the topic id the controller knows under that name): other dirs are stale-replica findings.

What a follower will truncate against its current leader is :mod:`.checks_truncation` (Kafka's own
endOffsetFor / getOffsetTruncationState). LEADER_EPOCH_DIVERGENCE is what that algorithm never repairs: Kafka
compares where the largest common epoch *ends*, never where it starts, so two replicas that start one epoch at
different offsets keep different records below the truncation point.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window

from jobs.engine.local_frames import local_frame

from . import sql_functions as F
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import basename

EPOCH_FILE = "leader-epoch-checkpoint"
# LogManager.loadLogs opens every dir of a log dir as a log, -delete and -stray ones included; the metadata
# dir is opened by KafkaMetadataLog: each builds a LeaderEpochFileCache that reads the file
LOADED_KINDS = ("partition", "future", "delete", "stray", "metadata")
HISTORY_KINDS = ("partition", "future", "metadata")  # dirs whose history the cluster still uses
SKIPPED_LOG_DIR_STATES = ("foreign", "decommissioned")  # their own findings; the cluster never loads them
# errors of Kafka's reading (not of the capture: io_error, value_too_large). IOExceptions become a
# KafkaStorageException (log dir offline); the messages below are exceptions nothing catches (the log fails)
KAFKA_READ_KINDS = ("malformed_line", "bad_version", "record_count_mismatch", "invalid_utf8")
UNCAUGHT_PREFIXES = ("For input string", "Illegal Capacity", "Received invalid partition leader epoch entry")
ALWAYS_COMPACTED = ("__consumer_offsets", "__transaction_state")  # created with cleanup.policy=compact
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC


def _loaded_dirs(ctx: CheckContext, kinds=LOADED_KINDS) -> DataFrame:
    """Replica dirs (and the metadata dir) of log dirs the cluster loads: topic, partition, id, size."""
    skip = ctx.log_dirs.filter(F.col("state").isin(*SKIPPED_LOG_DIR_STATES)).select("log_dir")
    return (ctx.bronze["bronze_dir_entries"].filter(F.col("is_dir") & F.col("entry_kind").isin(*kinds))
            .join(skip, "log_dir", "left_anti")
            .select("log_dir", F.col("entry_name").alias("dir_name"), F.col("topic").alias("_dir_topic"),
                    F.col("partition").alias("_dir_partition"), F.col("topic_id").alias("_dir_topic_id"),
                    F.col("bytes").alias("_dir_bytes")))


def _live_replicas(ctx: CheckContext) -> DataFrame:
    """Replica dirs whose topic id is the live incarnation of their topic."""
    return ctx.replicas.filter(F.col("entry_kind").isin("partition", "future") & (F.col("id_state") == "live")
                               & (F.col("topic_id") == F.col("live_topic_id"))).select(
        "broker_id", "log_dir", "log_dir_name", "dir_name", "topic_id", "topic_name", "partition", "bytes",
        "log_start_offset")


def _kept_entries(ctx: CheckContext) -> DataFrame:
    """Entries Kafka keeps on load, of live replicas, with whether each is its file's first kept entry."""
    e = ctx.bronze["bronze_leader_epochs"].filter(F.col("kafka_keeps"))
    first = Window.partitionBy("source_file")
    e = e.withColumn("is_first", F.col("position") == F.min("position").over(first)).select(
        "log_dir", F.col("entry_name").alias("dir_name"), "position", "epoch", "start_offset", "is_first",
        "source_file")
    return e.join(_live_replicas(ctx), ["log_dir", "dir_name"])


def _entry_text(epoch: Column, start: Column) -> Column:
    return F.format_string("epoch %d at offset %d", epoch, start)


# ---------------------------------------------------------------------------------------------- unreadable

def _kafka_effect(log_dir: Column) -> Column:
    message = F.coalesce(F.col("error_message"), F.lit(""))
    uncaught = F.lit(False)
    for prefix in UNCAUGHT_PREFIXES:
        uncaught = uncaught | message.startswith(prefix)
    return (F.when(uncaught, F.lit("the exception is not caught: the log does not load and LogManager stops the "
                                   "broker's start"))
            .otherwise(F.concat(F.lit("KafkaStorageException: Kafka marks log dir "), log_dir,
                                F.lit(" offline with every replica in it"))))


def checkpoint_unreadable(ctx: CheckContext) -> DataFrame:
    files = ctx.bronze["bronze_ingest_files"].filter(
        (F.col("status") == "quarantined") & F.col("path").endswith("/" + EPOCH_FILE)
        & (F.col("error_kind").isin(*KAFKA_READ_KINDS)))
    files = files.withColumn("dir_name", F.regexp_extract("path", r"([^/]+)/" + EPOCH_FILE + "$", 1))
    d = files.join(_loaded_dirs(ctx), ["log_dir", "dir_name"])
    return rows(d, "LEADER_EPOCH_CHECKPOINT_UNREADABLE", {
        "broker_id": F.col("broker_id"), "log_dir": basename(F.col("log_dir")), "log_dir_path": F.col("log_dir"),
        "dir_name": F.col("dir_name"), "topic_name": F.col("_dir_topic"), "topic_id": F.col("_dir_topic_id"),
        "partition": F.col("_dir_partition"), "bytes": F.col("_dir_bytes"),
        "details": details(error=F.col("error_message"), error_kind=F.col("error_kind"),
                           line=F.col("error_line"), effect=_kafka_effect(F.col("log_dir"))),
        "evidence": evidence(path=F.col("path"), file_bytes=F.col("bytes"), error_kind=F.col("error_kind"),
                             error_message=F.col("error_message"), error_line=F.col("error_line")),
    })


# ---------------------------------------------------------------------------------------------- order

def not_monotonic(ctx: CheckContext) -> DataFrame:
    e = ctx.bronze["bronze_leader_epochs"]
    order = Window.partitionBy("source_file").orderBy("position")
    e = (e.withColumn("_prev_epoch", F.lag("epoch").over(order))
         .withColumn("_prev_start", F.lag("start_offset").over(order)))
    bad = (F.col("_prev_epoch").isNotNull()
           & ((F.col("epoch") <= F.col("_prev_epoch")) | (F.col("start_offset") < F.col("_prev_start"))))
    # only files with a problem are gathered into lists: on a healthy fleet that is none of its ~400k files
    e = e.withColumn("_file_bad", F.max(bad.cast("int")).over(Window.partitionBy("source_file"))).filter(
        F.col("_file_bad") == 1)
    problem = F.when(bad, F.format_string("line %d: epoch %d at offset %d after epoch %d at offset %d",
                                          F.col("position") + 3, "epoch", "start_offset", "_prev_epoch",
                                          "_prev_start"))
    dropped = F.when(~F.col("kafka_keeps"), _entry_text(F.col("epoch"), F.col("start_offset")))
    kept = F.when(F.col("kafka_keeps"), _entry_text(F.col("epoch"), F.col("start_offset")))
    per_file = e.groupBy("log_dir", F.col("entry_name").alias("dir_name"), "source_file").agg(
        F.max("broker_id").alias("broker_id"),
        F.sort_array(F.collect_list(F.struct(F.col("position"), problem.alias("t")))).alias("_problems"),
        F.sort_array(F.collect_list(F.struct(F.col("position"), dropped.alias("t")))).alias("_dropped"),
        F.sort_array(F.collect_list(F.struct(F.col("position"), kept.alias("t")))).alias("_kept"),
        F.count("*").alias("entries"))

    def texts(name: str) -> Column:
        return F.filter(F.transform(name, lambda x: x["t"]), lambda t: t.isNotNull())

    d = (per_file.withColumn("_problems", texts("_problems")).withColumn("_dropped", texts("_dropped"))
         .withColumn("_kept", texts("_kept")).filter(F.size("_problems") > 0)
         .join(_loaded_dirs(ctx, HISTORY_KINDS), ["log_dir", "dir_name"]))
    n = ctx.thresholds.evidence_max_items
    none = F.lit("none")
    return rows(d, "LEADER_EPOCH_NOT_MONOTONIC", {
        "broker_id": F.col("broker_id"), "log_dir": basename(F.col("log_dir")), "log_dir_path": F.col("log_dir"),
        "dir_name": F.col("dir_name"), "topic_name": F.col("_dir_topic"), "topic_id": F.col("_dir_topic_id"),
        "partition": F.col("_dir_partition"), "bytes": F.col("_dir_bytes"),
        "details": details(problems=F.array_join(F.slice("_problems", 1, n), "; "),
                           dropped=F.when(F.size("_dropped") > 0, F.array_join(F.slice("_dropped", 1, n), ", "))
                           .otherwise(none),
                           kept=F.when(F.size("_kept") > 0, F.array_join(F.slice("_kept", 1, n), ", ")).otherwise(none)),
        "evidence": evidence(path=F.col("source_file"), entries=F.col("entries"),
                             problems=F.slice("_problems", 1, n), dropped_on_load=F.slice("_dropped", 1, n),
                             kept_on_load=F.slice("_kept", 1, n)),
    })


# ---------------------------------------------------------------------------------------------- divergence

def _compacted_topics(ctx: CheckContext) -> DataFrame:
    """Topic names whose cleanup.policy says compact anywhere in the capture (a KRaft ConfigRecord, a ZooKeeper
    /config/topics znode), plus Kafka's internal compacted topics."""
    # any case, as lower() matched it; not lower() itself: Spark's lower() loads ICU's case tables on first use
    # (~1 s of a cold JVM's CPU, on the critical path of a small capture's reconcile)
    compact = F.col("_policy").rlike("(?i)compact")
    kraft = ctx.bronze["bronze_metadata_records"].filter(
        (F.col("record_type") == "CONFIG_RECORD") & (F.col("config_resource_type") == TOPIC_RESOURCE)
        & (F.col("config_name") == "cleanup.policy")).select(
        F.col("config_resource_name").alias("topic_name"), F.col("config_value").alias("_policy"))
    zk = ctx.bronze["bronze_zk_events"].filter(F.col("event_type") == "topic_config").select(
        "topic_name", F.from_json(F.get_json_object("payload_json", "$.config"), "map<string,string>")[
            "cleanup.policy"].alias("_policy"))
    internal = local_frame(ctx.spark, [(t,) for t in ALWAYS_COMPACTED], "topic_name string")
    return kraft.unionByName(zk).filter(compact).select("topic_name").unionByName(internal).distinct()


def divergence(ctx: CheckContext) -> DataFrame:
    """Same epoch, different start offsets, on two live replicas of one partition. A file's first kept entry
    may have been moved up to that replica's log start (LeaderEpochFileCache.truncateFromStart), so it only
    counts when it starts *before* the other replica's (non-first) entry; two first entries never count.
    Compacted topics are left out: the cleaner may drop an epoch's first batches before a new replica copies
    the log, which then records the epoch at its first surviving batch."""
    e = _kept_entries(ctx).join(F.broadcast(_compacted_topics(ctx)), "topic_name", "left_anti")
    # Pair up only the entries of epochs where some pair can diverge (a superset: two non-first starts differ, or
    # a first entry starts before a non-first one). A healthy fleet has none, and its ~400k entries skip the
    # self-join.
    epoch = Window.partitionBy("topic_id", "partition", "epoch")
    first = F.when(F.col("is_first"), F.col("start_offset"))
    later = F.when(~F.col("is_first"), F.col("start_offset"))
    e = (e.withColumn("_first_min", F.min(first).over(epoch)).withColumn("_later_min", F.min(later).over(epoch))
         .withColumn("_later_max", F.max(later).over(epoch))
         .filter((F.col("_later_min") != F.col("_later_max")) | (F.col("_first_min") < F.col("_later_max")))
         .drop("_first_min", "_later_min", "_later_max"))
    key = F.concat_ws("|", F.col("broker_id").cast("string"), F.col("log_dir"), F.col("dir_name"))
    e = e.withColumn("_key", key)
    a = e.select(*[F.col(c).alias(f"a_{c}") for c in e.columns])
    b = e.select(*[F.col(c).alias(f"b_{c}") for c in e.columns])
    pairs = a.join(b, (F.col("a_topic_id") == F.col("b_topic_id")) & (F.col("a_partition") == F.col("b_partition"))
                   & (F.col("a_epoch") == F.col("b_epoch")) & (F.col("a__key") < F.col("b__key")))
    a_first, b_first = F.col("a_is_first"), F.col("b_is_first")
    a_start, b_start = F.col("a_start_offset"), F.col("b_start_offset")
    diverged = ((~a_first & ~b_first & (a_start != b_start)) | (a_first & ~b_first & (a_start < b_start))
                | (b_first & ~a_first & (b_start < a_start)))
    pairs = pairs.filter(diverged)
    pair = F.struct(F.col("a_epoch").alias("epoch"), F.col("a_broker_id").alias("broker_a"),
                    F.col("a_log_dir").alias("log_dir_a"), a_start.alias("start_offset_a"),
                    F.col("b_broker_id").alias("broker_b"), F.col("b_log_dir").alias("log_dir_b"),
                    b_start.alias("start_offset_b"))
    per_partition = pairs.groupBy(F.col("a_topic_id").alias("topic_id"), F.col("a_partition").alias("partition")).agg(
        F.max("a_topic_name").alias("topic_name"),
        F.sort_array(F.collect_list(pair)).alias("_pairs"),
        F.greatest(F.max("a_bytes"), F.max("b_bytes")).alias("bytes"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list(F.array("a_broker_id", "b_broker_id"))))).alias(
            "_brokers"))
    first = F.col("_pairs")[0]
    n = ctx.thresholds.evidence_max_items
    listing = F.array_join(F.slice(F.transform("_pairs", lambda p: F.format_string(
        "epoch %d: broker %d at offset %d, broker %d at offset %d", p["epoch"], p["broker_a"], p["start_offset_a"],
        p["broker_b"], p["start_offset_b"])), 1, n), "; ")
    return rows(per_partition, "LEADER_EPOCH_DIVERGENCE", {
        "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"), "partition": F.col("partition"),
        "bytes": F.col("bytes"),
        "details": details(epoch=first["epoch"], broker_a=first["broker_a"], start_a=first["start_offset_a"],
                           broker_b=first["broker_b"], start_b=first["start_offset_b"],
                           brokers=F.array_join(F.col("_brokers").cast("array<string>"), ", "), listing=listing,
                           low=F.least(first["start_offset_a"], first["start_offset_b"]),
                           high=F.greatest(first["start_offset_a"], first["start_offset_b"])),
        "evidence": evidence(diverging_entries=F.slice("_pairs", 1, n), count=F.size("_pairs")),
    })


# ---------------------------------------------------------------------------------------------- vs metadata

def ahead_of_metadata(ctx: CheckContext) -> DataFrame:
    # each dir's newest kept entry, then its live replica: the aggregate runs on the two key columns alone
    newest = ctx.bronze["bronze_leader_epochs"].filter(F.col("kafka_keeps")).groupBy(
        "log_dir", F.col("entry_name").alias("dir_name")).agg(
        F.max("epoch").alias("local_epoch"), F.max_by("start_offset", "epoch").alias("local_start"),
        F.max("source_file").alias("source_file"))
    latest = newest.join(_live_replicas(ctx), ["log_dir", "dir_name"])
    asg = ctx.view.assignments.filter(F.col("leader_epoch").isNotNull()).select(
        "topic_id", "partition", F.col("leader_epoch").alias("controller_epoch"), F.col("leader").alias("_leader"),
        F.col("source").alias("_source"))
    d = latest.join(asg, ["topic_id", "partition"]).filter(F.col("local_epoch") > F.col("controller_epoch"))
    return rows(d, "LEADER_EPOCH_AHEAD_OF_METADATA", {
        "broker_id": F.col("broker_id"), "log_dir": F.col("log_dir_name"), "log_dir_path": F.col("log_dir"),
        "dir_name": F.col("dir_name"), "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"),
        "partition": F.col("partition"), "bytes": F.col("bytes"),
        "details": details(local_epoch=F.col("local_epoch"), local_start=F.col("local_start"),
                           controller_epoch=F.col("controller_epoch"), leader=F.col("_leader"),
                           source=F.when(F.col("_source") == "zookeeper", F.lit("the partition's state znode"))
                           .otherwise(F.lit("the KRaft metadata image"))),
        "evidence": evidence(path=F.col("source_file"), local_epoch=F.col("local_epoch"),
                             local_start_offset=F.col("local_start"), controller_leader_epoch=F.col("controller_epoch"),
                             controller_leader=F.col("_leader"), controller_source=F.col("_source")),
    })


def all_checks(ctx: CheckContext):
    return [checkpoint_unreadable(ctx), not_monotonic(ctx), divergence(ctx), ahead_of_metadata(ctx)]
