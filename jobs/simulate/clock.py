"""Simulated time: every timestamp in a capture (records, znodes, log lines, file mtimes) comes from here.

Time never comes from the wall clock, so the same seed gives the same bytes.
"""
from __future__ import annotations

import datetime as _dt

SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR

# Captures are "taken" at this instant unless a scenario says otherwise; the cluster is born before it.
DEFAULT_CAPTURE_MS = 1795737600000  # 2026-11-27T00:00:00Z


def iso_utc(ms: int) -> str:
    """``2026-11-27T00:00:00.000Z`` (the capture.json form)."""
    return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def log4j_time(ms: int) -> str:
    """``2026-11-22 09:03:32,580``: log4j's ``[%d]`` in UTC."""
    stamp = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{stamp},{ms % 1000:03d}"


class Clock:
    """A monotonic millisecond clock that scenarios move forward explicitly."""

    def __init__(self, start_ms: int):
        self.now = start_ms

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError(f"time only moves forward, got advance({ms})")
        self.now += ms
        return self.now

    def tick(self, ms: int = 150) -> int:
        """A small step between two consecutive controller actions (keeps append times strictly increasing)."""
        return self.advance(ms)
