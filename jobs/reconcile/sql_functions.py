"""``pyspark.sql.functions`` for the reconcile plans, with expressions kept as SQL text until a DataFrame needs them.

Why: building a Column costs the driver about four JVM round trips per function call (PySpark looks the
function up by reflection, calls it, and later releases the object), and a small capture's reconcile builds
tens of thousands of them: more of its time than running the queries. Here ``col``, ``lit``, ``when``,
``concat`` ... return a :class:`SqlColumn`, which holds its expression as Spark SQL text and is parsed once, in
one JVM call, when a DataFrame method reads it. Spark resolves the parsed text exactly as the Column it
replaces (the same unresolved functions and attributes); ``tests/spark/test_sql_functions.py`` compares both on
every construct used here.

Anything not written as SQL here (lambdas, windows, sort orders, options, unusual literals, a real Column mixed
in) falls back to PySpark's own function or method with the same arguments, so a missing case costs speed,
never correctness. Use it as ``from jobs.reconcile import sql_functions as F``.

Where the process has no classic SparkContext (a Spark Connect session: Databricks serverless, ``SPARK_REMOTE``)
every function is PySpark's own, which builds Connect's Columns (:func:`_sql_text_columns`).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from pyspark.sql import functions as _F
from pyspark.sql.column import Column
from pyspark.sql.types import DataType

from jobs.engine import jvm as _jvm
from jobs.tables.table_predicates import lit_sql, sql_literal

_ClassicColumn = _jvm.classic_column_class()

_SIMPLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SQL_TYPE = re.compile(r"[A-Za-z0-9_<>,: ]+")  # a type name SQL's CAST reads as the DataFrame API would


class _Fallback(Exception):
    """An argument that SQL text cannot carry: use PySpark's own Column API instead."""


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def sql_text(value: str) -> str:
    """A Spark SQL string literal, by the table layer's one quoter (backslashes and quotes escaped)."""
    return sql_literal(value)


def _literal(value: Any) -> str:
    """SQL for a Python literal (``table_predicates.lit_sql``); PySpark's own ``lit`` for anything else."""
    try:
        return lit_sql(value)
    except TypeError:
        raise _Fallback(type(value).__name__) from None


def _column_sql(value: Any) -> str:
    """SQL for a column-or-name argument (a string is a column name, as in PySpark's functions)."""
    if isinstance(value, SqlColumn):
        return value._inner
    if isinstance(value, str) and _simple(value):
        return col(value)._inner
    raise _Fallback(type(value).__name__)  # not str(): a lambda variable cannot print itself on Spark 3.5


def _value_sql(value: Any) -> str:
    """SQL for a Column-or-literal argument (a string is a literal, as in ``when``, ``isin`` and operators)."""
    if isinstance(value, SqlColumn):
        return value._inner
    if isinstance(value, Column):
        raise _Fallback("Column")
    return _literal(value)


def _sql_text_columns() -> bool:
    """Whether columns are built as SQL text here: only where a classic SparkContext runs in this process (its
    DataFrames read ``_jc``). A Spark Connect client's DataFrames take Connect's own Columns."""
    return _jvm.classic_context() is not None


def _simple(name: str) -> bool:
    return all(_SIMPLE_NAME.match(part) for part in name.split("."))


_expr_function: list = [None, None]  # (the JVM view it came from, functions.expr)
_parsed: dict = {}                   # SQL text -> its JVM Column, for the gateway in _expr_function[0]
_PARSED_LIMIT = 8192                 # texts kept; past it the cache starts again (a reconcile uses ~900)


def _parse(text: str) -> Any:
    """One JVM call per distinct text: ``functions.expr(text)``, with the reflective look-up of ``expr`` done once
    per gateway. Why the cache: a small capture's reconcile parsed ~1,600 texts of which ~850 differ (the same
    ``CAST(NULL AS string) AS severity_override`` 44 times); a JVM Column is immutable, so one serves every
    DataFrame that reads the text, and the driver saves the call and, later, its release."""
    parser = _jvm.sql_expr_parser()
    if parser is None:
        return _F.expr(text)._jc
    if _expr_function[0] is not parser[0]:
        _parsed.clear()
        _expr_function[:] = list(parser)
    java = _parsed.get(text)
    if java is None:
        if len(_parsed) >= _PARSED_LIMIT:
            _parsed.clear()
        java = _parsed[text] = _expr_function[1](text)
    return java


class SqlColumn(_ClassicColumn):
    """A Column held as SQL text; ``_jc`` (what DataFrame methods read) parses it on first use."""

    def __init__(self, inner: str, name: Optional[str] = None, column_name: Optional[str] = None) -> None:
        self._inner = inner              # the expression, parenthesised where it is compound
        self._name = name                # an alias, rendered only where Spark takes one
        self._column_name = column_name  # set for a bare column reference (a struct field's default name)
        self._java = None

    @property
    def _jc(self):  # type: ignore[override]
        if self._java is None:
            self._java = _parse(self.sql)
        return self._java

    @property
    def sql(self) -> str:
        """The expression as Spark SQL, with its alias."""
        return f"{self._inner} AS {_quote(self._name)}" if self._name is not None else self._inner

    def __repr__(self) -> str:
        return f"SqlColumn<{self.sql}>"

    # --- names and types -------------------------------------------------------------------------------
    def alias(self, *alias: str, **kwargs: Any) -> Column:
        if len(alias) == 1 and not kwargs and isinstance(alias[0], str):
            return SqlColumn(self._inner, name=alias[0])
        return _ClassicColumn.alias(self, *alias, **kwargs)

    name = alias

    def cast(self, dataType: Any) -> Column:
        if isinstance(dataType, DataType):
            dataType = dataType.simpleString()
        if isinstance(dataType, str) and _SQL_TYPE.fullmatch(dataType):
            return SqlColumn(f"CAST({self._inner} AS {dataType})")
        return _ClassicColumn.cast(self, dataType)

    astype = cast

    # --- predicates ------------------------------------------------------------------------------------
    def isNull(self) -> Column:
        return SqlColumn(f"({self._inner} IS NULL)")

    def isNotNull(self) -> Column:
        return SqlColumn(f"({self._inner} IS NOT NULL)")

    def isin(self, *cols: Any) -> Column:
        values = list(cols[0]) if len(cols) == 1 and isinstance(cols[0], (list, tuple, set)) else list(cols)
        try:
            if not values:
                raise _Fallback("empty IN")
            return SqlColumn(f"({self._inner} IN ({', '.join(_value_sql(v) for v in values)}))")
        except _Fallback:
            return _ClassicColumn.isin(self, *cols)

    def rlike(self, other: str) -> Column:
        if isinstance(other, str):
            return SqlColumn(f"({self._inner} RLIKE {sql_text(other)})")
        return _ClassicColumn.rlike(self, other)

    def eqNullSafe(self, other: Any) -> Column:
        return self._binary("<=>", other, "eqNullSafe")

    def startswith(self, other: Any) -> Column:
        return self._call("startswith", other, "startswith")

    def endswith(self, other: Any) -> Column:
        return self._call("endswith", other, "endswith")

    def contains(self, other: Any) -> Column:
        return self._call("contains", other, "contains")

    def getItem(self, key: Any) -> Column:
        try:
            return SqlColumn(f"{self._inner}[{_literal(key)}]")
        except _Fallback:
            return _ClassicColumn.getItem(self, key)

    # --- helpers for operators -------------------------------------------------------------------------
    def _binary(self, op: str, other: Any, method: str, reverse: bool = False) -> Column:
        try:
            right = _value_sql(other)
        except _Fallback:
            return getattr(_ClassicColumn, method)(self, other)
        left, right = (right, self._inner) if reverse else (self._inner, right)
        return SqlColumn(f"({left} {op} {right})")

    def _call(self, fn: str, other: Any, method: str) -> Column:
        try:
            return SqlColumn(f"{fn}({self._inner}, {_value_sql(other)})")
        except _Fallback:
            return getattr(_ClassicColumn, method)(self, other)

    def __invert__(self) -> Column:
        return SqlColumn(f"(NOT {self._inner})")

    def __neg__(self) -> Column:
        return SqlColumn(f"(- {self._inner})")


def _operator(op: str, method: str, reverse: bool = False) -> Callable:
    def apply(self: SqlColumn, other: Any) -> Column:
        return self._binary(op, other, method, reverse)
    apply.__name__ = method
    return apply


for _op, _methods in {"=": ("__eq__",), "!=": ("__ne__",), "<": ("__lt__",), "<=": ("__le__",),
                      ">": ("__gt__",), ">=": ("__ge__",), "AND": ("__and__", "__rand__"),
                      "OR": ("__or__", "__ror__"), "+": ("__add__", "__radd__"), "-": ("__sub__", "__rsub__"),
                      "*": ("__mul__", "__rmul__"), "/": ("__truediv__", "__rtruediv__"),
                      "%": ("__mod__", "__rmod__")}.items():
    setattr(SqlColumn, _methods[0], _operator(_op, _methods[0]))
    if len(_methods) > 1:
        setattr(SqlColumn, _methods[1], _operator(_op, _methods[1], reverse=True))
SqlColumn.__hash__ = None  # type: ignore[assignment]  # like Column: == builds an expression


class _Case(SqlColumn):
    """``when(...).when(...).otherwise(...)`` as one SQL CASE. It keeps its arguments: Spark only chains
    ``when`` on a Column built by ``when``, so a branch that needs a real Column rebuilds the chain with PySpark."""

    def __init__(self, branches: tuple, closed: bool) -> None:
        self._branches, self._closed = branches, closed   # ((condition or None for ELSE, value), ...)
        parts = " ".join(f"WHEN {_sql_of_condition(c)} THEN {_value_sql(v)}" if c is not None
                         else f"ELSE {_value_sql(v)}" for c, v in branches)
        super().__init__(f"(CASE {parts} END)")

    def when(self, condition: Column, value: Any) -> Column:
        return self._add(condition, value) if not self._closed else _ClassicColumn.when(self, condition, value)

    def otherwise(self, value: Any) -> Column:
        return self._add(None, value) if not self._closed else _ClassicColumn.otherwise(self, value)

    def _add(self, condition: Optional[Column], value: Any) -> Column:
        branches = self._branches + ((condition, value),)
        try:
            return _Case(branches, condition is None)
        except _Fallback:
            return _real_case(branches)


def _sql_of_condition(condition: Any) -> str:
    if isinstance(condition, SqlColumn):
        return condition._inner
    raise _Fallback("condition")


def _real_case(branches: tuple) -> Column:
    """The same CASE built with PySpark's Columns (a branch had no SQL form)."""
    (condition, value), rest = branches[0], branches[1:]
    out = _F.when(condition, value)
    for condition, value in rest:
        out = out.when(condition, value) if condition is not None else out.otherwise(value)
    return out


# --- functions ---------------------------------------------------------------------------------------------

def col(name: str) -> Column:
    if isinstance(name, str) and _simple(name) and _sql_text_columns():
        return SqlColumn(".".join(_quote(p) for p in name.split(".")), column_name=name)
    return _F.col(name)


column = col


def lit(value: Any) -> Column:
    if isinstance(value, Column):
        return value
    if not _sql_text_columns():
        return _F.lit(value)
    try:
        return SqlColumn(_literal(value))
    except _Fallback:
        return _F.lit(value)


def when(condition: Column, value: Any) -> Column:
    if not _sql_text_columns():
        return _F.when(condition, value)
    try:
        return _Case(((condition, value),), False)
    except _Fallback:
        return _F.when(condition, value)


def _sql_function(name: str, sql_name: Optional[str] = None, kinds: str = "", rest: Optional[str] = "c") -> Callable:
    """A function rendered as ``sql_name(args)``. One letter per argument, ``kinds`` for the first ones and
    ``rest`` for any after them (None: no more): ``c`` a column or a column's name, ``v`` a Column or a literal.
    Keyword arguments fall back to PySpark."""
    real = getattr(_F, name)
    sql_name = sql_name or name

    def apply(*args: Any, **kwargs: Any) -> Column:
        values = list(args[0]) if not kinds and len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        if kwargs or (rest is None and len(values) > len(kinds)) or not _sql_text_columns():
            return real(*args, **kwargs)
        try:
            rendered = [_column_sql(v) if (kinds[i] if i < len(kinds) else rest) == "c" else _value_sql(v)
                        for i, v in enumerate(values)]
        except _Fallback:
            return real(*args)
        return SqlColumn(f"{sql_name}({', '.join(rendered)})")
    apply.__name__ = name
    return apply


# column arguments only (a string is a column name)
for _name in ("coalesce", "greatest", "least", "concat", "array", "size", "max", "min", "sum", "count",
              "collect_list", "collect_set", "max_by", "min_by", "unix_millis", "lower", "length", "hex", "flatten",
              "array_distinct", "array_except", "try_element_at", "sequence", "array_sort", "explode",
              "explode_outer", "unbase64", "row_number", "to_json"):
    globals()[_name] = _sql_function(_name)
create_map = _sql_function("create_map", "map")
# a column, then literal-or-Column arguments
for _name, _kinds in {"array_join": "cvv", "regexp_extract": "cvv", "regexp_replace": "cvv",
                      "get_json_object": "cv", "date_format": "cv", "substring": "cvv", "substring_index": "cvv",
                      "split": "cvv", "slice": "cvv", "sort_array": "cv", "array_contains": "cv",
                      "element_at": "cv", "array_position": "cv", "format_number": "cv", "translate": "cvv",
                      "instr": "cv", "conv": "cvv", "sha2": "cv", "lag": "cvv", "lead": "cvv", "floor": "c",
                      "first": "cv", "last": "cv"}.items():
    globals()[_name] = _sql_function(_name, kinds=_kinds, rest=None)
# a literal, then columns
concat_ws = _sql_function("concat_ws", kinds="v")
format_string = _sql_function("format_string", kinds="v")


def struct(*cols: Any) -> Column:
    """``named_struct``: every field needs a name (an alias or a plain column), as PySpark would give it."""
    if not _sql_text_columns():
        return _F.struct(*cols)
    values = list(cols[0]) if len(cols) == 1 and isinstance(cols[0], (list, tuple)) else list(cols)
    fields = []
    for value in values:
        if isinstance(value, str) and _SIMPLE_NAME.match(value):
            fields += [sql_text(value), _quote(value)]
        elif isinstance(value, SqlColumn) and (value._name is not None or (
                value._column_name is not None and _SIMPLE_NAME.match(value._column_name))):
            fields += [sql_text(value._name if value._name is not None else value._column_name), value._inner]
        else:
            return _F.struct(*cols)
    return SqlColumn(f"named_struct({', '.join(fields)})") if fields else _F.struct(*cols)


def __getattr__(name: str) -> Any:
    """Everything else is PySpark's own (windows, lambdas, ``broadcast``, ``from_json`` ...)."""
    return getattr(_F, name)
