"""Schema enforcement: a DataFrame written to a table must have exactly the registry's columns and types.

Only the schema is looked at (no Spark job). Column order may differ (the result is selected in the table's
order); nullability differences are harmless and ignored here (NOT NULL columns are checked on the written
files). Everything else is reported at once, one line per column.
"""
from __future__ import annotations

from typing import List

from .spec import TableSpec
from .store_errors import SchemaMismatchError
from .table_predicates import quote_identifier


def _loose(data_type):
    """The type with every nullability flag set to True, so two types compare by shape only."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_loose(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        return T.MapType(_loose(data_type.keyType), _loose(data_type.valueType), True)
    if isinstance(data_type, T.StructType):
        return T.StructType([T.StructField(f.name, _loose(f.dataType), True) for f in data_type.fields])
    return data_type


def _hint(expected, found) -> str:
    from pyspark.sql import types as T

    if isinstance(found, T.TimestampNTZType) and isinstance(expected, T.TimestampType):
        return (" (use TimestampType: UTC instants; TIMESTAMP_NTZ would raise the Delta protocol to "
                "reader 3 / writer 7)")
    return ""


def schema_problems(spec: TableSpec, found_schema) -> List[str]:
    """One line per offending column of ``found_schema`` (a Spark StructType) vs the spec."""
    expected = {f.name: f.dataType for f in spec.spark_schema().fields}
    problems: List[str] = []
    seen = set()
    for field in found_schema.fields:
        if field.name in seen:
            problems.append(f"column {field.name!r} appears more than once")
        seen.add(field.name)
    found = {f.name: f.dataType for f in found_schema.fields}
    for name, want in expected.items():
        if name not in found:
            problems.append(f"missing column {name!r}: expected {want.simpleString()}")
        elif _loose(found[name]) != _loose(want):
            problems.append(f"column {name!r}: expected {want.simpleString()}, found "
                            f"{found[name].simpleString()}{_hint(want, found[name])}")
    for name, got in found.items():
        if name not in expected:
            problems.append(f"unexpected column {name!r} ({got.simpleString()}): not in the table's schema")
    return problems


def conform(df, spec: TableSpec):
    """``df`` with the table's columns in the table's order, or raise ``SchemaMismatchError``.

    :param df: a Spark DataFrame.
    :param spec: the table's registry entry.
    :return: ``df.select(<spec columns>)``.
    """
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):  # classic and Spark Connect DataFrames share this base in Spark 4
        raise TypeError(f"expected a Spark DataFrame for table {spec.name!r}, got {type(df).__name__}")
    problems = schema_problems(spec, df.schema)
    if problems:
        raise SchemaMismatchError(spec.name, problems)
    # one selectExpr of quoted names: a Column per name would be a JVM call each (functions.col)
    return df.selectExpr(*map(quote_identifier, spec.column_names))
