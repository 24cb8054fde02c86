"""Small captures run with the small-capture profile (interpreted expressions, one shuffle partition, no AQE, no
broadcast joins), large ones compiled with the session's own settings (jobs.spark_session.fit_execution_to_size):
the switch reaches the session, the user's own settings win, and ingest applies it once it has counted the rows."""
from __future__ import annotations

import pytest

from jobs.spark_session import (
    _SESSION_VALUE,
    BROADCAST_KEY,
    CODEGEN_MODE_KEY,
    SMALL_CAPTURE_CONF,
    fit_execution_to_size,
    session_broadcasts_small_sides,
)
from tests.settings_from import settings_from

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("spark_conf_restored")]


def _limit(rows: int, **extra):
    return settings_from(spark={"interpreted_below_rows": rows, **extra}).spark


PROFILE_KEYS = [k for k in SMALL_CAPTURE_CONF if k != CODEGEN_MODE_KEY]


def test_a_small_capture_gets_the_whole_profile_and_a_large_one_the_sessions_own_settings(spark):
    for k in PROFILE_KEYS:  # a session of its own settings, none switched yet (a notebook's cluster, say)
        spark.conf.unset(_SESSION_VALUE + k)
    own = {"spark.sql.adaptive.enabled": "true", "spark.sql.shuffle.partitions": "5",
           "spark.sql.autoBroadcastJoinThreshold": "1234567"}
    for k, v in own.items():
        spark.conf.set(k, v)
    assert fit_execution_to_size(spark, _limit(500), 10) == "interpreted"
    assert {k: spark.conf.get(k) for k in SMALL_CAPTURE_CONF} == SMALL_CAPTURE_CONF
    assert fit_execution_to_size(spark, _limit(500), 10) == "interpreted"  # twice: the session's values kept once
    assert fit_execution_to_size(spark, _limit(500), 10**6) == "compiled"
    # the session's own values, but Spark picks no broadcast join by itself (LARGE_CAPTURE_CONF)
    assert {k: spark.conf.get(k) for k in own} == {**own, "spark.sql.autoBroadcastJoinThreshold": "-1"}
    assert spark.conf.get(CODEGEN_MODE_KEY) == "FALLBACK"
    # a key the user set in spark.extra_conf is theirs in either mode
    mine = _limit(500, extra_conf={"spark.sql.shuffle.partitions": "3"})
    spark.conf.set("spark.sql.shuffle.partitions", "3")
    assert fit_execution_to_size(spark, mine, 10) == "interpreted"
    assert spark.conf.get("spark.sql.shuffle.partitions") == "3" and spark.conf.get("spark.sql.adaptive.enabled") == "false"


def test_a_profile_key_the_session_never_set_is_unset_again_for_a_large_capture(spark, monkeypatch, caplog):
    """An optional setting without a value in the session (``spark.conf.get`` gives None): the small profile sets
    it, a large capture after it gets the session's state back, and neither switch is reported as refused."""
    key = "spark.sql.optimizer.excludedRules"
    rule = "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation"
    spark.conf.unset(key)
    spark.conf.unset(_SESSION_VALUE + key)
    monkeypatch.setitem(SMALL_CAPTURE_CONF, key, rule)
    try:
        with caplog.at_level("WARNING", logger="kafka-recon"):
            assert fit_execution_to_size(spark, _limit(500), 10) == "interpreted"
            assert spark.conf.get(key) == rule
            assert fit_execution_to_size(spark, _limit(500), 10**6) == "compiled"
        assert spark.conf.get(key, None) is None
        assert not [r for r in caplog.records if "execution_settings_unchanged" in r.getMessage()]
    finally:
        spark.conf.unset(key)
        spark.conf.unset(_SESSION_VALUE + key)


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


def test_tables_written_as_files_leave_the_ingest_writes_to_the_rows_left_then_the_run_fits_every_row(
        spark, tmp_path, devsample_dir):
    """The tasks write most of devsample's rows as files (the direct routes, forced at this size): the rows left
    for Spark are fewer than the limit (every row), so they are written interpreted; then the run, which reads
    every row, goes compiled."""
    from jobs.ingest import run_ingest
    from jobs.tables.delta_store import DeltaStore

    probe = settings_from()
    counted = run_ingest(spark, probe.ingest, None, [str(devsample_dir)], "mode-probe", "run-0", execution=probe.spark)
    total = sum(counted.rows_emitted.values())
    counted.release()

    s = settings_from(f"storage.root={tmp_path / 'tables'}", "storage.backend=embedded",
                      "ingest.direct_first_pass_min_bytes=0", f"spark.interpreted_below_rows={total}")
    store = DeltaStore.from_settings(spark, s.storage)
    modes = {}
    write = store.replace_slice

    def noting_mode(name, *args, **kwargs):
        modes[name] = spark.conf.get(CODEGEN_MODE_KEY)
        return write(name, *args, **kwargs)

    store.replace_slice = noting_mode
    spark.conf.set(CODEGEN_MODE_KEY, "FALLBACK")
    result = run_ingest(spark, s.ingest, store, [str(devsample_dir)], "mode-files", "run-1", execution=s.spark)
    try:
        assert set(modes.values()) == {"NO_CODEGEN"} and "bronze_metadata_records" in modes
        assert result.execution_mode == "compiled" and spark.conf.get(CODEGEN_MODE_KEY) == "FALLBACK"
    finally:
        result.release()


def test_the_profile_chosen_sets_how_many_reconcile_actions_run_at_once(spark):
    """run_reconcile's default comes from the session: what the last fit chose (the job, notebooks and tests alike)."""
    from jobs.spark_session import session_actions_at_once, session_small_capture

    three = _limit(500, small_capture_actions_at_once=3)
    fit_execution_to_size(spark, three, 10)
    assert session_actions_at_once(spark) == 3 and session_small_capture(spark)
    fit_execution_to_size(spark, three, 10**6)
    assert session_actions_at_once(spark) == 1 and not session_small_capture(spark)
    fit_execution_to_size(spark, _limit(500, extra_conf={CODEGEN_MODE_KEY: "NO_CODEGEN"}), 10)  # "configured"
    assert session_actions_at_once(spark) == 1 and session_small_capture(spark)


def _joins(df) -> str:
    """The join operators of ``df``'s executed plan, run to its end (under AQE: the final plan)."""
    df.collect()
    plan = df._jdf.queryExecution().executedPlan().toString()
    return " ".join(sorted({op for op in ("BroadcastHashJoin", "SortMergeJoin") if op in plan}))


def _large_and_small(spark):
    """A 2,000-row side and a 3-row side sharing the join key ``k``."""
    big = spark.range(0, 2000, 1, 2).selectExpr("id % 3 AS k", "id")
    return big, spark.createDataFrame([(0, "a"), (1, "b"), (2, "c")], "k long, name string")


def test_a_large_capture_broadcasts_only_the_sides_it_knows_are_small(spark):
    """Spark's own picks (a plan's size estimate, or AQE's runtime size: a 3-row side) stay sort-merge joins;
    ``small_side`` broadcasts. Before the large profile switched Spark's picks off, AQE broadcast the 3 rows."""
    from jobs.reconcile.frames import small_side

    # a session of Spark's own broadcast threshold and AQE (the test session's own values are the small profile's)
    spark.conf.unset(_SESSION_VALUE + BROADCAST_KEY)
    spark.conf.set(BROADCAST_KEY, "10485760")
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    assert fit_execution_to_size(spark, _limit(500), 10**6) == "compiled"
    assert spark.conf.get(BROADCAST_KEY) == "-1"
    big, small = _large_and_small(spark)
    assert session_broadcasts_small_sides(spark)
    assert _joins(big.join(small, "k")) == "SortMergeJoin"
    assert _joins(big.join(small_side(small), "k")) == "BroadcastHashJoin"


def test_the_users_broadcast_setting_wins_in_either_direction(spark):
    from jobs.reconcile.frames import small_side

    big, small = _large_and_small(spark)
    spark.conf.set(BROADCAST_KEY, "10485760")
    assert fit_execution_to_size(spark, _limit(500, extra_conf={BROADCAST_KEY: "10485760"}), 10**6) == "compiled"
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    assert spark.conf.get(BROADCAST_KEY) == "10485760" and session_broadcasts_small_sides(spark)
    assert _joins(big.join(small, "k")) == "BroadcastHashJoin"  # Spark's own pick, as the user asked
    spark.conf.set(BROADCAST_KEY, "-1")
    assert fit_execution_to_size(spark, _limit(500, extra_conf={BROADCAST_KEY: "-1"}), 10**6) == "compiled"
    assert not session_broadcasts_small_sides(spark)
    assert _joins(big.join(small_side(small), "k")) == "SortMergeJoin"


def test_a_small_capture_broadcasts_nothing(spark):
    from jobs.reconcile.frames import small_side

    assert fit_execution_to_size(spark, _limit(500), 10) == "interpreted"
    assert not session_broadcasts_small_sides(spark)
    small = spark.createDataFrame([(0, "a")], "k long, name string")
    assert "BroadcastHashJoin" not in _joins(spark.range(0, 10).selectExpr("id AS k").join(small_side(small), "k"))
