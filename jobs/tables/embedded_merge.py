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


ACTION_COL = "_kr_action"  # what MERGE did to a row: one of ACTIONS, counted into the commit's metrics
COPIED, INSERTED, SKIPPED = "copied", "inserted", "skipped"
ACTIONS = (COPIED, INSERTED, SKIPPED, f"{mc.MATCHED}_{mc.UPDATE}", f"{mc.MATCHED}_{mc.DELETE}",
           f"{mc.NOT_MATCHED_BY_SOURCE}_{mc.UPDATE}", f"{mc.NOT_MATCHED_BY_SOURCE}_{mc.DELETE}")
DROPPED = (SKIPPED, f"{mc.MATCHED}_{mc.DELETE}", f"{mc.NOT_MATCHED_BY_SOURCE}_{mc.DELETE}")


def apply_clauses(joined, clauses: Sequence[mc.MergeClause], spec: TableSpec, keep_unmatched: bool):
    """Rows after the first clause whose condition holds acts on each (Delta MERGE semantics), each with
    ``ACTION_COL`` saying what happened to it; rows whose action is in ``DROPPED`` leave the table (the
    caller counts them first, then filters them out).

    ``keep_unmatched``: target rows no clause acts on stay as they are (copied); source rows no clause acts on
    (inserts) are skipped.
    """
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in spec.spark_schema().fields}

    def original(column: str):
        return F.col(f"t.`{column}`") if keep_unmatched else F.lit(None).cast(types[column])

    untouched = F.lit(COPIED if keep_unmatched else SKIPPED)
    if not clauses:
        if not keep_unmatched:
            return joined.limit(0).select(*[original(c).alias(c) for c in spec.column_names],
                                          untouched.alias(ACTION_COL))
        return joined.select(*[original(c).alias(c) for c in spec.column_names], untouched.alias(ACTION_COL))
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
    action = None
    for clause, when in zip(clauses, conditions, strict=True):
        verdict = F.lit(INSERTED if clause.action == mc.INSERT else f"{clause.kind}_{clause.action}")
        action = F.when(when, verdict) if action is None else action.when(when, verdict)
    return joined.select(*columns, action.otherwise(untouched).alias(ACTION_COL))


def action_counts(df):
    """Aggregate columns counting ``df``'s rows per action (``Observation`` metrics: no Spark job of their own)."""
    from pyspark.sql import functions as F

    return [F.sum(F.when(F.col(ACTION_COL) == a, 1).otherwise(0)).cast("long").alias(a) for a in ACTIONS]


def merge_metrics(counts, source_rows: int, removed, added, execution_ms: int):
    """Delta's MERGE operationMetrics (names as delta-spark's MergeIntoCommand records them, values as text)."""
    get = {a: int(counts.get(a) or 0) for a in ACTIONS}
    matched_updated, matched_deleted = get[f"{mc.MATCHED}_{mc.UPDATE}"], get[f"{mc.MATCHED}_{mc.DELETE}"]
    source_updated = get[f"{mc.NOT_MATCHED_BY_SOURCE}_{mc.UPDATE}"]
    source_deleted = get[f"{mc.NOT_MATCHED_BY_SOURCE}_{mc.DELETE}"]
    metrics = {
        "numSourceRows": source_rows,
        "numTargetRowsInserted": get[INSERTED],
        "numTargetRowsUpdated": matched_updated + source_updated,
        "numTargetRowsMatchedUpdated": matched_updated,
        "numTargetRowsNotMatchedBySourceUpdated": source_updated,
        "numTargetRowsDeleted": matched_deleted + source_deleted,
        "numTargetRowsMatchedDeleted": matched_deleted,
        "numTargetRowsNotMatchedBySourceDeleted": source_deleted,
        "numTargetRowsCopied": get[COPIED],
        "numOutputRows": get[INSERTED] + matched_updated + source_updated + get[COPIED],
        "numTargetFilesAdded": len(added),
        "numTargetFilesRemoved": len(removed),
        "numTargetBytesAdded": sum(f.size for f in added),
        "numTargetBytesRemoved": sum(f.size for f in removed),
        "executionTimeMs": execution_ms,
    }
    return {k: str(v) for k, v in metrics.items()}


def merge_parameters(on: Sequence[str], clauses: Sequence[mc.MergeClause]) -> dict:
    """Delta's MERGE operationParameters: the match predicate and each kind's clauses (action type and
    predicate), as JSON text like delta-spark's ``DeltaOperations.Merge``."""
    import json

    from .table_predicates import key_condition

    def described(kind: str) -> str:
        return json.dumps([{"actionType": c.action, **({"predicate": c.condition} if c.condition else {})}
                           for c in mc.of_kind(clauses, kind)])

    return {"predicate": key_condition(on), "matchedPredicates": described(mc.MATCHED),
            "notMatchedPredicates": described(mc.NOT_MATCHED),
            "notMatchedBySourcePredicates": described(mc.NOT_MATCHED_BY_SOURCE)}
