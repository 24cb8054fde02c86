"""Every call into a classic session's JVM side (py4j, ``_jvm``, ``_jdf``, ``_jsparkSession``, the SparkContext),
each with the fallback a session without one takes.

Why one module: a Spark Connect session (Databricks serverless and standard-access compute, ``SPARK_REMOTE``,
``pyspark-client``) has no JVM on the driver's side, and Spark's internal classes move between releases (3.5's
``pyspark.sql.column.Column`` is 4.x's ``pyspark.sql.classic.column.Column``). The job's results never depend on
anything here: each function is tuning or a cheaper route to the same rows, and returns the plain public-API
answer (or does nothing) where the JVM route is not there.
"""
from __future__ import annotations

import os
from typing import Any, Iterable, Optional


def active_session():
    """The active session of this thread (classic or Connect), or None."""
    from pyspark.sql import SparkSession

    try:
        active = SparkSession.getActiveSession()
    except Exception:  # noqa: BLE001 - a client without a classic side: ask Connect
        active = None
    if active is not None:
        return active
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        return ConnectSession.getActiveSession()
    except Exception:  # noqa: BLE001 - Connect's dependencies (grpc) not installed
        return None


def is_classic(spark) -> bool:
    """Whether ``spark`` is a classic session with a py4j JVM view on this side (not Spark Connect)."""
    return getattr(spark, "_jsparkSession", None) is not None and getattr(spark, "_jvm", None) is not None


try:
    from pyspark.sql.utils import is_remote as _is_remote
except Exception:  # noqa: BLE001 - a PySpark without Connect
    def _is_remote() -> bool:
        return False
try:
    from pyspark import SparkContext as _SparkContext
except Exception:  # noqa: BLE001 - pyspark-client ships no py4j
    _SparkContext = None


def connect_mode() -> bool:
    """Whether PySpark runs this process as a Spark Connect client (``SPARK_CONNECT_MODE_ENABLED``, set when a
    Connect session is built; ``pyspark-client``): its ``functions`` then build Connect's Columns. A local Connect
    server (``SPARK_REMOTE=local``) runs a classic SparkContext in this same process, for the server's use."""
    return bool(_is_remote())


def classic_context():
    """This process's classic SparkContext for the job's own use, or None (none started, or a Connect client)."""
    if _SparkContext is None or _is_remote():
        return None
    return _SparkContext._active_spark_context


def master_of(spark) -> Optional[str]:
    """The master a session runs on: the SparkContext's for a classic one, the remote's URL for Connect."""
    if is_classic(spark):
        try:
            return spark.sparkContext.master
        except Exception:  # noqa: BLE001
            return None
    try:
        return spark.conf.get("spark.master", None) or os.environ.get("SPARK_REMOTE") or "connect"
    except Exception:  # noqa: BLE001
        return os.environ.get("SPARK_REMOTE") or "connect"


def default_parallelism(spark) -> int:
    """How many tasks the session runs at once: the SparkContext's default parallelism; on Connect
    ``spark.default.parallelism`` if the server exposes it, else the driver's cores (at least 2)."""
    if is_classic(spark):
        return max(1, int(spark.sparkContext.defaultParallelism))
    try:
        value = spark.conf.get("spark.default.parallelism", None)
        if value:
            return max(1, int(value))
    except Exception:  # noqa: BLE001
        pass
    return max(2, os.cpu_count() or 2)


def set_log_level(spark, level: str) -> None:
    """The JVM's log level, for a session this job started (classic only)."""
    if is_classic(spark):
        spark.sparkContext.setLogLevel(level)


def quiet_loggers(spark, names: Iterable[str]) -> None:
    """Raise Log4j loggers ``names`` to ERROR (classic sessions with Log4j 2 only; otherwise nothing changes)."""
    if not is_classic(spark):
        return
    try:
        jvm = spark.sparkContext._jvm
        for name in names:
            jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
                name, jvm.org.apache.logging.log4j.Level.ERROR)
    except Exception:  # noqa: BLE001 - another logging backend: the warnings stay
        pass


def classic_column_class():
    """The classic Column class whose ``_jc`` DataFrame methods read (4.x: ``pyspark.sql.classic.column``; 3.5:
    ``pyspark.sql.column``, which is the classic one there)."""
    try:
        from pyspark.sql.classic.column import Column
    except ImportError:
        from pyspark.sql.column import Column
    return Column


def classic_dataframe_class():
    """The classic DataFrame class (4.x: ``pyspark.sql.classic.dataframe``; 3.5: ``pyspark.sql.dataframe``)."""
    try:
        from pyspark.sql.classic.dataframe import DataFrame
    except ImportError:
        from pyspark.sql.dataframe import DataFrame
    return DataFrame


def sql_expr_parser():
    """``(gateway view, functions.expr)`` of the active classic context, or None: parses SQL text into a JVM
    Column in one call."""
    sc = classic_context()
    if sc is None:
        return None
    return sc._jvm, getattr(sc._jvm, "org.apache.spark.sql.functions").expr


def clone_session(spark):
    """A classic session sharing ``spark``'s context and cache with a copy of its SQL settings, or None (Connect,
    or a runtime without ``cloneSession``)."""
    if not is_classic(spark):
        return None
    from pyspark.sql import SparkSession

    try:
        return SparkSession(spark.sparkContext, spark._jsparkSession.cloneSession())
    except Exception:  # noqa: BLE001
        return None


def rebind(df, session):
    """``df``'s plan as a DataFrame of ``session`` (a clone from :func:`clone_session`)."""
    if df.sparkSession is session:
        return df
    jvm_view = session._jvm
    # 4.x keeps the classic Dataset in ...sql.classic; 3.5 in ...sql (py4j names a missing class as a package, so
    # the release decides, not a look-up)
    name = "org.apache.spark.sql.Dataset" if session.version.startswith("3.") else "org.apache.spark.sql.classic.Dataset"
    dataset = getattr(jvm_view, name)
    return classic_dataframe_class()(dataset.ofRows(session._jsparkSession, df._jdf.logicalPlan()), session)


def checkpoint_rdd(done):
    """The JVM RDD of internal rows a checkpointed classic frame's plan holds (a ``LogicalRDD``), or None."""
    if not is_classic(done.sparkSession):
        return None
    try:
        return done._jdf.queryExecution().logical().rdd()
    except Exception:  # noqa: BLE001 - another plan shape
        return None


def without_size_estimate(done):
    """The checkpointed frame's rows re-wrapped so Spark has no size estimate for them, or ``done`` unchanged."""
    rdd = checkpoint_rdd(done)
    if rdd is None:
        return done
    try:
        jdf = done.sparkSession._jsparkSession.internalCreateDataFrame(rdd, done._jdf.schema(), False)
    except Exception:  # noqa: BLE001
        return done
    return classic_dataframe_class()(jdf, done.sparkSession)


def partitions(done) -> Optional[int]:
    """Partitions of a checkpointed classic frame, read off its plan's RDD (no query); None where not classic."""
    rdd = checkpoint_rdd(done)
    if rdd is not None:
        return rdd.getNumPartitions()
    if is_classic(done.sparkSession):
        return done._jdf.rdd().getNumPartitions()
    return None


def optimized_is_empty_local(df) -> bool:
    """Whether a classic frame's optimized plan is an empty local relation (planning only); False elsewhere."""
    if not is_classic(df.sparkSession):
        return False
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        return plan.getClass().getSimpleName() == "LocalRelation" and plan.data().isEmpty()
    except Exception:  # noqa: BLE001 - another runtime's plan classes
        return False


def parallelized_rows(spark, tasks: list, ddl: str) -> Any:
    """A frame of every task's rows, one partition per task (classic: an RDD; Connect: a local relation whose
    rows carry their task's index, repartitioned by it)."""
    if is_classic(spark):
        rdd = spark.sparkContext.parallelize(tasks, max(1, len(tasks))).flatMap(lambda task: task)
        return spark.createDataFrame(rdd, ddl)
    rows = [row for task in tasks for row in task]
    return spark.createDataFrame(rows, ddl).repartition(max(1, len(tasks)))


def java_call_site_properties(spark):
    """``(properties class, the thread's JVM SparkContext)`` for naming a thread's jobs, or None (Connect)."""
    if not is_classic(spark):
        return None
    try:
        context = spark.sparkContext
        return getattr(context._jvm, "java.util.Properties"), context._jsc.sc()
    except Exception:  # noqa: BLE001
        return None


def jvm_view(spark):
    """The classic session's py4j JVM view, or None."""
    return spark.sparkContext._jvm if is_classic(spark) else None


def class_loads(spark, name: str) -> Optional[bool]:
    """Whether the JVM class ``name`` loads in a classic session's driver; None where the session is not classic."""
    view = jvm_view(spark)
    if view is None:
        return None
    try:
        loader = view.java.lang.Thread.currentThread().getContextClassLoader()
        view.java.lang.Class.forName(name, False, loader)
        return True
    except Exception:  # noqa: BLE001 - ClassNotFoundException arrives as a py4j error
        return False


def struct_from_ddl(ddl: str):
    """A StructType from DDL text (``a int, b string``): ``StructType.fromDDL`` (Spark 4; parsed in Python), else
    the classic JVM's parser (Spark 3.5 has no Python one)."""
    from pyspark.sql.types import StructType

    if hasattr(StructType, "fromDDL"):
        return StructType.fromDDL(ddl)
    from pyspark.sql.types import _parse_datatype_string

    parsed = _parse_datatype_string(ddl)
    return parsed if isinstance(parsed, StructType) else StructType.fromJson(parsed.jsonValue())
