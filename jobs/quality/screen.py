"""One aggregate query per run decides which expectations pass, so Great Expectations queries only the rest.

Why: GX resolves each table's metrics in ~10 Spark queries of its own (a devsample run's 20 suites: ~13 s warm on
one driver thread, most of the quality stage), while what a passing rule needs is one count. The screen counts
each rule's violations in one global aggregate per table, all tables' aggregates in one Spark job; a rule with
none passes here, and only the rules that fail or that the screen cannot decide (a grouped query, ``mostly``, a
keyword it does not know) go to GX, which gives their counts and samples. On an empty table GX's counts differ by
expectation type (``flatten.EMPTY_TABLE_COUNTS``); a suite with a type not known there goes to GX whole.

The counts follow GX's own Spark conditions (great_expectations/expectations/metrics/...: ``rlike``, ``isin``,
``>=``, a window over the column or the struct of columns): map expectations skip null values, except
not-null itself; compound uniqueness skips rows whose values are all missing; the pair rule skips rows where
either value is missing (its ``ignore_row_if``). A violation count is zero exactly when GX's unexpected count is
(uniqueness counts the extra copies, GX every copy): only pass or fail is taken from it.
``tests/spark/test_quality_screen.py`` compares the verdicts with GX's on frames built to fail each rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Callable, Dict, FrozenSet, Mapping, Optional, Tuple

from jobs.tables.table_predicates import lit_sql, quote_identifier

from .suites import NO_ROWS_QUERY_PREFIX, Rule, Suite


@dataclass(frozen=True)
class Screened:
    """One table's screen: its rows, and the result keys (:attr:`Rule.result_key`) of the rules that passed."""

    rows: int
    passed: FrozenSet[Tuple[str, str]]


def _values(values) -> str:
    return ", ".join(lit_sql(v) for v in values)


def _none_of(columns) -> str:
    return " AND ".join(f"{c} IS NULL" for c in columns)


def _not_null(kw) -> str:
    return f"count_if({kw['column']} IS NULL)"


def _regex(kw) -> str:
    c = kw["column"]
    return f"count_if({c} IS NOT NULL AND NOT ({c} RLIKE {lit_sql(kw['regex'])}))"


def _between(kw) -> Optional[str]:
    c, low, high = kw["column"], kw.get("min_value"), kw.get("max_value")
    if low is None and high is None:
        return None
    bounds = [f"{c} >= {lit_sql(low)}"] * (low is not None) + [f"{c} <= {lit_sql(high)}"] * (high is not None)
    return f"count_if({c} IS NOT NULL AND NOT ({' AND '.join(bounds)}))"


def _in_set(kw) -> Optional[str]:
    c, values = kw["column"], kw.get("value_set")
    if not values:  # GX: no set is vacuously true, an empty one fails every value; either way GX decides
        return None
    return f"count_if({c} IS NOT NULL AND NOT ({c} IN ({_values(values)})))"


def _unique(kw) -> str:
    c = kw["column"]
    return f"count({c}) - count(DISTINCT {c})"


def _compound_unique(kw) -> Optional[str]:
    if kw.get("ignore_row_if", "all_values_are_missing") != "all_values_are_missing":
        return None
    cols = kw["column_list"]
    kept = f"NOT ({_none_of(cols)})"
    return f"count_if({kept}) - count(DISTINCT CASE WHEN {kept} THEN struct({', '.join(cols)}) END)"


def _pair_greater(kw) -> Optional[str]:
    if kw.get("ignore_row_if") != "either_value_is_missing":
        return None
    a, b = kw["column_A"], kw["column_B"]
    op = ">=" if kw.get("or_equal") else ">"
    return f"count_if({a} IS NOT NULL AND {b} IS NOT NULL AND NOT ({a} {op} {b}))"


def _row_count(kw) -> Optional[str]:
    low, high = kw.get("min_value"), kw.get("max_value")
    if low is None and high is None:
        return None
    bounds = [f"count(1) >= {lit_sql(low)}"] * (low is not None) + [f"count(1) <= {lit_sql(high)}"] * (
        high is not None)
    return f"CASE WHEN {' AND '.join(bounds)} THEN 0 ELSE 1 END"


def _no_rows(kw) -> Optional[str]:
    query = kw["unexpected_rows_query"]
    if not query.startswith(NO_ROWS_QUERY_PREFIX):
        return None  # a grouped query: GX runs it
    return f"count_if({query[len(NO_ROWS_QUERY_PREFIX):]})"


# expectation -> (the keywords it understands, which of them name columns, its violation count as SQL)
_SCREENS: Dict[str, Tuple[FrozenSet[str], Tuple[str, ...], Callable[[Mapping], Optional[str]]]] = {
    "ExpectColumnValuesToNotBeNull": (frozenset({"column"}), ("column",), _not_null),
    "ExpectColumnValuesToMatchRegex": (frozenset({"column", "regex"}), ("column",), _regex),
    "ExpectColumnValuesToBeBetween": (frozenset({"column", "min_value", "max_value"}), ("column",), _between),
    "ExpectColumnValuesToBeInSet": (frozenset({"column", "value_set"}), ("column",), _in_set),
    "ExpectColumnValuesToBeUnique": (frozenset({"column"}), ("column",), _unique),
    "ExpectCompoundColumnsToBeUnique": (frozenset({"column_list", "ignore_row_if"}), ("column_list",),
                                        _compound_unique),
    "ExpectColumnPairValuesAToBeGreaterThanB": (
        frozenset({"column_A", "column_B", "or_equal", "ignore_row_if"}), ("column_A", "column_B"), _pair_greater),
    "ExpectTableRowCountToBeBetween": (frozenset({"min_value", "max_value"}), (), _row_count),
    "UnexpectedRowsExpectation": (frozenset({"unexpected_rows_query", "description"}), (), _no_rows),
}


def violations_sql(rule: Rule) -> Optional[str]:
    """SQL aggregating a table to ``rule``'s violation count (0: the rule passes), or None when the screen cannot
    decide it (GX must: an unknown expectation or keyword, ``mostly``, a grouped query, a name needing quotes)."""
    known = _SCREENS.get(rule.expectation)
    if known is None or not set(rule.kwargs) <= known[0]:
        return None
    kwargs = dict(rule.kwargs)
    try:
        for key in known[1]:
            value = kwargs[key]
            kwargs[key] = ([quote_identifier(v) for v in value] if isinstance(value, (list, tuple))
                           else quote_identifier(value))
        return known[2](kwargs)
    except (KeyError, TypeError, ValueError):
        return None


def screen(tables: Mapping[str, object], suites: Mapping[str, Suite]) -> Dict[str, Screened]:
    """Every table's rows and the rules that passed, in one Spark job (a union of one-row aggregates).

    :param tables: table name -> DataFrame (the batch GX would validate)
    :param suites: table name -> its suite
    """
    parts = []
    screened_rules: Dict[str, list] = {}
    for name, df in tables.items():
        rules = [(rule, violations_sql(rule)) for rule in suites[name].rules]
        rules = [(rule, sql) for rule, sql in rules if sql is not None]
        screened_rules[name] = [rule for rule, _ in rules]
        counts = ", ".join(f"CAST({sql} AS BIGINT)" for _, sql in rules) or "CAST(NULL AS BIGINT)"
        parts.append(df.selectExpr(f"{lit_sql(name)} AS table_name", "count(1) AS row_count",
                                   f"array({counts}) AS violations"))
    if not parts:
        return {}
    out = {}
    for row in reduce(lambda a, b: a.unionByName(b), parts).collect():  # one small row per table
        name, counts = row["table_name"], row["violations"]
        rules = screened_rules[name]  # (a table without screened rules holds one null count)
        passed = frozenset(rule.result_key for rule, count in zip(rules, counts[:len(rules)], strict=True)
                           if count == 0)
        out[name] = Screened(int(row["row_count"]), passed)
    return out
