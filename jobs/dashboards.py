"""Dashboard SQL (notebooks/sql/*.sql) for Databricks SQL, Grafana or Superset, runnable locally too.

The SQL uses bare table names (``gold_findings``); on Databricks run it with ``USE CATALOG``/``USE SCHEMA``
set to the bundle's catalog and schema; locally :func:`run_query` registers each table as a temp view.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict

SQL_DIR = Path(__file__).resolve().parent.parent / "notebooks" / "sql"
DASHBOARD_QUERIES: Dict[str, Path] = {p.stem: p for p in sorted(SQL_DIR.glob("*.sql"))}
_TABLE = re.compile(r"\b((?:gold|silver|bronze)_[a-z_]+)\b")


def tables_used(sql: str) -> set:
    return set(_TABLE.findall(sql))


def run_query(spark, store, name: str):
    """Run dashboard query ``name`` against the store's tables; returns a DataFrame."""
    try:
        sql = DASHBOARD_QUERIES[name].read_text()
    except KeyError:
        raise KeyError(f"no dashboard query {name!r}; known: {sorted(DASHBOARD_QUERIES)}") from None
    for table in tables_used(sql):
        store.read(table).createOrReplaceTempView(table)
    return spark.sql(sql)


def text_bars(df, label_col: str, value_col: str, width: int = 40, limit: int = 50) -> str:
    """A small text bar chart of an aggregate (bounded rows) for local notebook runs."""
    rows = [(str(r[label_col]), float(r[value_col] or 0)) for r in df.limit(limit).collect()]
    if not rows:
        return "(no rows)"
    top = max(v for _, v in rows) or 1.0
    return "\n".join(f"{label:>12} | {'#' * int(width * v / top):<{width}} {v:,.0f}" for label, v in rows)
