"""Small DataFrame helpers shared by the reconcile modules: conforming to table specs, names, times, JSON."""
from __future__ import annotations

from functools import reduce
from typing import Iterable, Mapping, Sequence

from pyspark.sql import Column, DataFrame, Row, SparkSession

from jobs.engine import jvm
from jobs.engine.local_frames import local_frame
from jobs.spark_session import session_broadcasts_small_sides, session_small_capture
from jobs.tables.spec import TableSpec
from jobs.tables.table_predicates import conform_exprs

from . import sql_functions as F

# Reserved directory ids (server-common DirectoryId.java): UNASSIGNED, LOST, MIGRATING are not real dirs.
RESERVED_DIRECTORY_IDS = ("AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg")


def union_all(parts: Sequence[DataFrame]) -> DataFrame:
    """``unionByName`` of every part, paired off as a balanced tree. Each ``unionByName`` re-analyses the union
    built so far, so a chain of n parts costs ~n^2 analysis and a tree ~n log n; Spark flattens both into the
    same n-ary union, parts in the same order."""
    parts = list(parts)
    while len(parts) > 1:
        parts = [parts[i].unionByName(parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def one_row(*aggregates: DataFrame) -> Row:
    """The one row of each global aggregate (``df.agg(...)``: one row even over no rows), side by side, from one
    Spark job: questions the plan depends on (is there a ZooKeeper dump? which cluster?) asked together instead of
    an action each, each a job planned and run in turn on a small capture's critical path."""
    return reduce(DataFrame.crossJoin, aggregates).collect()[0]


def empty(spark: SparkSession, spec: TableSpec) -> DataFrame:
    return local_frame(spark, [], spec.spark_schema())


def conform(df: DataFrame, spec: TableSpec) -> DataFrame:
    """``df`` with exactly the spec's columns, in order and typed; absent columns become typed nulls.
    SQL text rather than a Column per field: a few JVM calls instead of a hundred per table. ``selectExpr``,
    not ``spark.sql(..., frame=df)``, which registers and drops a temporary view per call (a SQL execution of its
    own: 20 in a devsample reconcile, and about twice the time per call)."""
    return df.selectExpr(*conform_exprs(spec, set(df.columns)))


def conform_all(spark: SparkSession, frames: Mapping[str, DataFrame], specs: Iterable[TableSpec]) -> dict:
    """Every spec'd table as a conformed DataFrame; a table the caller did not pass is empty."""
    out = {}
    for spec in specs:
        df = frames.get(spec.name)
        out[spec.name] = conform(df, spec) if df is not None else empty(spark, spec)
    return out


def basename(path: Column) -> Column:
    """Last component of a path or URI (``/`` or ``\\`` separated), ignoring trailing separators.

    Not ``regexp_extract(path, '([^/\\\\]+)[/\\\\]*$', 1)``, which it replaces: Java's regex tried that pattern
    from every position of the path, ~26 us per 116-character log dir, 10.6 s of the 400k fleet's silver_replicas
    (one per replica dir); this takes ~1 us. The trailing separators go first, then the part after the last one."""
    trimmed = F.regexp_replace(path, r"[/\\]+$", "")
    return F.substring_index(F.translate(trimmed, "\\", "/"), "/", -1)


def iso(ts: Column) -> Column:
    return F.date_format(ts, "yyyy-MM-dd'T'HH:mm:ss'Z'")


def human_bytes(b: Column) -> Column:
    """1.5 GiB, 12.0 MiB, 340 B: for messages."""
    d = b.cast("double")
    return (F.when(b.isNull(), F.lit("? bytes"))
            .when(b >= 1 << 40, F.concat(F.format_number(d / float(1 << 40), 1), F.lit(" TiB")))
            .when(b >= 1 << 30, F.concat(F.format_number(d / float(1 << 30), 1), F.lit(" GiB")))
            .when(b >= 1 << 20, F.concat(F.format_number(d / float(1 << 20), 1), F.lit(" MiB")))
            .when(b >= 1 << 10, F.concat(F.format_number(d / float(1 << 10), 1), F.lit(" KiB")))
            .otherwise(F.concat(b.cast("string"), F.lit(" B"))))


def human_ms(ms: Column) -> Column:
    """A duration in ms as '3d 4h', '12m 5s' ...: for messages."""
    s = F.floor(ms / 1000).cast("long")
    return (F.when(ms.isNull(), F.lit("unknown age"))
            .when(s >= 86400, F.format_string("%dd %dh", F.floor(s / 86400).cast("long"), F.floor((s % 86400) / 3600).cast("long")))
            .when(s >= 3600, F.format_string("%dh %dm", F.floor(s / 3600).cast("long"), F.floor((s % 3600) / 60).cast("long")))
            .when(s >= 60, F.format_string("%dm %ds", F.floor(s / 60).cast("long"), (s % 60)))
            .otherwise(F.format_string("%ds", s)))


def millis(ts: Column) -> Column:
    """Timestamp -> epoch milliseconds (long)."""
    return F.unix_millis(ts)


def real_directory(dir_id: Column) -> Column:
    """True when a directory id names a real log dir (not UNASSIGNED/LOST/MIGRATING or null)."""
    return dir_id.isNotNull() & ~dir_id.isin(*RESERVED_DIRECTORY_IDS)


def assigned_element(arr: Column, replicas: Column, broker: Column) -> Column:
    """The element of ``arr`` aligned with ``broker``'s position in ``replicas`` (null when absent)."""
    pos = F.array_position(replicas, broker).cast("int")
    return F.when(pos > 0, F.try_element_at(arr, pos))


def int_list_text(arr: Column) -> Column:
    return F.concat(F.lit("["), F.array_join(arr.cast("array<string>"), ", "), F.lit("]"))


def small_side(df: DataFrame) -> DataFrame:
    """A join's small side (one row per topic, topic name, log dir or broker), broadcast when the session's profile
    does (:func:`jobs.spark_session.session_broadcasts_small_sides`). Why: the large profile lets Spark pick no
    broadcast by itself (its picks by size made the driver's memory grow with the fleet), and a checkpointed frame
    carries no size estimate anyway, so without the hint the large side (a row per replica dir) is shuffled once
    per join: eight exchanges of 400k rows in silver_replicas on the 400k fleet. The small-capture profile
    broadcasts nothing (each broadcast is a job of its own there), and a user's
    ``spark.sql.autoBroadcastJoinThreshold: -1`` is respected the same way."""
    return F.broadcast(df) if session_broadcasts_small_sides(df.sparkSession) else df


def materialize(df: DataFrame) -> DataFrame:
    """Compute ``df`` once and cut its lineage: the replay and silver tables feed dozens of checks, and
    re-analysing their growing plans in every check costs far more than the (small) data.

    The ``coalesce`` moves no data. In the small-capture profile it is to one partition, whatever the frame was
    computed in (a union, a scan of several files), of a frame without a size estimate (:func:`jobs.engine.jvm.without_size_estimate`):
    joins and aggregates over such frames need no exchange. Otherwise it keeps the partitions the frame has. Either
    way it drops the sort order Spark would otherwise carry over from the checkpointed plan: without AQE (the
    small-capture profile) that order can name an attribute the frame does not output, and caching a frame built on
    it then fails in Spark's planner (``key not found``)."""
    try:
        done = df.localCheckpoint(eager=True)
    except Exception as exc:  # noqa: BLE001 - a Connect server without checkpoints: the frame computed once, cached
        if jvm.is_classic(df.sparkSession):
            raise
        del exc
        done = df.cache()
        done.count()
        return done
    if session_small_capture(done.sparkSession):
        return jvm.without_size_estimate(done).coalesce(1)
    parts = jvm.partitions(done)
    return done if parts is None else done.coalesce(max(1, parts))  # AQE leaves an empty result no partitions
