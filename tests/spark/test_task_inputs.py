"""A decoding job's tasks each get exactly their own inputs, whether the list travels with the function (a
small list: no Python job to make rows) or as rows (a list too large to hand every task whole)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from jobs.ingest.task_inputs import rows_for_tasks, task_rows

DDL = "name string, size long"
FIELDS = ("name", "size")
TASKS = [[("a", 1), ("b", 2)], [("c", 3)], [("d", 4), ("e", 5), ("f", 6)]]


def _seen_per_partition(spark, limit):
    frame, shipped = rows_for_tasks(spark, TASKS, DDL, limit=limit)

    def run(batches):
        rows = list(task_rows(batches, shipped, FIELDS))
        yield pa.RecordBatch.from_pydict({"names": [",".join(r["name"] for r in rows)],
                                          "total": [sum(r["size"] for r in rows)]})

    got = frame.mapInArrow(run, "names string, total long").collect()
    return shipped is not None, sorted((r["names"], r["total"]) for r in got)


@pytest.mark.parametrize("limit, closure", [(1 << 20, True), (0, False)])
def test_each_task_gets_its_own_inputs_either_way(spark, limit, closure):
    shipped, seen = _seen_per_partition(spark, limit)
    assert shipped is closure
    assert seen == [("a,b", 3), ("c", 3), ("d,e,f", 15)]


def test_rows_looked_up_by_index_are_dicts_of_the_fields():
    batch = pa.RecordBatch.from_pydict({"id": [2]})
    assert list(task_rows([batch], TASKS, FIELDS)) == [{"name": "d", "size": 4}, {"name": "e", "size": 5},
                                                       {"name": "f", "size": 6}]
