"""KIP-253 partition-count changes and metadata-log copy checks (divergence, gaps)."""
from __future__ import annotations

from pyspark.sql import DataFrame, Window

from . import sql_functions as F
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import basename

CHANGE = "array<struct<offset:bigint,time:timestamp,from:int,to:int>>"


def partition_count_changed(ctx: CheckContext) -> DataFrame:
    inc = ctx.silver["silver_topic_incarnations"]
    if not ctx.thresholds.kip253_report_partition_changes:
        return rows(inc.limit(0), "PARTITION_COUNT_CHANGED", {})
    c = (inc.filter(F.col("is_live") & F.col("partition_count_changes_json").isNotNull())
         .withColumn("_changes", F.from_json("partition_count_changes_json", CHANGE))
         .filter(F.size("_changes") > 0)
         .withColumn("_first", F.col("_changes")[0])
         .withColumn("_last", F.element_at("_changes", -1)))
    where = F.array_join(F.transform("_changes", lambda x: F.format_string(
        "offset %d: %d -> %d", x["offset"], x["from"], x["to"])), "; ")
    return rows(c, "PARTITION_COUNT_CHANGED", {
        "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"), "since": F.col("_last")["time"],
        "details": details(**{"from": F.col("_first")["from"], "to": F.col("_last")["to"], "where": where}),
        "evidence": evidence(changes=F.col("_changes"), created_offset=F.col("created_offset"),
                             partition_count=F.col("partition_count")),
    })


def _copies(ctx: CheckContext) -> DataFrame:
    return ctx.bronze["bronze_metadata_copies"].select("copy_id", F.col("source_broker_id").alias("_cb"),
                                                       F.col("log_dir").alias("_copy_log_dir"),
                                                       F.col("source_kind").alias("_copy_kind"))


def _on_broker(df: DataFrame, ctx: CheckContext) -> DataFrame:
    """Only copies on a broker's disk (a dump-log text is a lossy export, not a replica of the log); without
    a copies table every copy counts."""
    if ctx.bronze["bronze_metadata_copies"].limit(1).count() == 0:
        return df
    return df.filter(F.coalesce(F.col("_copy_kind"), F.lit("segment")) == "segment")


def _their_and_our_entries(ctx: CheckContext) -> tuple:
    """What a diverging copy holds at its divergence offset and what the authoritative copy holds there.

    From bronze_metadata_batches (every copy, batch by batch) when ingest wrote it; otherwise from the
    decoded records, which then hold every copy."""
    ml = ctx.view.ml
    batches = ctx.bronze["bronze_metadata_batches"].where(F.col("section") == "log")
    auth_types = (ml.log_records.filter(F.col("copy_id") == F.lit(ml.authoritative_copy))
                  .select(F.col("offset").alias("_oo"), F.col("record_type").alias("_ours_type")).dropDuplicates(["_oo"]))
    if batches.limit(1).count() > 0:
        theirs = batches.select(F.col("copy_id").alias("_tc"), F.col("base_offset").alias("_to"),
                                F.format_string("batch %d..%d", "base_offset", "last_offset").alias("_theirs_type"),
                                F.col("leader_epoch").alias("_theirs_epoch"), F.col("crc").alias("_theirs_crc")
                                ).dropDuplicates(["_tc", "_to"])
        ours = (batches.filter(F.col("copy_id") == F.lit(ml.authoritative_copy))
                .select(F.col("base_offset").alias("_ob"), F.col("last_offset").alias("_ol"),
                        F.col("leader_epoch").alias("_ours_epoch"), F.col("crc").alias("_ours_crc"))
                .dropDuplicates(["_ob"]))
        return theirs, ours, auth_types
    recs = ml.log_records.select("copy_id", "offset", "record_type", "leader_epoch")
    theirs = (recs.select(F.col("copy_id").alias("_tc"), F.col("offset").alias("_to"),
                          F.col("record_type").alias("_theirs_type"), F.col("leader_epoch").alias("_theirs_epoch"),
                          F.lit(None).cast("long").alias("_theirs_crc")).dropDuplicates(["_tc", "_to"]))
    ours = (recs.filter(F.col("copy_id") == F.lit(ml.authoritative_copy))
            .select(F.col("offset").alias("_ob"), F.col("offset").alias("_ol"),
                    F.col("leader_epoch").alias("_ours_epoch"), F.lit(None).cast("long").alias("_ours_crc"))
            .dropDuplicates(["_ob"]))
    return theirs, ours, auth_types


def divergence(ctx: CheckContext) -> DataFrame:
    ml = ctx.view.ml
    theirs, ours, auth_types = _their_and_our_entries(ctx)
    off = F.col("diverges_at_offset")
    d = (_on_broker(ml.divergence.join(_copies(ctx), "copy_id", "left"), ctx)
         .join(theirs, (F.col("copy_id") == F.col("_tc")) & (off == F.col("_to")), "left")
         .join(ours, (off >= F.col("_ob")) & (off <= F.col("_ol")), "left")
         .join(auth_types, off == F.col("_oo"), "left"))
    fmt = lambda t, e: F.concat(F.coalesce(t, F.lit("nothing")), F.lit(" epoch "), F.coalesce(e.cast("string"), F.lit("?")))  # noqa: E731
    return rows(d, "METADATA_LOG_DIVERGENCE", {
        "broker_id": F.coalesce("source_broker_id", "_cb"), "log_dir": basename(F.col("_copy_log_dir")),
        "log_dir_path": F.col("_copy_log_dir"), "dir_name": F.when(F.col("_copy_log_dir").isNotNull(), F.lit("__cluster_metadata-0")),
        "key_extra": F.col("copy_id"),
        "details": details(copy_id=F.col("copy_id"), offset=off,
                           theirs=fmt(F.col("_theirs_type"), F.col("_theirs_epoch")),
                           ours=fmt(F.col("_ours_type"), F.col("_ours_epoch"))),
        "evidence": evidence(copy_id=F.col("copy_id"), authoritative_copy=F.lit(ml.authoritative_copy),
                             diverges_at_offset=off, their_entry=F.col("_theirs_type"),
                             their_leader_epoch=F.col("_theirs_epoch"), their_batch_crc=F.col("_theirs_crc"),
                             our_record_type=F.col("_ours_type"), our_leader_epoch=F.col("_ours_epoch"),
                             our_batch_crc=F.col("_ours_crc")),
    })


def gaps(ctx: CheckContext) -> DataFrame:
    """Holes between consecutive offsets of one copy's log (the ingest's gap_after_offset, else computed)."""
    ml = ctx.view.ml
    offs = ml.log_records.select("copy_id", "source_broker_id", "offset")
    copies = ctx.bronze["bronze_metadata_copies"]
    if copies.limit(1).count() > 0:
        holes = copies.filter(F.col("gap_after_offset").isNotNull()).select(
            F.col("copy_id").alias("_gc"), F.col("gap_after_offset").alias("offset"))
        after = (offs.join(F.broadcast(holes), (F.col("copy_id") == F.col("_gc")) & (offs["offset"] > holes["offset"]))
                 .groupBy("_gc").agg(F.min(offs["offset"]).alias("_next")))
        g = (holes.join(after, "_gc", "left").withColumnRenamed("_gc", "copy_id")
             .withColumn("source_broker_id", F.lit(None).cast("int")))
    else:
        w = Window.partitionBy("copy_id").orderBy("offset")
        g = (offs.dropDuplicates(["copy_id", "offset"]).withColumn("_next", F.lead("offset").over(w))
             .filter(F.col("_next") > F.col("offset") + 1))
    g = _on_broker(g.join(_copies(ctx), "copy_id", "left"), ctx)
    return rows(g, "METADATA_LOG_GAP", {
        "broker_id": F.coalesce("source_broker_id", "_cb"), "log_dir": basename(F.col("_copy_log_dir")),
        "log_dir_path": F.col("_copy_log_dir"), "dir_name": F.when(F.col("_copy_log_dir").isNotNull(), F.lit("__cluster_metadata-0")),
        "key_extra": F.format_string("%s@%d", F.col("copy_id"), F.col("offset") + 1),
        "details": details(copy_id=F.col("copy_id"), gap_from=F.col("offset") + 1,
                           gap_to=F.coalesce((F.col("_next") - 1).cast("string"), F.lit("its end"))),
        "evidence": evidence(copy_id=F.col("copy_id"), last_offset_before=F.col("offset"),
                             first_offset_after=F.col("_next"), missing=F.col("_next") - F.col("offset") - 1),
    })


def all_checks(ctx: CheckContext):
    return [partition_count_changed(ctx), divergence(ctx), gaps(ctx)]
