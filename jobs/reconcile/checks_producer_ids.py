"""Producer-id checks over silver_producer_id_blocks / silver_producer_ids_in_use.

One finding per allocation: PID_MIGRATION_REUSE when a KRaft block overlaps a ZooKeeper-era block
(KAFKA-15552), else PID_BLOCK_REGRESSION when the allocator's high-water dropped at this allocation, else
PID_BLOCK_OVERLAP when it overlaps an earlier allocation of another owner or interval; a regression that
also overlaps another owner's block gets a PID_BLOCK_OVERLAP too, naming every owner and id range. Overlaps are found
by an equi-join on the block-sized buckets each interval touches (no nested-loop join).
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window

from . import sql_functions as F
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import iso, union_all

ZK_SOURCES = ("zk_znode", "zk_log")


def _family(source):
    return F.when(source.isin(*ZK_SOURCES), F.lit("zookeeper")).otherwise(F.lit("kraft"))


def _block_text(first, last):
    return F.format_string("[%d, %d]", first, last)


def allocation_checks(ctx: CheckContext) -> DataFrame:
    blocks = ctx.silver["silver_producer_id_blocks"]
    alloc = blocks.filter("is_allocation").withColumn("family", _family(F.col("source")))
    # the same block reported by several sources (znode + log line) is one allocation
    order_time = F.coalesce(F.col("event_time"), F.lit("9999-12-31").cast("timestamp"))
    one = Window.partitionBy("first_producer_id", "last_producer_id", "broker_id").orderBy(order_time, "source", "seq")
    alloc = alloc.withColumn("_rn", F.row_number().over(one)).filter("_rn = 1").drop("_rn")
    alloc = alloc.withColumn("where", F.when(F.col("family") == "kraft",
                                             F.concat(F.lit("offset "), F.col("seq").cast("string")))
                             .otherwise(F.coalesce(iso(F.col("event_time")), F.concat(F.lit("seq "), F.col("seq").cast("string")))))
    hw = blocks.agg(F.max("next_producer_id").alias("hw")).collect()[0]["hw"]

    # regression: within an allocator family, the next id dropped below the previous allocation's
    fam_order = Window.partitionBy("family").orderBy(F.when(F.col("family") == "kraft", F.col("seq").cast("double"))
                                                     .otherwise(F.unix_millis(order_time).cast("double")), "seq")
    alloc = (alloc.withColumn("_prev_next", F.lag("next_producer_id").over(fam_order))
             .withColumn("_regressed", F.coalesce(F.col("next_producer_id") < F.col("_prev_next"), F.lit(False))))
    # overlap: an earlier allocation (in time) of another owner or interval covering some of the same ids;
    # equi-join on the block-sized buckets each interval touches (no nested loop)
    size = ctx.thresholds.producer_id_block_size
    alloc = alloc.withColumn("_order", F.struct(F.unix_millis(order_time).alias("t"), F.col("seq").alias("s"),
                                                F.col("source").alias("src")))
    buckets = F.sequence(F.floor(F.col("first_producer_id") / size).cast("long"),
                         F.least(F.floor(F.col("last_producer_id") / size).cast("long"),
                                 F.floor(F.col("first_producer_id") / size).cast("long") + 1000))
    mine = alloc.select("_order", "first_producer_id", "last_producer_id", "broker_id", F.explode(buckets).alias("_b"))
    theirs = alloc.select(F.col("_order").alias("_o_order"), F.explode(buckets).alias("_b"),
                          F.struct("last_producer_id", "first_producer_id", "broker_id", "source", "family",
                                   "where").alias("_other"))
    pairs = (mine.join(theirs, "_b")
             .filter((F.col("_o_order") < F.col("_order"))
                     & (F.col("_other.first_producer_id") <= F.col("last_producer_id"))
                     & (F.col("first_producer_id") <= F.col("_other.last_producer_id"))
                     & ~((F.col("_other.first_producer_id") == F.col("first_producer_id"))
                         & (F.col("_other.last_producer_id") == F.col("last_producer_id"))
                         & (F.col("_other.broker_id") == F.col("broker_id"))))
             .dropDuplicates(["_order", "_o_order"])
             .withColumn("_foreign", F.col("_other.broker_id") != F.col("broker_id"))
             .withColumn("_text", F.format_string(
                 "[%d, %d] of broker %d (%s %s): ids %d-%d", F.col("_other.first_producer_id"),
                 F.col("_other.last_producer_id"), F.col("_other.broker_id"), F.col("_other.source"),
                 F.col("_other.where"), F.greatest(F.col("first_producer_id"), F.col("_other.first_producer_id")),
                 F.least(F.col("last_producer_id"), F.col("_other.last_producer_id"))))
             .groupBy("_order").agg(
                 F.max(F.col("_other.family") == "zookeeper").alias("_zk_overlap"),
                 F.max("_foreign").alias("_foreign_overlap"),
                 F.sort_array(F.collect_set(F.when(F.col("_foreign"), F.col("_other.broker_id")))).alias("_owners"),
                 F.sort_array(F.collect_list(F.col("_text"))).alias("_overlaps"),
                 F.min_by("_other", F.when(F.col("_other.family") == "zookeeper", 0).otherwise(1)).alias("_holder")))
    alloc = alloc.join(pairs, "_order", "left")
    overlaps = F.col("_holder").isNotNull()
    other = F.col("_holder")
    reuse = overlaps & (F.col("family") == "kraft") & F.coalesce(F.col("_zk_overlap"), F.lit(False))
    check = (F.when(reuse, F.lit("PID_MIGRATION_REUSE"))
             .when(F.col("_regressed"), F.lit("PID_BLOCK_REGRESSION"))
             .when(overlaps, F.lit("PID_BLOCK_OVERLAP")))
    # duplicate producer ids are the headline risk: an allocation that also overlaps another owner's block is
    # reported as an overlap too, whatever else it is (a regression's message alone would hide the owners)
    also_overlap = ~reuse & F.col("_regressed") & F.coalesce(F.col("_foreign_overlap"), F.lit(False))
    flagged = (alloc.withColumn("_check", check).filter(F.col("_check").isNotNull())
               .unionByName(alloc.filter(also_overlap).withColumn("_check", F.lit("PID_BLOCK_OVERLAP"))))
    n = ctx.thresholds.evidence_max_items
    owners_text = F.array_join(F.col("_owners").cast("array<string>"), ", ")
    overlap_note = F.when(F.size(F.coalesce("_owners", F.array())) > 0, F.concat(
        F.lit(" It also overlaps the block(s) of broker(s) "), owners_text,
        F.lit(": the same producer ids can be handed to two producers (see PID_BLOCK_OVERLAP).")))
    parts = []
    for check_id in ("PID_MIGRATION_REUSE", "PID_BLOCK_REGRESSION", "PID_BLOCK_OVERLAP"):
        f = flagged.filter(F.col("_check") == check_id)
        parts.append(rows(f, check_id, {
            "broker_id": F.col("broker_id"), "since": F.col("event_time"),
            "key_extra": F.format_string("block=%d-%d@%s", F.col("first_producer_id"), F.col("last_producer_id"),
                                         F.col("source")),
            "details": details(block=_block_text(F.col("first_producer_id"), F.col("last_producer_id")),
                               source=F.col("source"), where=F.col("where"),
                               other_block=_block_text(other["first_producer_id"], other["last_producer_id"]),
                               other_source=other["source"], other_broker=other["broker_id"],
                               overlaps=F.array_join(F.slice(F.coalesce("_overlaps", F.array()), 1, n), "; "),
                               overlap_note=F.coalesce(overlap_note, F.lit("")),
                               previous_next=F.col("_prev_next"), high_water=F.lit(hw)),
            "evidence": evidence(block_first=F.col("first_producer_id"), block_last=F.col("last_producer_id"),
                                 owner=F.col("broker_id"), source=F.col("source"), where=F.col("where"),
                                 record=F.col("detail"), file=F.col("source_file"),
                                 overlapping_block=other, overlapping_blocks=F.slice("_overlaps", 1, n),
                                 overlapping_owners=F.col("_owners"), regressed=F.col("_regressed"),
                                 previous_next_producer_id=F.col("_prev_next")),
        }))
    return union_all(parts)


def outside_blocks(ctx: CheckContext) -> DataFrame:
    used = ctx.silver["silver_producer_ids_in_use"]
    hw_row = ctx.silver["silver_producer_id_blocks"].agg(F.max("next_producer_id").alias("hw")).collect()[0]
    if hw_row["hw"] is None:
        return rows(used.limit(0), "PID_OUTSIDE_BLOCKS", {})
    n = ctx.thresholds.evidence_max_items
    out = used.filter(~F.col("in_block"))
    g = out.groupBy("topic", "partition", "producer_id").agg(
        F.first("topic_id", ignorenulls=True).alias("topic_id"),
        F.sort_array(F.collect_set(F.concat(F.lit("broker "), F.col("broker_id").cast("string"), F.lit(" "),
                                            F.col("entry_name")))).alias("where"),
        F.sort_array(F.collect_set("source_file")).alias("files"),
        F.max("last_timestamp").alias("last_timestamp"), F.min("last_timestamp").alias("first_timestamp"))
    return rows(g, "PID_OUTSIDE_BLOCKS", {
        "topic_name": F.col("topic"), "topic_id": F.col("topic_id"), "partition": F.col("partition"),
        "since": F.col("first_timestamp"), "key_extra": F.format_string("pid=%d", F.col("producer_id")),
        "details": details(producer_id=F.col("producer_id"), where=F.array_join(F.slice("where", 1, n), ", "),
                           high_water=F.lit(hw_row["hw"])),
        "evidence": evidence(producer_id=F.col("producer_id"), seen_in=F.slice("where", 1, n),
                             files=F.slice("files", 1, n), allocation_high_water=F.lit(hw_row["hw"]),
                             last_timestamp=iso(F.col("last_timestamp"))),
    })


def all_checks(ctx: CheckContext):
    return [allocation_checks(ctx), outside_blocks(ctx)]
