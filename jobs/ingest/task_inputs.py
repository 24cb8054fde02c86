"""How a decoding job's tasks get their inputs: one row per task, made by the JVM, and each task's share of a
list that travels with the task's function.

Why: a parallelized Python list turned into rows (``createDataFrame`` over an RDD) is itself a Python pipeline,
so every decoding task started a second Python worker to make its input rows, on top of the worker that
decodes. In a fresh session that cost ~0.5 s of a first pass and ~0.3 s of a second pass (the real 1M-record
log into bronze, first run 11.0 -> 10.3 s; trivial tasks alone, cold: 2.2 s against 1.4 s with ``spark.range``).
The function's closure reaches every task whole, so a list past :data:`CLOSURE_LIMIT_BYTES` (tens of thousands
of loose files) is still handed over as rows, each task receiving only its own.
"""
from __future__ import annotations

import pickle
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa

TASK_COLUMN = "id"  # spark.range's column: the task's index into its job's list
CLOSURE_LIMIT_BYTES = 1 << 20  # PySpark broadcasts a larger function, and every task unpickles it whole


def task_frame(spark, count: int):
    """``count`` partitions of one row each, its ``id`` the task's index (at least one partition)."""
    count = max(1, int(count))
    return spark.range(0, count, 1, count)


def task_indexes(batches: Iterable[pa.RecordBatch]) -> Iterator[int]:
    """The task indexes a ``mapInArrow`` function over :func:`task_frame` receives (one, in practice)."""
    for batch in batches:
        yield from batch.column(TASK_COLUMN).to_pylist()


def rows_for_tasks(spark, tasks: List[List[tuple]], ddl: str,
                   limit: int = CLOSURE_LIMIT_BYTES) -> Tuple[Any, Optional[List[List[tuple]]]]:
    """The frame a job's ``mapInArrow`` runs over, one partition per task, and the list its function must
    close over: ``(task_frame, tasks)`` when the pickled list is at most ``limit`` bytes, else a frame of the
    rows themselves (``ddl``) and None."""
    if len(pickle.dumps(tasks, protocol=pickle.HIGHEST_PROTOCOL)) <= limit:
        return task_frame(spark, len(tasks)), tasks
    from jobs.engine.jvm import parallelized_rows

    return parallelized_rows(spark, tasks, ddl), None


def task_rows(batches: Iterable[pa.RecordBatch], tasks: Optional[List[List[tuple]]],
              fields: Sequence[str]) -> Iterator[Dict[str, Any]]:
    """A task's input rows as dicts of ``fields``: looked up in ``tasks`` by index, or read from the batches
    (:func:`rows_for_tasks`' two forms)."""
    if tasks is None:
        for batch in batches:
            yield from batch.to_pylist()
        return
    for index in task_indexes(batches):
        for row in tasks[index]:
            yield dict(zip(fields, row, strict=True))
