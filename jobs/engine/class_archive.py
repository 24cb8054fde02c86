"""The JVM class-data archive: Spark's classes loaded from one memory-mapped file instead of ~250 jars.

Why: a session this job starts spends seconds of its start and its first queries loading ~27k classes (a devsample
nightly's JVM: 9 s of class-loading time by its own counters: looking classes up jar by jar, parsing, verifying).
HotSpot's class-data sharing (CDS) maps classes a previous JVM parsed and verified: the bench's Spark floor 5.4 ->
3.2 s and a devsample nightly ~3 s shorter (docs/benchmarks.md, session 24).

An archive fits one JDK build and one set of Spark jars, so its file name carries a key of both
(:func:`archive_key`); a JDK or Spark upgrade simply finds no archive until ``kafka-recon class-archive`` builds
one again. The JVM checks the archive itself too and, if it does not match, starts without it (``-Xshare:auto``).
Nothing here starts Spark: :func:`archive_options` is called before the JVM exists, :mod:`jobs.engine.class_archive_build`
builds one.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Mapping, NamedTuple, Optional

from ..settings import SparkSettings

KEY_VERSION = "1"  # bump when what goes into the key or the archive changes

# JVM options that install a class-file load hook: a Java or native agent (APM agents such as OpenTelemetry's or
# Datadog's), or Java Flight Recorder. With one of them, OpenJDK 17.0.15's JVM crashed (SIGSEGV in
# KlassFactory::check_shared_class_file_load_hook) loading a class from an archive like ours in every nightly
# tried, while the JDK's own default archive is unaffected; so a JVM given one starts without ours.
CLASS_HOOK_OPTIONS = ("-javaagent:", "-agentlib:", "-agentpath:", "-XX:StartFlightRecording", "-XX:+FlightRecorder")
# where the java launcher also reads options from
JAVA_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")


def java_binary() -> Optional[str]:
    """The java Spark's launcher starts: ``$JAVA_HOME/bin/java``, else the one on PATH (what :func:`check_java`
    checks and the archive's key names); None when there is none."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.exists(java) else None


def spark_jars_dir() -> Optional[str]:
    """The folder of jars the session's JVM loads its classes from (pyspark's own, or ``$SPARK_HOME/jars``)."""
    try:
        from pyspark.find_spark_home import _find_spark_home

        home = _find_spark_home()
    except Exception:  # noqa: BLE001 - no Spark installation: no archive
        return None
    jars = os.path.join(home, "jars")
    return jars if os.path.isdir(jars) else None


def archive_key(java: str, java_version: str, jars_dir: str) -> str:
    """A short hash of what an archive is valid for: the java binary (path, size, mtime), its version text and
    every jar (name, size, mtime). Any change gives another key, hence another file name."""
    digest = hashlib.sha256(f"kafka-recon-cds-{KEY_VERSION}\n{java_version.strip()}\n".encode())
    for path in [java, *sorted(str(p) for p in Path(jars_dir).iterdir() if p.suffix == ".jar")]:
        st = os.stat(path)
        digest.update(f"{os.path.basename(path)}\t{st.st_size}\t{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:20]


def archive_dir(settings: SparkSettings) -> Path:
    """``spark.class_archive_dir``, else ``$XDG_CACHE_HOME/kafka-recon`` (``~/.cache/kafka-recon``)."""
    if settings.class_archive_dir:
        return Path(settings.class_archive_dir).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "kafka-recon"


def archive_path(settings: SparkSettings, java_version: str) -> Optional[Path]:
    """Where this JDK's and these jars' archive lives (whether or not it exists); None without java or Spark."""
    java, jars = java_binary(), spark_jars_dir()
    if not java or not jars:
        return None
    return archive_dir(settings) / f"spark-classes-{archive_key(java, java_version, jars)}.jsa"


def class_file_hook(jvm_options: str, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The first option in ``jvm_options`` or the java launcher's variables (:data:`JAVA_OPTION_VARIABLES`) that
    installs a class-file load hook (:data:`CLASS_HOOK_OPTIONS`), or None."""
    environ = os.environ if environ is None else environ
    for text in (jvm_options, *(environ.get(name, "") for name in JAVA_OPTION_VARIABLES)):
        for option in text.split():
            if option.startswith(CLASS_HOOK_OPTIONS):
                return option
    return None


class ArchiveChoice(NamedTuple):
    """Whether a JVM maps the archive: its flags and path, or why not (``reason``, for the start-up log)."""

    flags: str
    path: Optional[Path]
    reason: str = ""


def archive_options(settings: SparkSettings, java_version: str, jvm_options: str = "",
                    environ: Optional[Mapping[str, str]] = None, replaced: bool = False) -> ArchiveChoice:
    """The driver JVM's flags that map this machine's archive, and the archive; no flags when
    ``spark.class_archive`` is false, no archive was built for this JDK and these jars, the user's own driver
    options replace the job's (``replaced``), or the JVM is to run with a class-file load hook
    (:func:`class_file_hook` of ``jvm_options`` and the environment)."""
    if not settings.class_archive:
        return ArchiveChoice("", None, "spark.class_archive is false")
    if replaced:
        return ArchiveChoice("", None, "spark.extra_conf sets spark.driver.extraJavaOptions")
    path = archive_path(settings, java_version)
    if path is None or not path.is_file():
        return ArchiveChoice("", None, "`kafka-recon class-archive` builds one: ~2 s off each start")
    hook = class_file_hook(jvm_options, environ)
    if hook is not None:
        name = next(prefix for prefix in CLASS_HOOK_OPTIONS if hook.startswith(prefix)).rstrip(":")
        return ArchiveChoice("", None, f"the JVM options load an agent or Flight Recorder ({name}), which crashes "
                                       "Java 17 with a class archive")
    return ArchiveChoice(f"-XX:SharedArchiveFile={path} -Xshare:auto", path)
