"""Shared by the reliability tests: captures with the malformed corpus placed in them, and an in-process ingest.

``ingest_rows`` runs exactly the executor-side code of the ingest stage (discover -> decode_units) without
Spark, so most corpus checks cost a second; one Spark test runs the real stage over the same capture.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List

import pytest

from jobs.ingest.decode_tasks import decode_units
from jobs.ingest.discover import discover
from jobs.ingest.log_dir_rows import DecodeOptions
from tests.settings_from import settings_from

from .corpus_capture import copy_devsample, place_corpus


def ingest_rows(capture: Path, options: DecodeOptions = None) -> Dict[str, List[dict]]:
    """Every bronze row the ingest executors emit for ``capture``, per table (no Spark, no driver joins).

    Metadata records are decoded at once for every copy (``defer_metadata_records=False``): the Spark stage
    defers them to a second pass that decodes only the copies that need it (test_spark_ingest_... checks)."""
    units = [dict(kind=u.kind, root=u.root, path=u.path, display=u.rel_path or u.path, size=u.size,
                  headless=u.headless) for u in discover([str(capture)])]
    rows: Dict[str, List[dict]] = {}
    for batch in decode_units(units, options or DecodeOptions.from_settings(settings_from().ingest, defer_metadata_records=False)):
        for row in batch.to_pylist():
            rows.setdefault(row["table"], []).append(row[row["table"]])
    return rows


@pytest.fixture(scope="module")
def corpus_capture(tmp_path_factory):
    """(capture path, placed cases): the devsample plus every corpus case. Built once per module."""
    root = tmp_path_factory.mktemp("corpus")
    capture = copy_devsample(root / "capture")
    return capture, place_corpus(capture)


@pytest.fixture(scope="module")
def clean_capture(tmp_path_factory):
    return copy_devsample(tmp_path_factory.mktemp("clean") / "capture")


@pytest.fixture(autouse=True)
def _no_leftover_nightly_runs():
    """A test that fails or times out must not leave a nightly run (and its JVM) behind."""
    yield
    from .nightly_runs import kill_leftovers

    kill_leftovers()


@pytest.fixture(scope="session")
def nightly_capture(tmp_path_factory) -> Path:
    """A small simulated fleet with findings (stray-dirs) that the crash and concurrency tests run nightly on."""
    from .nightly_runs import simulate

    return simulate(tmp_path_factory.mktemp("sim") / "demo")


@pytest.fixture(scope="session")
def nightly_baseline(nightly_capture, tmp_path_factory):
    """One uninterrupted nightly run of the capture, started at once in the background (it runs while the
    crash and concurrency runs do); ``.result()`` waits for it and gives (tables root, report folder)."""
    from .nightly_runs import Baseline

    baseline = Baseline(nightly_capture, tmp_path_factory.mktemp("baseline"))
    yield baseline
    baseline.stop()
