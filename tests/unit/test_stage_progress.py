"""Stage lines say where the run is in its plan (issue #65: "stage k of n"), and the progress line of a stage
says the same, whichever Spark job is running."""
from __future__ import annotations

from jobs.stage_log import ProgressReporter, StageTimer


def test_stage_lines_and_progress_say_k_of_n(capsys):
    timer = StageTimer()
    timer.planned = ("ingest", "reconcile", "report")
    progress = ProgressReporter(timer, every_seconds=60, spark_tasks=False)
    with timer.stage("ingest"):
        during_ingest = progress.line()
    with timer.stage("reconcile"):
        during_reconcile = progress.line()
    with timer.stage("housekeeping"):  # outside the plan: no k/n
        outside = progress.line()
    starts = [line.split(" kafka-recon ", 1)[1] for line in capsys.readouterr().err.splitlines()
              if "status=start" in line]
    assert starts == ["stage=ingest status=start stage_k=1/3", "stage=reconcile status=start stage_k=2/3",
                      "stage=housekeeping status=start"]
    assert during_ingest.startswith("stage=ingest status=progress stage_k=1/3 ")
    assert during_reconcile.startswith("stage=reconcile status=progress stage_k=2/3 ")
    assert "stage_k" not in outside
