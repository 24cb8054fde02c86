"""Several tables written at once from driver threads (``storage.write_parallelism``, held by the DeltaStore).

Why: each table's write is a few small Spark jobs plus a commit, and one table at a time left the executors
idle between them (bench, the real 1M log into bronze: nine bronze tables took ~8.5 s one by one, ~2.4 s four
at a time). Each table is still its own commit, so nothing about atomicity changes: a crash leaves some
tables written and a re-run replaces them, as before.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, TypeVar

from jobs.driver_threads import map_at_once

Name = TypeVar("Name")


def write_each(names: Iterable[Name], write: Callable[[Name], object], parallelism: int = 1) -> List[Name]:
    """Call ``write(name)`` for every name, up to ``parallelism`` at once; return the names.

    As :func:`jobs.driver_threads.map_at_once`: several at once, every write runs even when one fails, then the
    first failure in ``names`` order is raised.
    """
    names = list(names)
    map_at_once(write, names, parallelism, name="kr-write")
    return names
