"""The first pass writes its bulky tables' Parquet files itself, on the executors.

Why: a fleet's first pass emits millions of rows of a few tables (a bronze_ingest_files row per file, the
offset checkpoints, leader epochs, dir entries, producer states) that nothing reads before reconcile. Through
Spark each row crosses into the JVM, is cached beside every other table's null columns, is joined to its log
dir's meta.properties and is written by Spark's Parquet writer (400k replica dirs: ~3.6M rows). Here each
task finishes those rows itself (run id, and the columns its log dir's meta.properties gives, from the
bronze_log_dirs rows the same task decoded) and writes one Parquet file per table into the table's staging
folder (:class:`jobs.tables.parquet_files.StagedParquet`); the table layer checks and commits them with the
table's ``replace_slice``, in one commit with the rows that still take the DataFrame route:

- rows whose log dir this task saw no bronze_log_dirs row for, or two: the driver's join over every task's
  log dirs gives them their columns, as before;
- bronze_ingest_files rows of metadata-log segments and snapshots: the second pass folds its outcome into
  them (:func:`jobs.ingest.metadata_sequence.fold_decoded_outcomes`).

So both routes commit the same rows. A task holds an input's identity-joined rows until that input (one log
dir, one pack) ends; its log dirs' rows come last. As every task leaves a file per table, the first pass then
plans fewer, larger tasks (:func:`jobs.ingest.discover.plan_tasks`). Spark-free apart from the task context.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from jobs.tables import bronze
from jobs.tables.parquet_files import StagedParquet

from .tagged_rows import FACTS, by_table, tagged_batch, to_batch
from .task_files import TaskFile, file_batch, run_column

FROM_LOG_DIR: Dict[str, Tuple[str, ...]] = {
    bronze.INGEST_FILES.name: ("broker_id",),
    bronze.DIR_ENTRIES.name: ("broker_id", "cluster_id", "directory_id"),
    bronze.PRODUCER_STATES.name: ("broker_id",),
    bronze.LEADER_EPOCHS.name: ("broker_id",),
}
"""Columns a first-pass table takes from its log dir's meta.properties (its bronze_log_dirs row), on both routes."""

DIRECT_TABLES: Tuple[str, ...] = (bronze.INGEST_FILES.name, bronze.OFFSET_CHECKPOINTS.name,
                                  bronze.DIR_ENTRIES.name, bronze.LEADER_EPOCHS.name, bronze.PRODUCER_STATES.name)
"""The first-pass tables whose rows the tasks write themselves when the store can commit staged files."""

IDENTITY_COLUMNS = ("broker_id", "cluster_id", "directory_id")
FOLDED_KINDS = pa.array(["metadata_segment", "metadata_snapshot"], pa.string())
STAGED_FACT = "staged_rows"  # _ingest_facts: rows of table ``source`` a task wrote itself (``long_value``)


@dataclass(frozen=True)
class DirectRows:
    """What a first-pass task needs to write finished rows of :data:`DIRECT_TABLES` (picklable)."""

    staged: Dict[str, StagedParquet]  # table -> its slice's staging folder
    run_id: str

    def divert(self, inputs: Iterable[Iterable[pa.RecordBatch]]) -> Iterator[pa.RecordBatch]:
        """Pass the tagged batches of each input (a log dir, a pack, a run of loose files) through, minus the
        rows this task writes itself (one file per table for the whole task); then one fact per table written."""
        files = {table: TaskFile(staged) for table, staged in self.staged.items()}
        try:
            for tagged in inputs:
                yield from self._one_input(tagged, files)
            for file in files.values():
                file.close()
            written = [{"fact": STAGED_FACT, "source": table, "long_value": file.rows}
                       for table, file in files.items() if file.rows]
            if written:
                yield to_batch(FACTS.name, written)
        finally:
            for file in files.values():
                file.abandon()

    def _one_input(self, tagged: Iterable[pa.RecordBatch], files: Dict[str, TaskFile]) -> Iterator[pa.RecordBatch]:
        """One input's rows: a log dir's rows and its bronze_log_dirs row come from the same input, so its
        identity-joined rows are held until the input ends (its log dirs' rows come last)."""
        held: List[Tuple[str, pa.StructArray]] = []
        dirs: List[pa.StructArray] = []
        for batch in tagged:
            for table, part in by_table(batch):
                if table == bronze.LOG_DIRS.name:
                    dirs.append(part.column(table))
                if table not in files:
                    yield part
                    continue
                block = part.column(table)
                if table == bronze.INGEST_FILES.name:
                    folded = pc.fill_null(pc.is_in(block.field("file_kind"), value_set=FOLDED_KINDS), False)
                    if pc.any(folded).as_py():
                        yield part.filter(folded)
                        block = block.filter(pc.invert(folded))
                if table in FROM_LOG_DIR:
                    held.append((table, block))
                else:
                    files[table].add(self.rows(table, block, None))
        identity = log_dir_identity(dirs)
        for table, block in held:
            log_dir = block.field("log_dir")
            known = pc.or_(pc.is_null(log_dir), pc.fill_null(pc.is_in(log_dir, value_set=identity[0]), False))
            files[table].add(self.rows(table, block.filter(known), identity))
            rest = block.filter(pc.invert(known))
            if len(rest):
                yield tagged_batch(table, rest)

    def rows(self, table: str, block: pa.StructArray,
             identity: Optional[Tuple[pa.Array, Dict[str, pa.Array]]]) -> pa.RecordBatch:
        """Rows of ``table`` in the tagged struct -> the table's file columns, in order."""
        given = {"run_id": run_column(self.run_id, len(block))}
        from_dir = FROM_LOG_DIR.get(table, ())
        if from_dir:
            where = pc.index_in(block.field("log_dir"), value_set=identity[0])
            given.update({c: identity[1][c].take(where) for c in from_dir})  # no log dir: null, as the left join
        return file_batch(self.staged[table].schema, block, given)


def log_dir_identity(dirs: List[pa.StructArray]) -> Tuple[pa.Array, Dict[str, pa.Array]]:
    """``(log dirs, {column: values})`` of the log dirs that have exactly one bronze_log_dirs row here."""
    if not dirs:
        empty = pa.array([], pa.string())
        return empty, {c: pa.array([], bronze.LOG_DIRS.arrow_schema().field(c).type) for c in IDENTITY_COLUMNS}
    rows = pa.concat_arrays(dirs)
    log_dir = rows.field("log_dir")
    counts = pc.value_counts(log_dir.drop_null())
    once = counts.field("values").filter(pc.equal(counts.field("counts"), 1))
    keep = pc.fill_null(pc.is_in(log_dir, value_set=once), False)
    return log_dir.filter(keep), {c: rows.field(c).filter(keep) for c in IDENTITY_COLUMNS}


def direct_rows(store, enabled: bool, capture_id: str, run_id: str) -> Optional[DirectRows]:
    """The first pass's :class:`DirectRows` when ``enabled`` and the store commits staged files; else None."""
    if store is None or not enabled:
        return None
    staged = {}
    for table in DIRECT_TABLES:
        folder = store.staged_parquet(table, {"capture_id": capture_id})
        if folder is None:
            return None
        staged[table] = folder
    return DirectRows(staged, run_id)
