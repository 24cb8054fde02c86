"""The authoritative KRaft metadata log as two DataFrames: the image at capture and the retained history.

image   = records of the authoritative copy's newest snapshot (``pos`` < 0, in snapshot order) + log records
          with offset >= the snapshot's end offset (``pos`` = offset): replaying it gives the controller's
          state at capture.
history = every retained log record (offset = pos >= 0) of the authoritative copy, once per offset: it
          dates creations and deletions (records below the snapshot included).
Records inside an aborted (or never-ended) metadata transaction are dropped, as Kafka's replay does.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from pyspark.sql import DataFrame, SparkSession, Window

from jobs.engine.local_frames import local_frame
from jobs.ingest.metadata_copies import batch_overlap

from . import sql_functions as F
from .frames import materialize

SNAPSHOT_POS_BASE = -(1 << 40)  # snapshot records sort before every log offset
# what the replay reads; payload_json only where a check quotes it (keeps 1M-record histories small)
REPLAY_COLUMNS = ("offset", "batch_base_offset", "leader_epoch", "append_time", "is_control", "record_type",
                  "topic_id", "topic_name", "partition_id", "broker_id", "broker_epoch", "replicas", "isr", "leader",
                  "removing_replicas", "adding_replicas", "directories", "fenced", "next_producer_id",
                  "zk_migration_state", "error_kind", "source_file", "snapshot_end_offset", "version",
                  "cordoned_log_dirs")
PAYLOAD_KEPT_FOR = ("PRODUCER_IDS_RECORD", "SNAPSHOT_HEADER", "PARTITION_RECORD")  # LeaderEpoch: kraft_view


def _slim(df: DataFrame) -> DataFrame:
    payload = F.when(F.col("record_type").isin(*PAYLOAD_KEPT_FOR), F.col("payload_json")).alias("payload_json")
    return df.select(*REPLAY_COLUMNS, payload)
TXN_MARKERS = ("BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD")


@dataclass
class MetadataLog:
    present: bool
    authoritative_copy: Optional[str]
    snapshot_end: Optional[int]            # exclusive end offset of the newest snapshot, None without one
    history_start: Optional[int]           # first retained log offset
    history_start_time: Optional[datetime]
    snapshot_time_bound: Optional[datetime]  # newest time the snapshot can contain (lastContainedLogTimestamp)
    image: DataFrame
    history: DataFrame
    log_records: DataFrame                 # every copy's log offsets, slim (for gaps/divergence details)
    divergence: DataFrame                  # copy_id, source_broker_id, diverges_at_offset

    @property
    def covers_from_start(self) -> bool:
        """The image is complete: a snapshot, or a log that starts at offset 0."""
        return self.present and (self.snapshot_end is not None or self.history_start == 0)


def _section():
    """log, snapshot or bootstrap: the ingest's ``section``, else inferred from ``source_kind``."""
    kind = F.coalesce(F.col("source_kind"), F.lit("segment"))
    return F.coalesce(F.col("section"), F.when(kind.isin("snapshot", "bootstrap"), kind).otherwise(F.lit("log")))


def _is_log(_unused=None):
    return _section() == "log"


def build_metadata_log(spark: SparkSession, records: DataFrame, copies: DataFrame,
                       batches: Optional[DataFrame] = None) -> MetadataLog:
    """The metadata log as reconcile sees it (module docstring). ``batches`` (bronze_metadata_batches) lets
    the history skip its once-per-offset window when no two files of the authoritative copy overlap."""
    recs = records.filter(F.col("offset").isNotNull())
    from_copies = True
    auth = (copies.filter(F.col("is_authoritative"))
            .orderBy(F.col("last_offset").desc_nulls_last(), "copy_id")
            .select("copy_id", F.col("sequence_snapshot_end_offset").alias("snapshot_end_offset"),
                    "first_offset").limit(1).collect())
    if not auth:  # no copies table: the copy reaching the highest offset, from its newest snapshot
        from_copies = False
        auth = (recs.groupBy("copy_id")
                .agg(F.max(F.when(_is_log(), F.col("offset"))).alias("last"),
                     F.max(F.when(_section() == "snapshot", F.col("snapshot_end_offset"))).alias("snapshot_end_offset"),
                     F.min(F.when(_is_log(), F.col("offset"))).alias("first_offset"))
                .orderBy(F.col("last").desc_nulls_last(), F.col("snapshot_end_offset").desc_nulls_last(), "copy_id")
                .select("copy_id", "snapshot_end_offset", "first_offset").limit(1).collect())
    empty_hist = recs.limit(0).withColumn("pos", F.lit(None).cast("long")).withColumn("group_key", F.lit(None).cast("long"))
    if not auth:
        return MetadataLog(False, None, None, None, None, None, empty_hist, empty_hist, recs.limit(0),
                           local_frame(spark, [], "copy_id string, source_broker_id int, diverges_at_offset long"))
    copy_id = auth[0]["copy_id"]
    auth_snaps = _slim(recs.filter((F.col("copy_id") == copy_id) & (_section() == "snapshot")))
    snap_end = auth[0]["snapshot_end_offset"]
    if snap_end is None and auth[0]["first_offset"] not in (0, None) and from_copies:
        # the ingest found no snapshot its log continues: take the newest one that reaches the log
        row = auth_snaps.filter(F.col("snapshot_end_offset") >= F.lit(auth[0]["first_offset"])).agg(
            F.min("snapshot_end_offset").alias("s")).collect()
        snap_end = row[0]["s"] if row else None

    # every copy's log offsets, slim: only gaps and divergence details look at the other copies
    log_records = recs.filter(_is_log()).select("copy_id", "source_broker_id", "offset", "record_type",
                                                "leader_epoch", "record_hash")
    if from_copies:
        divergence = copies.filter(F.col("diverges_at_offset").isNotNull()).select(
            "copy_id", "source_broker_id", "diverges_at_offset")
    else:
        divergence = _divergence(log_records, copy_id)
    # history: the authoritative copy's retained log, once per offset (other copies only repeat it, and at
    # 100 brokers x 1M records reading them all would cost 100x)
    ours = recs.filter((F.col("copy_id") == copy_id) & _is_log())
    if _may_repeat_offsets(batches, copy_id):
        ours = ours.withColumn("_rn", F.row_number().over(Window.partitionBy("offset").orderBy("source_file")))
        ours = ours.filter("_rn = 1")
    history = _slim(ours).withColumn("pos", F.col("offset"))
    history = materialize(_drop_uncommitted(history))
    history_data = history.filter(~F.coalesce(F.col("is_control"), F.lit(False)) & F.col("error_kind").isNull()
                                  & ~F.col("record_type").isin(*TXN_MARKERS))

    stats = history.agg(F.min("offset").alias("start"), F.min_by("append_time", "offset").alias("start_time")).collect()[0]
    bound = None
    if snap_end is not None:
        snap = auth_snaps.filter(F.col("snapshot_end_offset") == snap_end)
        row = snap.agg(
            F.max(F.when(F.col("record_type") == "SNAPSHOT_HEADER",
                         F.coalesce(F.get_json_object("payload_json", "$.lastContainedLogTimestamp"),
                                    F.get_json_object("payload_json", "$.data.lastContainedLogTimestamp"))
                         .cast("long"))).alias("ms"),
            F.min("append_time").alias("written")).collect()[0]
        if row["ms"] is not None:
            bound = datetime.fromtimestamp(row["ms"] / 1000.0, tz=timezone.utc)
        else:
            bound = row["written"]
        snap_data = (snap.filter(~F.coalesce(F.col("is_control"), F.lit(False)) & F.col("error_kind").isNull())
                     .withColumn("pos", F.col("offset") + F.lit(SNAPSHOT_POS_BASE))
                     .withColumn("group_key", F.lit(None).cast("long")))
        tail = history_data.filter(F.col("offset") >= F.lit(snap_end))
        image = materialize(snap_data.unionByName(tail))
    else:
        image = history_data
    return MetadataLog(True, copy_id, snap_end, stats["start"], stats["start_time"], bound, image, history_data,
                       log_records, divergence)


def _may_repeat_offsets(batches: Optional[DataFrame], copy_id: str) -> bool:
    """Whether the copy may hold one offset twice (two files, or one repeating it): unknown without its batch
    rows (then dedupe)."""
    if batches is None:
        return True
    rows, overlap = batch_overlap(batches, copy_id)
    return rows == 0 or overlap


def _divergence(log_records: DataFrame, auth_copy: str) -> DataFrame:
    """Per other copy: the first offset where its record differs from the authoritative copy's."""
    ours = (log_records.filter(F.col("copy_id") == auth_copy)
            .select("offset", F.col("record_hash").alias("ours")).dropDuplicates(["offset"]))
    theirs = log_records.filter(F.col("copy_id") != auth_copy).select("copy_id", "source_broker_id", "offset",
                                                                       F.col("record_hash").alias("theirs"))
    return (theirs.join(ours, "offset")
            .filter(F.col("ours").isNotNull() & F.col("theirs").isNotNull() & (F.col("ours") != F.col("theirs")))
            .groupBy("copy_id").agg(F.first("source_broker_id", ignorenulls=True).alias("source_broker_id"),
                                     F.min("offset").alias("diverges_at_offset")))


TXN_BUCKET = 1 << 14  # offsets per join bucket when matching records to transaction ranges


def _drop_uncommitted(history: DataFrame) -> DataFrame:
    """Drop records between BeginTransaction and AbortTransaction (or a Begin never ended); tag each record
    with ``group_key`` = its transaction's Begin offset, else its batch base offset (one atomic change).

    Only the markers (a handful of rows) are ordered globally; records find their transaction through an
    equi-join on offset buckets, so the work stays partitioned however long the history is."""
    markers = history.filter(F.col("record_type").isin(*TXN_MARKERS)).select("offset", "record_type")
    by_offset = Window.partitionBy(F.lit(0)).orderBy("offset")  # markers only: small by construction
    ranges = (markers.withColumn("_end", F.lead("offset").over(by_offset))
              .withColumn("_end_type", F.lead("record_type").over(by_offset))
              .filter(F.col("record_type") == "BEGIN_TRANSACTION_RECORD")
              .select(F.col("offset").alias("_begin"), "_end",
                      F.coalesce(F.col("_end_type") == "END_TRANSACTION_RECORD", F.lit(False)).alias("_committed")))
    top = history.agg(F.max("offset").alias("_top"))  # where a never-ended transaction stops: one row
    bucketed = (ranges.crossJoin(F.broadcast(top))
                .withColumn("_bucket", F.explode(F.sequence(
                    F.floor(F.col("_begin") / TXN_BUCKET), F.floor(F.coalesce(F.col("_end") - 1, F.col("_top")) / TXN_BUCKET))))
                .drop("_top"))
    rows = history.withColumn("_bucket", F.floor(F.col("offset") / TXN_BUCKET))
    inside = (rows["offset"] >= bucketed["_begin"]) & (rows["offset"] <= F.coalesce(bucketed["_end"] - 1, F.lit(1 << 62)))
    tagged = rows.join(F.broadcast(bucketed), (rows["_bucket"] == bucketed["_bucket"]) & inside, "left")
    in_txn = F.col("_begin").isNotNull()
    return (tagged.filter(~in_txn | F.col("_committed"))
            .withColumn("group_key", F.when(in_txn, F.col("_begin")).otherwise(F.col("batch_base_offset")))
            .drop("_bucket", "_begin", "_end", "_committed"))

