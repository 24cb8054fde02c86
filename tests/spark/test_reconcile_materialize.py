"""frames.materialize: computed once, same rows, and usable in either execution profile (jobs.spark_session);
frames.conform: a frame fitted to a table spec without a query of its own."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from jobs.reconcile.frames import materialize
from jobs.spark_session import _SMALL_KEY, SMALL_CAPTURE_CONF

pytestmark = pytest.mark.spark

LARGE = {"spark.sql.adaptive.enabled": "true", "spark.sql.shuffle.partitions": "4"}


@pytest.fixture(params=["small", "large"])
def profile(request, spark, spark_conf_restored):
    """The session in the small-capture profile, or with AQE and several shuffle partitions (a large capture)."""
    for k, v in (SMALL_CAPTURE_CONF if request.param == "small" else LARGE).items():
        spark.conf.set(k, v)
    spark.conf.set(_SMALL_KEY, str(request.param == "small").lower())  # what fit_execution_to_size records
    return request.param


def test_an_empty_join_materializes_to_no_rows(spark, profile):
    """Under AQE a join with an empty side can come out with no partitions at all (the 400k bench's reconcile
    hit it)."""
    empty = spark.range(50).filter("id < 0").join(spark.range(60).withColumnRenamed("id", "x"), F.col("id") == F.col("x"))
    out = materialize(empty)
    assert out.count() == 0 and out.columns == ["id", "x"]


def test_rows_are_kept_and_a_cached_frame_built_on_them_can_be_read(spark, profile):
    """Same rows in either profile, and a frame built on the result can be cached and read. (The carried-over
    sort order that broke caching without AQE needs the whole reconcile to show: the gold merge and the demo
    nightly tests failed on it before materialize dropped that order.)"""
    df = spark.range(200).selectExpr("id % 7 AS k", "id AS v")
    ranked = df.join(df.groupBy("k").count(), "k").selectExpr("k", "v", "count AS n").orderBy("k", "v")
    out = materialize(ranked.select("v", "n"))
    expected = sorted((r["v"], r["n"]) for r in ranked.collect())
    assert sorted((r["v"], r["n"]) for r in out.collect()) == expected
    cached = out.withColumnRenamed("n", "m").persist()
    try:
        assert cached.filter("m > 0").count() == 200
    finally:
        cached.unpersist()


def _sql_executions_described(spark, description: str) -> int:
    """SQL executions the session recorded with ``description``, once every event queued before now is handled.
    (Not the store's count: a long test session reaches the number it retains, 1000, and the count stops.)"""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    store = spark._jsparkSession.sharedState().statusStore()
    recent = store.executionsList(max(0, store.executionsCount() - 50), 50)
    return sum(1 for i in range(recent.size()) if recent.apply(i).description() == description)


def test_materializing_runs_the_checkpoint_alone(spark, profile):
    """One SQL execution, the checkpoint's: reading how many partitions it has plans no query (turning the frame
    into an RDD of rows did: a deserializing execution per call, 34 in a devsample reconcile). A large capture's
    frame keeps its partitions; a small capture's is one."""
    df = spark.range(0, 90, 1, 3).selectExpr("id", "id % 5 AS k")  # three partitions, no shuffle
    label = f"materialize-{profile}-{id(df)}"
    spark.sparkContext.setJobDescription(label)
    try:
        out = materialize(df)
    finally:
        spark.sparkContext.setJobDescription(None)
    assert _sql_executions_described(spark, label) == 1
    assert out.rdd.getNumPartitions() == (1 if profile == "small" else 3)
    assert sorted(r["id"] for r in out.collect()) == list(range(90))


def test_joins_of_materialized_frames_shuffle_nothing_in_the_small_profile(spark, profile):
    """A small capture's materialized frame is one partition that Spark keeps no size estimate for, so joins and
    aggregates over such frames plan no exchange, each of which was a stage (a warm stray-dirs reconcile: 273 ->
    99 stages). The left frame comes from a five-way join, whose estimate (the product of its inputs', 8000^5
    bytes) is beyond any ``spark.sql.maxSinglePartitionBytes``: kept, it would shuffle. Same rows either way."""
    five = spark.range(1000).where("id < 6")
    for i in range(4):
        five = five.join(spark.range(1000).where("id < 6").withColumnRenamed("id", f"j{i}"), F.col("id") == F.col(f"j{i}"))
    left = materialize(five.selectExpr("id AS k", "j3 AS v"))
    right = materialize(spark.range(0, 12, 1, 3).selectExpr("id % 6 AS k", "id AS w"))
    out = left.join(right, "k").groupBy("v").agg(F.sum("w").alias("s"), F.count("*").alias("n"))
    plan = out._jdf.queryExecution().executedPlan().toString()
    assert ("Exchange" not in plan) == (profile == "small"), plan
    assert sorted((r["v"], r["s"], r["n"]) for r in out.collect()) == [(k, 2 * k + 6, 2) for k in range(6)]


def test_the_partition_count_of_a_frame_that_is_no_checkpoint_comes_from_the_frame(spark):
    """The fallback of ``jobs.engine.jvm.partitions`` for a plan without an RDD of its own (a runtime whose checkpoint plans
    differ): the same count the frame's RDD gives."""
    from jobs.engine.jvm import partitions

    df = spark.range(0, 40, 1, 4)
    assert partitions(df) == 4 == df.rdd.getNumPartitions()


def test_conforming_a_frame_to_a_spec_records_no_sql_execution(spark):
    """The spec's columns in order and typed, absent ones null, others dropped; and no SQL execution of its own
    (through ``spark.sql(..., frame=)`` every call registered a temporary view: a CreateViewCommand execution)."""
    from jobs.reconcile.frames import conform
    from jobs.tables.registry import spec

    target = spec("silver_brokers")
    df = spark.range(3).selectExpr("id + 100 AS broker_id", "'x' AS not_in_the_spec", "CONCAT('cap-', id) AS capture_id")
    label = f"conform-{id(df)}"
    spark.sparkContext.setJobDescription(label)
    try:
        out = conform(df, target)
    finally:
        spark.sparkContext.setJobDescription(None)
    assert _sql_executions_described(spark, label) == 0
    assert [(f.name, f.dataType) for f in out.schema] == [(f.name, f.dataType) for f in target.spark_schema()]
    rows = [r.asDict() for r in out.orderBy("broker_id").collect()]
    assert [(r["capture_id"], r["broker_id"]) for r in rows] == [("cap-0", 100), ("cap-1", 101), ("cap-2", 102)]
    assert {k for r in rows for k, v in r.items() if v is not None} == {"capture_id", "broker_id"}
