"""Test helper: rows (dicts, ISO-8601 text for timestamps) -> a DataFrame with a registry table's exact schema."""
from __future__ import annotations

from datetime import datetime

from jobs.tables.registry import spec


def as_timestamp(value):
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value


def frame(spark, table, rows):
    s = spec(table)
    kinds = {c.name: c.type for c in s.columns}
    data = [tuple(as_timestamp(r.get(c)) if kinds[c] == "timestamp" else r.get(c) for c in s.column_names)
            for r in rows]
    return spark.createDataFrame(data, s.spark_schema())
