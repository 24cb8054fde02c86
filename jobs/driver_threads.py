"""Independent Spark work from a few driver threads at once: table writes, reconcile's actions.

Why threads: a small capture's actions and writes are mostly the driver's work (planning one query, a commit),
and one at a time left the second core idle between them. Spark runs jobs that several threads of one session
submit; PySpark pins each Python thread to its own JVM thread. Results come back in the caller's order.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable, Iterable, List, TypeVar

from .engine.job_labels import for_new_threads

Item = TypeVar("Item")
Result = TypeVar("Result")


def map_at_once(fn: Callable[[Item], Result], items: Iterable[Item], at_once: int = 1,
                name: str = "kr-driver") -> List[Result]:
    """``[fn(item) for item in items]``, up to ``at_once`` calls at a time.

    One at a time, the first failure stops the rest. Several at a time, every call runs even when one fails (its
    neighbours are under way already); then the first failure in ``items`` order is raised, so a caller sees the
    same error whatever the threads' timing."""
    items = list(items)
    if at_once <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    # each thread names its Spark jobs as the caller's do (jobs/engine/job_labels.py)
    with ThreadPoolExecutor(max_workers=at_once, thread_name_prefix=name, initializer=for_new_threads()) as pool:
        futures = [pool.submit(fn, item) for item in items]
        wait(futures)
    return [future.result() for future in futures]
