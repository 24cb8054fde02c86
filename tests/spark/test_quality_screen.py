"""The quality screen (jobs/quality/screen.py) against Great Expectations itself: on a clean frame and on frames
each built to break one rule (and the null cases GX skips), the screen passes exactly the rules GX passes."""
from __future__ import annotations

import pytest

from jobs.quality.flatten import result_key
from jobs.quality.runner import _expectation
from jobs.quality.screen import screen
from jobs.quality.suites import KAFKA_UUID_REGEX, NO_ROWS_QUERY_PREFIX, Rule, Suite

pytestmark = pytest.mark.spark

SCHEMA = "s string, n bigint, a string, b bigint, lo bigint, hi bigint, c string"

RULES = (
    Rule("ExpectColumnValuesToNotBeNull", {"column": "a"}, ("a",)),
    Rule("ExpectColumnValuesToMatchRegex", {"column": "s", "regex": KAFKA_UUID_REGEX}, ("s",)),
    Rule("ExpectColumnValuesToBeBetween", {"column": "n", "min_value": 0}, ("n",)),
    Rule("ExpectColumnValuesToBeBetween", {"column": "b", "min_value": -1, "max_value": 9}, ("b",), key="b:range"),
    Rule("ExpectColumnValuesToBeInSet", {"column": "a", "value_set": ["ok", "quarantined", "it's"]}, ("a",)),
    Rule("ExpectColumnValuesToBeUnique", {"column": "s"}, ("s",)),
    Rule("ExpectCompoundColumnsToBeUnique", {"column_list": ["c", "b"]}, ("c", "b")),
    Rule("ExpectColumnPairValuesAToBeGreaterThanB",
         {"column_A": "hi", "column_B": "lo", "or_equal": True, "ignore_row_if": "either_value_is_missing"},
         ("lo", "hi")),
    Rule("ExpectTableRowCountToBeBetween", {"min_value": 3}, (), key="table:row_count"),
    Rule("UnexpectedRowsExpectation",
         {"unexpected_rows_query": NO_ROWS_QUERY_PREFIX + "a = 'quarantined' AND b IS NULL", "description": "x"},
         ("a", "b"), key="a:quarantined_has_b"),
)

ID1, ID2, ID3 = "A4HaLNH_zheTrtxgg-IBNA", "xWt6cg-LDx4r6BAz2rYsCg", "7G5NPAb1tNLhoqkWDdmzGg"
# passes every rule, with the nulls each rule skips: s null twice (uniqueness, regex), (c, b) = (null, null)
# twice (compound uniqueness), lo or hi missing where the other is smaller (pair), n and b null (between)
CLEAN = [
    (ID1, 0, "ok", 1, 1, 1, "x"),
    (ID2, 5, "quarantined", 2, 3, None, "y"),
    (ID3, None, "it's", None, None, 0, "p"),
    (None, 7, "ok", None, 5, 9, None),
    (None, 1, "ok", None, -4, -4, None),
]
BREAKS = {  # what the row added to CLEAN breaks -> the row
    "a": ("IvNp4wqVSHaGuPEWmMyRnA", 0, None, 3, 0, 0, None),
    "s": ("not-a-kafka-uuid", 0, "ok", 4, 0, 0, None),
    "n": ("BvNp4wqVSHaGuPEWmMyRnA", -1, "ok", 5, 0, 0, None),
    "b:range": ("CvNp4wqVSHaGuPEWmMyRnA", 0, "ok", 10, 0, 0, None),
    "a:set": ("DvNp4wqVSHaGuPEWmMyRnA", 0, "unknown", 6, 0, 0, None),
    "s:unique": (ID1, 0, "ok", 7, 0, 0, None),
    "c,b": ("EvNp4wqVSHaGuPEWmMyRnA", 0, "ok", 1, 0, 0, "x"),  # (x, 1) twice
    "c,b:partial": ("FvNp4wqVSHaGuPEWmMyRnA", 0, "ok", None, 0, 0, "p"),  # (p, null) twice: equal for GX too
    "lo,hi": ("GvNp4wqVSHaGuPEWmMyRnA", 0, "ok", 8, 2, 1, None),
    "a:quarantined_has_b": ("HvNp4wqVSHaGuPEWmMyRnA", 0, "quarantined", None, 0, 0, None),
}


def gx_verdicts(spark, df, rules, name):
    """Each rule's success as Great Expectations decides it on ``df`` (its detailed format, no screen)."""
    import great_expectations as gx

    from jobs.quality.gx_context import offline_context

    context = offline_context(None)
    source = context.data_sources.add_spark(name=f"oracle_{name}")
    source._spark = spark
    batch = source.add_dataframe_asset(name=name).add_batch_definition_whole_dataframe("whole")
    suite = context.suites.add(gx.ExpectationSuite(name=name))
    for rule in rules:
        suite.add_expectation(_expectation(rule))
    validation = context.validation_definitions.add(gx.ValidationDefinition(name=name, data=batch, suite=suite))
    result = validation.run(batch_parameters={"dataframe": df}, result_format="SUMMARY")
    assert not any(r.exception_info.get("raised_exception") for r in result.results)
    return {result_key(r): r.success for r in result.results}


def test_the_screen_passes_exactly_the_rules_gx_passes(spark):
    frames = {"clean": CLEAN, **{f"breaks_{i}": CLEAN + [row] for i, row in enumerate(BREAKS.values())},
              "two_rows": CLEAN[:2]}
    suites = {name: Suite(name=name, table=name, rules=RULES) for name in frames}
    dfs = {name: spark.createDataFrame(rows, SCHEMA) for name, rows in frames.items()}
    screened = screen(dfs, suites)  # every frame in one Spark job
    failed_somewhere = set()
    for name, df in dfs.items():
        gx_passed = {key for key, ok in gx_verdicts(spark, df, RULES, name).items() if ok}
        assert screened[name].passed == gx_passed, name
        assert screened[name].rows == len(frames[name])
        failed_somewhere |= {rule.result_key for rule in RULES} - gx_passed
    # the frames fail every rule somewhere (the oracle is not vacuous), the clean one none
    assert failed_somewhere == {rule.result_key for rule in RULES}
    assert screened["clean"].passed == {rule.result_key for rule in RULES}
