"""Small DataFrames from rows the driver already holds, planned as Spark's own local relation.

``spark.createDataFrame(rows)`` parallelizes pickled rows: every query that reads the frame runs Python tasks to
unpickle them again. On a small capture the reconcile read such frames (the log dirs' identities joined into
bronze, empty controller views) in dozens of jobs, ~100 ms of Python workers each. A ``VALUES`` list is a
``LocalRelation`` inside the JVM instead: reading it runs no task at all, and an empty one lets the optimizer
drop the joins and unions it feeds. Values are rendered by the table layer's one SQL quoter (timestamps and
finite doubles as text the column's cast reads back exactly).

    identity = local_frame(spark, [("/data/k1", 1, "c-1", None)], "log_dir string, broker_id int, ...")
"""
from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Optional, Sequence, Union

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType, DoubleType, StructType, TimestampType

from jobs.tables.table_predicates import sql_literal

from .jvm import struct_from_ddl

# Above this many rows (or with a value not rendered below) the rows go through createDataFrame as before: the
# SQL parser's cost grows with the statement, and such frames belong to captures big enough to run compiled,
# where one Python task per read is noise.
LOCAL_ROWS_LIMIT = 2000
_RENDERED = (str, int, bool, type(None))


def _literal(value: Any, data_type: DataType) -> Optional[str]:
    """SQL text that the column's CAST turns into exactly ``value``, or None (createDataFrame carries it).

    Text, integers, booleans and NULL by the table layer's quoter. A timestamp column's datetime as text with its
    UTC offset, so the cast gives the same instant whatever the session's time zone (a naive one is local time,
    as createDataFrame reads it); a double column's finite float as its shortest repr, which casts back exactly.
    """
    if isinstance(value, _RENDERED):
        return sql_literal(value)
    if isinstance(value, _dt.datetime) and isinstance(data_type, TimestampType):
        return sql_literal(value.astimezone().isoformat(sep=" ") if value.tzinfo is None
                           else value.isoformat(sep=" "))
    if isinstance(value, float) and isinstance(data_type, DoubleType) and math.isfinite(value):
        return sql_literal(repr(value))
    return None


def local_frame(spark: SparkSession, rows: Sequence[Sequence[Any]], schema: Union[str, StructType]) -> DataFrame:
    """``rows`` (tuples in the schema's column order) as a DataFrame with ``schema`` (DDL or StructType).
    Every column comes out nullable."""
    struct = schema if isinstance(schema, StructType) else struct_from_ddl(schema)
    rows = [tuple(r) for r in rows]
    width = len(struct.fields)
    if len(rows) > LOCAL_ROWS_LIMIT:
        return spark.createDataFrame(rows, struct)
    if any(len(r) != width for r in rows):
        raise ValueError(f"local_frame: every row needs {width} values ({struct.simpleString()})")
    literals = [[_literal(v, f.dataType) for v, f in zip(r, struct.fields, strict=True)] for r in rows]
    if any(text is None for r in literals for text in r):
        return spark.createDataFrame(rows, struct)

    def columns(source) -> str:
        return ", ".join(f"CAST({source(i)} AS {f.dataType.simpleString()}) AS `{f.name}`"
                         for i, f in enumerate(struct.fields))

    if not rows:
        return spark.sql(f"SELECT {columns(lambda i: 'NULL')} WHERE false")
    values = ", ".join("(" + ", ".join(r) + ")" for r in literals)
    names = ", ".join(f"c{i}" for i in range(width))
    return spark.sql(f"SELECT {columns(lambda i: f'c{i}')} FROM VALUES {values} AS t({names})")


def is_empty_local(df: DataFrame) -> bool:
    """Whether Spark's optimizer already knows ``df`` has no rows (it folds any plan over an empty local relation
    into one): a writer can then skip the Spark job. Planning only, no job; False when unsure."""
    from .jvm import optimized_is_empty_local

    return optimized_is_empty_local(df)
