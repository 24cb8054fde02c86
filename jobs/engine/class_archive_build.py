"""Build the JVM class-data archive that the local Spark sessions this job starts map (jobs/engine/class_archive.py).

Run it once per machine, and again after a JDK or Spark upgrade (later runs say ``class_archive=none`` until then)::

    kafka-recon class-archive                      # trains on a simulated fleet
    kafka-recon class-archive --capture /captures/2026-11-22

It runs the nightly pipeline once on the capture (default: the simulator's demo fleet) in a JVM that lists every
class it loads, then has the same JDK write those classes, parsed and verified, into one archive
(``java -Xshare:dump``), named for this JDK and these Spark jars. The archive is written beside its final name and
renamed into place, so a run never maps half an archive. About a minute on 2 cores; ~200 MB.

Exit codes: 0 built; 1 the training run or the dump failed; 2 bad command line, configuration or no Java.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional

# the JVM flags the archive has to agree with: the module graph, the collector and the heap's size (compressed
# pointers); everything else (the JIT, system properties) does not enter an archive
_DUMP_FLAG_PREFIXES = ("--", "-Xmx", "-XX:+Use", "-XX:-Use", "-XX:+IgnoreUnrecognizedVMOptions")
_NOT_FOR_DUMP = ("-XX:DumpLoadedClassList", "-XX:SharedArchiveFile")


class ArchiveError(RuntimeError):
    """The training run or the dump did not produce an archive."""


def dump_flags(input_arguments: List[str]) -> List[str]:
    """Of the training JVM's flags, those the dump repeats (:data:`_DUMP_FLAG_PREFIXES`)."""
    return [a for a in input_arguments if a.startswith(_DUMP_FLAG_PREFIXES) and not a.startswith(_NOT_FOR_DUMP)]


def _train(settings, capture: str, work: Path, class_list: Path):
    """The nightly pipeline on ``capture`` in a JVM listing the classes it loads; returns (java, class path,
    flags) of that JVM, read from the JVM itself so the dump sees exactly the class path Spark's launcher built."""
    from jobs.ingest.discover import discover
    from jobs.nightly import new_run_id
    from jobs.pipeline import run_pipeline
    from jobs.spark_session import get_spark_for_capture

    spark_settings = dataclasses.replace(
        settings.spark, class_archive=False,
        jvm_options=f"{settings.spark.jvm_options} -XX:DumpLoadedClassList={class_list}".strip())
    training = dataclasses.replace(settings, spark=spark_settings,
                                   storage=dataclasses.replace(settings.storage, root=str(work / "tables")))
    units = discover([capture])
    spark = get_spark_for_capture(spark_settings, units)
    try:
        run_pipeline(training, [capture], str(work / "out"), None, new_run_id(), "never", spark=spark, units=units)
        jvm = spark.sparkContext._jvm
        java = os.path.join(jvm.System.getProperty("java.home"), "bin", "java")
        class_path = jvm.System.getProperty("java.class.path")
        flags = [str(a) for a in jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()]
    finally:
        spark.stop()
    return java, class_path, flags


def build_archive(settings, capture: Optional[str] = None, log=print) -> Path:
    """Train on ``capture`` (default: a simulated demo fleet) and write this JDK's and these jars' archive; returns
    its path. Raises :class:`ArchiveError` (or the training run's own exception)."""
    from jobs.engine.class_archive import archive_path
    from jobs.spark_session import check_java

    target = archive_path(settings.spark, check_java())
    if target is None:
        raise ArchiveError("no Java or no Spark installation found")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".class-archive-", dir=target.parent))
    try:
        if capture is None:
            from jobs.simulate.command import main as simulate

            capture = str(work / "capture")
            if simulate(["--scenario", "demo", "--out", capture, "--seed", "7"]):
                raise ArchiveError("the simulator could not write the training capture")
        class_list = work / "classes.lst"
        started = time.monotonic()
        java, class_path, flags = _train(settings, capture, work, class_list)
        trained = time.monotonic() - started
        if not class_list.is_file():
            raise ArchiveError("the training JVM listed no classes (is it a HotSpot JVM?)")
        partial = work / "classes.jsa"
        started = time.monotonic()
        with open(work / "dump.log", "w") as out:
            done = subprocess.run([java, "-Xshare:dump", f"-XX:SharedClassListFile={class_list}",
                                   f"-XX:SharedArchiveFile={partial}", "-cp", class_path, *dump_flags(flags)],
                                  stdout=out, stderr=subprocess.STDOUT, timeout=1800)
        if done.returncode != 0 or not partial.is_file():
            last = (work / "dump.log").read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise ArchiveError(f"java -Xshare:dump exited {done.returncode}: {last[0][:300]}")
        os.replace(partial, target)
        classes = sum(1 for line in class_list.open() if line and not line.startswith("#"))
        log(f"stage=class_archive path={target} bytes={target.stat().st_size} classes_listed={classes} "
            f"training_seconds={trained:.1f} dump_seconds={time.monotonic() - started:.1f}")
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Optional[List[str]] = None) -> int:
    from jobs.config import ConfigError
    from jobs.nightly import _OneLineParser
    from jobs.settings import Settings
    from jobs.spark_session import JavaMissingError
    from jobs.stage_log import get_logger

    p = _OneLineParser(prog="kafka-recon class-archive", description=__doc__.split("\n\n")[0])
    p.add_argument("--capture", help="capture to train on (default: the simulator's demo fleet)")
    p.add_argument("--conf", help="YAML file overriding conf/*.yaml (spark.class_archive_dir: where it goes)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override one setting")
    try:
        args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    log = get_logger()
    try:
        settings = Settings.load(args.conf, args.set)
        if args.capture and not os.path.exists(args.capture):
            raise ConfigError(f"--capture {args.capture}: no such file or folder")
        path = build_archive(settings, args.capture, log=log.info)
    except (ConfigError, JavaMissingError) as exc:
        log.error("status=usage exit_code=2 %s", str(exc).splitlines()[0])
        return 2
    except Exception as exc:  # noqa: BLE001 - one line, exit 1
        log.error("status=error exit_code=1 %s: %s", type(exc).__name__, (str(exc).splitlines() or [""])[0][:500])
        return 1
    log.info("status=finished exit_code=0 class_archive=%s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
