"""Shared by the table-layer Spark tests: two small table specs, a store factory and chispa-style checks."""
from __future__ import annotations

import datetime as dt
import glob
import json
import os
from typing import Iterable, List, Sequence
from urllib.parse import unquote

from jobs.tables.delta_store import DeltaStore
from jobs.tables.spec import TableSpec, cols
from tests.settings_from import settings_from

UTC = dt.timezone.utc

EVENTS = TableSpec(
    name="t_events", layer="bronze", keys=("capture_id", "k"), partition_by=("capture_id",),
    description="capture-partitioned, like the bronze tables",
    columns=cols(("capture_id", "string"), ("run_id", "string"), ("k", "long"), ("v", "string"),
                 ("ts", "timestamp"), ("ids", "array<int>")),
)

FINDINGS = TableSpec(
    name="t_findings", layer="gold", keys=("finding_id",), slice_column="run_id",
    description="unpartitioned, kept by MERGE, like gold_findings",
    columns=cols(("finding_id", "string"), ("status", "string"), ("bytes", "long"),
                 ("last_seen", "timestamp"), ("resolved_at", "timestamp"), ("run_id", "string")),
)


def make_store(spark, root, retries: int = 3, specs: Sequence[TableSpec] = (EVENTS, FINDINGS)) -> DeltaStore:
    storage = settings_from(storage={"backend": "embedded", "root": str(root), "catalog": "", "schema": "",
                                     "commit_retries": retries}).storage
    store = DeltaStore.from_settings(spark, storage, tables={s.name: s for s in specs})
    store.backend.retry_wait_seconds = 0.01
    return store


def ts(*parts) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=UTC)


def norm(value):
    """Comparable form: datetimes as naive UTC (Spark collects naive UTC here; deltalake/polars give aware)."""
    if isinstance(value, dt.datetime):
        return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, (list, tuple)):
        return [norm(v) for v in value]
    return value


def sorted_rows(rows: Iterable[Sequence]) -> List[tuple]:
    return sorted((tuple(norm(v) for v in row) for row in rows), key=repr)


def assert_df(df, spec: TableSpec, expected_rows: Iterable[Sequence]) -> None:
    """Schema first (names, types, order), then rows ignoring order."""
    assert [(f.name, f.dataType) for f in df.schema.fields] == \
        [(f.name, f.dataType) for f in spec.spark_schema().fields]
    assert sorted_rows(df.collect()) == sorted_rows(expected_rows)


def log_actions(table_path: str) -> List[dict]:
    """Every action of every commit, in order (read straight from _delta_log JSON)."""
    out = []
    for path in sorted(glob.glob(os.path.join(table_path, "_delta_log", "*.json"))):
        with open(path) as handle:
            out += [json.loads(line) for line in handle if line.strip()]
    return out


def active_paths(table_path: str) -> List[str]:
    """Raw relative paths of the files in the latest version, by replaying adds and removes."""
    live = {}
    for action in log_actions(table_path):
        if "add" in action:
            live[unquote(action["add"]["path"])] = True
        elif "remove" in action:
            live.pop(unquote(action["remove"]["path"]), None)
    return sorted(live)


def orphan_files(table_path: str) -> List[str]:
    """Parquet files on disk that no commit ever added (leftovers of failed writes), plus staging leftovers."""
    referenced = {unquote(a["add"]["path"]) for a in log_actions(table_path) if "add" in a}
    on_disk = []
    for folder, _, files in os.walk(table_path):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), table_path)
            if not rel.startswith("_delta_log"):
                on_disk.append(rel)
    return sorted(p for p in on_disk if p not in referenced)
