"""The row every check function returns, before assembly adds severity, texts, ids and run columns.

A check is ``f(ctx) -> DataFrame`` with exactly :data:`COLUMNS`. ``details`` feeds ``{details.NAME}`` in
the catalogue's message/remediation templates; ``evidence`` is JSON proving the finding; ``replica_key``
names the replica dir a per-dir finding is about, so precedence can keep one finding per dir.
"""
from __future__ import annotations

from typing import Mapping, Optional

from pyspark.sql import Column, DataFrame

from . import sql_functions as F

COLUMNS = (
    ("check_id", "string"), ("broker_id", "int"), ("log_dir", "string"), ("log_dir_path", "string"),
    ("dir_name", "string"), ("topic_name", "string"), ("topic_id", "string"), ("partition", "int"),
    ("bytes", "long"), ("since", "timestamp"), ("key_extra", "string"), ("details", "map<string,string>"),
    ("evidence", "string"), ("severity_override", "string"), ("replica_key", "string"),
)


def replica_key(broker: Column, log_dir_path: Column, dir_name: Column) -> Column:
    return F.concat_ws("|", broker.cast("string"), log_dir_path, dir_name)


def details(**items: Column) -> Column:
    """A map<string,string> of detail fields (nulls become empty strings)."""
    parts = []
    for key, value in items.items():
        parts += [F.lit(key), F.coalesce(value.cast("string"), F.lit(""))]
    return F.create_map(*parts) if parts else F.create_map().cast("map<string,string>")


def evidence(**items: Column) -> Column:
    return F.to_json(F.struct(*[value.alias(key) for key, value in items.items()]))


def rows(df: DataFrame, check_id: str, values: Mapping[str, Optional[Column]]) -> DataFrame:
    """Select the standard columns from ``df``: ``values`` gives an expression per column (missing: null)."""
    out = []
    for name, dtype in COLUMNS:
        if name == "check_id":
            out.append(F.lit(check_id).alias(name))
            continue
        expr = values.get(name)
        out.append((expr if expr is not None else F.lit(None)).cast(dtype).alias(name))
    return df.select(*out)


def replica_dir_values(extra: Mapping[str, Optional[Column]], precedence: bool = True) -> dict:
    """The location columns of a finding about one replica dir of silver_replicas, plus ``extra``.
    ``precedence=False`` leaves ``replica_key`` null: the finding is not one of the per-dir stale-replica
    findings of which a dir keeps one (restart hazards stand beside them)."""
    base = {
        "broker_id": F.col("broker_id"), "log_dir": F.col("log_dir_name"), "log_dir_path": F.col("log_dir"),
        "dir_name": F.col("dir_name"), "topic_name": F.col("topic_name"), "topic_id": F.col("topic_id"),
        "partition": F.col("partition"), "bytes": F.col("bytes"),
        "replica_key": replica_key(F.col("broker_id"), F.col("log_dir"), F.col("dir_name")) if precedence else None,
    }
    base.update(extra)
    return base
