"""Ingest (bronze): captures -> bronze Delta tables. See :mod:`jobs.ingest.stage`.

The stage's names are imported on first use, not with the package: a decoding task's Python worker imports the
decoders under ``jobs.ingest`` and needs neither the Spark stage nor what it imports (PySpark's SQL layer, pandas:
~0.2 s more of every worker's start).
"""
from __future__ import annotations

from typing import Any

__all__ = ["IngestResult", "run_ingest", "write_ingest"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import stage

        return getattr(stage, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
