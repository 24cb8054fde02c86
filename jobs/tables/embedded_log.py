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
from urllib.parse import quote, unquote

import pyarrow as pa

from .parquet_files import PARTITION_TYPES, FileStats, location_filesystem
from .spec import SCHEMA_VERSION_PROPERTY, TableSpec
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


def ensure_table(spec: TableSpec, location: str, evolve: bool = True):
    """The table at ``location`` (created at version 0 without files unless it exists), its schema checked.

    ``evolve``: add the spec's nullable columns an older table lacks (:func:`evolve_table`); otherwise a
    missing column is a problem like any other."""
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
                              description=spec.description or None,
                              configuration={SCHEMA_VERSION_PROPERTY: str(spec.version)},
                              raise_if_key_not_exists=False)  # our own property, not a Delta key
        except Exception:
            if not DeltaTable.is_deltatable(uri):  # not a lost creation race: a real failure
                raise
    table = DeltaTable(uri)
    if evolve and evolve_table(spec, table):
        table = DeltaTable(uri)
    check_table(spec, table)
    return table


MIGRATE = "kafka-recon migrate --rewrite {table} (with the nightly's --conf/--set for storage)"


def _type_text(data_type) -> str:
    return str(getattr(data_type, "type", data_type))


def schema_plan(spec: TableSpec, table) -> Tuple[Tuple[Any, ...], Tuple[str, ...]]:
    """``(columns to add, problems)`` of an existing table against ``spec``: the spec's nullable columns the
    table lacks can be added (Delta schema evolution: old files read them as null); every other difference
    (a column of another type or nullability, an unknown column, a missing NOT NULL column, other partition
    columns) is a problem the job does not fix on its own. Reads the log only."""
    from deltalake import Schema

    expected = {f.name: f for f in Schema.from_arrow(spec.arrow_schema()).fields}
    found = {f.name: f for f in table.schema().fields}
    additions, problems = [], []
    for name, want in expected.items():
        got = found.get(name)
        if got is None:
            if want.nullable and name not in spec.partition_by:
                additions.append(want)
            else:
                problems.append(f"missing column {name!r}: expected {_type_text(want.type)} NOT NULL")
        elif got.type != want.type or got.nullable != want.nullable:
            problems.append(f"column {name!r}: expected {_type_text(want.type)} nullable={want.nullable}, "
                            f"found {_type_text(got.type)} nullable={got.nullable}")
    problems += [f"unexpected column {n!r}: found {_type_text(found[n].type)}, not in schema version {spec.version}"
                 for n in found if n not in expected]
    partitions = list(table.metadata().partition_columns)
    if partitions != list(spec.partition_by):
        problems.append(f"partition columns: expected {list(spec.partition_by)}, found {partitions}")
    return tuple(additions), tuple(problems)


def table_schema_version(table) -> Optional[int]:
    """The spec version the table records (None: created before versions were recorded)."""
    text = (table.metadata().configuration or {}).get(SCHEMA_VERSION_PROPERTY)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def evolve_table(spec: TableSpec, table) -> bool:
    """Add the nullable columns ``spec`` has and the table lacks, and record the spec's version; True if the
    table changed. Nothing is done when anything else differs (:func:`check_table` then names it), nor for a
    table whose recorded version is newer than the spec (written by a newer kafka-recon)."""
    if unfixable_problems(spec, table):
        return False
    additions, _ = schema_plan(spec, table)
    recorded = table_schema_version(table)
    if additions:
        table.alter.add_columns(list(additions))
    if additions or recorded != spec.version:
        table.alter.set_table_properties({SCHEMA_VERSION_PROPERTY: str(spec.version)}, raise_if_not_exists=False)
        return True
    return False


def unfixable_problems(spec: TableSpec, table) -> Tuple[str, ...]:
    """What of the table's schema the job cannot fix itself (:func:`schema_plan`'s problems, and a schema
    version newer than the spec's)."""
    _, problems = schema_plan(spec, table)
    recorded = table_schema_version(table)
    if recorded is not None and recorded > spec.version:
        problems += (f"schema version {recorded} was written by a newer kafka-recon; this one knows "
                     f"version {spec.version}",)
    return problems


def check_table(spec: TableSpec, table) -> None:
    """Raise ``SchemaMismatchError`` naming each difference and the command that fixes it."""
    additions, _ = schema_plan(spec, table)
    problems = [*unfixable_problems(spec, table),
                *[f"missing column {f.name!r}: expected {_type_text(f.type)} (added by the next run or by "
                  f"kafka-recon migrate)" for f in additions]]
    if problems:
        raise SchemaMismatchError(spec.name, problems, what=f"existing table at {table.table_uri}",
                                  fix=MIGRATE.format(table=spec.name))


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
            parameters: Optional[Mapping[str, str]] = None, metrics: Optional[Mapping[str, str]] = None) -> int:
    """One delta-rs transaction on ``snapshot``; raise ``TableMoved`` if the table moved since."""
    from deltalake import CommitProperties, DeltaTable
    from deltalake.exceptions import CommitFailedError
    from deltalake.transaction import RemoveAction

    now = int(time.time() * 1000)
    actions = [RemoveAction(f.path, True, now, f.size, dict(f.partition_values)) for f in removes]
    actions += [f.add_action() for f in adds]
    if metrics is None:
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


def _log_path(path: str) -> str:
    """A data file's path as the log spells it: URI-encoded, as delta-rs writes its own add actions."""
    return quote(path, safe="/=")


def commit_merge(snapshot: Snapshot, location: str, removes: Sequence[ActiveFile], adds: Sequence[NewFile],
                 run_id: Optional[str], parameters: Mapping[str, str], metrics: Mapping[str, str]) -> int:
    """One MERGE commit on ``snapshot``, recorded as Delta records a MERGE: ``operation: MERGE`` with the
    merge's predicates and its row and file metrics (what ``DESCRIBE HISTORY`` and delta-rs' ``history()``
    show), ``userMetadata`` naming the run. Raise ``TableMoved`` if the table moved since.

    delta-rs' transaction API names every commit it writes ``WRITE`` (and refuses an ``operation`` of ours),
    so on a local filesystem the log entry is written here: the protocol's commit file, created only if that
    version does not exist yet (a hard link, which fails when the name is taken: put-if-absent), exactly the
    guarantee delta-rs' own commit relies on. Elsewhere (object stores) the commit goes through delta-rs,
    recorded as a ``WRITE`` whose parameters and metrics are the MERGE's.
    """
    import os

    paths = table_paths(location)
    if "://" in location and not location.startswith("file://"):
        return commit(snapshot, location, removes, adds, "MERGE", run_id, parameters=parameters, metrics=metrics)
    now = int(time.time() * 1000)
    info = {
        "timestamp": now, "operation": "MERGE",
        "operationParameters": {"kafka_recon.operation": "MERGE", **parameters},
        "readVersion": snapshot.version, "isolationLevel": "Serializable", "isBlindAppend": False,
        "operationMetrics": dict(metrics), "userMetadata": json.dumps({"operation": "MERGE", "run_id": run_id}),
        "engineInfo": "kafka-recon embedded backend",
    }
    lines = [{"commitInfo": info}]
    lines += [{"remove": {"path": _log_path(f.path), "deletionTimestamp": now, "dataChange": True,
                          "extendedFileMetadata": True, "partitionValues": dict(f.partition_values),
                          "size": f.size}} for f in removes]
    lines += [{"add": {"path": _log_path(f.path), "partitionValues": dict(f.partition_values), "size": f.size,
                       "modificationTime": f.modification_time, "dataChange": True, "stats": f.stats.delta_json()}}
              for f in adds]
    log_dir = os.path.join(paths.fs_root, "_delta_log")
    version = snapshot.version + 1
    final = os.path.join(log_dir, f"{version:020d}.json")
    tmp = os.path.join(log_dir, f".{version:020d}.json.{os.getpid()}.{time.monotonic_ns()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write("\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, final)
    except FileExistsError:
        raise TableMoved(snapshot.version, version) from None
    except BaseException as exc:
        exc.kr_commit_uncertain = True
        raise
    finally:
        os.unlink(tmp)
    return version


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
