"""Restart hazards: offsets on disk that make a broker's next start destroy or distrust data (KAFKA-10101 class).

LOG_START_BEYOND_LOG_END      a log-start-offset-checkpoint entry above the dir's log end offset: at the next
                              start LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd deletes every segment;
RECOVERY_POINT_BEYOND_LOG_END a recovery-point-offset-checkpoint entry above the log end offset: data Kafka
                              had flushed is no longer on disk (LogLoader clamps the recovery point silently);
SEGMENT_SHORTER_THAN_INDEX    the newest segment's offset index points past the end of its .log file: data was
                              cut off after Kafka indexed it (LogSegment.readNextOffset then finds no batch);
CHECKPOINT_WITHOUT_DIR        a checkpoint names a partition that has no dir in that log dir (info);
CHECKPOINT_OF_PREVIOUS_INCARNATION  an entry the first two would report, but written before the dir existed or
                              fitting another dir of the same name (info): the checkpoints name topic and
                              partition, not the topic id, and Kafka rewrites the entry at its next flush.

Entries are judged per incarnation by :mod:`.checkpoint_entries`.
The log end offset comes from the collector's segment summary (collector.summarize_segment); a dir whose
newest segment was not read completely is never judged. The collector reads the checkpoint files before the
replica dirs, so on a live broker a checkpoint is never newer than the segments it is compared with.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame

from . import sql_functions as F
from .check_rows import details, evidence, replica_dir_values, rows
from .checkpoint_entries import LOADED_KINDS, LOG_START, RECOVERY_POINT, checkpoint_offsets
from .context import CheckContext
from .frames import iso


def _beyond(ctx: CheckContext) -> DataFrame:
    """Loaded replica dirs whose recovery-point or log-start entry is above their log end offset, judged per
    incarnation (one plan for the three checks that read it)."""
    return checkpoint_offsets(ctx, RECOVERY_POINT, LOG_START).withColumnRenamed("offset", "checkpoint_offset").filter(
        F.col("log_end_offset").isNotNull() & (F.col("checkpoint_offset") > F.col("log_end_offset")))


def _values(extra: dict) -> dict:
    return replica_dir_values(extra, precedence=False)


def _evidence(**more: Column) -> Column:
    return evidence(path=F.concat_ws("/", F.col("log_dir"), F.col("dir_name")), entry_kind=F.col("entry_kind"),
                    segments=F.col("segment_count"), first_segment_offset=F.col("log_start_offset"),
                    newest_segment_offset=F.col("newest_segment_offset"), log_end_offset=F.col("log_end_offset"),
                    newest_segment_bytes=F.col("newest_segment_bytes"), bytes=F.col("bytes"), **more)


def _beyond_log_end(ctx: CheckContext, checkpoint: str, check_id: str) -> DataFrame:
    d = _beyond(ctx).filter((F.col("checkpoint") == checkpoint) & (F.col("incarnation") == "this"))
    return rows(d, check_id, _values({
        "key_extra": F.lit(checkpoint),
        "details": details(checkpoint_offset=F.col("checkpoint_offset"), log_end_offset=F.col("log_end_offset"),
                           missing_offsets=F.col("checkpoint_offset") - F.col("log_end_offset"),
                           newest_segment_offset=F.col("newest_segment_offset"),
                           checkpoint_file=F.col("checkpoint_file")),
        "evidence": _evidence(checkpoint=F.lit(checkpoint), checkpoint_file=F.col("checkpoint_file"),
                              checkpoint_offset=F.col("checkpoint_offset")),
    }))


def log_start_beyond_log_end(ctx: CheckContext) -> DataFrame:
    return _beyond_log_end(ctx, LOG_START, "LOG_START_BEYOND_LOG_END")


def recovery_point_beyond_log_end(ctx: CheckContext) -> DataFrame:
    return _beyond_log_end(ctx, RECOVERY_POINT, "RECOVERY_POINT_BEYOND_LOG_END")


def previous_incarnation(ctx: CheckContext) -> DataFrame:
    """The entries the two checks above would report, were they evidence about the dir they name."""
    d = _beyond(ctx).filter(F.col("incarnation") == "previous")
    return rows(d, "CHECKPOINT_OF_PREVIOUS_INCARNATION", _values({
        "key_extra": F.col("checkpoint"),
        "details": details(checkpoint=F.col("checkpoint"), checkpoint_offset=F.col("checkpoint_offset"),
                           log_end_offset=F.col("log_end_offset"), reason=F.col("incarnation_reason"),
                           checkpoint_file=F.col("checkpoint_file")),
        "evidence": _evidence(checkpoint=F.col("checkpoint"), checkpoint_file=F.col("checkpoint_file"),
                              checkpoint_offset=F.col("checkpoint_offset"),
                              checkpoint_written=iso(F.col("checkpoint_written")),
                              dir_first_written=iso(F.col("first_written")), reason=F.col("incarnation_reason")),
    }))


def segment_shorter_than_index(ctx: CheckContext) -> DataFrame:
    d = ctx.replicas.filter(F.col("entry_kind").isin(*LOADED_KINDS) & F.col("index_last_position").isNotNull()
                            & (F.col("index_last_position") > F.col("newest_segment_bytes")))
    return rows(d, "SEGMENT_SHORTER_THAN_INDEX", _values({
        "details": details(newest_segment_offset=F.col("newest_segment_offset"),
                           index_position=F.col("index_last_position"), segment_bytes=F.col("newest_segment_bytes"),
                           missing_bytes=F.col("index_last_position") - F.col("newest_segment_bytes")),
        "evidence": _evidence(index_last_position=F.col("index_last_position")),
    }))


def checkpoint_without_dir(ctx: CheckContext) -> DataFrame:
    """Entries naming a partition with no dir of any kind (plain, -future, -delete, -stray) in that log dir.
    Log dirs that are not reconciled (foreign, decommissioned, controller) have one finding of their own."""
    c = ctx.bronze["bronze_offset_checkpoints"]
    held = (ctx.bronze["bronze_dir_entries"].filter(F.col("is_dir") & F.col("partition").isNotNull())
            .select("log_dir", "topic", "partition").distinct())
    dirs = ctx.log_dirs.filter(F.col("state").isin("registered", "cordoned", "unregistered", "offline",
                                                    "no_dir_registration"))
    d = (c.join(held, ["log_dir", "topic", "partition"], "left_anti")
         .join(dirs.select("log_dir", "broker_id", F.col("log_dir_name")), "log_dir")
         .groupBy("log_dir", "log_dir_name", "broker_id", "topic", "partition")
         .agg(F.sort_array(F.collect_list(F.struct("checkpoint", "offset"))).alias("_entries")))
    listing = F.array_join(F.transform("_entries", lambda e: F.concat(e["checkpoint"], F.lit(" "),
                                                                       e["offset"].cast("string"))), ", ")
    return rows(d, "CHECKPOINT_WITHOUT_DIR", {
        "broker_id": F.col("broker_id"), "log_dir": F.col("log_dir_name"), "log_dir_path": F.col("log_dir"),
        "topic_name": F.col("topic"), "partition": F.col("partition"), "bytes": F.lit(0),
        "details": details(entries=listing),
        "evidence": evidence(log_dir=F.col("log_dir"), topic=F.col("topic"), partition=F.col("partition"),
                             entries=F.col("_entries")),
    })


def all_checks(ctx: CheckContext):
    return [log_start_beyond_log_end(ctx), recovery_point_beyond_log_end(ctx), previous_incarnation(ctx),
            segment_shorter_than_index(ctx), checkpoint_without_dir(ctx)]
