"""Shared by the simulator's test files (tests/unit/test_simulator_*.py): the module-scoped `capture` fixture
that simulates a scenario once per module, the file walk, and the full mini-reconciliation of a capture's disk
against its metadata (healthy captures, scale flags)."""
from __future__ import annotations

import os

import pytest
from sim_replay import (
    authoritative_copy,
    capture_doc,
    entries,
    log_dirs,
    pm_result,
    replay,
)

from jobs.simulate import command
from jobs.simulate.simulation import SimParams

SMALL = dict(seed=7, partitions_per_broker=2)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    made = {}

    def make(name: str, **overrides) -> str:
        key = (name, tuple(sorted(overrides.items())))
        if key not in made:
            out = str(tmp_path_factory.mktemp(name.replace("-", "_")) / "capture")
            params = SimParams(**{**SMALL, **overrides})
            command.run(name, out, params)
            made[key] = out
        return made[key]
    return make


def _files(root: str):
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            yield dirpath, name, os.path.join(dirpath, name)
def _assert_disk_matches_metadata(root: str) -> None:
    """A full mini-reconciliation: every assigned replica present with the live id in its assigned dir, and
    nothing else on disk (no stray/old/foreign entries, -delete dirs only within file.delete.delay.ms)."""
    doc = capture_doc(root)
    image, _, _ = replay(authoritative_copy(root))
    capture_ms = _ms(doc["capture_time"])
    seen = set()
    for view in log_dirs(root):
        assert view.meta.cluster_id == doc["cluster_id"]
        for name, _is_dir, entry in entries(view):
            assert entry.kind != "non_kafka", (view.path, name)
            if entry.kind == "delete":
                assert capture_ms - os.stat(os.path.join(view.path, name)).st_mtime * 1000 < 60_000 * 60 * 24 * 365
                continue
            assert entry.kind not in ("stray",), name
            if entry.kind != "partition":
                continue
            result = pm_result(os.path.join(view.path, name))
            assert result is not None and result.ok, (view.path, name)
            topic = image.topics[result.topic_id]
            assert topic["name"] == entry.topic
            part = topic["partitions"][entry.partition]
            assert view.broker_id in part["replicas"], (view.path, name)
            if part["directories"]:
                assigned = part["directories"][part["replicas"].index(view.broker_id)]
                assert assigned == view.meta.directory_id, (view.path, name)
            assert (view.broker_id, result.topic_id, entry.partition) not in seen
            seen.add((view.broker_id, result.topic_id, entry.partition))
    captured = {int(b) for b, info in doc["brokers"].items() if info["state"] != "absent"}
    for topic_id, topic in image.topics.items():
        for p, part in topic["partitions"].items():
            for b in part["replicas"]:
                if b in captured:
                    assert (b, topic_id, p) in seen, (topic["name"], p, b)


def _ms(iso: str) -> int:
    import datetime as dt

    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
