"""Entries of a log dir's offset checkpoints, each judged for the replica dir it would be evidence about.

Kafka's offset checkpoints (``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
``replication-offset-checkpoint``, ``cleaner-offset-checkpoint``) name ``topic partition``, never the topic id
(OffsetCheckpointFile's format, apache/kafka@1eb7644): an entry describes whichever log of that name the broker
held when it wrote the file. LogManager rewrites the first three every ``log.flush.offset.checkpoint.interval.ms``
/ ``replica.high.watermark.checkpoint.interval.ms`` from the logs it then holds (checkpointLogRecoveryOffsets,
checkpointLogStartOffsets, ReplicaManager.checkpointHighWatermarks), so after a topic was deleted and re-created
while the broker was down, the file read at the capture may still hold the old incarnation's offsets until the
next write, beside the new incarnation's dir.

An entry is evidence about a replica dir only when

- the dir existed when the file was written: the file's mtime is not before the dir's ``first_written``
  (partition.metadata's mtime, which Kafka writes once when it creates the log, else the dir's oldest file), and
- no other dir of the same name in that log dir (a ``-stray`` or ``-delete`` dir, another incarnation) could
  have given the offset (its log end offset unknown or not below the entry).

Otherwise the entry is of a previous incarnation (``incarnation = "previous"``): Kafka rewrites it at the next
flush from the log it now holds, and it says nothing about that log.
"""
from __future__ import annotations

from pyspark.sql import DataFrame

from . import sql_functions as F
from .context import CheckContext

RECOVERY_POINT = "recovery-point-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"
HIGH_WATERMARK = "replication-offset-checkpoint"
CLEANER = "cleaner-offset-checkpoint"
LOADED_KINDS = ("partition", "future")  # dirs LogManager loads as the topic-partition's log
OTHER_INCARNATION_KINDS = ("stray", "delete", "partition", "future")


def checkpoint_offsets(ctx: CheckContext, *checkpoints: str) -> DataFrame:
    """Replica dirs Kafka loads (silver_replicas' columns), each with the entry each of ``checkpoints`` of its own
    log dir holds for its name: ``checkpoint``, ``offset``, ``checkpoint_file``, ``checkpoint_written`` (the file's
    mtime), ``first_written``, ``incarnation`` ("this" or "previous") and ``incarnation_reason``."""
    c = (ctx.bronze["bronze_offset_checkpoints"].filter(F.col("checkpoint").isin(*checkpoints))
         .select(F.col("log_dir").alias("_c_log_dir"), "checkpoint", F.col("topic").alias("_c_topic"),
                 F.col("partition").alias("_c_partition"), F.col("offset"),
                 F.col("source_file").alias("checkpoint_file")))
    entries = ctx.bronze["bronze_dir_entries"]
    written = entries.filter(~F.col("is_dir") & F.col("entry_name").isin(*checkpoints)).select(
        F.col("log_dir").alias("_c_log_dir"), F.col("entry_name").alias("checkpoint"),
        F.col("newest_mtime").alias("checkpoint_written"))
    c = c.join(written, ["_c_log_dir", "checkpoint"], "left")
    created = entries.filter(F.col("is_dir")).select("log_dir", F.col("entry_name").alias("dir_name"),
                                                     "first_written")
    r = ctx.replicas.filter(F.col("entry_kind").isin(*LOADED_KINDS)).join(created, ["log_dir", "dir_name"], "left")
    d = r.join(c, (r["log_dir"] == c["_c_log_dir"]) & (r["topic_from_name"] == c["_c_topic"])
               & (r["partition"] == c["_c_partition"]))
    # other dirs of the same topic-partition in the same log dir that could have given the offset
    others = entries.filter(F.col("is_dir") & F.col("entry_kind").isin(*OTHER_INCARNATION_KINDS)).select(
        F.col("log_dir").alias("_o_log_dir"), F.col("topic").alias("_o_topic"), F.col("partition").alias("_o_partition"),
        F.col("entry_name").alias("_o_name"), F.col("log_end_offset").alias("_o_leo"))
    explained = (d.select("log_dir", "dir_name", "checkpoint", "topic_from_name", "partition", "offset")
                 .join(others, (F.col("log_dir") == F.col("_o_log_dir")) & (F.col("topic_from_name") == F.col("_o_topic"))
                       & (F.col("partition") == F.col("_o_partition")) & (F.col("_o_name") != F.col("dir_name"))
                       & (F.col("_o_leo").isNull() | (F.col("_o_leo") >= F.col("offset"))))
                 .groupBy("log_dir", "dir_name", "checkpoint")
                 .agg(F.array_sort(F.collect_set("_o_name")).alias("_explained_by")))
    d = d.join(explained, ["log_dir", "dir_name", "checkpoint"], "left")
    before = (F.col("checkpoint_written").isNotNull() & F.col("first_written").isNotNull()
              & (F.col("checkpoint_written") < F.col("first_written")))
    other = F.col("_explained_by").isNotNull()
    reason = (F.when(before, F.format_string("%s was last written at %s, before %s existed (%s)", F.col("checkpoint"),
                                             F.date_format("checkpoint_written", "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"),
                                             F.col("dir_name"),
                                             F.date_format("first_written", "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")))
              .when(other, F.concat(F.lit("the entry fits another dir of the same name in this log dir: "),
                                    F.array_join("_explained_by", ", "))))
    return (d.withColumn("incarnation", F.when(before | other, F.lit("previous")).otherwise(F.lit("this")))
            .withColumn("incarnation_reason", reason)
            .drop("_c_log_dir", "_c_topic", "_c_partition", "_explained_by"))


def this_incarnation(ctx: CheckContext, *checkpoints: str) -> DataFrame:
    """The entries that are evidence about the dir they are joined to."""
    return checkpoint_offsets(ctx, *checkpoints).filter(F.col("incarnation") == "this")
