"""The one Spark session factory.

Reuses an existing session (spark-submit, Databricks, notebooks) and only adds local settings when it
creates one itself: local[*], UTC, Arrow on, quiet logs, a driver heap that suits a 2-core / 24 GiB box,
few shuffle partitions, and PYSPARK_PYTHON pointing at this interpreter so Python workers use the venv.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence

from .settings import Settings, SparkSettings


class JavaMissingError(RuntimeError):
    """Java 17+ is needed to run Spark locally."""


def check_java(min_major: int = 17) -> str:
    """Return ``java -version`` text, or raise with what to install."""
    from .engine.class_archive import java_binary

    java = java_binary()
    hint = (f"kafka-recon runs Spark locally and needs Java {min_major}: install it "
            f"(Debian/Ubuntu: `apt-get install openjdk-{min_major}-jre-headless`) or set JAVA_HOME.")
    if java is None:
        raise JavaMissingError(f"No java found on PATH or JAVA_HOME. {hint}")
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    text = (out.stderr or out.stdout).strip()
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    major = int(match.group(1)) if match else 0
    if major == 1 and match and match.group(2):
        major = int(match.group(2))
    if major < min_major:
        raise JavaMissingError(f"Found Java {major or '?'} at {java} ({text.splitlines()[0] if text else ''}). {hint}")
    return text


@dataclass(frozen=True)
class MasterChoice:
    """Where the job's session runs and who said so (logged at start-up).

    ``kind``: ``remote`` (a Spark Connect session at ``url``), ``given`` (the JVM is already running with its own
    master: spark-submit, Databricks, a ``pyspark`` shell; ``url`` is what it reports), ``configured`` (Spark's own
    configuration names one the JVM will start with: ``MASTER``, ``PYSPARK_SUBMIT_ARGS --master``, spark-defaults.conf)
    or ``master`` (this job sets ``url`` on the session it starts)."""

    kind: str
    url: Optional[str]
    source: str

    @property
    def local(self) -> bool:
        """A local master (``local[...]``, ``local-cluster[...]``): executors run this interpreter on this machine."""
        return self.kind in ("master", "configured", "given") and (self.url or "").startswith("local")


def resolve_master(settings: SparkSettings, master: Optional[str] = None,
                   environ: Optional[Mapping[str, str]] = None) -> MasterChoice:
    """Which master the job's session uses, first match wins:

    1. ``master`` (a caller's argument), then ``KAFKA_RECON_SPARK_MASTER`` (tests and benchmarks);
    2. Spark Connect: ``SPARK_REMOTE``, else ``spark.remote`` in conf (Databricks serverless, standard access,
       ``pyspark-client``);
    3. a JVM that is already running (spark-submit starts the driver's Python with ``PYSPARK_GATEWAY_PORT``; so do
       Databricks and ``pyspark``): the master it was given;
    4. what Spark's own launcher will use: ``PYSPARK_SUBMIT_ARGS --master``, ``MASTER``, ``spark.master`` in
       ``$SPARK_CONF_DIR/spark-defaults.conf``;
    5. ``spark.master`` in conf (``local[*]`` by default).

    Only in case 5 (and 1) does the job call ``builder.master``: it never overrides a master Spark was given."""
    env = os.environ if environ is None else environ
    if master:
        return MasterChoice("master", master, "argument")
    if env.get("KAFKA_RECON_SPARK_MASTER"):
        return MasterChoice("master", env["KAFKA_RECON_SPARK_MASTER"], "KAFKA_RECON_SPARK_MASTER")
    if env.get("SPARK_REMOTE"):
        return MasterChoice("remote", env["SPARK_REMOTE"], "SPARK_REMOTE")
    if settings.remote:
        return MasterChoice("remote", settings.remote, "spark.remote")
    if env.get("PYSPARK_GATEWAY_PORT"):
        return MasterChoice("given", None, "running JVM (spark-submit)")
    submit_master = _submit_args_master(env.get("PYSPARK_SUBMIT_ARGS", ""))
    if submit_master:
        return MasterChoice("configured", submit_master, "PYSPARK_SUBMIT_ARGS")
    if env.get("MASTER"):
        return MasterChoice("configured", env["MASTER"], "MASTER")
    defaults = _spark_defaults_master(env)
    if defaults:
        return MasterChoice("configured", defaults, "spark-defaults.conf")
    return MasterChoice("master", settings.master, "spark.master (conf)")


def _submit_args_master(args: str) -> Optional[str]:
    words = args.split()
    for i, word in enumerate(words):
        if word == "--master" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--master="):
            return word.split("=", 1)[1]
    return None


def _spark_defaults_master(env: Mapping[str, str]) -> Optional[str]:
    """``spark.master`` in the spark-defaults.conf Spark's launcher reads (``$SPARK_CONF_DIR``, else
    ``$SPARK_HOME/conf``), if any."""
    folder = env.get("SPARK_CONF_DIR") or (os.path.join(env["SPARK_HOME"], "conf") if env.get("SPARK_HOME") else "")
    path = os.path.join(folder, "spark-defaults.conf") if folder else ""
    if not path or not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                words = line.strip().split(None, 1)
                if len(words) == 2 and words[0] == "spark.master":
                    return words[1].strip()
    except OSError:
        return None
    return None


# SQL settings every query of the job relies on, set on whichever session it runs in (a runtime setting, so also on
# spark-submit's, Databricks' and Spark Connect sessions): timestamps are UTC and written as Parquet INT64 micros,
# which the embedded Delta backend and deltalake read back as timestamps (INT96 is Spark's legacy default)
REQUIRED_SQL_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.timestampType": "TIMESTAMP_LTZ",
}
# set where the session allows it; a session that refuses keeps its own (the job works either way)
PREFERRED_SQL_CONF = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


# a local Spark Connect server this job starts (SPARK_REMOTE=local[...]): quiet, on loopback
LOCAL_SERVER_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


class SessionSettingRefused(RuntimeError):
    """The session will not take a setting the job's results depend on."""


def apply_sql_settings(spark) -> None:
    """Set :data:`REQUIRED_SQL_CONF` and :data:`PREFERRED_SQL_CONF` on ``spark``. A required one the session
    refuses and does not already have fails the run with the key, the wanted and the session's value."""
    for key, value in REQUIRED_SQL_CONF.items():
        try:
            spark.conf.set(key, value)
        except Exception as exc:  # noqa: BLE001 - a managed runtime that pins it
            try:
                current = spark.conf.get(key, None)
            except Exception:  # noqa: BLE001
                current = None
            if str(current).upper() != value.upper():
                raise SessionSettingRefused(
                    f"the Spark session refuses {key}={value} (it has {current!r}: {str(exc).splitlines()[0][:200]}); "
                    f"kafka-recon needs it: set it in the cluster's Spark config") from exc
    for key, value in PREFERRED_SQL_CONF.items():
        try:
            spark.conf.set(key, value)
        except Exception:  # noqa: BLE001 - optional
            pass


def get_spark(settings: Optional[SparkSettings] = None, extra_conf: Optional[Mapping[str, str]] = None,
              master: Optional[str] = None, capture_bytes: Optional[int] = None):
    """The job's session: an active one as it is (a notebook's, Databricks'), else one built as
    :func:`resolve_master` decides, with :data:`REQUIRED_SQL_CONF` set either way. Local tuning (heap, JVM flags,
    the class archive, loopback) is added only to a JVM this job starts itself. ``capture_bytes``: the capture's size
    when it is known before the JVM starts (:func:`jvm_options_for`)."""
    from pyspark.sql import SparkSession

    from .engine import jvm
    from .stage_log import get_logger

    sp = settings or Settings.load().spark  # conf/*.yaml is the one place defaults live
    active = jvm.active_session()
    if active is not None:
        if jvm.is_classic(active):
            _fewer_gateway_calls(sp)
        apply_sql_settings(active)
        get_logger().info("stage=startup master=%s source=active session", jvm.master_of(active))
        return active
    choice = resolve_master(sp, master)
    user_conf = {**sp.extra_conf, **(extra_conf or {})}
    if choice.kind == "remote":
        builder = SparkSession.builder.remote(choice.url).appName(sp.app_name)
        if choice.url.startswith("local"):  # PySpark starts the server in this process: its workers run here
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            for key, value in LOCAL_SERVER_CONF.items():
                builder = builder.config(key, value)
        for key, value in user_conf.items():
            builder = builder.config(key, str(value))
        spark = builder.getOrCreate()
        apply_sql_settings(spark)
        get_logger().info("stage=startup master=%s source=%s (Spark Connect)", choice.url, choice.source)
        return spark
    if choice.kind == "given":  # the JVM runs already: only runtime settings can still change
        builder = SparkSession.builder.appName(sp.app_name)
        for key, value in user_conf.items():
            builder = builder.config(key, str(value))
        spark = builder.getOrCreate()
        _fewer_gateway_calls(sp)
        apply_sql_settings(spark)
        get_logger().info("stage=startup master=%s source=%s", jvm.master_of(spark), choice.source)
        return spark
    spark = _start_classic(sp, choice, user_conf, capture_bytes)
    _fewer_gateway_calls(sp)
    apply_sql_settings(spark)
    jvm.set_log_level(spark, sp.log_level)
    if sp.log_level.upper() == "WARN":
        jvm.quiet_loggers(spark, QUIETED_LOGGERS)
    get_logger().info("stage=startup master=%s source=%s", jvm.master_of(spark) or choice.url, choice.source)
    return spark


def _fewer_gateway_calls(sp: SparkSettings) -> None:
    """:func:`jobs.engine.gateway_calls.install` for a classic session (py4j is imported only here)."""
    from .engine import gateway_calls

    gateway_calls.install(sp.fewer_gateway_calls)


def _start_classic(sp: SparkSettings, choice: MasterChoice, user_conf: Mapping[str, Any],
                   capture_bytes: Optional[int]):
    """A classic session whose JVM this job starts (``choice.kind``: ``master`` or ``configured``)."""
    from pyspark.sql import SparkSession

    from .stage_log import get_logger

    local = choice.local
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # stay on loopback
        # local executors run on this machine: this interpreter (the venv with the job's packages) is theirs
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    java_version = None
    if "SPARK_HOME" not in os.environ and not os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        java_version = check_java()
    jvm_options = jvm_options_for(sp, capture_bytes)
    if jvm_options != sp.jvm_options:
        get_logger().info("stage=startup capture_bytes=%d small_capture_jvm_below_bytes=%d jvm_options_added=%s",
                          capture_bytes, sp.small_capture_jvm_below_bytes, sp.small_capture_jvm_options)
    driver_options = jvm_options
    if java_version is not None and sp.class_archive:
        from .engine.class_archive import archive_options

        # Spark adds spark.driver.defaultJavaOptions to the driver's options; spark.extra_conf's
        # spark.driver.extraJavaOptions replaces the ones set here, archive flags included
        archive = archive_options(sp, java_version,
                                  f"{jvm_options} {user_conf.get('spark.driver.defaultJavaOptions', '')}",
                                  replaced="spark.driver.extraJavaOptions" in user_conf)
        driver_options = f"{jvm_options} {archive.flags}".strip()
        get_logger().info("stage=startup class_archive=%s", archive.path or f"none ({archive.reason})")
    builder = SparkSession.builder.appName(sp.app_name)
    if choice.kind == "master":
        builder = builder.master(choice.url)
    builder = (
        builder.config("spark.driver.memory", sp.driver_memory)
        .config("spark.sql.shuffle.partitions", str(sp.shuffle_partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # the class archive is the driver's: it matches the driver's class path only (local mode runs the
        # executors in the driver's JVM)
        .config("spark.driver.extraJavaOptions", f"-Duser.timezone=UTC {driver_options}".strip())
        .config("spark.executor.extraJavaOptions", f"-Duser.timezone=UTC {jvm_options}".strip())
        # PySpark otherwise records the Python call site of every Column/DataFrame call (five extra JVM round
        # trips each): about a third of the JVM calls that build the reconcile plan
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
    )
    for key, value in REQUIRED_SQL_CONF.items():
        builder = builder.config(key, value)
    if local:
        builder = (builder.config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"])
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
    for key, value in python_daemon_conf(sp, local).items():  # the user's spark.extra_conf below still wins
        builder = builder.config(key, value)
    for key, value in user_conf.items():
        builder = builder.config(key, str(value))
    return builder.getOrCreate()


# Spark's Python daemon of a session this job starts (spark.preload_python_workers): PySpark's own, after importing
# what every Python task of the job imports, so the workers it forks start with it (jobs/engine/worker_daemon.py)
PYTHON_DAEMON_KEY = "spark.python.daemon.module"
PRELOADING_DAEMON = "jobs.engine.worker_daemon"


def python_daemon_conf(settings: SparkSettings, local_master: bool) -> Dict[str, str]:
    """The Python daemon setting of a session this job starts: the preloading one, or none (PySpark's own). Only
    on a local master (``local[...]``, ``local-cluster[...]``), whose executors run this interpreter and see this
    installation: elsewhere an executor without the package installed (code shipped with ``--py-files`` reaches
    tasks, not the daemon) could start no Python worker at all; such a cluster opts in through
    ``spark.extra_conf``."""
    return {PYTHON_DAEMON_KEY: PRELOADING_DAEMON} if settings.preload_python_workers and local_master else {}


def get_spark_for_capture(settings: SparkSettings, units: Optional[Sequence[Any]], master: Optional[str] = None):
    """:func:`get_spark` for a run over the capture discovery found (``units``): a session this job starts gets
    the JVM flags that capture's size calls for. An existing session is used without sizing anything."""
    from .engine.jvm import active_session

    if active_session() is not None:
        return get_spark(settings, master=master)
    from .ingest.discover import capture_bytes_below

    size = capture_bytes_below(units, settings.small_capture_jvm_below_bytes) if units else None
    return get_spark(settings, master=master, capture_bytes=size)


def jvm_options_for(settings: SparkSettings, capture_bytes: Optional[int]) -> str:
    """The JVM flags of a session this job starts: ``spark.jvm_options``, and for a capture known to be smaller
    than ``spark.small_capture_jvm_below_bytes`` also ``spark.small_capture_jvm_options``.

    Why: a one-shot run of a small capture spends its time planning queries in a cold JVM, and the optimizing
    compiler (C2) took ~22 of a devsample nightly's ~75 CPU seconds on two cores, compiling code the run hardly
    used again. The client compiler alone (``-XX:TieredStopAtLevel=1``) made such nightlies 10-17% shorter up to
    the 10k-replica fleet with 1M records (39 MB of packs), was within noise on the 100k fleet (379 MB) and made
    the 400k fleet (5.9 GB) 9% longer: its work runs long enough for C2's code to pay (docs/benchmarks.md,
    session 19). An unknown size (None) keeps the default.
    """
    small = (capture_bytes is not None and capture_bytes < settings.small_capture_jvm_below_bytes
             and settings.small_capture_jvm_options.strip())
    return f"{settings.jvm_options} {settings.small_capture_jvm_options}".strip() if small else settings.jvm_options


# Loggers whose warnings ask nothing of the user (only in a session this job starts; their errors stay):
QUIETED_LOGGERS = (
    # without AQE (the small-capture profile) a stage's task carries its part of the plan: "Broadcasting large
    # task binary" for every one over 1 MB, dozens of lines per small run
    "org.apache.spark.scheduler.DAGScheduler",
    # a checkpointed union of check rows whose optimized output differs from the analyzed one only in a map's
    # value nullability: "The output columns are expected to the same ...", once per check module
    "org.apache.spark.sql.execution.LogicalRDD",
    # the metadata log's few markers are numbered by one global window (small by construction):
    # "No Partition Defined for Window operation!" on every run
    "org.apache.spark.sql.execution.window.WindowExec",
)


# Spark's (internal) switch between compiled and interpreted expressions; FALLBACK is its default
CODEGEN_MODE_KEY = "spark.sql.codegen.factoryMode"
EXECUTION_MODES = {"interpreted": "NO_CODEGEN", "compiled": "FALLBACK"}

# How a small capture is planned and run (docs/benchmarks.md, "The small-capture profile"). Its reconcile is a few
# hundred queries over a few hundred rows each: the planning and per-job overhead is the cost, not the rows.
SMALL_CAPTURE_CONF = {
    CODEGEN_MODE_KEY: EXECUTION_MODES["interpreted"],  # compiling each tiny plan costs more than running it
    "spark.sql.adaptive.enabled": "false",  # AQE runs every exchange as a job of its own and re-plans after it
    "spark.sql.shuffle.partitions": "1",  # a few hundred rows: one task per stage
    "spark.sql.autoBroadcastJoinThreshold": "-1",  # no broadcast job per join; a sort-merge join of one partition
    # runtime Bloom filters: a devsample reconcile planned 24 (each a subquery aggregating a few log dirs into a
    # 1 MB filter before its join); in a cold JVM the first cost ~2 s, for a few hundred rows (docs/benchmarks.md)
    "spark.sql.optimizer.runtime.bloomFilter.enabled": "false",
    # inferring filters from every operator's constraints is planner work on each of the few hundred plans, for
    # rows that need no pruning (warm devsample reconcile ~6% shorter; the filters it adds are implied ones)
    "spark.sql.constraintPropagation.enabled": "false",
    # A join of one-partition frames runs without a shuffle only if each side's size estimate is at most
    # maxSinglePartitionBytes; otherwise both sides go through a one-partition exchange, a stage each. Reconcile's
    # frames are checkpoints re-read without an estimate (jobs.reconcile.frames.materialize), so they take
    # defaultSizeInBytes, and a join of several of them (estimate: the product of its inputs') stays far below
    # the limit. Warm stray-dirs reconcile: 243 exchanges / 273 stages -> 60 / 99 (docs/benchmarks.md, session 29).
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
    "spark.sql.defaultSizeInBytes": "1024",
}
_SESSION_VALUE = "spark.kafka_recon.session_value."  # the session's own value of a key, kept before the first switch
_UNSET = "<unset>"  # kept as a key's session value when the session had none: the key is unset again
BROADCAST_KEY = "spark.sql.autoBroadcastJoinThreshold"
# The large profile's exceptions to "the session's own settings": Spark picks no broadcast join by itself, neither
# from a plan's size estimate nor under AQE from a shuffle's runtime size (the adaptive threshold falls back to this
# one). Each broadcast side is built in the driver, several at once: on the 400k fleet AQE's picks made the driver
# JVM's peak 3.3 GiB against 1.9 without them, growing with the fleet, for the same reconcile time (local-cluster,
# docs/benchmarks.md session 38). Joins whose side this job knows is small (one row per topic,
# broker, log dir or copy) still broadcast it: jobs.reconcile.frames.small_side and explicit hints.
LARGE_CAPTURE_CONF = {BROADCAST_KEY: "-1"}


def fit_execution_to_size(spark, settings: SparkSettings, rows: int, scope: str = "run") -> str:
    """Run a small capture with :data:`SMALL_CAPTURE_CONF`, a large one the way the session was configured
    (compiled expressions) but for :data:`LARGE_CAPTURE_CONF`; returns the mode chosen: interpreted (the small
    profile) or compiled.

    A small capture's reconcile runs a few hundred tiny queries: compiling each one (whole-stage codegen, Janino,
    the JIT), and under AQE running each exchange as its own job and re-planning after it, costs more than the
    work (healthy 3-broker reconcile, warm: 28 s compiled, 21-22 s interpreted, 17-18 s with the whole profile;
    docs/benchmarks.md). The settings are runtime SQL settings, so they apply to everything the session plans
    after this call. A key the user gave in ``spark.extra_conf`` is left alone (a ``spark.sql.codegen.*`` one:
    mode ``configured``); ``spark.interpreted_below_rows: 0`` always compiles. ``scope``: what the mode is for
    (``run``: the rest of the run, logged; another name: one step planned next, e.g. ``copies``, logged at debug).
    """
    from .stage_log import get_logger

    limit = settings.interpreted_below_rows
    mode = "interpreted" if rows < limit else "compiled"
    refused = {}
    for key, small in SMALL_CAPTURE_CONF.items():
        if key in settings.extra_conf:
            continue
        try:
            if key == CODEGEN_MODE_KEY:
                spark.conf.set(key, EXECUTION_MODES[mode])
            elif mode == "interpreted":
                _keep_session_value(spark, key)
                spark.conf.set(key, small)
            elif key in LARGE_CAPTURE_CONF:
                spark.conf.set(key, LARGE_CAPTURE_CONF[key])
            else:
                _restore_session_value(spark, key)
        except Exception as exc:  # a runtime that does not let sessions change it (some managed runtimes)
            refused[key] = str(exc).splitlines()[0][:200]
    if refused:
        get_logger().warning("stage=ingest execution_settings_unchanged=%s reason=%s", ",".join(refused),
                             next(iter(refused.values())))
    if CODEGEN_MODE_KEY in refused:
        _remember(spark, _ACTIONS_KEY, "1")
        _remember(spark, _SMALL_KEY, "false")
        return "unchanged"
    _remember(spark, _SMALL_KEY, str(rows < limit).lower())
    refused_broadcasts = _no_broadcasts(settings.extra_conf.get(BROADCAST_KEY, "0"))
    _remember(spark, _SMALL_SIDES_KEY, str(rows >= limit and not refused_broadcasts).lower())
    if CODEGEN_MODE_KEY in settings.extra_conf:
        mode = "configured"
    _remember(spark, _ACTIONS_KEY, str(actions_at_once(settings, mode)))
    if scope == "run":
        get_logger().info("stage=ingest execution_mode=%s rows=%d interpreted_below_rows=%d", mode, rows, limit)
    else:
        get_logger().debug("stage=ingest execution_mode=%s for=%s rows=%d", mode, scope, rows)
    return mode


def actions_at_once(settings: SparkSettings, mode: str) -> int:
    """How many of reconcile's independent actions run at a time (:func:`jobs.reconcile.run_reconcile`):
    ``spark.small_capture_actions_at_once`` for a capture in the small-capture profile, else one.

    A small capture's action is mostly the driver planning a tiny query: one at a time kept ~1.3 of 2 cores busy,
    two at once cut a warm reconcile by ~16% (docs/benchmarks.md). A large capture's actions are executor work
    already spread over the cores: on the 400k fleet two at once was within noise, so it stays at one."""
    return max(1, settings.small_capture_actions_at_once) if mode == "interpreted" else 1


_ACTIONS_KEY = "spark.kafka_recon.actions_at_once"  # chosen with the profile, read by reconcile
_SMALL_KEY = "spark.kafka_recon.small_capture"  # whether the profile chosen was the small-capture one
_SMALL_SIDES_KEY = "spark.kafka_recon.broadcast_small_sides"  # whether known-small join sides are broadcast


def _remember(spark, key: str, value: str) -> None:
    try:
        spark.conf.set(key, value)
    except Exception:  # noqa: BLE001 - a runtime refusing session conf: the defaults (one at a time, not small)
        pass


def session_small_capture(spark) -> bool:
    """Whether :func:`fit_execution_to_size` put this session's capture in the small-capture profile (False
    before any ingest, or where the runtime refused the profile): a few hundred rows a table, so a reconcile reads
    its bronze tables from memory and the nightly validates them while it reconciles."""
    try:
        return spark.conf.get(_SMALL_KEY, "false") == "true"
    except Exception:  # noqa: BLE001 - as refused
        return False


def session_broadcasts_small_sides(spark) -> bool:
    """Whether joins broadcast the sides this job knows are small (:func:`jobs.reconcile.frames.small_side`): in the
    large profile unless the user turned broadcasts off (``spark.sql.autoBroadcastJoinThreshold`` negative in
    ``spark.extra_conf``); not in the small-capture profile, where each broadcast is a job of its own. Before any
    profile was chosen (a notebook calling reconcile on its own session): as that session's threshold says."""
    try:
        chosen = spark.conf.get(_SMALL_SIDES_KEY, None)
        if chosen is not None:
            return chosen == "true"
        return not _no_broadcasts(spark.conf.get(BROADCAST_KEY, "0"))
    except Exception:  # noqa: BLE001 - a runtime refusing session conf: Spark's own choice (no hint)
        return False


def _no_broadcasts(threshold) -> bool:
    """Whether a ``spark.sql.autoBroadcastJoinThreshold`` value turns broadcast joins off (negative)."""
    return str(threshold).strip().startswith("-")


def session_actions_at_once(spark) -> int:
    """What :func:`fit_execution_to_size` chose for this session's capture (:func:`actions_at_once`; 1 before
    any ingest): reconcile runs that many independent actions at a time, whoever calls it (the job, a notebook,
    the tests)."""
    try:
        return max(1, int(spark.conf.get(_ACTIONS_KEY, "1")))
    except (ValueError, TypeError):
        return 1


def _keep_session_value(spark, key: str) -> None:
    """Remember the session's own value of ``key`` before the first switch to the small profile, in the session's
    conf: a notebook's session may run both sizes, and a large capture gets that value back. A key the session has
    no value for (an optional setting such as ``spark.sql.optimizer.excludedRules``) is remembered as
    :data:`_UNSET`, and :func:`_restore_session_value` unsets it again."""
    if spark.conf.get(_SESSION_VALUE + key, None) is None:
        try:
            own = spark.conf.get(key)
        except Exception:  # noqa: BLE001 - a key without a default the session never set
            own = None
        spark.conf.set(_SESSION_VALUE + key, _UNSET if own is None else own)


def _restore_session_value(spark, key: str) -> None:
    """Give ``key`` back the value :func:`_keep_session_value` remembered (the current one if none was)."""
    own = spark.conf.get(_SESSION_VALUE + key, None)
    if own == _UNSET:
        spark.conf.unset(key)
    elif own is not None:
        spark.conf.set(key, own)
