"""The second pass writes bronze_metadata_records' Parquet files itself, on the executors.

Why: a million decoded records otherwise cross from the Python workers into the JVM, are cached there and
are written by Spark's Parquet writer: three copies of rows nobody reads until reconcile reads the table.
Here each task turns its record blocks into the table's rows (run id, the copy's broker and the
authoritative-sequence flag filled in, exactly what the Spark route's join and
:func:`jobs.ingest.metadata_copies.flag_sequence` compute when no two files of the copy overlap) and
writes one Parquet file into the table's staging folder (:class:`jobs.tables.parquet_files.StagedParquet`);
the table layer checks and commits those files with the table's ``replace_slice``. Only facts (counts, first
errors) go back through Spark.

Used when the store can commit staged files (the embedded backend) and no two files of the authoritative
copy overlap; the first pass's few records (bootstrap files, dump text) still take the DataFrame route and
are committed in the same commit. Spark-free apart from the task context.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, Optional

import pyarrow as pa
import pyarrow.compute as pc

from jobs.tables.parquet_files import StagedParquet

from . import metadata_files
from .tagged_rows import by_table
from .task_files import TaskFile, file_batch, run_column


@dataclass(frozen=True)
class DirectRecords:
    """What a second-pass task needs to write finished bronze_metadata_records rows (picklable)."""

    staged: StagedParquet
    run_id: str
    copy_brokers: Dict[str, Optional[int]]  # copy id -> broker whose disk held it
    copy_id: str  # the authoritative copy
    sequence_snapshot: Optional[int]  # the snapshot its sequence starts from (None: the log from offset 0)

    def rows(self, block: pa.StructArray) -> pa.RecordBatch:
        """Records in the tagged struct -> the table's file columns, in order."""
        fields = {f.name: block.field(i) for i, f in enumerate(block.type)}
        copies = pa.array(list(self.copy_brokers), pa.string())
        brokers = pa.array(list(self.copy_brokers.values()), pa.int32())
        return file_batch(self.staged.schema, block, {
            "run_id": run_column(self.run_id, len(block)),
            "source_broker_id": brokers.take(pc.index_in(fields["copy_id"], value_set=copies)),  # unknown: null
            "in_authoritative_sequence": self._in_sequence(fields)})

    def _in_sequence(self, fields: Dict[str, pa.Array]) -> pa.Array:
        ours = pc.equal(fields["copy_id"], pa.scalar(self.copy_id, pa.string()))
        section = fields["section"]
        in_log = pc.equal(section, "log")
        snap = self.sequence_snapshot
        if snap is not None:
            in_log = pc.and_kleene(in_log, pc.greater_equal(fields["offset"], pa.scalar(snap, pa.int64())))
            in_snap = pc.and_kleene(pc.equal(section, "snapshot"),
                                    pc.equal(fields["snapshot_end_offset"], pa.scalar(snap, pa.int64())))
            in_log = pc.or_kleene(in_log, in_snap)
        return pc.fill_null(pc.and_kleene(ours, in_log), False)

    def divert(self, tagged: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Pass ``tagged`` through, minus its record rows, which go into this task's one file."""
        writer = TaskFile(self.staged)
        try:
            for batch in tagged:
                for table, part in by_table(batch):
                    if table == metadata_files.RECORDS:
                        writer.add(self.rows(part.column(table)))
                    else:
                        yield part
            writer.close()
        finally:
            writer.abandon()
