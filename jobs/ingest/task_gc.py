"""Python's cyclic garbage collector while ingest decodes: paused for one batch's records, and run less often
for a whole executor task.

Decoding allocates millions of short-lived, acyclic objects (a record, its dict, its column values); the
collector's default first generation (700 allocations) makes it walk them, promote them, and every few hundred
runs rescan the whole worker heap.
- :func:`cycle_collector_paused`: off while one batch's ~1000 records are decoded and added to the columns
  (session 6: ~1-1.5 CPU s per million records).
- :func:`fewer_collections`: a higher first-generation threshold for a whole decode task (the columns' Arrow
  conversion, the Parquet writes, the first pass's rows), restored when the task's iterator ends or is
  closed. On top of the pause: the second pass's four parts of the real 1M log in a forked worker 6.9 -> 6.0
  CPU s, a pack's first pass ~8% (docs/benchmarks.md, session 18). Collection still runs (cycles are freed,
  later).
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


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Off while one batch's records are decoded and added to the columns: they are all alive at once, so
    collections would only promote them. Records hold no reference cycles; the collector is back on (if it
    was on) before the block is yielded."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
