"""Table specs as data: a column list in a tiny type language, turned into Spark and Arrow schemas.

Spark-free on purpose, so executors' Arrow code and the docs generator can use the same definitions.
Types: string, int, long, boolean, double, timestamp (UTC, microseconds), binary, array<T>.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Tuple

import pyarrow as pa

LAYERS = ("bronze", "silver", "gold")
# the table property that records which spec version a table's schema is (set at creation, raised by evolution)
SCHEMA_VERSION_PROPERTY = "kafka_recon.schema_version"

_ARROW = {
    "string": pa.string(),
    "int": pa.int32(),
    "long": pa.int64(),
    "boolean": pa.bool_(),
    "double": pa.float64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "binary": pa.binary(),
}


def arrow_type(type_name: str) -> pa.DataType:
    if type_name.startswith("array<") and type_name.endswith(">"):
        return pa.list_(arrow_type(type_name[6:-1]))
    try:
        return _ARROW[type_name]
    except KeyError:
        raise ValueError(f"unknown column type {type_name!r}; expected one of {sorted(_ARROW)} or array<T>") from None


def ddl_fields(ddl: str) -> Tuple[Tuple[str, str], ...]:
    """``"a string, b array<long>"`` -> ``(("a", "string"), ("b", "array<long>"))``: the columns of a short DDL text
    in this module's type language (the few ad-hoc frames no table spec owns: task inputs, per-copy summaries)."""
    return tuple((name, type_name) for name, type_name in (part.strip().split(None, 1) for part in ddl.split(",")))


def ddl_arrow_schema(ddl: str) -> pa.Schema:
    """:func:`ddl_fields` as an Arrow schema (what ``mapInArrow``/``applyInArrow`` must hand back for that DDL)."""
    return pa.schema([(name, arrow_type(type_name)) for name, type_name in ddl_fields(ddl)])


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    doc: str = ""
    nullable: bool = True

    def __post_init__(self) -> None:
        arrow_type(self.type)  # fail when the spec loads, not mid-job


@dataclass(frozen=True)
class TableSpec:
    """One Delta table: its explicit schema, partition columns, natural keys and layer."""

    name: str
    layer: str
    columns: Tuple[Column, ...]
    keys: Tuple[str, ...]
    partition_by: Tuple[str, ...] = ()
    description: str = ""
    slice_column: str = "capture_id"  # what ``replace_slice`` replaces by default
    extra: dict = field(default_factory=dict, compare=False)
    # raised with each schema change; a release may only add nullable columns to a version (the job adds
    # them to existing tables itself); dropping or retyping a column needs ``kafka-recon migrate --rewrite``
    version: int = 1

    def __post_init__(self) -> None:
        if self.layer not in LAYERS:
            raise ValueError(f"table {self.name}: layer {self.layer!r} not in {LAYERS}")
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise ValueError(f"table {self.name}: version must be an int >= 1, got {self.version!r}")
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name}: duplicate column names")
        for col in (*self.keys, *self.partition_by):
            if col not in names:
                raise ValueError(f"table {self.name}: key/partition column {col!r} is not a column ({names})")

    @property
    def column_names(self) -> Tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def arrow_schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in self.columns])

    def spark_schema(self):
        """The Spark ``StructType`` (imported lazily so this module stays Spark-free)."""
        from pyspark.sql import types as T

        def to_spark(type_name: str):
            if type_name.startswith("array<"):
                return T.ArrayType(to_spark(type_name[6:-1]), True)
            return {
                "string": T.StringType(),
                "int": T.IntegerType(),
                "long": T.LongType(),
                "boolean": T.BooleanType(),
                "double": T.DoubleType(),
                "timestamp": T.TimestampType(),
                "binary": T.BinaryType(),
            }[type_name]

        return T.StructType([T.StructField(c.name, to_spark(c.type), c.nullable) for c in self.columns])

    def ddl(self) -> str:
        return ", ".join(f"`{c.name}` {c.type.upper()}" for c in self.columns)


def cols(*specs) -> Tuple[Column, ...]:
    """``cols(("name", "string", "doc"), ...)`` -> tuple of Column."""
    return tuple(Column(*s) for s in specs)
