"""Python's cyclic garbage collector, run less often while an executor task decodes.

Decoding allocates millions of short-lived, acyclic objects (a record, its dict, its column values), and the
collector's default first generation (700 allocations) makes it walk them, and every few hundred runs the
whole worker heap, over and over. Raising that threshold while a task decodes cut the second pass's CPU by
~13% (the real 1M-record log, 16 MiB parts in a forked worker: 6.9 -> 6.0 CPU s) and a pack's first pass by
~8% (docs/benchmarks.md, session 18). Collection still runs (cycles are freed, later); the worker's own
thresholds come back when the task's iterator ends or is closed.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

DECODE_THRESHOLDS = (50_000, 20, 100)  # CPython's defaults: (700, 10, 10)


@contextmanager
def fewer_collections() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(*DECODE_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
