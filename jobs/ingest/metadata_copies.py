"""One authoritative metadata sequence out of every copy of the metadata log.

Every KRaft broker (and every dump-log text folder) holds a copy of ``__cluster_metadata-0``. Raft's rule
decides which entry is right where copies disagree: at each offset the entry of the highest leader epoch
wins (a newer leader overwrote the older tail), then the one most copies hold. A copy is *consistent* when
it has no hole in its offsets and agrees with the winner at every offset it holds; the authoritative copy
is the consistent copy reaching furthest (ties: more records, newer snapshot, a broker's disk before dump
text, copy id). Each copy then gets where it starts and ends, its first hole, and the first offset where it
differs from the authoritative copy. The authoritative *sequence* is that copy's log records, plus — when
its log does not reach back to offset 0 — the oldest snapshot that its log continues (Kafka's own
"snapshot, then the log after it").

Record-level work stays in Spark; only one summary row per copy (hundreds) comes back to the driver.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

SOURCE_RANK = {"segment": 0, "dump_log_text": 2}
COPY_COLUMNS = ("copy_id", "source_broker_id", "snapshot_end_offset", "first_offset", "last_offset", "records",
                "is_authoritative", "diverges_at_offset", "gap_after_offset", "sequence_snapshot_end_offset",
                "source_kind", "log_dir")
COPIES_DDL = ("copy_id string, source_broker_id int, snapshot_end_offset long, first_offset long, last_offset long, "
              "records long, is_authoritative boolean, diverges_at_offset long, gap_after_offset long, "
              "sequence_snapshot_end_offset long, source_kind string, log_dir string")


def _same_entry(epoch_a: str, hash_a: str, epoch_b: str, hash_b: str):
    return F.col(epoch_a).eqNullSafe(F.col(epoch_b)) & (F.col(hash_a) == F.col(hash_b))


def _summaries(records: DataFrame, copy_facts: DataFrame, log: DataFrame) -> List[dict]:
    known = log.where(F.col("known"))
    votes = known.groupBy("offset", "leader_epoch", "record_hash").agg(F.count("*").alias("n"))
    by_offset = Window.partitionBy("offset").orderBy(F.col("leader_epoch").desc_nulls_last(), F.col("n").desc(),
                                                     F.col("record_hash"))
    winners = (votes.withColumn("rank", F.row_number().over(by_offset)).where("rank = 1")
               .select("offset", F.col("leader_epoch").alias("w_epoch"), F.col("record_hash").alias("w_hash")))
    offsets = (log.join(winners, "offset", "left")
               .withColumn("bad", F.col("known") & ~_same_entry("leader_epoch", "record_hash", "w_epoch", "w_hash"))
               .groupBy("copy_id", "offset").agg(F.max("bad").alias("bad")))
    in_copy = Window.partitionBy("copy_id").orderBy("offset")
    per_copy = (offsets.withColumn("next_offset", F.lead("offset").over(in_copy))
                .groupBy("copy_id")
                .agg(F.min("offset").alias("first_offset"), F.max("offset").alias("last_offset"),
                     F.count("*").alias("records"),
                     F.min(F.when(F.col("bad"), F.col("offset"))).alias("mismatch_at"),
                     F.min(F.when(F.col("next_offset") > F.col("offset") + 1, F.col("offset"))).alias("gap_after_offset")))
    described = (records.where(F.col("section").isin("log", "snapshot")).groupBy("copy_id")
                 .agg(F.max(F.when(F.col("section") == "snapshot", F.col("snapshot_end_offset"))).alias("snapshot_end_offset"),
                      F.min("source_kind").alias("record_source_kind"),
                      F.first("source_broker_id", ignorenulls=True).alias("record_broker_id")))
    facts = copy_facts.groupBy("copy_id").agg(F.first("source_broker_id", ignorenulls=True).alias("fact_broker_id"),
                                              F.first("log_dir", ignorenulls=True).alias("log_dir"))
    rows = facts.join(described, "copy_id", "full").join(per_copy, "copy_id", "left").collect()
    out = []
    for r in rows:
        d = r.asDict()
        d["source_broker_id"] = d.pop("fact_broker_id") if d.get("fact_broker_id") is not None else d.get("record_broker_id")
        d["source_kind"] = "segment" if d.get("log_dir") else (d.get("record_source_kind") or "segment")
        d["records"] = d.get("records") or 0
        out.append(d)
    return out


def _pick_authoritative(copies: List[dict]) -> Optional[dict]:
    def key(c: dict):
        consistent = c["last_offset"] is not None and c["gap_after_offset"] is None and c["mismatch_at"] is None
        return (not consistent, -(c["last_offset"] if c["last_offset"] is not None else -1), -c["records"],
                -(c["snapshot_end_offset"] if c["snapshot_end_offset"] is not None else -1),
                SOURCE_RANK.get(c["source_kind"], 9), c["copy_id"])
    return min(copies, key=key) if copies else None


def _sequence_snapshot(auth: dict, snapshot_ends: List[int]) -> Optional[int]:
    """End offset of the snapshot the authoritative sequence starts from (None: the log starts at 0)."""
    first = auth["first_offset"]
    if first == 0 or not snapshot_ends:
        return None
    if first is None:
        return max(snapshot_ends)
    continued = [s for s in snapshot_ends if s >= first]
    return min(continued) if continued else max(snapshot_ends)


def compute_copies(records: DataFrame, copy_facts: DataFrame) -> Tuple[DataFrame, DataFrame]:
    """(copies rows of bronze_metadata_copies without run columns, records with ``in_authoritative_sequence``).

    :param records: bronze_metadata_records payload rows (persisted by the caller: it is scanned a few times).
    :param copy_facts: one row per copy known to exist even without records: copy_id, source_broker_id, log_dir.
    """
    spark = records.sparkSession
    # A control record printed as an empty line (kafka-dump-log --skip-record-metadata) has no type: it
    # counts for a copy's extent but takes no part in comparing copies.
    log = (records.where(F.col("section") == "log")
           .select("copy_id", "offset", "leader_epoch", "record_hash",
                   (~(F.col("is_control") & F.col("record_type").isNull())).alias("known"))
           .dropDuplicates())
    copies = _summaries(records, copy_facts, log)
    auth = _pick_authoritative(copies)
    diverges: Dict[str, int] = {}
    sequence_snapshot = None
    if auth is not None:
        auth_id = auth["copy_id"]
        known = log.where(F.col("known"))
        auth_log = known.where(F.col("copy_id") == auth_id).select(
            "offset", F.col("leader_epoch").alias("a_epoch"), F.col("record_hash").alias("a_hash"))
        diverges = {r["copy_id"]: r["at"] for r in
                    known.join(auth_log, "offset").where(~_same_entry("leader_epoch", "record_hash", "a_epoch", "a_hash"))
                    .groupBy("copy_id").agg(F.min("offset").alias("at")).collect()}
        ends = [r[0] for r in records.where((F.col("copy_id") == auth_id) & (F.col("section") == "snapshot"))
                .select("snapshot_end_offset").distinct().collect() if r[0] is not None]
        sequence_snapshot = _sequence_snapshot(auth, ends)
    rows = []
    for c in sorted(copies, key=lambda c: c["copy_id"]):
        is_auth = auth is not None and c["copy_id"] == auth["copy_id"]
        rows.append((c["copy_id"], c["source_broker_id"], c["snapshot_end_offset"], c["first_offset"], c["last_offset"],
                     int(c["records"]), is_auth, diverges.get(c["copy_id"]), c["gap_after_offset"],
                     sequence_snapshot if is_auth else None, c["source_kind"], c.get("log_dir")))
    copies_df = spark.createDataFrame(rows, COPIES_DDL)
    return copies_df, _flag_sequence(records, auth["copy_id"] if auth else None, sequence_snapshot)


def _flag_sequence(records: DataFrame, auth_id: Optional[str], sequence_snapshot: Optional[int]) -> DataFrame:
    columns = records.columns
    if auth_id is None:
        return records.withColumn("in_authoritative_sequence", F.lit(False)).select(columns)
    others = records.where(F.col("copy_id") != auth_id).withColumn("in_authoritative_sequence", F.lit(False))
    in_log = (F.col("section") == "log") & ((F.lit(sequence_snapshot).isNull()) | (F.col("offset") >= F.lit(sequence_snapshot)))
    in_snap = (F.col("section") == "snapshot") & (F.col("snapshot_end_offset") == F.lit(sequence_snapshot))
    once = Window.partitionBy("section", "snapshot_end_offset", "offset").orderBy("source_file")
    auth = (records.where(F.col("copy_id") == auth_id)
            .withColumn("in_authoritative_sequence",
                        F.coalesce((in_log | in_snap) & (F.row_number().over(once) == 1), F.lit(False))))
    return others.select(columns).unionByName(auth.select(columns))
