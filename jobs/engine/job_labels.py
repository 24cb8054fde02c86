"""Spark jobs named for the stage that runs them, once per driver thread, instead of Spark naming every RDD's caller.

Why: for each RDD and job it creates, Spark names the code that called it (the "call site") by walking the JVM
thread's stack and matching every frame against its own packages, unless the thread's local properties name it
already. For a PySpark caller that walk ends in py4j's reflection ("count at NativeMethodAccessorImpl.java:0"), yet
it was ~7% of the CPU samples of a small capture's planning threads (JFR, docs/benchmarks.md session 25) and ~5
ms of a small query warm (a devsample nightly: within noise). The stage's name also says more in Spark's UI and
event log.

The name is kept as the *defaults* of the thread's local properties: PySpark's ``collect()`` sets its own call site
for the job it runs and then removes that key, which leaves the default in place. A new driver thread starts with
no properties of its own: :func:`for_new_threads` gives what ``ThreadPoolExecutor(initializer=...)`` runs there.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

CALL_SITE_KEYS = ("callSite.short", "callSite.long")  # org.apache.spark.util.CallSite's SHORT_FORM, LONG_FORM
_current = threading.local()


def stage_label(stage: str) -> str:
    """The name a nightly stage's Spark jobs carry: ``kafka-recon reconcile``."""
    return f"kafka-recon {stage}"


def label_jobs(spark: Any, label: str) -> None:
    """Name this thread's Spark jobs, SQL executions and RDDs ``label`` from now on (a no-op where the session has
    no JVM of its own, e.g. Spark Connect)."""
    from .jvm import java_call_site_properties

    found = java_call_site_properties(spark)
    if found is None:  # no classic JVM context: Spark names its call sites as before
        return
    properties, jsc = found
    defaults = properties()
    for key in CALL_SITE_KEYS:
        defaults.setProperty(key, label)
    labelled = properties(defaults)
    current = jsc.getLocalProperties()
    if current is not None:
        labelled.putAll(current)  # the thread's other properties (job group, pool, ...) stay as they were
    for key in CALL_SITE_KEYS:
        labelled.remove(key)
    jsc.setLocalProperties(labelled)
    _current.spark, _current.label = spark, label


def current_label() -> Optional[str]:
    """The label this thread's jobs carry (None: Spark names them)."""
    return getattr(_current, "label", None)


def for_new_threads() -> Optional[Callable[[], None]]:
    """What labels a new driver thread as this one (None when this thread has no label)."""
    spark, label = getattr(_current, "spark", None), current_label()
    if spark is None or label is None:
        return None
    return lambda: label_jobs(spark, label)
