"""Crash safety: SIGKILL the nightly job during a bronze write, during the findings MERGE and during the report;
after each kill every committed version of every table still loads (no torn commit is visible) and no key
is duplicated; a re-run of the same run then leaves tables and findings equal to an uninterrupted run's, and
deletes the staging folders the killed runs left (``storage.staging_max_age_hours``)."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from . import nightly_runs as nr
from .nightly_runs import RUN_ID

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]


def _findings_csv(out: Path) -> list:
    with open(out / "findings.csv", newline="") as handle:
        return sorted(tuple(row.items()) for row in csv.DictReader(handle))


def _assert_consistent(root: Path) -> None:
    nr.check_every_version_readable(root)
    assert nr.duplicate_keys(root) == {}


def test_killed_at_every_stage_then_rerun_equals_an_uninterrupted_run(nightly_capture, nightly_baseline, tmp_path):
    capture, baseline = nightly_capture, nightly_baseline
    root, out, log = tmp_path / "tables", tmp_path / "out", tmp_path / "runs.log"

    # 1. during a bronze write: Spark is filling a bronze table's staging folder, nothing committed yet
    proc = nr.start(capture, root, out, RUN_ID, log)
    assert nr.kill_when(proc, nr.any_bronze_write(root)), log.read_text()[-5000:]
    _assert_consistent(root)

    # 2. during the findings MERGE: gold_findings' new files are being written
    proc = nr.start(capture, root, out, RUN_ID, log)
    assert nr.kill_when(proc, lambda: nr.staging_exists(root / "gold_findings")), log.read_text()[-5000:]
    _assert_consistent(root)

    # 3. during the report (the pipeline's own kill point, inside the report stage)
    proc = nr.start(capture, root, out, RUN_ID, log, kill_at="during_report")
    assert nr.finish(proc) == -9, log.read_text()[-5000:]
    _assert_consistent(root)

    # the killed writes left their staging folders: only a live process cleans up after itself
    left = {t.name: sorted(p.name for p in (t / "_kr_staging").iterdir()) for t in nr.table_dirs(root)
            if nr.staging_exists(t)}
    assert "gold_findings" in left and any(name.startswith("bronze_") for name in left), left

    # 4. the re-run completes; everything equals the uninterrupted run. Its sweep deletes staging folders of
    # writes that began over ~0.4 s before it started: the killed runs', not its own (they begin later)
    proc = nr.start(capture, root, out, RUN_ID, log, sets=["storage.staging_max_age_hours=0.0001"])
    assert nr.finish(proc) == 0, log.read_text()[-5000:]
    _assert_consistent(root)
    assert [t.name for t in nr.table_dirs(root) if nr.staging_exists(t)] == []
    deleted = sum(len(folders) for folders in left.values())
    assert f"stale_staging_folders_deleted={deleted} " in log.read_text(), log.read_text()[-5000:]
    base_root, base_out = baseline.result()
    assert _findings_csv(out) == _findings_csv(base_out)
    assert nr.table_differences(nr.read_tables(root), nr.read_tables(base_root)) == {}
    assert len(_findings_csv(out)) == len(set(_findings_csv(out)))
