"""The ingest stage: a capture (folders, packs, loose files; local or pyarrow.fs URIs) -> the bronze tables.

How the work is spread:

1. The driver lists folders level by level and stops at every log dir (:mod:`jobs.ingest.discover`): it
   holds one small record per log dir / pack / loose file, never a per-replica-dir list.
2. Those units become a DataFrame with one partition per log dir or pack, and loose files grouped
   ``ingest.files_per_task`` to a partition; ``mapInArrow`` runs :mod:`jobs.ingest.decode_tasks` on the
   executors, which walk each log dir, read every file and emit tagged rows for all bronze tables at once.
3. The tagged rows are persisted once and split per table. Small facts (capture time candidates, which
   folder holds which metadata copy, the broker of each log dir: one row per log dir) are the only things
   collected to the driver. The broker of every row is joined in from its log dir's meta.properties.
4. :mod:`jobs.ingest.metadata_copies` compares the copies of the metadata log batch by batch and picks the
   authoritative one; :mod:`jobs.ingest.metadata_sequence` decodes only that copy's records (a second,
   small pass). :func:`write_ingest` replaces the capture's slice of every table (idempotent re-runs).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence, Union

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.engine.jvm import default_parallelism
from jobs.engine.local_frames import local_frame
from jobs.settings import IngestSettings, SparkSettings
from jobs.spark_session import fit_execution_to_size
from jobs.tables import bronze
from jobs.tables.parallel_writes import write_each
from jobs.tables.parquet_files import StagedParquet
from jobs.tables.spec import TableSpec
from jobs.tables.table_predicates import conform_exprs, lit_sql

from . import input_damage, metadata_files, tagged_rows
from .decode_tasks import UNIT_DDL, map_partition
from .discover import WorkUnit, capture_bytes_below, discover, plan_tasks
from .log_dir_rows import DecodeOptions
from .metadata_copies import compute_copies, files_with_unmatched_batches, flag_sequence
from .metadata_sequence import decode_sequence, fold_decoded_outcomes
from .records_direct import DirectRecords
from .rows_direct import FROM_LOG_DIR, STAGED_FACT, direct_rows
from .task_inputs import rows_for_tasks

TABLE_SPECS: Dict[str, TableSpec] = {t.name: t for t in bronze.TABLES}


@dataclass
class IngestResult:
    """The bronze DataFrames of one capture (``tables[name]``, every spec column, in spec order) and how the
    capture time was chosen. Call :meth:`release` when the tables are written."""

    capture_id: str
    run_id: str
    capture_time: Optional[datetime]
    capture_time_source: str  # argument | capture_record | newest_mtime | unknown
    tables: Dict[str, DataFrame]
    units: int
    tasks: int
    rows_emitted: Dict[str, int] = field(default_factory=dict)  # rows per bronze table, counted by the executors
    file_status: Dict[str, int] = field(default_factory=dict)  # bronze_ingest_files rows per status
    has_metadata_log: bool = False  # an authoritative metadata-log copy exists (segments or dump-log text)
    _persisted: List[DataFrame] = field(default_factory=list, repr=False)
    staged: Dict[str, StagedParquet] = field(default_factory=dict)  # tables whose rows executors wrote as files
    execution_mode: str = "compiled"  # how Spark runs the expressions from here on (jobs.spark_session)
    damaged_inputs: List[Dict[str, Any]] = field(default_factory=list)  # input_damage.from_fact of each

    def files_summary(self) -> Dict[str, int]:
        """``{"seen": n, "ok": n, "quarantined": n}`` over bronze_ingest_files (counted while decoding: no job)."""
        counts = self.file_status
        return {"seen": sum(counts.values()), "ok": counts.get("ok", 0), "quarantined": counts.get("quarantined", 0)}

    def release(self) -> None:
        for df in self._persisted:
            df.unpersist()
        self._persisted.clear()


def _unit_rows(tasks: List[List[WorkUnit]], multi_root: bool) -> List[List[tuple]]:
    def display(u: WorkUnit) -> str:
        if u.kind != "log_dir" and u.path.rstrip("/") == u.root.rstrip("/"):
            return u.root  # a file given as a root: its full path (its folder tells a metadata segment apart)
        rel = u.rel_path or u.path.rstrip("/").rsplit("/", 1)[-1]
        return f"{u.root.rstrip('/')}/{u.rel_path}" if multi_root and u.rel_path else rel
    return [[(u.kind, u.root, u.path, display(u), int(u.size), bool(u.headless)) for u in task] for task in tasks]


def _conform(df: DataFrame, spec: TableSpec, capture_id: str, run_id: str,
             constants: Optional[Dict[str, object]] = None) -> DataFrame:
    """Every column of ``spec`` in spec order and type; run columns and ``constants`` as literals, all in one
    ``selectExpr`` of SQL text (a Column per field cast to a DataType cost six JVM calls each)."""
    values = {"capture_id": capture_id, "run_id": run_id, **(constants or {})}
    return df.selectExpr(*conform_exprs(spec, set(df.columns),
                                        {name: lit_sql(value) for name, value in values.items()}))


def _sized(df: DataFrame, rows: int, rows_per_file: int) -> DataFrame:
    """``df`` in about ``rows / rows_per_file`` partitions (never more than it has): the first pass leaves one
    partition per pack or log dir, so without this a 200-row table is written as 100 files, and every job
    over it (the copies comparison runs several) schedules 100 tasks."""
    wanted = max(1, -(-rows // max(1, rows_per_file)))
    return df.coalesce(wanted)


def _utc(moment: Optional[datetime]) -> Optional[datetime]:
    """Aware UTC (Spark hands timestamps back naive, in the session's UTC zone)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _resolve_capture_time(argument: Optional[datetime], facts: List[dict]):
    if argument is not None:
        return _utc(argument), "argument"
    facts = [dict(f, time_value=_utc(f["time_value"])) for f in facts]
    recorded = [f for f in facts if f["fact"] == "recorded_capture_time" and f["time_value"] is not None]
    named = [f["time_value"] for f in recorded if (f["source"] or "").rsplit("/", 1)[-1] == "capture.json"]
    if named:
        return max(named), "capture_record"
    if recorded:
        return max(f["time_value"] for f in recorded), "capture_record"
    mtimes = [f["time_value"] for f in facts if f["fact"] == "newest_mtime" and f["time_value"] is not None]
    if mtimes:
        return max(mtimes), "newest_mtime"
    return None, "unknown"


def run_ingest(spark: SparkSession, settings: IngestSettings, store, captures: Union[str, Sequence[str]],
               capture_id: str, run_id: str, capture_time: Optional[datetime] = None,
               units: Optional[Sequence[WorkUnit]] = None, *, execution: SparkSettings) -> IngestResult:
    """Ingest one capture into the bronze tables: discover, first pass, copies, second pass, conform, write.

    :param captures: the capture's roots: folders, packed snapshots or single files, local or URIs.
    :param store: a DeltaStore (its ``write_parallelism`` tables at once); None returns the DataFrames unwritten.
    :param capture_time: ``--capture-time``; else the collector's record (capture.json, pack headers),
        else the newest mtime in the capture.
    :param units: the capture's :func:`discover` result when the caller already listed it (nightly does,
        before Spark starts, to stop on an empty capture).
    :param execution: the ``spark`` section: how the session runs the rest of the job once the rows are counted
        (:func:`jobs.spark_session.fit_execution_to_size`).
    :return: the bronze DataFrames; written to ``store`` when one is given (the result stays usable).

    Example::

        result = run_ingest(spark, settings.ingest, store, ["/captures/2026-11-22"], "cap-2026-11-22", run_id,
                            execution=settings.spark)
        result.files_summary()   # {'seen': 1234, 'ok': 1230, 'quarantined': 4}
    """
    roots = [captures] if isinstance(captures, str) else list(captures)
    units = list(units) if units is not None else discover(roots)
    steps = IngestSteps(spark, settings, execution, store, capture_id, run_id)
    try:
        first = steps.first_pass(units, multi_root=len(roots) > 1)
        copies = steps.copies(first)
        second = steps.second_pass(first, copies)
        result = steps.conform(first, copies, second, capture_time)
        if store is not None:
            write_ingest(store, result, store.write_parallelism)
        # the rest of the run (reconcile, quality) reads every row, however it was written
        result.execution_mode = fit_execution_to_size(spark, execution, second.rows)
    except BaseException:
        steps.discard_staged()  # files tasks wrote for a commit that will not come
        raise
    return result


@dataclass
class FirstPass:
    """What the first pass left: every row it decoded (persisted, tagged by table) and the small facts the
    driver needs (rows and files counted per table, capture-time candidates, the broker of each log dir)."""

    units: int
    tasks: int
    tagged: DataFrame
    facts: List[dict]
    identity: DataFrame  # log_dir -> broker_id, cluster_id, directory_id (from meta.properties)
    copy_sources: List[tuple]  # (copy_id, source_broker_id, log_dir, fact) of each metadata copy / bootstrap file
    broker_of_copy: DataFrame  # copy_id -> source_broker_id (broadcast)
    rows_emitted: Dict[str, int]
    file_status: Dict[str, int]
    rows_per_file: int
    staged: Dict[str, StagedParquet] = field(default_factory=dict)  # tables the tasks wrote rows of themselves
    staged_rows: Dict[str, int] = field(default_factory=dict)  # ... and how many (the rest is in ``tagged``)

    def part(self, name: str) -> DataFrame:
        """One table's rows left in ``tagged``, in partitions sized to their count (known by now). A table no
        task left a row of is an empty local relation: the optimizer then drops what reads it, and writing it
        runs no job."""
        rows = self.rows_emitted.get(name, 0) - self.staged_rows.get(name, 0)
        if not rows:
            return local_frame(self.tagged.sparkSession, [], self.tagged.schema[name].dataType)
        return _sized(self.tagged.where(F.col("table") == name).select(f"`{name}`.*"), rows, self.rows_per_file)

    def with_identity(self, df: DataFrame, columns: Sequence[str]) -> DataFrame:
        """``df`` with ``columns`` taken from its log dir's meta.properties."""
        slim = self.identity.select("log_dir", *columns)
        return df.drop(*columns).join(F.broadcast(slim), "log_dir", "left")



@dataclass
class Copies:
    """The metadata log's copies compared batch by batch, and the authoritative one (None without a log)."""

    batches: DataFrame
    batch_count: int
    table: DataFrame  # bronze_metadata_copies rows
    auth: Any
    unmatched: List[Any]  # files of other copies holding batches the authoritative copy lacks
    overlapping: bool  # some offset of the authoritative copy is held twice (the once-per-offset flag shuffles)
    cuts: Dict[str, List[int]]  # where the second pass cuts each file (the comparison's job found them)
    locators: List[dict]  # where each metadata file's records are, for the second pass


@dataclass
class SecondPass:
    """The authoritative sequence's records (flagged) and every file's final outcome."""

    records: DataFrame
    files: DataFrame
    direct: Optional[DirectRecords]
    rows: int  # every row of the capture, however it was written (the run's execution mode fits this)


class IngestSteps:
    """The steps of one capture's ingest, named as docs/ARCHITECTURE.md names them. Each returns what the next
    needs; the DataFrames they persist are released by :meth:`IngestResult.release`."""

    def __init__(self, spark: SparkSession, settings: IngestSettings, execution: SparkSettings, store,
                 capture_id: str, run_id: str) -> None:
        self.spark, self.settings, self.execution, self.store = spark, settings, execution, store
        self.capture_id, self.run_id = capture_id, run_id
        self.options = DecodeOptions.from_settings(self.settings)  # what executors need
        self.persisted: List[DataFrame] = []
        self.staged: List[StagedParquet] = []  # folders tasks write table files into, until they are committed

    def discard_staged(self) -> None:
        """Delete the staging folders of files tasks wrote (best effort; a committed folder is gone already)."""
        for staged in self.staged:
            staged.discard()

    def first_pass(self, units: List[WorkUnit], multi_root: bool) -> FirstPass:
        """One Spark job decodes every log dir, pack and loose file (persisted) and brings back the small facts."""
        spark = self.spark
        # a small capture's tables read faster as Spark's few files than as a file per task and table (sized
        # last: a raw tree is walked for it)
        wanted = (self.settings.direct_first_pass_write and self.store is not None
                  and capture_bytes_below(units, self.settings.direct_first_pass_min_bytes) is None)
        direct = direct_rows(self.store, wanted, self.capture_id, self.run_id)
        most = self.settings.direct_tasks_per_core * default_parallelism(spark) if direct else None
        self.staged += list(direct.staged.values()) if direct else []
        tasks = plan_tasks(units, self.settings.files_per_task, max_whole_tasks=most)
        if tasks:
            units_df, shipped = rows_for_tasks(spark, _unit_rows(tasks, multi_root), UNIT_DDL)
            tagged = units_df.mapInArrow(map_partition(self.options, shipped, direct), tagged_rows.spark_schema())
        else:
            tagged = local_frame(spark, [], tagged_rows.spark_schema())  # no rows: no Python task reads it
        tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
        self.persisted.append(tagged)

        facts_name, log_dirs_name = tagged_rows.FACTS.name, bronze.LOG_DIRS.name
        small = tagged.where(F.col("table").isin(facts_name, log_dirs_name)).select(
            "table", F.col(facts_name), F.struct(*[F.col(f"{log_dirs_name}.{c}").alias(c)
                                                   for c in ("log_dir", "broker_id", "cluster_id", "directory_id")]
                                                 ).alias("identity")).collect()
        facts = [r[facts_name].asDict() for r in small if r["table"] == facts_name]
        identity_rows = [r["identity"] for r in small if r["table"] == log_dirs_name]
        counters: Dict[str, Dict[str, int]] = {"rows": {}, "files": {}, STAGED_FACT: {}}
        for fact in facts:
            counter = counters.get(fact["fact"])
            if counter is not None:
                counter[fact["source"]] = counter.get(fact["source"], 0) + int(fact["long_value"] or 0)
        rows_emitted, file_status, staged_rows = counters["rows"], counters["files"], counters[STAGED_FACT]
        identity = local_frame(spark, identity_rows,
                                         "log_dir string, broker_id int, cluster_id string, directory_id string")
        by_log_dir = {r["log_dir"]: r for r in identity_rows}
        copy_sources = [(f["source"], by_log_dir[f["text_value"]]["broker_id"] if f["text_value"] in by_log_dir
                         else None, f["text_value"], f["fact"])
                        for f in facts if f["fact"] in ("metadata_copy", "bootstrap_source")]
        copy_df = local_frame(spark, copy_sources, "copy_id string, source_broker_id int, log_dir string, fact string")
        return FirstPass(len(units), len(tasks), tagged, facts, identity, copy_sources,
                         F.broadcast(copy_df.select("copy_id", "source_broker_id")), rows_emitted, file_status,
                         self.settings.output_rows_per_file,
                         {t: direct.staged[t] for t in staged_rows} if direct is not None else {}, staged_rows)

    def copies(self, first: FirstPass) -> Copies:
        """Compare the metadata log's copies batch by batch and pick the authoritative one."""
        batches = (first.part(bronze.METADATA_BATCHES.name).drop("source_broker_id")
                   .join(first.broker_of_copy, "copy_id", "left"))
        batch_count = first.rows_emitted.get(bronze.METADATA_BATCHES.name, 0)
        # the comparison reads only batch rows: it runs in the profile their number calls for (small, even in a
        # large capture: 4 jobs instead of 7 under AQE); run_ingest fits the rest of the run to every row
        fit_execution_to_size(self.spark, self.execution, batch_count, scope="copies")
        if batch_count:
            batches = batches.persist(StorageLevel.MEMORY_AND_DISK)
            self.persisted.append(batches)
        comparison = compute_copies(batches, [c[:3] for c in first.copy_sources if c[3] == "metadata_copy"],
                                    has_batches=batch_count > 0, chunk_bytes=self.options.metadata_chunk_bytes)
        locators = [json.loads(f["detail"]) for f in first.facts if f["fact"] == metadata_files.FACT and f["detail"]]
        # only batches of other copies can be unmatched: a capture with one copy of the log asks Spark nothing more
        unmatched = (files_with_unmatched_batches(batches, comparison.auth)
                     if batch_count and comparison.other_log_copies else [])
        return Copies(batches, batch_count, comparison.table, comparison.auth, unmatched,
                      comparison.repeats_offsets if batch_count else True, comparison.cuts, locators)

    def second_pass(self, first: FirstPass, copies: Copies) -> SecondPass:
        """Decode only the authoritative copy's records (plus batches it lacks), flag its one sequence, and fit
        the ingest's own splits and writes to the rows left to Spark once every row is counted."""
        direct = _direct_records(self.settings.direct_records_write, self.store, copies.auth, copies.overlapping, self.capture_id,
                                 self.run_id, first.copy_sources)
        self.staged += [direct.staged] if direct else []
        sequence = decode_sequence(self.spark, copies.locators, copies.auth, self.options, self.persisted,
                                   copies.unmatched, copies.cuts, direct)
        for table, count in sequence.rows_emitted.items():
            first.rows_emitted[table] = first.rows_emitted.get(table, 0) + count
        # every row is counted by now. Rows the tasks wrote as files never pass through this session, so the
        # ingest's own splits and writes fit the rows left (the real 1M log: ~900 rows, whose cold writes took
        # ~0.5 s longer compiled); run_ingest fits the rest of the run to every row once they are written.
        rows = sum(first.rows_emitted.values())
        staged = sum(first.staged_rows.values()) + (sequence.rows_emitted.get(bronze.METADATA_RECORDS.name, 0)
                                                    if direct is not None else 0)
        fit_execution_to_size(self.spark, self.execution, rows - staged, scope="ingest writes")
        records = first.part(bronze.METADATA_RECORDS.name)  # first-pass records (bootstrap files, dump text)
        if sequence.records is not None:
            records = records.unionByName(sequence.records)
        records = records.drop("source_broker_id").join(first.broker_of_copy, "copy_id", "left")
        flagged = flag_sequence(records, copies.auth, overlapping=copies.overlapping)
        files = fold_decoded_outcomes(first.part(bronze.INGEST_FILES.name), copies.locators, sequence.outcomes,
                                      first.file_status)
        return SecondPass(flagged, files, direct, rows)

    def conform(self, first: FirstPass, copies: Copies, second: SecondPass,
                capture_time: Optional[datetime]) -> IngestResult:
        """Every bronze table in its spec's columns and types, with the run columns and the capture time."""
        resolved_time, time_source = _resolve_capture_time(capture_time, first.facts)
        c, r, part = self.capture_id, self.run_id, first.part

        def ident(df: DataFrame, table: str) -> DataFrame:
            return first.with_identity(df, FROM_LOG_DIR[table])

        tables = {
            bronze.INGEST_FILES.name: _conform(ident(second.files, bronze.INGEST_FILES.name), bronze.INGEST_FILES, c, r),
            bronze.LOG_DIRS.name: _conform(part(bronze.LOG_DIRS.name), bronze.LOG_DIRS, c, r,
                                           {"capture_time": resolved_time}),
            bronze.DIR_ENTRIES.name: _conform(
                ident(part(bronze.DIR_ENTRIES.name), bronze.DIR_ENTRIES.name),
                bronze.DIR_ENTRIES, c, r),
            bronze.METADATA_RECORDS.name: _conform(second.records, bronze.METADATA_RECORDS, c, r),
            bronze.METADATA_BATCHES.name: _conform(copies.batches, bronze.METADATA_BATCHES, c, r),
            bronze.METADATA_COPIES.name: _conform(copies.table, bronze.METADATA_COPIES, c, r),
            bronze.PRODUCER_STATES.name: _conform(ident(part(bronze.PRODUCER_STATES.name), bronze.PRODUCER_STATES.name),
                                                  bronze.PRODUCER_STATES, c, r),
            bronze.OFFSET_CHECKPOINTS.name: _conform(part(bronze.OFFSET_CHECKPOINTS.name), bronze.OFFSET_CHECKPOINTS,
                                                     c, r),
            bronze.ZK_EVENTS.name: _conform(part(bronze.ZK_EVENTS.name), bronze.ZK_EVENTS, c, r),
            bronze.REPORTED_REPLICAS.name: _conform(part(bronze.REPORTED_REPLICAS.name), bronze.REPORTED_REPLICAS,
                                                    c, r),
            bronze.LEADER_EPOCHS.name: _conform(ident(part(bronze.LEADER_EPOCHS.name), bronze.LEADER_EPOCHS.name),
                                                bronze.LEADER_EPOCHS, c, r),
        }
        result = IngestResult(c, r, resolved_time, time_source, tables, first.units, first.tasks,
                              first.rows_emitted, first.file_status, copies.auth is not None, self.persisted)
        result.staged.update(first.staged)
        result.damaged_inputs = [input_damage.from_fact(f) for f in first.facts if f["fact"] == input_damage.FACT]
        if second.direct is not None:
            result.staged[bronze.METADATA_RECORDS.name] = second.direct.staged
        return result


def _direct_records(enabled: bool, store, auth, overlapping: bool, capture_id: str, run_id: str,
                    copy_sources) -> Optional[DirectRecords]:
    """The second pass writes the records' files itself when it can produce the finished rows alone: the
    store commits staged files (in one commit with the first pass's records: bootstrap files, dump text) and
    no two files of the authoritative copy overlap (else the once-per-offset flag needs a shuffle). Else None."""
    if store is None or auth is None or overlapping or not enabled:
        return None
    staged = store.staged_parquet(bronze.METADATA_RECORDS.name, {"capture_id": capture_id})
    if staged is None:
        return None
    brokers = {copy_id: broker for copy_id, broker, _, fact in copy_sources if fact == "metadata_copy"}
    return DirectRecords(staged, run_id, brokers, auth.copy_id, auth.sequence_snapshot)


def write_ingest(store, result: IngestResult, parallelism: int = 1) -> List[str]:
    """Replace the capture's slice of every bronze table: a re-run of the same capture leaves the same rows
    (no duplicates), another capture adds to history. Returns the tables written. Tables whose rows executors
    wrote as files (``result.staged``) are committed with them, and read back from the store afterwards so
    ``result.tables`` stays whole. ``parallelism``: tables written at once (the store's ``write_parallelism``,
    :mod:`jobs.tables.parallel_writes`)."""
    names = write_each(result.tables, lambda name: store.replace_slice(
        name, result.tables[name], slice={"capture_id": result.capture_id}, run_id=result.run_id,
        staged=result.staged.get(name)), parallelism)
    for name in names:
        if result.staged.pop(name, None) is not None:
            result.tables[name] = store.read(name).where(F.col("capture_id") == result.capture_id)
    return names
