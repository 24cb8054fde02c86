"""The one schema the executor-side decode emits: a ``table`` tag plus one struct column per bronze table.

``mapInArrow`` has a single output schema, but one pass over the inputs yields rows for seven tables. Each
emitted batch fills the struct of one table and leaves the others null; the driver persists the result
once and splits it with ``where(table = X).select(X.*)``, so every input file is read exactly once.
capture_id / run_id are constants added by the driver, so they are not part of the structs.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, Iterable, Iterator, List, Mapping, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from jobs.tables import bronze
from jobs.tables.spec import Column, TableSpec, cols

from .input_damage import damage_fact

RUN_COLUMNS = ("capture_id", "run_id")

# Facts the driver needs after the pass (capture time candidates), one row each.
FACTS = TableSpec(
    name="_ingest_facts",
    layer="bronze",
    keys=("fact",),
    columns=cols(
        ("fact", "string", "newest_mtime | recorded_capture_time | metadata_copy | metadata_file | bootstrap_source "
         "| rows | files | damaged_input"),
        ("source", "string", "file or copy id the fact is about; the table (rows) or status (files) counted"),
        ("broker_id", "int", ""),
        ("time_value", "timestamp", ""),
        ("text_value", "string", ""),
        ("long_value", "long", "a count"),
        ("detail", "string", "metadata_file: JSON locator the second pass reopens the file with"),
    ),
)

EMITTED: Tuple[TableSpec, ...] = (
    bronze.INGEST_FILES, bronze.LOG_DIRS, bronze.DIR_ENTRIES, bronze.METADATA_RECORDS, bronze.METADATA_BATCHES,
    bronze.PRODUCER_STATES, bronze.OFFSET_CHECKPOINTS,
    bronze.ZK_EVENTS, bronze.REPORTED_REPLICAS, FACTS,
    bronze.LEADER_EPOCHS,
)
BY_NAME: Dict[str, TableSpec] = {t.name: t for t in EMITTED}


def payload_columns(spec: TableSpec) -> Tuple[Column, ...]:
    return tuple(c for c in spec.columns if c.name not in RUN_COLUMNS)


def _struct_type(spec: TableSpec) -> pa.StructType:
    schema = spec.arrow_schema()
    return pa.struct([pa.field(c.name, schema.field(c.name).type) for c in payload_columns(spec)])


STRUCTS: Dict[str, pa.StructType] = {spec.name: _struct_type(spec) for spec in EMITTED}
ALL_TABLES: Tuple[str, ...] = tuple(STRUCTS)
# What the second pass emits: a narrow schema, because every struct column costs the JVM per row when it
# converts and caches the batches (1M records: 9.1 s with all nine tables' columns, far less with two)
SEQUENCE_TABLES: Tuple[str, ...] = (bronze.METADATA_RECORDS.name, FACTS.name)


@lru_cache(maxsize=None)
def arrow_schema(tables: Tuple[str, ...] = ALL_TABLES) -> pa.Schema:
    """``table`` plus one struct column per table in ``tables``."""
    return pa.schema([pa.field("table", pa.string())] + [pa.field(name, STRUCTS[name]) for name in tables])


ARROW_SCHEMA = arrow_schema()


def spark_schema(tables: Tuple[str, ...] = ALL_TABLES):
    """The Spark StructType matching :func:`arrow_schema` (built lazily: executors' imports stay Spark-free)."""
    from pyspark.sql import types as T

    fields = [T.StructField("table", T.StringType(), True)]
    for name in tables:
        payload = [f for f in BY_NAME[name].spark_schema().fields if f.name not in RUN_COLUMNS]
        fields.append(T.StructField(name, T.StructType(
            [T.StructField(f.name, f.dataType, True) for f in payload]), True))
    return T.StructType(fields)


CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


def fit(row: Mapping, struct: pa.StructType) -> dict:
    """A row whose values all fit their column: a value that does not (an epoch past int32 in hostile dump
    text, ...) becomes null, and the row's error columns say which, so no row and no file is lost."""
    out, problems = {}, []
    for field in struct:
        value = row.get(field.name)
        if value is not None:
            try:
                pa.array([value], type=field.type)
            except CONVERSION_ERRORS:
                problems.append(f"{field.name}={str(value)[:60]!r} does not fit {field.type}")
                value = None
        out[field.name] = value
    if problems and "error_message" in out:
        out["error_kind"] = out.get("error_kind") or "value_too_large"
        out["error_message"] = "; ".join(filter(None, [out.get("error_message"), *problems]))
    return out


def to_batch(table: str, rows: List[Mapping], tables: Tuple[str, ...] = ALL_TABLES) -> pa.RecordBatch:
    """Rows (dicts keyed by column name; missing keys are null) of one table as a tagged batch."""
    try:
        filled = pa.array(rows, type=STRUCTS[table])  # dicts -> struct array in C++; absent keys become nulls
    except CONVERSION_ERRORS:
        filled = pa.array([fit(row, STRUCTS[table]) for row in rows], type=STRUCTS[table])
    return tagged_batch(table, filled, tables)


def tagged_batch(table: str, filled: pa.StructArray, tables: Tuple[str, ...] = ALL_TABLES) -> pa.RecordBatch:
    """A struct array of one table's rows as a tagged batch (the other tables' columns null)."""
    n = len(filled)
    arrays = [pa.array([table] * n, type=pa.string())]
    for name in tables:
        arrays.append(filled if name == table else pa.nulls(n, type=STRUCTS[name]))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(tables))


def by_table(batch: pa.RecordBatch) -> Iterator[Tuple[str, pa.RecordBatch]]:
    """A tagged batch split by its ``table`` tag (decoders emit one table per batch: then no copy is made)."""
    if not batch.num_rows:
        return
    tags = batch.column("table")
    first = tags[0].as_py()
    if pc.all(pc.equal(tags, first)).as_py():
        yield first, batch
        return
    for table in pc.unique(tags).to_pylist():
        yield table, batch.filter(pc.equal(tags, table))


class RowSink:
    """Collects rows per table and flushes them as tagged batches of at most ``batch_rows`` rows."""

    def __init__(self, batch_rows: int = 4096, tables: Tuple[str, ...] = ALL_TABLES) -> None:
        self.batch_rows = batch_rows
        self.tables = tables  # the struct columns of the emitted batches (adding to another table: KeyError)
        self._rows: Dict[str, List[Mapping]] = {name: [] for name in tables}
        self.counts: Dict[str, int] = dict.fromkeys(tables, 0)
        self.newest_mtime = None  # newest file time seen by this task: one fact row at the end
        self._full: List[str] = []  # tables that reached batch_rows since the last ready()
        self._blocks: List[pa.RecordBatch] = []  # tagged batches built from columns, not yet handed out
        self.file_status: Dict[str, int] = {}  # bronze_ingest_files rows per status, reported as facts

    def seen_time(self, moment) -> None:
        if moment is not None and (self.newest_mtime is None or moment > self.newest_mtime):
            self.newest_mtime = moment

    def add_block(self, table: str, block: pa.StructArray) -> None:
        """Rows already in columns (``metadata_rows.RecordColumns.take``); handed out by the next ready()."""
        if len(block):
            self.counts[table] += len(block)
            self._blocks.append(tagged_batch(table, block, self.tables))

    def add(self, table: str, row: Mapping) -> None:
        rows = self._rows[table]
        rows.append(row)
        self.counts[table] += 1
        if len(rows) == self.batch_rows:
            self._full.append(table)
        if table == "bronze_ingest_files":
            status = row.get("status")
            self.file_status[status] = self.file_status.get(status, 0) + 1
            fact = damage_fact(row)
            if fact is not None and FACTS.name in self._rows:
                self.add(FACTS.name, fact)

    def ready(self) -> Iterable[pa.RecordBatch]:
        """Batches of tables that reached ``batch_rows`` (cheap to call after every input: memory stays flat)."""
        while self._blocks:
            yield self._blocks.pop(0)
        while self._full:
            table = self._full.pop()
            rows = self._rows[table]
            if len(rows) >= self.batch_rows:
                self._rows[table] = []
                yield to_batch(table, rows, self.tables)

    def drain(self) -> Iterable[pa.RecordBatch]:
        """Everything still held, plus this task's facts: newest mtime, rows per table, files per status (so
        the driver knows sizes and the files summary without another Spark job)."""
        if self.newest_mtime is not None:
            self.add(FACTS.name, {"fact": "newest_mtime", "time_value": self.newest_mtime})
            self.newest_mtime = None
        for table, count in list(self.counts.items()):
            if count and table != FACTS.name:
                self.add(FACTS.name, {"fact": "rows", "source": table, "long_value": count})
        for status, count in self.file_status.items():
            self.add(FACTS.name, {"fact": "files", "source": status, "long_value": count})
        self.counts = dict.fromkeys(self.counts, 0)
        self.file_status = {}
        yield from self.ready()
        for table, rows in self._rows.items():
            if rows:
                yield to_batch(table, rows, self.tables)
                self._rows[table] = []
