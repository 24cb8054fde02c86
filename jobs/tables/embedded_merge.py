"""Delta MERGE's clause semantics as Spark columns, for the embedded backend's merge passes."""
from __future__ import annotations

import functools
from typing import Sequence

from . import merge_clauses as mc
from .spec import TableSpec


def any_condition(clauses: Sequence[mc.MergeClause]):
    from pyspark.sql import functions as F

    if any(c.condition is None for c in clauses):
        return F.lit(True)
    return functools.reduce(lambda a, b: a | b, [F.coalesce(F.expr(c.condition), F.lit(False)) for c in clauses])


def apply_clauses(joined, clauses: Sequence[mc.MergeClause], spec: TableSpec, keep_unmatched: bool):
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
