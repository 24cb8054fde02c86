"""Embedded Delta backend: Spark writes the Parquet files, the driver commits them with delta-rs.

Used when Delta's JVM classes are not in the session (no Maven here). Every write is:

1. Spark writes the rows with its own distributed Parquet writer into ``<table>/_kr_staging/<write id>/``
   (hidden folder: Delta readers and VACUUM ignore it).
2. The driver lists the staged files, reads their footers (row counts, column bounds; never data), checks
   them (types as the table expects, NOT NULL columns, slice membership), and moves each one to
   ``<table>/[<col>=<value>/...]part-<n>-<write id>.<codec>.parquet``. Moved files are still invisible:
   only the log says which files are in the table.
3. One delta-rs transaction commits ``remove`` actions for the files being replaced and ``add`` actions
   (raw relative path, size, partition values, stats) for the new ones, built on the snapshot read at the
   start, with delta-rs's own retries off. If the table moved since that read, the commit fails; the whole
   operation is re-run from a fresh read (``commit_retries`` times), else ``ConcurrentTableUpdateError``.

A Spark failure before step 3 leaves only orphan files (removed when possible) and the version unchanged.
delta-rs is imported lazily and only here: it panics in a forked child, so nothing that Spark's Python
workers import may load it.
"""
from __future__ import annotations

import datetime as _dt
import functools
import json
import logging
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import unquote

import pyarrow as pa

from . import merge_clauses as mc
from .parquet_files import (
    PARTITION_TYPES,
    STAGING_DIR,
    FileStats,
    StagedParquet,
    file_schema_problems,
    footer_stats,
    location_filesystem,
    partition_values_from_dir,
)
from .spec import TableSpec
from .store_errors import (
    ConcurrentTableUpdateError,
    DuplicateSourceRowsError,
    NullConstraintError,
    SchemaMismatchError,
    SliceMismatchError,
    TableMissingError,
)
from .table_predicates import SliceValue, key_condition, partition_value_text, slice_predicate

log = logging.getLogger(__name__)

FILE_COL = "_kr_file"
ROW_COL = "_kr_row"
_TIMESTAMP_CONF = "spark.sql.parquet.outputTimestampType"


class _TableMoved(Exception):
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
class _Paths:
    """One table's location as delta-rs, pyarrow's filesystem and Spark each want to see it."""

    delta_uri: str
    fs: Any
    fs_root: str
    spark_root: str

    def fs_path(self, rel: str = "") -> str:
        return f"{self.fs_root}/{rel}" if rel else self.fs_root

    def spark_path(self, rel: str = "") -> str:
        return f"{self.spark_root}/{rel}" if rel else self.spark_root


def _paths(location: str) -> _Paths:
    filesystem, root = location_filesystem(location)
    if "://" in location and not location.startswith("file://"):
        return _Paths(location, filesystem, root, location.rstrip("/"))
    return _Paths(root, filesystem, root, "file://" + root)


class EmbeddedBackend:
    """Delta tables without Delta's jars: Spark Parquet writer + delta-rs commits (see module docstring)."""

    name = "embedded"
    accepts_staged_parquet = True  # replace_slice(..., staged=): files executors wrote with pyarrow

    def __init__(self, spark, commit_retries: int = 3, retry_wait_seconds: float = 0.2) -> None:
        if commit_retries < 0:
            raise ValueError(f"commit_retries must be >= 0, got {commit_retries}")
        self.spark = spark
        self.commit_retries = commit_retries
        self.retry_wait_seconds = retry_wait_seconds

    # ------------------------------------------------------------------ table handles

    def exists(self, location: str) -> bool:
        from deltalake import DeltaTable

        return DeltaTable.is_deltatable(_paths(location).delta_uri)

    def create(self, spec: TableSpec, location: str) -> int:
        """Create the table (version 0, no files) unless it exists; check an existing table's schema."""
        return self._ensure(spec, location).version()

    def _ensure(self, spec: TableSpec, location: str):
        from deltalake import DeltaTable, Schema

        for column in spec.columns:
            if column.name in spec.partition_by and column.type not in PARTITION_TYPES:
                raise ValueError(f"table {spec.name}: partition column {column.name!r} has type {column.type}; "
                                 f"the embedded backend partitions by {PARTITION_TYPES} only")
        uri = _paths(location).delta_uri
        if not DeltaTable.is_deltatable(uri):
            try:
                DeltaTable.create(uri, Schema.from_arrow(spec.arrow_schema()), mode="error",
                                  partition_by=list(spec.partition_by) or None, name=spec.name,
                                  description=spec.description or None)
            except Exception:
                if not DeltaTable.is_deltatable(uri):  # not a lost creation race: a real failure
                    raise
        table = DeltaTable(uri)
        self._check_table(spec, table)
        return table

    def _check_table(self, spec: TableSpec, table) -> None:
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

    def _snapshot(self, location: str, version: Optional[int] = None) -> Snapshot:
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError, TableNotFoundError

        uri = _paths(location).delta_uri
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

    # ------------------------------------------------------------------ reads

    def version(self, location: str) -> int:
        return self._snapshot(location).version

    def history(self, location: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        from deltalake import DeltaTable

        if not self.exists(location):
            raise TableMissingError(f"no Delta table at {location}")
        out = []
        for commit in DeltaTable(_paths(location).delta_uri).history(limit):
            out.append(_normalise_commit(commit))
        return out

    def read(self, spec: TableSpec, location: str, version: Optional[int] = None):
        snapshot = self._snapshot(location, version)
        return self._read_files(spec, _paths(location), snapshot.files).select(*spec.column_names)

    def _read_files(self, spec: TableSpec, paths: _Paths, files: Sequence[Any], tagged: bool = False):
        """Spark DataFrame over exactly ``files`` (paths relative to ``paths``), partition values from folders.

        The folders must spell the partition values the log holds (true for files this backend wrote);
        anything else is refused rather than read with wrong partition values.
        """
        from pyspark.sql import functions as F

        schema = spec.spark_schema()
        if not files:
            empty = self.spark.createDataFrame([], schema)
            if tagged:
                empty = empty.select("*", F.lit(None).cast("string").alias(FILE_COL),
                                     F.lit(None).cast("long").alias(ROW_COL))
            return empty
        for f in files:
            folder = f.path.rsplit("/", 1)[0] if "/" in f.path else ""
            try:
                from_folder = partition_values_from_dir(folder, spec.partition_by)
            except ValueError as exc:
                raise ValueError(f"table {spec.name}: unsupported file layout: {exc}") from None
            if from_folder != f.partition_values:
                raise ValueError(f"table {spec.name}: file {f.path!r} sits in folder values {from_folder} but the "
                                 f"log says {f.partition_values}; refusing to read it with the wrong values")
        df = (self.spark.read.schema(schema).option("basePath", paths.spark_path())
              .parquet(*[paths.spark_path(f.path) for f in files]))
        if tagged:
            return df.select(*spec.column_names, F.col("_metadata.file_name").alias(FILE_COL),
                             F.col("_metadata.row_index").alias(ROW_COL))
        return df

    # ------------------------------------------------------------------ writes

    def append(self, spec: TableSpec, location: str, df, run_id: Optional[str]) -> int:
        self._ensure(spec, location)
        paths = _paths(location)
        new_files = self._write(spec, paths, df)
        if not new_files:
            return self.version(location)

        def attempt() -> int:
            snapshot = self._snapshot(location)
            return self._commit(snapshot, location, [], new_files, "APPEND", run_id, blind_append=True)

        return self._run(spec, paths, "append", attempt, new_files)

    def replace_slice(self, spec: TableSpec, location: str, df, slice_values: Mapping[str, SliceValue],
                      run_id: Optional[str], staged: Optional[StagedParquet] = None) -> int:
        """... with ``df``'s rows plus the files of ``staged`` (written by executors), in one commit."""
        from pyspark.sql import functions as F

        self._ensure(spec, location)
        paths = _paths(location)
        predicate = slice_predicate(slice_values)
        in_slice = F.expr(f"coalesce(({predicate}), false)")
        by_folder = {k: partition_value_text(v) for k, v in slice_values.items() if k in spec.partition_by}
        by_rows = {k: v for k, v in slice_values.items() if k not in spec.partition_by}

        def check(files, staging):
            self._check_in_slice(spec, staging, files, by_folder, by_rows, in_slice, slice_values)

        new_files = self._write(spec, paths, df, check=check)
        if staged is not None:
            try:
                new_files += self._publish(spec, paths, staged.staging, _write_id(), check)
            except BaseException:
                self._discard(paths, new_files)
                raise
            finally:
                _delete_dir(paths, staged.staging)

        def attempt() -> int:
            snapshot = self._snapshot(location)
            candidates = [f for f in snapshot.files
                          if all(f.partition_values.get(k) == v for k, v in by_folder.items())
                          and _may_hold(f, by_rows)]
            rewritten: List[NewFile] = []
            if by_rows:  # the slice is rows inside files: rewrite the files that hold some, minus those rows
                candidates = self._files_holding(spec, paths, candidates, in_slice)
                if candidates:
                    rest = self._read_files(spec, paths, candidates).select(*spec.column_names).filter(~in_slice)
                    rewritten = self._write(spec, paths, rest)
            try:
                return self._commit(snapshot, location, candidates, [*new_files, *rewritten], "REPLACE SLICE",
                                    run_id, parameters={"slice": predicate})
            except _TableMoved:
                self._discard(paths, rewritten)
                raise

        return self._run(spec, paths, "replace_slice", attempt, new_files)

    def merge(self, spec: TableSpec, location: str, source, on: Sequence[str],
              clauses: Sequence[mc.MergeClause], run_id: Optional[str]) -> int:
        from pyspark import StorageLevel

        self._ensure(spec, location)
        paths = _paths(location)
        source = source.persist(StorageLevel.MEMORY_AND_DISK)  # every pass and retry sees the same rows
        try:
            return self._run(spec, paths, "merge",
                             lambda: self._merge_once(spec, location, paths, source, on, clauses, run_id), [])
        finally:
            source.unpersist()

    def _merge_once(self, spec, location, paths, source, on, clauses, run_id) -> int:
        from pyspark.sql import functions as F

        snapshot = self._snapshot(location)
        matched = mc.of_kind(clauses, mc.MATCHED)
        inserts = mc.of_kind(clauses, mc.NOT_MATCHED)
        by_source = mc.of_kind(clauses, mc.NOT_MATCHED_BY_SOURCE)
        condition = F.expr(key_condition(on))
        files = list(snapshot.files)
        if files and not by_source and spec.partition_by and set(spec.partition_by) <= set(on):
            # a match needs equal partition values, so only partitions the source has can match
            present = {tuple(partition_value_text(r[c]) for c in spec.partition_by)
                       for r in source.select(*spec.partition_by).distinct().collect()}
            files = [f for f in files if tuple(f.partition_values[c] for c in spec.partition_by) in present]
        target = self._read_files(spec, paths, files, tagged=True).alias("t")
        src = source.alias("s")

        # pass 1 (one Spark job, one small row per file): which target files hold a row some clause
        # changes, and how many source rows act on one target row at most (more than one is ambiguous)
        touched: set = set()
        changed = []
        if matched:
            hits = target.join(src, condition, "inner").filter(_any_condition(matched))
            changed.append(hits.groupBy(FILE_COL, ROW_COL).count().select(FILE_COL, F.col("count").alias("n")))
        if by_source:
            gone = target.join(src, condition, "left_anti").filter(_any_condition(by_source))
            changed.append(gone.select(FILE_COL, F.lit(1).cast("long").alias("n")))
        if changed:
            per_file = (functools.reduce(lambda a, b: a.unionByName(b), changed)
                        .groupBy(FILE_COL).agg(F.max("n").alias("n")).collect())
            doubled = [r[FILE_COL] for r in per_file if r["n"] > 1]
            if doubled:
                raise DuplicateSourceRowsError(
                    f"merge into {spec.name}: several source rows match the same target row (in {len(doubled)} "
                    f"file(s)) on keys {list(on)}; de-duplicate the source by its keys")
            touched = {r[FILE_COL] for r in per_file}
        rewrite = _files_named(files, touched)

        # pass 2: new content of the touched files, plus inserted rows, written by Spark. Each target row
        # comes out once: acted on by a matched clause (unique, checked above), matched but left alone,
        # or unmatched (by-source clauses).
        parts = []
        if rewrite:
            old = self._read_files(spec, paths, rewrite, tagged=True).alias("t")
            if matched:
                acted = old.join(src, condition, "inner").filter(_any_condition(matched))
                parts.append(_apply(acted, matched, spec, keep_unmatched=True))
            if not any(c.condition is None for c in matched):  # some matched rows may be left alone
                left_alone = old.join(src, condition, "left_semi")
                if matched:
                    left_alone = left_alone.join(acted.select(FILE_COL, ROW_COL), [FILE_COL, ROW_COL], "left_anti")
                parts.append(left_alone.select(*spec.column_names))
            parts.append(_apply(old.join(src, condition, "left_anti"), by_source, spec, keep_unmatched=True))
        if inserts:
            fresh = src.join(target.select(*on).alias("t"), condition, "left_anti")
            parts.append(_apply(fresh, inserts, spec, keep_unmatched=False))
        new_files = self._write(spec, paths, functools.reduce(lambda a, b: a.unionByName(b), parts)) if parts else []
        if not rewrite and not new_files:
            return snapshot.version  # nothing changes: no commit
        try:
            return self._commit(snapshot, location, rewrite, new_files, "MERGE", run_id,
                                parameters={"on": json.dumps(list(on))})
        except _TableMoved:
            self._discard(paths, new_files)
            raise

    # ------------------------------------------------------------------ write machinery

    def _write(self, spec: TableSpec, paths: _Paths, df,
               check: Optional[Callable[[List[NewFile], _Paths], None]] = None) -> List[NewFile]:
        """Spark writes ``df`` into a staging folder; footers are checked; files move into the table folder.

        :return: the published (moved, not yet committed) files; empty files are dropped.
        """
        if any(c.type == "timestamp" for c in spec.columns):
            mode = self.spark.conf.get(_TIMESTAMP_CONF, "INT96")
            if mode != "TIMESTAMP_MICROS":
                raise ValueError(f"{_TIMESTAMP_CONF} is {mode}; the embedded backend needs TIMESTAMP_MICROS so "
                                 f"timestamps are stored as Delta 'timestamp' (jobs.spark_session sets it)")
        write_id = _write_id()
        staging = f"{STAGING_DIR}/{write_id}"
        try:
            (df.write.mode("errorifexists")
             .option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")
             .partitionBy(*spec.partition_by)
             .parquet(paths.spark_path(staging)))
            return self._publish(spec, paths, staging, write_id, check)
        finally:
            _delete_dir(paths, staging)

    def _publish(self, spec: TableSpec, paths: _Paths, staging: str, write_id: str,
                 check: Optional[Callable[[List[NewFile], _Paths], None]] = None) -> List[NewFile]:
        """Check the Parquet files under ``staging`` (footers, schema, nulls, ``check``) and move them into
        the table folder under new names; the caller removes the staging folder."""
        published: List[NewFile] = []
        try:
            staged = self._staged_files(spec, paths, staging)
            if check is not None:
                check(staged, _Paths(paths.delta_uri, paths.fs, paths.fs_path(staging), paths.spark_path(staging)))
            for seq, f in enumerate(staged):
                folder, _, name = f.path.rpartition("/")
                suffix = name.split(".", 1)[1] if "." in name else "parquet"
                final = f"{folder}/" if folder else ""
                final += f"part-{seq:05d}-{write_id}.{suffix}"
                if folder:
                    paths.fs.create_dir(paths.fs_path(folder), recursive=True)
                paths.fs.move(paths.fs_path(f"{staging}/{f.path}"), paths.fs_path(final))
                published.append(NewFile(final, f.size, f.modification_time, f.partition_values, f.stats))
        except BaseException:
            self._discard(paths, published)
            raise
        return published

    def _staged_files(self, spec: TableSpec, paths: _Paths, staging: str) -> List[NewFile]:
        import pyarrow.parquet as pq
        from pyarrow import fs as pafs

        root = paths.fs_path(staging)
        infos = paths.fs.get_file_info(pafs.FileSelector(root, recursive=True))
        staged = []
        problems: List[str] = []
        not_null = [c.name for c in spec.columns if not c.nullable and c.name not in spec.partition_by]
        for info in sorted(infos, key=lambda i: i.path):
            rel = info.path[len(root):].lstrip("/")
            if info.type != pafs.FileType.File or any(p.startswith(("_", ".")) for p in rel.split("/")):
                continue  # _SUCCESS, .crc checksums, committer leftovers
            if not rel.endswith(".parquet"):
                continue
            folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
            values = partition_values_from_dir(folder, spec.partition_by)
            with paths.fs.open_input_file(info.path) as handle:
                metadata = pq.read_metadata(handle)
            problems += [f"{rel}: {p}" for p in file_schema_problems(metadata.schema.to_arrow_schema(), spec)]
            stats = footer_stats(metadata, spec)
            for column in not_null:
                if stats.null_counts.get(column) is None or stats.null_counts[column] > 0:
                    raise NullConstraintError(f"table {spec.name}: column {column!r} is NOT NULL but written rows "
                                              f"hold nulls (or the file has no null count): {rel}")
            for column in spec.partition_by:
                if values[column] is None and not spec.columns[spec.column_names.index(column)].nullable:
                    raise NullConstraintError(f"table {spec.name}: partition column {column!r} is NOT NULL "
                                              f"but rows hold null or ''")
            if metadata.num_rows == 0:
                continue
            mtime = info.mtime or _dt.datetime.now(_dt.timezone.utc)
            staged.append(NewFile(rel, info.size, int(mtime.timestamp() * 1000), values, stats))
        if problems:
            raise SchemaMismatchError(spec.name, problems, what="Parquet written by Spark")
        return staged

    def _check_in_slice(self, spec, staging, staged, by_folder, by_rows, in_slice, slice_values) -> None:
        for f in staged:
            wrong = {k: f.partition_values.get(k) for k, v in by_folder.items() if f.partition_values.get(k) != v}
            if wrong:
                raise SliceMismatchError(f"replace_slice({spec.name}, {dict(slice_values)}): rows with {wrong} are "
                                         f"outside the slice; write only the slice's rows")
        unsure = [f for f in staged if not _surely_within(f.stats, by_rows)]
        if unsure:
            outside = self._read_files(spec, staging, unsure).filter(~in_slice).limit(1).count()
            if outside:
                raise SliceMismatchError(f"replace_slice({spec.name}, {dict(slice_values)}): some rows do not "
                                         f"have {dict(by_rows)}; write only the slice's rows")

    def _files_holding(self, spec, paths, files: List[ActiveFile], predicate) -> List[ActiveFile]:
        """The files among ``files`` with at least one row matching ``predicate`` (one Spark aggregate)."""
        if not files:
            return []
        if len({f.name for f in files}) != len(files):
            return list(files)  # names are not unique: cannot tell them apart, rewrite all candidates
        tagged = self._read_files(spec, paths, files, tagged=True)
        names = {r[FILE_COL] for r in tagged.filter(predicate).select(FILE_COL).distinct().collect()}
        return [f for f in files if f.name in names]

    def _commit(self, snapshot: Snapshot, location: str, removes: Sequence[ActiveFile],
                adds: Sequence[NewFile], operation: str, run_id: Optional[str], blind_append: bool = False,
                parameters: Optional[Mapping[str, str]] = None) -> int:
        """One delta-rs transaction on ``snapshot``; raise ``_TableMoved`` if the table moved since."""
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
                raise _TableMoved(snapshot.version, found) from None
            exc.kr_commit_uncertain = True
            raise
        except BaseException as exc:
            exc.kr_commit_uncertain = True  # may have landed: keep our files, they may be referenced
            raise
        return snapshot.version + 1

    def _run(self, spec: TableSpec, paths: _Paths, operation: str, attempt: Callable[[], int],
             staged: Sequence[NewFile]) -> int:
        """Run ``attempt`` until it commits; each retry re-reads the table. ``staged`` are dropped on giving up."""
        last: Optional[_TableMoved] = None
        for number in range(self.commit_retries + 1):
            try:
                return attempt()
            except _TableMoved as moved:
                last = moved
                log.info("%s on %s: %s; retry %d of %d", operation, spec.name, moved, number + 1,
                         self.commit_retries)
                if number < self.commit_retries:
                    time.sleep(self.retry_wait_seconds * (2 ** number) * random.uniform(0.5, 1.5))
            except BaseException as exc:
                if not getattr(exc, "kr_commit_uncertain", False):
                    self._discard(paths, staged)  # failed before committing: nobody references them
                raise
        self._discard(paths, staged)
        raise ConcurrentTableUpdateError(spec.name, operation, self.commit_retries + 1,
                                         last.read_version if last else None, last.found_version if last else None)

    def _discard(self, paths: _Paths, files: Sequence[NewFile]) -> None:
        """Delete published but uncommitted files (best effort: leftovers are invisible to readers)."""
        for f in files:
            try:
                paths.fs.delete_file(paths.fs_path(f.path))
            except OSError:
                log.warning("could not delete uncommitted file %s", f.path)


# ---------------------------------------------------------------------- helpers (pure)


def _write_id() -> str:
    return f"{_dt.datetime.now(_dt.timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:12]}"


def staging_for(spec: TableSpec, location: str, partition: str) -> StagedParquet:
    """A new, empty staging folder description for files of ``spec``'s slice at ``partition``."""
    schema = pa.schema([f for f in spec.arrow_schema() if f.name not in spec.partition_by])
    return StagedParquet(spec.name, location, f"{STAGING_DIR}/direct-{_write_id()}", partition, schema)


def _delete_dir(paths: _Paths, rel: str) -> None:
    try:
        paths.fs.delete_dir(paths.fs_path(rel))
    except (FileNotFoundError, OSError):
        pass


def _normalise_commit(commit: Mapping[str, Any]) -> Dict[str, Any]:
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


def _may_hold(f: ActiveFile, by_rows: Mapping[str, SliceValue]) -> bool:
    """False only when the file's stats prove it holds no row with these column values."""
    for column, value in by_rows.items():
        nulls = f.null_counts.get(column)
        if value is None:
            if nulls == 0:
                return False
            continue
        if nulls is not None and f.num_records is not None and nulls == f.num_records:
            return False
        low, high = f.min_values.get(column), f.max_values.get(column)
        try:
            if low is not None and value < low or high is not None and value > high:
                return False
        except TypeError:
            continue
    return True


def _surely_within(stats: FileStats, by_rows: Mapping[str, SliceValue]) -> bool:
    """True when the footer stats prove every row has these column values (else Spark checks)."""
    for column, value in by_rows.items():
        nulls = stats.null_counts.get(column)
        if value is None:
            if nulls != stats.num_records:
                return False
        elif nulls != 0 or stats.min_values.get(column) != value or stats.max_values.get(column) != value \
                or type(stats.min_values.get(column)) is not type(value):
            return False
    return True


def _files_named(files: Sequence[ActiveFile], names: set) -> List[ActiveFile]:
    if not names:
        return []
    if len({f.name for f in files}) != len(files):
        return list(files)  # cannot tell same-named files apart: rewrite them all (correct, slower)
    return [f for f in files if f.name in names]


def _any_condition(clauses: Sequence[mc.MergeClause]):
    from pyspark.sql import functions as F

    if any(c.condition is None for c in clauses):
        return F.lit(True)
    return functools.reduce(lambda a, b: a | b, [F.coalesce(F.expr(c.condition), F.lit(False)) for c in clauses])


def _apply(joined, clauses: Sequence[mc.MergeClause], spec: TableSpec, keep_unmatched: bool):
    """Rows after the first clause whose condition holds acts on each (Delta MERGE semantics).

    ``keep_unmatched``: target rows no clause acts on stay as they are; source rows (inserts) are dropped.
    """
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in spec.spark_schema().fields}

    def original(column: str):
        return F.col(f"t.`{column}`") if keep_unmatched else F.lit(None).cast(types[column])

    if not clauses:
        if not keep_unmatched:
            return joined.limit(0).select(*[original(c).alias(c) for c in spec.column_names])
        return joined.select(*[original(c).alias(c) for c in spec.column_names])
    conditions = [F.coalesce(F.expr(c.condition), F.lit(False)) if c.condition else F.lit(True) for c in clauses]
    columns = []
    for name in spec.column_names:
        chain = None
        for clause, when in zip(clauses, conditions, strict=True):
            if clause.action == mc.DELETE:
                value = original(name)
            elif clause.copies_source:
                value = F.col(f"s.`{name}`")
            elif name in clause.assignments:
                value = F.expr(clause.assignments[name]).cast(types[name])
            else:
                value = original(name) if clause.action == mc.UPDATE else F.lit(None).cast(types[name])
            chain = F.when(when, value) if chain is None else chain.when(when, value)
        columns.append(chain.otherwise(original(name)).alias(name))
    keep = None
    for clause, when in zip(clauses, conditions, strict=True):
        verdict = F.lit(clause.action != mc.DELETE)
        keep = F.when(when, verdict) if keep is None else keep.when(when, verdict)
    keep = keep.otherwise(F.lit(keep_unmatched))
    return joined.select(*columns, keep.alias("_kr_keep")).filter("_kr_keep").drop("_kr_keep")
