"""SQL text for the table layer's predicates: slice filters and MERGE key conditions.

Both backends use the same text (delta-spark takes it as ``replaceWhere`` / merge condition, the embedded
backend as ``F.expr``), so a slice means the same rows everywhere. Values are rendered as literals with
escaping, never pasted raw: slice values come from inputs (capture ids, run ids).
"""
from __future__ import annotations

import re
from typing import Any, Collection, List, Mapping, Optional, Sequence, Union

SliceValue = Optional[Union[str, int, bool]]
"""What a slice column may be compared with: text, integer, boolean or None (IS NULL)."""

TARGET = "t"
"""Alias of the target table in MERGE conditions and ``set`` expressions."""
SOURCE = "s"
"""Alias of the source DataFrame in MERGE conditions and ``set`` / ``values`` expressions."""

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote_identifier(name: str) -> str:
    """```name``` with backticks; only plain identifiers (letters, digits, underscore) are accepted."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValueError(f"column name {name!r} is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return f"`{name}`"


def sql_literal(value: SliceValue) -> str:
    """A Spark SQL literal for a slice value: quoted and escaped text, an integer, true/false or NULL."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace("'", "\\'")
        return f"'{escaped}'"
    raise TypeError(f"slice value {value!r} has type {type(value).__name__}; expected str, int, bool or None")


def lit_sql(value: Any) -> str:
    """SQL text for a Python literal, typed as ``F.lit`` types it (bool, int/bigint, double, string, a timestamp,
    null); TypeError for any other value."""
    import math
    from datetime import datetime

    if value is None or isinstance(value, (bool, str)):
        return sql_literal(value)
    if isinstance(value, int) and -(1 << 63) <= value < (1 << 63):
        return f"({value})" if value < 0 else str(value)
    if isinstance(value, float) and math.isfinite(value):
        return f"({value!r}D)" if value < 0 else f"{value!r}D"
    if isinstance(value, datetime):  # as F.lit: a TIMESTAMP at the instant PySpark would send
        from pyspark.sql.types import TimestampType

        return f"timestamp_micros({TimestampType().toInternal(value)})"
    raise TypeError(f"no SQL literal for a {type(value).__name__}")


def slice_predicate(slice_values: Mapping[str, SliceValue], qualifier: str = "") -> str:
    """``col = 'v' AND other IS NULL`` for the rows of a slice (``qualifier.`` prefixes each column)."""
    if not slice_values:
        raise ValueError("a slice needs at least one column=value pair, e.g. {'capture_id': 'c-1'}")
    prefix = f"{qualifier}." if qualifier else ""
    parts = []
    for column, value in slice_values.items():
        ident = prefix + quote_identifier(column)
        parts.append(f"{ident} IS NULL" if value is None else f"{ident} = {sql_literal(value)}")
    return " AND ".join(parts)


def key_condition(keys: Sequence[str]) -> str:
    """MERGE match condition on natural keys, null-safe so a key with a null part still matches itself."""
    if not keys:
        raise ValueError("a MERGE needs at least one key column")
    return " AND ".join(f"{TARGET}.{quote_identifier(k)} <=> {SOURCE}.{quote_identifier(k)}" for k in keys)


def partition_value_text(value: SliceValue) -> Optional[str]:
    """How Delta's log spells a partition value (``partitionValues`` are strings; null stays None)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def conform_exprs(spec: Any, present: Collection[str], literals: Optional[Mapping[str, str]] = None) -> List[str]:
    """``selectExpr`` texts giving exactly ``spec``'s columns, in order and typed: a column ``present`` in the frame,
    else its SQL text in ``literals``, else a typed NULL. One ``selectExpr`` of text is a few JVM calls, where a
    Column per field is several each."""
    literals = literals or {}
    return [f"CAST({literals.get(f.name) or (quote_identifier(f.name) if f.name in present else 'NULL')} "
            f"AS {f.dataType.simpleString()}) AS {quote_identifier(f.name)}" for f in spec.spark_schema().fields]
