"""Small captures run with interpreted expressions, large ones compiled (jobs.spark_session.fit_execution_to_size):
the switch reaches the session, the user's own setting wins, and ingest applies it once it has counted the rows."""
from __future__ import annotations

import pytest

from jobs.spark_session import CODEGEN_MODE_KEY, fit_execution_to_size
from tests.settings_from import settings_from

pytestmark = pytest.mark.spark


def _limit(rows: int, **extra):
    return settings_from(spark={"interpreted_below_rows": rows, **extra}).spark


@pytest.fixture(autouse=True)
def _restore_mode(spark):
    before = spark.conf.get(CODEGEN_MODE_KEY)
    yield
    spark.conf.set(CODEGEN_MODE_KEY, before)


def test_the_row_count_decides_the_mode(spark):
    assert fit_execution_to_size(spark, _limit(500), 499) == "interpreted"
    assert spark.conf.get(CODEGEN_MODE_KEY) == "NO_CODEGEN"
    assert fit_execution_to_size(spark, _limit(500), 500) == "compiled"
    assert spark.conf.get(CODEGEN_MODE_KEY) == "FALLBACK"
    assert fit_execution_to_size(spark, _limit(0), 1) == "compiled"
    assert spark.conf.get(CODEGEN_MODE_KEY) == "FALLBACK"


def test_a_codegen_setting_the_user_gave_is_left_alone(spark):
    spark.conf.set(CODEGEN_MODE_KEY, "CODEGEN_ONLY")
    assert fit_execution_to_size(spark, _limit(10**9, extra_conf={CODEGEN_MODE_KEY: "CODEGEN_ONLY"}), 1) == "configured"
    assert spark.conf.get(CODEGEN_MODE_KEY) == "CODEGEN_ONLY"


def test_ingest_of_a_small_real_capture_switches_to_interpreted(spark, devsample_dir):
    from jobs.ingest import run_ingest

    s = settings_from()
    spark.conf.set(CODEGEN_MODE_KEY, "FALLBACK")
    result = run_ingest(spark, s.ingest, None, [str(devsample_dir)], "devsample-mode", "run-1", execution=s.spark)
    try:
        assert 0 < sum(result.rows_emitted.values()) < s.spark.interpreted_below_rows
        assert result.execution_mode == "interpreted" and spark.conf.get(CODEGEN_MODE_KEY) == "NO_CODEGEN"
    finally:
        result.release()
