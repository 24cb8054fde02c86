"""write_ingest: every bronze table written (one at a time or several at once), failures raised, none skipped."""
from __future__ import annotations

import threading
import time

import pytest

from jobs.ingest.stage import IngestResult, write_ingest


class FakeStore:
    """Records replace_slice calls; ``fail`` names tables whose write raises; tracks writes in flight."""

    def __init__(self, fail=(), delay=0.05):
        self.calls, self.fail, self.delay = [], set(fail), delay
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0

    def replace_slice(self, name, df, slice, run_id, staged=None):
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            time.sleep(self.delay)
            if name in self.fail:
                raise OSError(f"disk full writing {name}")
            with self.lock:
                self.calls.append((name, df, dict(slice), run_id, staged))
        finally:
            with self.lock:
                self.in_flight -= 1


def _result(names):
    return IngestResult("cap-1", "run-1", None, "unknown", {n: f"rows of {n}" for n in names}, 1, 1)


NAMES = [f"bronze_t{i}" for i in range(9)]


@pytest.mark.parametrize("parallelism", [1, 4])
def test_every_table_is_written_once_with_its_slice(parallelism):
    store = FakeStore()
    assert write_ingest(store, _result(NAMES), parallelism) == NAMES
    assert sorted(c[0] for c in store.calls) == sorted(NAMES)
    assert all(c[1] == f"rows of {c[0]}" and c[2] == {"capture_id": "cap-1"} and c[3] == "run-1"
               for c in store.calls)
    assert store.most_in_flight == (1 if parallelism == 1 else 4)


def test_a_failed_table_is_raised_after_every_other_table_was_written():
    store = FakeStore(fail={"bronze_t2", "bronze_t6"})
    with pytest.raises(OSError, match="bronze_t2"):  # the first failure in table order
        write_ingest(store, _result(NAMES), 4)
    assert sorted(c[0] for c in store.calls) == sorted(set(NAMES) - {"bronze_t2", "bronze_t6"})


def test_write_parallelism_comes_from_storage_and_is_at_least_one():
    from jobs.tables.delta_store import DeltaStore
    from tests.settings_from import settings_from

    def parallelism(*sets):
        return DeltaStore.from_settings(object(), settings_from(*sets).storage, probe=lambda _: True).write_parallelism

    assert parallelism() == 4
    assert parallelism("storage.write_parallelism=1") == 1
    assert parallelism("storage.write_parallelism=0") == 1
