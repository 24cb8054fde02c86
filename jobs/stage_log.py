"""Structured stage logging: one line per stage with rows and seconds, plus progress for long stages.

Lines look like ``kafka-recon stage=ingest status=done rows=123456 seconds=12.3`` so that log search and
dashboards can parse them; timings are also kept for gold_run_summary.stage_seconds_json.

While a stage runs, :class:`ProgressReporter` (a daemon thread) logs at most every ``run.progress_seconds``
``kafka-recon stage=reconcile status=progress step=write_silver elapsed=12s spark_tasks=3/8``: the stage, its
current step (:meth:`StageReport.step`), the seconds since the stage started and, when a Spark job is
running, its active stages' tasks done of total (for ingest's first pass: log dirs / packs done of the total).
Everything goes through the ``kafka-recon`` logger, so notebooks see the same lines.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Dict, Iterator, Optional, Tuple

LOGGER_NAME = "kafka-recon"


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at emit time (notebooks and test captures swap it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


NOTICE = 25  # the run's final lines: printed even with --quiet (which shows only these and errors)
logging.addLevelName(NOTICE, "NOTICE")


@contextmanager
def quiet_output(log_path: str) -> Iterator[str]:
    """``--quiet``: the terminal gets only the run's final lines and errors (NOTICE and above); every line,
    and everything the JVM or a library writes to file descriptor 2 (Spark's and Java's warnings), goes to
    ``log_path``. The descriptor is redirected only when ``sys.stderr`` is the process's own (a terminal, a
    scheduler's pipe); notebooks and test captures keep theirs, and only the levels change."""
    logger = get_logger()
    console = [h for h in logger.handlers if isinstance(h, _CurrentStderrHandler)]
    to_file = logging.FileHandler(log_path, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s", "%Y-%m-%dT%H:%M:%SZ"))
    to_file.setLevel(logging.INFO)
    saved_fd, saved_stderr = None, sys.stderr
    try:
        own = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        own = False
    if own:
        sys.stderr.flush()
        saved_fd = os.dup(2)
        sys.stderr = os.fdopen(os.dup(saved_fd), "w", buffering=1, encoding="utf-8", errors="backslashreplace")
        os.dup2(to_file.stream.fileno(), 2)
    for handler in console:
        handler.setLevel(NOTICE)
    logger.addHandler(to_file)
    try:
        yield log_path
    finally:
        logger.removeHandler(to_file)
        for handler in console:
            handler.setLevel(logging.NOTSET)
        if saved_fd is not None:
            sys.stderr.flush()
            os.dup2(saved_fd, 2)  # later writes of the process reach the terminal again (the JVM keeps the file)
            os.close(saved_fd)
            sys.stderr.close()
            sys.stderr = saved_stderr
        to_file.close()


def get_logger() -> logging.Logger:
    logger = logging.getLogger(LOGGER_NAME)
    if not logger.handlers:
        handler = _CurrentStderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s", "%Y-%m-%dT%H:%M:%SZ"))
        logging.Formatter.converter = time.gmtime
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


class StageTimer:
    """Collects per-stage seconds and rows for one run."""

    def __init__(self) -> None:
        self.seconds: Dict[str, float] = {}
        self.rows: Dict[str, int] = {}
        self.log = get_logger()
        self.current: Optional[str] = None  # the stage running now (None between stages)
        self.current_step: Optional[str] = None
        self.current_started: Optional[float] = None  # time.monotonic() at the current stage's start
        self.position = "startup"  # the stage or phase the run is in, or last was: names a failure's place
        self.failed_stage: Optional[str] = None  # the stage an exception left, if any
        self.planned: Tuple[str, ...] = ()  # the stages this run will go through, in order (lines say k/n)

    def ordinal(self, name: str) -> str:
        """`` stage_k=2/4`` for a planned stage, else "" (a stage outside the plan, or no plan)."""
        return f" stage_k={self.planned.index(name) + 1}/{len(self.planned)}" if name in self.planned else ""

    def at(self, phase: str) -> None:
        """Record that the run is in an untimed phase (``startup``, ``summary``): where a failure happened."""
        self.position = phase

    @contextmanager
    def stage(self, name: str) -> Iterator["StageReport"]:
        report = StageReport(name, self.log, self)
        self.log.info("stage=%s status=start%s", name, self.ordinal(name))
        start = time.monotonic()
        self.position, self.current, self.current_step, self.current_started = name, name, None, start
        try:
            yield report
        except BaseException as exc:
            self.seconds[name] = round(time.monotonic() - start, 3)
            self.current = None
            # an exception may say how the stage ended (an insufficient capture stops it: status=stopped; a
            # signal cancels it)
            status = getattr(exc, "stage_status", "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed")
            if status == "failed":
                self.failed_stage = self.failed_stage or name
            log = self.log.error if status == "failed" else self.log.info
            log("stage=%s status=%s seconds=%.1f", name, status, self.seconds[name])
            raise
        self.current = None
        self.seconds[name] = round(time.monotonic() - start, 3)
        if report.rows is not None:
            self.rows[name] = report.rows
        self.log.info("stage=%s status=done rows=%s seconds=%.1f", name,
                      "-" if report.rows is None else report.rows, self.seconds[name])


class StageReport:
    """Handed to the body of a stage: set ``rows`` and call ``progress`` on long loops."""

    def __init__(self, name: str, log: logging.Logger, timer: Optional[StageTimer] = None) -> None:
        self.name = name
        self.rows: Optional[int] = None
        self._log = log
        self._last = 0.0
        self._timer = timer

    def step(self, name: str) -> None:
        """Name what the stage is doing now (shown by the progress lines)."""
        if self._timer is not None and self._timer.current == self.name:
            self._timer.current_step = name

    def progress(self, message: str, every_seconds: float = 10.0) -> None:
        now = time.monotonic()
        if now - self._last >= every_seconds:
            self._last = now
            self._log.info("stage=%s status=progress %s", self.name, message)


def _spark_tasks() -> Optional[str]:
    """``done/total`` tasks of the active Spark stages of this process's SparkContext, or None (no Spark
    loaded, no job running, Spark Connect: no status tracker). Never starts Spark."""
    if "pyspark" not in sys.modules:
        return None
    try:
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        if sc is None:
            return None
        tracker = sc.statusTracker()
        done = total = 0
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        return f"{done}/{total}" if total else None
    except Exception:  # a status probe must never disturb the run
        return None


class ProgressReporter:
    """A daemon thread logging the current stage and step every ``every_seconds`` while a stage runs.

    Use as a context manager around the pipeline; ``enabled=False`` (``--quiet``) or ``every_seconds <= 0``
    makes it a no-op. Lines go through the ``kafka-recon`` logger (stderr; notebooks: the same handler).
    """

    def __init__(self, timer: StageTimer, every_seconds: float = 5.0, enabled: bool = True,
                 spark_tasks: bool = True) -> None:
        self.timer = timer
        self.every = float(every_seconds)
        self.enabled = bool(enabled) and self.every > 0
        self.spark_tasks = spark_tasks
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.lines = 0

    def line(self) -> Optional[str]:
        """The progress message for now, or None between stages."""
        stage, started, step = self.timer.current, self.timer.current_started, self.timer.current_step
        if stage is None or started is None:
            return None
        parts = [f"stage={stage} status=progress{self.timer.ordinal(stage)}"]
        if step:
            parts.append(f"step={step}")
        parts.append(f"elapsed={int(time.monotonic() - started)}s")
        tasks = _spark_tasks() if self.spark_tasks else None
        if tasks:
            parts.append(f"spark_tasks={tasks}")
        return " ".join(parts)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            message = self.line()
            if message:
                self.timer.log.info("%s", message)
                self.lines += 1

    def __enter__(self) -> "ProgressReporter":
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="kafka-recon-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
