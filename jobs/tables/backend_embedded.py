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
The steps by module: the snapshot and the commit are :mod:`.embedded_log`; staging, publishing and the retry
loop are here; which files a slice or a merge touches is :mod:`.embedded_files`; MERGE's clause semantics
are :mod:`.embedded_merge`. delta-rs is imported lazily, only here and in the log module: it panics in a
forked child, so nothing that Spark's Python workers import may load it.
"""
from __future__ import annotations

import datetime as _dt
import functools
import logging
import random
import time
import uuid
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import pyarrow as pa

from jobs.engine.local_frames import is_empty_local, local_frame

from . import merge_clauses as mc
from .embedded_files import files_named, may_hold, surely_within
from .embedded_log import (
    ActiveFile,
    NewFile,
    Snapshot,
    TableMoved,
    TablePaths,
    commit,
    commit_merge,
    ensure_table,
    evolve_table,
    normalise_commit,
    read_snapshot,
    schema_plan,
    table_paths,
    unfixable_problems,
)
from .embedded_merge import (
    ACTION_COL,
    COPIED,
    DROPPED,
    action_counts,
    any_condition,
    apply_clauses,
    merge_metrics,
    merge_parameters,
)
from .parquet_files import (
    STAGING_DIR,
    StagedParquet,
    file_schema_problems,
    footer_stats,
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
from .table_predicates import (
    SliceValue,
    key_condition,
    partition_value_text,
    quote_identifier,
    slice_predicate,
)

log = logging.getLogger(__name__)

FILE_COL = "_kr_file"
ROW_COL = "_kr_row"
_TIMESTAMP_CONF = "spark.sql.parquet.outputTimestampType"


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

        return DeltaTable.is_deltatable(table_paths(location).delta_uri)

    def create(self, spec: TableSpec, location: str) -> int:
        """Create the table (version 0, no files) unless it exists; check an existing table's schema."""
        return self._ensure(spec, location).version()

    def schema_problems(self, spec: TableSpec, location: str) -> Tuple[str, ...]:
        """What of an existing table's schema the job cannot fix itself (empty: none, or no table)."""
        from deltalake import DeltaTable

        uri = table_paths(location).delta_uri
        return unfixable_problems(spec, DeltaTable(uri)) if DeltaTable.is_deltatable(uri) else ()

    def evolve(self, spec: TableSpec, location: str) -> Tuple[str, ...]:
        """Add the spec's nullable columns an existing table lacks; the names added."""
        from deltalake import DeltaTable

        uri = table_paths(location).delta_uri
        if not DeltaTable.is_deltatable(uri):
            return ()
        table = DeltaTable(uri)
        additions, _ = schema_plan(spec, table)
        evolve_table(spec, table)
        return tuple(f.name for f in additions)

    # ------------------------------------------------------------------ reads

    def version(self, location: str) -> int:
        return self._snapshot(location).version

    def history(self, location: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        from deltalake import DeltaTable

        if not self.exists(location):
            raise TableMissingError(f"no Delta table at {location}")
        return [normalise_commit(entry) for entry in DeltaTable(table_paths(location).delta_uri).history(limit)]

    def read(self, spec: TableSpec, location: str, version: Optional[int] = None):
        snapshot = self._snapshot(location, version)
        # quoted names in one selectExpr: a select of name strings makes a JVM call per column (functions.col)
        return self._read_files(spec, table_paths(location), snapshot.files).selectExpr(
            *map(quote_identifier, spec.column_names))

    def _read_files(self, spec: TableSpec, paths: TablePaths, files: Sequence[Any], tagged: bool = False):
        """Spark DataFrame over exactly ``files`` (paths relative to ``paths``), partition values from folders.

        The folders must spell the partition values the log holds (true for files this backend wrote);
        anything else is refused rather than read with wrong partition values.
        """
        from pyspark.sql import functions as F

        schema = spec.spark_schema()
        if not files:  # a local relation: reading it runs no Python task, and the optimizer drops what it feeds
            empty = local_frame(self.spark, [], schema)
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
        paths = table_paths(location)
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
        paths = table_paths(location)
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
                          and may_hold(f, by_rows)]
            rewritten: List[NewFile] = []
            if by_rows:  # the slice is rows inside files: rewrite the files that hold some, minus those rows
                candidates = self._files_holding(spec, paths, candidates, in_slice)
                if candidates:
                    rest = self._read_files(spec, paths, candidates).select(*spec.column_names).filter(~in_slice)
                    rewritten = self._write(spec, paths, rest)
            try:
                return self._commit(snapshot, location, candidates, [*new_files, *rewritten], "REPLACE SLICE",
                                    run_id, parameters={"slice": predicate})
            except TableMoved:
                self._discard(paths, rewritten)
                raise

        return self._run(spec, paths, "replace_slice", attempt, new_files)

    def merge(self, spec: TableSpec, location: str, source, on: Sequence[str],
              clauses: Sequence[mc.MergeClause], run_id: Optional[str]) -> int:
        from pyspark import StorageLevel

        self._ensure(spec, location)
        paths = table_paths(location)
        source = source.persist(StorageLevel.MEMORY_AND_DISK)  # every pass and retry sees the same rows
        try:
            source_rows = source.count()  # numSourceRows of the commit's metrics (the rows are cached)
            return self._run(spec, paths, "merge",
                             lambda: self._merge_once(spec, location, paths, source, on, clauses, run_id,
                                                      source_rows), [])
        finally:
            source.unpersist()

    def _merge_once(self, spec, location, paths, source, on, clauses, run_id, source_rows: int) -> int:
        from pyspark.sql import functions as F

        began = time.monotonic()
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
            hits = target.join(src, condition, "inner").filter(any_condition(matched))
            changed.append(hits.groupBy(FILE_COL, ROW_COL).count().select(FILE_COL, F.col("count").alias("n")))
        if by_source:
            gone = target.join(src, condition, "left_anti").filter(any_condition(by_source))
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
        rewrite = files_named(files, touched)

        # pass 2: new content of the touched files, plus inserted rows, written by Spark. Each target row
        # comes out once: acted on by a matched clause (unique, checked above), matched but left alone,
        # or unmatched (by-source clauses).
        parts = []
        if rewrite:
            old = self._read_files(spec, paths, rewrite, tagged=True).alias("t")
            if matched:
                acted = old.join(src, condition, "inner").filter(any_condition(matched))
                parts.append(apply_clauses(acted, matched, spec, keep_unmatched=True))
            if not any(c.condition is None for c in matched):  # some matched rows may be left alone
                left_alone = old.join(src, condition, "left_semi")
                if matched:
                    left_alone = left_alone.join(acted.select(FILE_COL, ROW_COL), [FILE_COL, ROW_COL], "left_anti")
                parts.append(left_alone.select(*spec.column_names, F.lit(COPIED).alias(ACTION_COL)))
            parts.append(apply_clauses(old.join(src, condition, "left_anti"), by_source, spec, keep_unmatched=True))
        if inserts:
            fresh = src.join(target.select(*on).alias("t"), condition, "left_anti")
            parts.append(apply_clauses(fresh, inserts, spec, keep_unmatched=False))
        new_files, counts = self._write_merged(spec, paths, parts)
        if not rewrite and not new_files:
            return snapshot.version  # nothing changes: no commit
        metrics = merge_metrics(counts, source_rows, rewrite, new_files, int((time.monotonic() - began) * 1000))
        try:
            return self._commit(snapshot, location, rewrite, new_files, "MERGE", run_id,
                                parameters=merge_parameters(on, clauses), metrics=metrics)
        except TableMoved:
            self._discard(paths, new_files)
            raise

    def _write_merged(self, spec: TableSpec, paths: TablePaths, parts) -> Tuple[List[NewFile], Dict[str, int]]:
        """Write a merge's output rows (``parts``, each row tagged with what MERGE did to it) and count the rows
        per action while Spark writes them (an ``Observation``: no job of its own). Deleted and skipped rows
        are counted, not written."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        if not parts:
            return [], {}
        tagged = functools.reduce(lambda a, b: a.unionByName(b), parts)
        if is_empty_local(tagged):
            return [], {}
        observation = Observation("kafka_recon_merge")
        kept = (tagged.observe(observation, *action_counts(tagged))
                .filter(~F.col(ACTION_COL).isin(*DROPPED)).drop(ACTION_COL))
        new_files = self._write(spec, paths, kept)
        return new_files, dict(observation.get)

    # ------------------------------------------------------------------ write machinery

    def _write(self, spec: TableSpec, paths: TablePaths, df,
               check: Optional[Callable[[List[NewFile], TablePaths], None]] = None) -> List[NewFile]:
        """Spark writes ``df`` into a staging folder; footers are checked; files move into the table folder.

        :return: the published (moved, not yet committed) files; empty files are dropped.
        """
        if any(c.type == "timestamp" for c in spec.columns):
            mode = self.spark.conf.get(_TIMESTAMP_CONF, "INT96")
            if mode != "TIMESTAMP_MICROS":
                raise ValueError(f"{_TIMESTAMP_CONF} is {mode}; the embedded backend needs TIMESTAMP_MICROS so "
                                 f"timestamps are stored as Delta 'timestamp' (jobs.spark_session sets it)")
        if is_empty_local(df):
            return []  # no rows: a write job would produce no file anyway
        write_id = _write_id()
        staging = f"{STAGING_DIR}/{write_id}"
        try:
            (df.write.mode("error")  # "errorifexists" in classic; Spark Connect knows only this name
             .option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")
             .partitionBy(*spec.partition_by)
             .parquet(paths.spark_path(staging)))
            return self._publish(spec, paths, staging, write_id, check)
        finally:
            _delete_dir(paths, staging)

    def _publish(self, spec: TableSpec, paths: TablePaths, staging: str, write_id: str,
                 check: Optional[Callable[[List[NewFile], TablePaths], None]] = None) -> List[NewFile]:
        """Check the Parquet files under ``staging`` (footers, schema, nulls, ``check``) and move them into
        the table folder under new names; the caller removes the staging folder."""
        published: List[NewFile] = []
        try:
            staged = self._staged_files(spec, paths, staging)
            if check is not None:
                check(staged, TablePaths(paths.delta_uri, paths.fs, paths.fs_path(staging), paths.spark_path(staging)))
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

    def _staged_files(self, spec: TableSpec, paths: TablePaths, staging: str) -> List[NewFile]:
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
        unsure = [f for f in staged if not surely_within(f.stats, by_rows)]
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

    # ------------------------------------------------------------------ snapshot, commit, retry

    def _ensure(self, spec: TableSpec, location: str):
        return ensure_table(spec, location)

    def _snapshot(self, location: str, version: Optional[int] = None) -> Snapshot:
        return read_snapshot(location, version)

    def _commit(self, snapshot: Snapshot, location: str, removes: Sequence[ActiveFile], adds: Sequence[NewFile],
                operation: str, run_id: Optional[str], blind_append: bool = False,
                parameters: Optional[Mapping[str, str]] = None, metrics: Optional[Mapping[str, str]] = None) -> int:
        """One commit (a method, so a test can interleave another writer right before it); a MERGE is
        recorded as Delta records one (:func:`.embedded_log.commit_merge`)."""
        if operation == "MERGE":
            return commit_merge(snapshot, location, removes, adds, run_id, parameters or {}, metrics or {})
        return commit(snapshot, location, removes, adds, operation, run_id, blind_append, parameters, metrics)

    def _run(self, spec: TableSpec, paths: TablePaths, operation: str, attempt: Callable[[], int],
             staged: Sequence[NewFile]) -> int:
        """Run ``attempt`` until it commits; each retry re-reads the table. ``staged`` are dropped on giving up."""
        last: Optional[TableMoved] = None
        for number in range(self.commit_retries + 1):
            try:
                return attempt()
            except TableMoved as moved:
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

    def sweep_staging(self, location: str, started_before: _dt.datetime) -> List[str]:
        """Delete staging folders of writes that began before ``started_before`` (see :func:`sweep_staging`)."""
        return sweep_staging(location, started_before)

    def _discard(self, paths: TablePaths, files: Sequence[NewFile]) -> None:
        """Delete published but uncommitted files (best effort: leftovers are invisible to readers)."""
        for f in files:
            try:
                paths.fs.delete_file(paths.fs_path(f.path))
            except OSError:
                log.warning("could not delete uncommitted file %s", f.path)


# ---------------------------------------------------------------------- helpers (pure)


WRITE_ID_TIME = "%Y%m%dT%H%M%S"  # a write id starts with the UTC second its write began
DIRECT_PREFIX = "direct-"  # staging folders executors write into (StagedParquet) start with this


def _write_id() -> str:
    return f"{_dt.datetime.now(_dt.timezone.utc):{WRITE_ID_TIME}}-{uuid.uuid4().hex[:12]}"


def staging_started(name: str) -> Optional[_dt.datetime]:
    """When the write that made the staging folder ``name`` began (its write id's time, UTC); None for a name
    no write of this backend makes (such a folder is never swept)."""
    stamp = name[len(DIRECT_PREFIX):] if name.startswith(DIRECT_PREFIX) else name
    if len(stamp) < 17 or stamp[15] != "-":
        return None
    try:
        return _dt.datetime.strptime(stamp[:15], WRITE_ID_TIME).replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        return None


def sweep_staging(location: str, started_before: _dt.datetime) -> List[str]:
    """Delete the staging folders of ``location``'s table whose write began before ``started_before``: what a
    killed run (SIGKILL, a job timeout, a lost driver) left behind, since only a process that is still alive
    cleans up after a failed write. Returns the folders deleted; a folder that cannot be listed or deleted is
    skipped (the next sweep tries again)."""
    from pyarrow import fs as pafs

    paths = table_paths(location)
    try:
        entries = paths.fs.get_file_info(pafs.FileSelector(paths.fs_path(STAGING_DIR), allow_not_found=True))
    except OSError:
        return []
    deleted = []
    for entry in entries:
        started = staging_started(entry.base_name) if entry.type == pafs.FileType.Directory else None
        if started is not None and started < started_before:
            try:
                paths.fs.delete_dir(entry.path)
                deleted.append(entry.base_name)
            except OSError as exc:
                log.warning("could not delete stale staging folder %s: %s", entry.path, exc)
    return deleted


def staging_for(spec: TableSpec, location: str, partition: str) -> StagedParquet:
    """A new, empty staging folder description for files of ``spec``'s slice at ``partition``."""
    schema = pa.schema([f for f in spec.arrow_schema() if f.name not in spec.partition_by])
    return StagedParquet(spec.name, location, f"{STAGING_DIR}/{DIRECT_PREFIX}{_write_id()}", partition, schema)


def _delete_dir(paths: TablePaths, rel: str) -> None:
    try:
        paths.fs.delete_dir(paths.fs_path(rel))
    except (FileNotFoundError, OSError):
        pass


