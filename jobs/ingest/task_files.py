"""One Parquet file of one table, written by one decoding task into the table's staging folder.

Shared by the passes whose tasks finish a table's rows themselves (:mod:`jobs.ingest.rows_direct`,
:mod:`jobs.ingest.records_direct`); the table layer checks and commits the folder's files with the table's
``replace_slice``. Spark-free apart from the task context (which names the file).
"""
from __future__ import annotations

from typing import List, Mapping, Optional

import pyarrow as pa

from jobs.tables.parquet_files import StagedParquet

ROW_GROUP_ROWS = 131_072  # blocks arrive in a few thousand rows; Parquet readers want larger row groups


def file_batch(schema: pa.Schema, block: pa.StructArray, given: Mapping[str, pa.Array]) -> pa.RecordBatch:
    """Rows of a tagged struct ``block`` as a table file's batch: the ``given`` columns (those the task fills
    in: run id, joined values), every other column the block's field of that name; each cast to the file's type."""
    arrays = []
    for field in schema:
        array = given[field.name] if field.name in given else block.field(field.name)
        arrays.append(array if array.type == field.type else array.cast(field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def run_column(run_id: str, rows: int) -> pa.Array:
    return pa.repeat(pa.scalar(run_id, pa.string()), rows)


class TaskFile:
    """The task's file of ``staged``, named after the task's partition: a retried task replaces it. Written
    under a temporary name and renamed when complete, so a half-written file is never committed. Nothing is
    created until the first row arrives."""

    def __init__(self, staged: StagedParquet) -> None:
        self.staged = staged
        self.pending: List[pa.RecordBatch] = []
        self.pending_rows = 0
        self.rows = 0
        self.writer = None
        self.temp: Optional[str] = None
        self.final: Optional[str] = None

    def add(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        self.rows += batch.num_rows
        if self.pending_rows >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        if self.writer is None:
            self._open()
        self.writer.write_table(pa.Table.from_batches(self.pending, self.staged.schema))
        self.pending, self.pending_rows = [], 0

    def _open(self) -> None:
        import pyarrow.parquet as pq
        from pyspark import TaskContext

        context = TaskContext.get()
        part, attempt = (context.partitionId(), context.attemptNumber()) if context else (0, 0)
        self.fs, folder = self.staged.folder()
        self.fs.create_dir(folder, recursive=True)
        self.final = f"{folder}/part-{part:05d}.parquet"
        self.temp = f"{folder}/.part-{part:05d}-attempt-{attempt}.tmp"
        self.writer = pq.ParquetWriter(self.temp, self.staged.schema, filesystem=self.fs, compression="snappy")

    def close(self) -> None:
        self._flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            self.fs.move(self.temp, self.final)
            self.temp = None

    def abandon(self) -> None:
        """After a failure: close and delete the temporary file (best effort)."""
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:  # noqa: BLE001 - already failing; the original error is what matters
                pass
        if self.temp is not None:
            try:
                self.fs.delete_file(self.temp)
            except OSError:
                pass
