"""Great Expectations results -> rows of ``gold_dq_results`` (one row per expectation per run).

Pure Python over GX's result objects (duck-typed), so it is tested without Spark. ``column_name`` is the
rule's result key (``suites.Rule.column_key``), which keeps (run_id, suite, expectation, column_name) unique
even for several table-level rules in one suite.
"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .suites import META_KEY, Rule, Suite

_DROP_KWARGS = ("batch_id",)


def _json(value: Any, limit: int) -> str:
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _as_int(value: Any) -> Optional[int]:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _sample(result: Dict[str, Any]) -> Any:
    if result.get("partial_unexpected_list"):
        return result["partial_unexpected_list"]
    details = result.get("details") or {}
    rows = details.get("unexpected_rows")
    if rows:
        return rows
    return None


def result_row(rule: Rule, validation_result: Any, base: Dict[str, Any], sample_limit: int) -> Dict[str, Any]:
    """One gold_dq_results row from an ``ExpectationValidationResult``."""
    config = validation_result.expectation_config
    result = dict(validation_result.result or {})
    kwargs = {k: v for k, v in dict(config.kwargs).items() if k not in _DROP_KWARGS}
    exception = validation_result.exception_info or {}
    raised = bool(exception.get("raised_exception")) if isinstance(exception, dict) else False
    unexpected = _as_int(result.get("unexpected_count"))
    if unexpected is None and config.type == "unexpected_rows_expectation":
        unexpected = _as_int(result.get("observed_value"))
    sample = _sample(result)
    if raised:
        sample = {"error": str(exception.get("exception_message") or "expectation raised")}
    return {
        **base,
        "expectation": config.type,
        "column_name": rule.column_key,
        "kwargs_json": _json(kwargs, 4000),
        "success": bool(validation_result.success) and not raised,
        "unexpected_count": unexpected,
        "element_count": _as_int(result.get("element_count")),
        "unexpected_sample": None if sample is None else _json(sample, sample_limit),
    }


def result_key(validation_result: Any) -> Tuple[str, Any]:
    """The :attr:`Rule.result_key` of the rule a GX result came from (its type and the meta key the runner set)."""
    config = validation_result.expectation_config
    return config.type, dict(config.meta or {}).get(META_KEY)


# What GX 1.x's Spark engine counts for an expectation that passed on a table without rows, by expectation type:
# a map metric summed by an aggregate function (not-null, regex, between, in-set) counts nothing (null), one
# computed with a window or a filter (uniqueness, the pair rule) counts zero, an unexpected-rows query zero rows.
# An empty table whose suite holds a type not listed here goes to GX whole (tests/spark/test_quality.py compares
# these with GX on an empty frame of tables covering every type the suites use).
EMPTY_TABLE_COUNTS: Dict[str, Dict[str, Optional[int]]] = {
    **dict.fromkeys(("expect_column_values_to_not_be_null", "expect_column_values_to_match_regex",
                     "expect_column_values_to_be_between", "expect_column_values_to_be_in_set"),
                    {"unexpected_count": None, "element_count": 0}),
    **dict.fromkeys(("expect_column_values_to_be_unique", "expect_compound_columns_to_be_unique",
                     "expect_column_pair_values_a_to_be_greater_than_b"),
                    {"unexpected_count": 0, "element_count": 0}),
    "unexpected_rows_expectation": {"unexpected_count": 0},
    "expect_table_row_count_to_be_between": {},
}


def empty_counts_known(suite: Suite) -> bool:
    """Whether every expectation of ``suite`` has its counts on an empty table in :data:`EMPTY_TABLE_COUNTS` (else
    an empty table of it goes to GX whole)."""
    return all(rule.expectation_type in EMPTY_TABLE_COUNTS for rule in suite.rules)


def passed_counts(expectation_type: str, per_row: bool, rows: int) -> Dict[str, Optional[int]]:
    """The counts GX's detailed result formats give an expectation that passed with no ``mostly`` on a table of
    ``rows`` rows, for a result the screen decided (screen.py; bare, as BOOLEAN_ONLY gives it): with rows, nothing
    unexpected, and an expectation decided row by row (``per_row``: a map expectation) counted every row, a row
    count none; without rows, :data:`EMPTY_TABLE_COUNTS`."""
    if rows == 0:
        return dict(EMPTY_TABLE_COUNTS[expectation_type])
    if per_row:
        return {"unexpected_count": 0, "element_count": rows}
    if expectation_type == "unexpected_rows_expectation":
        return {"unexpected_count": 0}
    return {}


def skipped_row(rule: Rule, missing: Sequence[str], base: Dict[str, Any]) -> Dict[str, Any]:
    """A rule that could not run because the table lacks columns: success is null, the sample says why."""
    return {
        **base,
        "expectation": rule.expectation_type,
        "column_name": rule.column_key,
        "kwargs_json": _json(dict(rule.kwargs), 4000),
        "success": None,
        "unexpected_count": None,
        "element_count": None,
        "unexpected_sample": _json({"skipped": "missing columns", "columns": list(missing)}, 1000),
    }


def suite_rows(
    suite: Suite,
    results: Iterable[Any],
    run_id: str,
    capture_id: Optional[str],
    evaluated_at: datetime,
    sample_limit: int = 2000,
) -> List[Dict[str, Any]]:
    """Rows for one suite; each result is matched to its rule by the ``meta`` key the runner sets."""
    base = {"run_id": run_id, "capture_id": capture_id, "suite": suite.name, "table_name": suite.table,
            "evaluated_at": evaluated_at}
    by_key = {result_key(res): res for res in results}
    rows = []
    for rule in suite.rules:
        res = by_key.get(rule.result_key)
        if res is None:
            raise ValueError(f"suite {suite.name}: no result for {rule.expectation_type} on {rule.column_key!r}; "
                             f"results: {sorted(map(str, by_key))}")
        rows.append(result_row(rule, res, base, sample_limit))
    rows.extend(skipped_row(rule, missing, base) for rule, missing in suite.skipped)
    return rows
