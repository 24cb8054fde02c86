"""Structured stage logging: one line per stage with rows and seconds, plus progress for long stages.

Lines look like ``kafka-recon stage=ingest status=done rows=123456 seconds=12.3`` so that log search and
dashboards can parse them; timings are also kept for gold_run_summary.stage_seconds_json.
"""
from __future__ import annotations

import logging
import sys
import time
from contextlib import contextmanager
from typing import Dict, Iterator, Optional

LOGGER_NAME = "kafka-recon"


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at emit time (notebooks and test captures swap it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


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

    @contextmanager
    def stage(self, name: str) -> Iterator["StageReport"]:
        report = StageReport(name, self.log)
        self.log.info("stage=%s status=start", name)
        start = time.monotonic()
        try:
            yield report
        except BaseException:
            self.seconds[name] = round(time.monotonic() - start, 3)
            self.log.error("stage=%s status=failed seconds=%.1f", name, self.seconds[name])
            raise
        self.seconds[name] = round(time.monotonic() - start, 3)
        if report.rows is not None:
            self.rows[name] = report.rows
        self.log.info("stage=%s status=done rows=%s seconds=%.1f", name,
                      "-" if report.rows is None else report.rows, self.seconds[name])


class StageReport:
    """Handed to the body of a stage: set ``rows`` and call ``progress`` on long loops."""

    def __init__(self, name: str, log: logging.Logger) -> None:
        self.name = name
        self.rows: Optional[int] = None
        self._log = log
        self._last = 0.0

    def progress(self, message: str, every_seconds: float = 10.0) -> None:
        now = time.monotonic()
        if now - self._last >= every_seconds:
            self._last = now
            self._log.info("stage=%s status=progress %s", self.name, message)
