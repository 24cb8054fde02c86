"""Spark names a labelled thread's jobs and RDDs by the label (its own getCallSite is the oracle), also after
PySpark's collect() set and removed a call site of its own, and on the driver threads the thread starts."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from jobs.driver_threads import map_at_once
from jobs.engine.job_labels import current_label, label_jobs

pytestmark = pytest.mark.spark


def _call_site(spark) -> str:
    """What Spark names an RDD or job created on this thread now."""
    return spark.sparkContext._jsc.sc().getCallSite().shortForm()


def _on_a_thread_of_its_own(fn):
    """``fn()`` on a new Python thread, so a new JVM thread: the session's other tests keep unlabelled threads."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn).result()


def test_a_labelled_threads_jobs_carry_the_label_even_after_a_collect(spark):
    def body():
        before = _call_site(spark)
        spark.sparkContext.setLocalProperty("spark.scheduler.pool", "nightly")
        label_jobs(spark, "kafka-recon reconcile")
        labelled = _call_site(spark)
        rows = spark.range(5).selectExpr("sum(id) AS s").collect()  # sets its own call site, then removes it
        after_collect = _call_site(spark)
        spark.range(3).count()
        workers = map_at_once(lambda _: (_call_site(spark), current_label()), range(2), 2, name="kr-test")
        return before, labelled, rows[0]["s"], after_collect, workers, \
            spark.sparkContext.getLocalProperty("spark.scheduler.pool")

    before, labelled, total, after_collect, workers, pool = _on_a_thread_of_its_own(body)
    assert before != "kafka-recon reconcile"  # Spark's own name for the caller, before the label
    assert labelled == after_collect == "kafka-recon reconcile"
    assert total == 10
    assert workers == [("kafka-recon reconcile", "kafka-recon reconcile")] * 2
    assert pool == "nightly"  # the thread's other properties stay


def test_a_thread_nobody_labelled_keeps_sparks_own_names(spark):
    def body():
        label_jobs(spark, "kafka-recon quality")
        return _on_a_thread_of_its_own(lambda: (_call_site(spark), current_label()))

    site, label = _on_a_thread_of_its_own(body)
    assert site != "kafka-recon quality" and label is None
