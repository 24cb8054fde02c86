"""The Delta transaction log as the embedded backend reads and writes it with delta-rs: the table's
snapshot (which files are in it), creating and checking a table, and one commit on a snapshot.

delta-rs is imported lazily and only here and in jobs/tables/backend_embedded.py: it panics in a forked
child, so nothing that Spark's Python workers import may load it.
"""
from __future__ import annotations

import datetime as _dt
import json
import time
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple
from urllib.parse import unquote

import pyarrow as pa

from .parquet_files import PARTITION_TYPES, FileStats, location_filesystem
from .spec import TableSpec
from .store_errors import SchemaMismatchError, TableMissingError
from .table_predicates import partition_value_text


class TableMoved(Exception):
    """Internal: the commit found a newer table version than the one the operation read."""

    def __init__(self, read_version: int, found_version: int) -> None:
        super().__init__(f"table moved from version {read_version} to {found_version}")
        self.read_version = read_version
        self.found_version = found_version


@dataclass(frozen=True)
class ActiveFile:
    """A data file of one table version, as its add action describes it (path decoded to the on-disk form)."""

    path: str
    size: int
    partition_values: Dict[str, Optional[str]]
    num_records: Optional[int]
    min_values: Dict[str, Any]
    max_values: Dict[str, Any]
    null_counts: Dict[str, Optional[int]]

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Snapshot:
    table: Any  # deltalake.DeltaTable loaded at ``version``: commits are built on it
    version: int
    files: Tuple[ActiveFile, ...]


@dataclass(frozen=True)
class NewFile:
    """A Parquet file Spark wrote for this operation, with what its add action needs."""

    path: str  # relative to the table root (after publishing) or to the staging folder (before)
    size: int
    modification_time: int
    partition_values: Dict[str, Optional[str]]
    stats: FileStats

    def add_action(self):
        from deltalake.transaction import AddAction

        return AddAction(self.path, self.size, dict(self.partition_values), self.modification_time, True,
                         self.stats.delta_json())


@dataclass(frozen=True)
class TablePaths:
    """One table's location as delta-rs, pyarrow's filesystem and Spark each want to see it."""

    delta_uri: str
    fs: Any
    fs_root: str
    spark_root: str

    def fs_path(self, rel: str = "") -> str:
        return f"{self.fs_root}/{rel}" if rel else self.fs_root

    def spark_path(self, rel: str = "") -> str:
        return f"{self.spark_root}/{rel}" if rel else self.spark_root


def table_paths(location: str) -> TablePaths:
    filesystem, root = location_filesystem(location)
    if "://" in location and not location.startswith("file://"):
        return TablePaths(location, filesystem, root, location.rstrip("/"))
    return TablePaths(root, filesystem, root, "file://" + root)


def ensure_table(spec: TableSpec, location: str):
    """The table at ``location`` (created at version 0 without files unless it exists), its schema checked."""
    from deltalake import DeltaTable, Schema

    for column in spec.columns:
        if column.name in spec.partition_by and column.type not in PARTITION_TYPES:
            raise ValueError(f"table {spec.name}: partition column {column.name!r} has type {column.type}; "
                             f"the embedded backend partitions by {PARTITION_TYPES} only")
    uri = table_paths(location).delta_uri
    if not DeltaTable.is_deltatable(uri):
        try:
            DeltaTable.create(uri, Schema.from_arrow(spec.arrow_schema()), mode="error",
                              partition_by=list(spec.partition_by) or None, name=spec.name,
                              description=spec.description or None)
        except Exception:
            if not DeltaTable.is_deltatable(uri):  # not a lost creation race: a real failure
                raise
    table = DeltaTable(uri)
    check_table(spec, table)
    return table


def check_table(spec: TableSpec, table) -> None:
    from deltalake import Schema

    expected = {f.name: f for f in Schema.from_arrow(spec.arrow_schema()).fields}
    found = {f.name: f for f in table.schema().fields}
    problems = []
    for name, want in expected.items():
        got = found.get(name)
        if got is None:
            problems.append(f"missing column {name!r}: expected {want.type}")
        elif got.type != want.type or got.nullable != want.nullable:
            problems.append(f"column {name!r}: expected {want.type} nullable={want.nullable}, "
                            f"found {got.type} nullable={got.nullable}")
    problems += [f"unexpected column {n!r} ({found[n].type})" for n in found if n not in expected]
    partitions = list(table.metadata().partition_columns)
    if partitions != list(spec.partition_by):
        problems.append(f"partition columns: expected {list(spec.partition_by)}, found {partitions}")
    if problems:
        raise SchemaMismatchError(spec.name, problems, what=f"existing table at {table.table_uri}")


def read_snapshot(location: str, version: Optional[int] = None) -> Snapshot:
    """The table's files at ``version`` (default: the latest) as its add actions describe them."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError, TableNotFoundError

    uri = table_paths(location).delta_uri
    try:
        table = DeltaTable(uri, version=version)
    except TableNotFoundError:
        raise TableMissingError(f"no Delta table at {uri}") from None
    except DeltaError as exc:
        if version is not None and DeltaTable.is_deltatable(uri):
            raise TableMissingError(f"table at {uri} has no version {version}: {exc}") from None
        raise
    partitions = list(table.metadata().partition_columns)
    files = []
    for row in pa.table(table.get_add_actions(flatten=True)).to_pylist():
        columns = {k.split(".", 1)[1] for k in row if k.startswith(("min.", "max.", "null_count."))}
        files.append(ActiveFile(
            path=unquote(row["path"]),  # the log stores it URI-encoded; the disk has the raw form
            size=row["size_bytes"],
            partition_values={c: partition_value_text(row.get(f"partition.{c}")) for c in partitions},
            num_records=row.get("num_records"),
            min_values={c: row[f"min.{c}"] for c in columns if row.get(f"min.{c}") is not None},
            max_values={c: row[f"max.{c}"] for c in columns if row.get(f"max.{c}") is not None},
            null_counts={c: row.get(f"null_count.{c}") for c in columns},
        ))
    return Snapshot(table, table.version(), tuple(files))


def commit(snapshot: Snapshot, location: str, removes: Sequence[ActiveFile],
            adds: Sequence[NewFile], operation: str, run_id: Optional[str], blind_append: bool = False,
            parameters: Optional[Mapping[str, str]] = None) -> int:
    """One delta-rs transaction on ``snapshot``; raise ``TableMoved`` if the table moved since."""
    from deltalake import CommitProperties, DeltaTable
    from deltalake.exceptions import CommitFailedError
    from deltalake.transaction import RemoveAction

    now = int(time.time() * 1000)
    actions = [RemoveAction(f.path, True, now, f.size, dict(f.partition_values)) for f in removes]
    actions += [f.add_action() for f in adds]
    metrics = {"numRemovedFiles": str(len(removes)), "numAddedFiles": str(len(adds)),
               "numOutputRows": str(sum(f.stats.num_records for f in adds))}
    properties = CommitProperties(
        custom_metadata={
            "userMetadata": json.dumps({"operation": operation, "run_id": run_id}),
            "readVersion": snapshot.version,
            "isolationLevel": "Serializable",
            "isBlindAppend": blind_append,
            "operationParameters": {"kafka_recon.operation": operation, **(parameters or {})},
            "operationMetrics": metrics,
        },
        max_commit_retries=0,  # delta-rs would rebase a stale remove over a concurrent append
    )
    try:
        snapshot.table.create_write_transaction(
            actions, mode="append", schema=snapshot.table.schema(),
            partition_by=list(snapshot.table.metadata().partition_columns), commit_properties=properties)
    except CommitFailedError as exc:
        found = DeltaTable(snapshot.table.table_uri).version()
        if found > snapshot.version:
            raise TableMoved(snapshot.version, found) from None
        exc.kr_commit_uncertain = True
        raise
    except BaseException as exc:
        exc.kr_commit_uncertain = True  # may have landed: keep our files, they may be referenced
        raise
    return snapshot.version + 1


def normalise_commit(commit: Mapping[str, Any]) -> Dict[str, Any]:
    """A commitInfo as both backends report it: version, timestamp, operation, run_id, read_version, metrics."""
    user: Dict[str, Any] = {}
    try:
        user = json.loads(commit.get("userMetadata") or "{}")
    except (TypeError, ValueError):
        user = {}
    millis = commit.get("timestamp")
    return {
        "version": commit.get("version"),
        "timestamp": _dt.datetime.fromtimestamp(millis / 1000, _dt.timezone.utc) if millis else None,
        "operation": user.get("operation") or commit.get("operation"),
        "run_id": user.get("run_id"),
        "read_version": commit.get("readVersion"),
        "metrics": dict(commit.get("operationMetrics") or {}),
    }
