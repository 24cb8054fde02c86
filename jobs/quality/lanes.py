"""Suites validated on a few driver threads at once, each thread in its own Spark session.

Why: the stage is mostly waiting on many tiny Spark queries (GX resolves each table's metrics in ~10 of them),
so one thread left the second core idle. Why a session per thread: GX's query metrics (every
``UnexpectedRowsExpectation``) register the batch under one temp-view name, ``tmp_view``, and query it through
the execution engine's session; temp views belong to a session, so two threads sharing one would read each
other's tables. A lane's session is a clone of the caller's (same SQL settings, same cache), and its tables are
the caller's DataFrames, the same plans, bound to it.
"""
from __future__ import annotations

from typing import Dict, List, Mapping


def suite_lanes(weights: Mapping[str, int], at_once: int) -> List[List[str]]:
    """Table names in at most ``at_once`` lanes of about equal weight (expectations): heaviest first, each to the
    lightest lane so far; ties by name, so the split depends only on the suites. Each lane keeps name order."""
    lanes: List[List[str]] = [[] for _ in range(max(1, min(at_once, len(weights))))]
    load = [0] * len(lanes)
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        i = min(range(len(lanes)), key=lambda k: (load[k], k))
        lanes[i].append(name)
        load[i] += weights[name]
    return [sorted(lane) for lane in lanes if lane]


def cloned_session(spark):
    """A new session sharing ``spark``'s context and cache, with a copy of its SQL settings and temp views."""
    from jobs.engine.jvm import clone_session

    session = clone_session(spark)
    if session is None:
        raise RuntimeError("this session cannot be cloned (Spark Connect)")
    return session


def bound_to(df, session):
    """``df``'s plan as a DataFrame of ``session`` (the same rows; temp views it registers land in ``session``)."""
    from jobs.engine.jvm import rebind

    return rebind(df, session)


def frames_by_lane(tables: Mapping[str, object], lanes: List[List[str]], spark) -> List[Dict[str, object]]:
    """Each lane's tables: the first lane keeps the caller's DataFrames; every other lane gets a clone of
    ``spark`` and the same plans bound to it. Where sessions cannot be cloned (a runtime without classic
    sessions' JVM side), every table goes to the one first lane."""
    if not lanes:
        return []
    out: List[Dict[str, object]] = [{name: tables[name] for name in lanes[0]}]
    try:
        for lane in lanes[1:]:
            session = cloned_session(spark)
            out.append({name: bound_to(tables[name], session) for name in lane})
    except Exception:  # noqa: BLE001 - no clone here: one lane validates everything, as before lanes existed
        return [{name: tables[name] for lane in lanes for name in lane}]
    return out
