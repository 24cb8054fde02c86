"""What differs between the Spark releases the job runs on (3.5 through 4.x), each behind one function that takes
the newer API where it exists and an equivalent route elsewhere."""
from __future__ import annotations

from typing import Callable, Iterator


def apply_in_arrow(df, key: str, func: Callable, ddl: str):
    """``df.groupBy(key).applyInArrow(func, ddl)``: ``func`` takes one group's rows as a ``pyarrow.Table`` and
    returns a Table of ``ddl``. Spark 3.5 has no ``applyInArrow`` (4.0+): there the rows are hash-partitioned by
    ``key`` and each partition's groups are handed to ``func`` from ``mapInArrow``, exact as Arrow (no pandas frame,
    whose nullable integers would become floats)."""
    grouped = df.groupBy(key)
    if hasattr(grouped, "applyInArrow"):
        return grouped.applyInArrow(func, ddl)

    def per_partition(batches: Iterator) -> Iterator:
        import pyarrow as pa
        import pyarrow.compute as pc

        batches = [b for b in batches if b.num_rows]
        if not batches:
            return
        table = pa.Table.from_batches(batches)
        for value in table.column(key).unique().to_pylist():
            mask = pc.is_null(table.column(key)) if value is None else pc.equal(table.column(key), value)
            yield from func(table.filter(mask)).to_batches()

    return df.repartition(key).mapInArrow(per_partition, ddl)
