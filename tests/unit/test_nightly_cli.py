"""The nightly entry point's contract without Spark: exit codes per --fail-on, usage errors, config errors,
and the outcomes decided before Spark starts (each with its summary.json)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from jobs import nightly
from jobs.cli import main as cli_main


@pytest.mark.parametrize(
    "counts, fail_on, expected",
    [
        ({"critical": 1, "warning": 0, "info": 0}, "critical", 10),
        ({"critical": 0, "warning": 2, "info": 5}, "critical", 0),
        ({"critical": 0, "warning": 2, "info": 0}, "warning", 10),
        ({"critical": 0, "warning": 0, "info": 3}, "warning", 0),
        ({"critical": 0, "warning": 0, "info": 3}, "info", 10),
        ({"critical": 0, "warning": 0, "info": 0}, "info", 0),
        ({"critical": 9, "warning": 9, "info": 9}, "never", 0),
    ],
)
def test_exit_code_for_each_fail_on_level(counts, fail_on, expected):
    assert nightly.exit_code_for(counts, fail_on) == expected


def test_exit_codes_avoid_sparks_reserved_values():
    used = {nightly.EXIT_OK, nightly.EXIT_ERROR, nightly.EXIT_USAGE, nightly.EXIT_FINDINGS, nightly.EXIT_INCOMPLETE}
    assert len(used) == 5 and used.isdisjoint({50, 51, 52, 124, 127})


def test_missing_required_arguments_is_a_usage_error(capsys):
    assert nightly.main([]) == 2
    assert "--capture" in capsys.readouterr().err


def test_bad_fail_on_value_is_a_usage_error_in_one_line(capsys):
    assert nightly.main(["--capture", "x", "--out", "y", "--fail-on", "sometimes"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--fail-on" in err and "never" in err


def _run(args, tmp_path):
    """The real entry point in a subprocess: (exit code, stderr, summary.json or None)."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "nightly", *args, "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    summary = out / "summary.json"
    return proc.returncode, proc.stderr, json.loads(summary.read_text()) if summary.exists() else None


def test_empty_capture_is_incomplete_never_ok_and_spark_never_starts(tmp_path):
    empty = tmp_path / "capture"
    empty.mkdir()
    code, err, summary = _run(["--capture", str(empty)], tmp_path)
    assert code == nightly.EXIT_INCOMPLETE == summary["exit_code"]
    assert summary["status"] == "incomplete" and summary["stage"] == "discover"
    assert [g["reason"] for g in summary["inputs"]["gaps"]] == ["no_input_files"]
    assert "Traceback" not in err and "SparkContext" not in err and len(err.strip().splitlines()) == 1


def test_missing_capture_path_is_one_line_exit_2_with_a_summary(tmp_path):
    code, err, summary = _run(["--capture", str(tmp_path / "nope")], tmp_path)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "nope" in err and "no such file or directory" in err
    assert summary["status"] == "error" and summary["error"]["kind"] == "usage" and summary["exit_code"] == 2


@pytest.mark.parametrize("extra, names", [
    (["--capture-time", "yesterday"], ["--capture-time", "ISO-8601"]),
    (["--set", "checks.STALE_TOPIC_ID.severity=urgent"], ["checks.STALE_TOPIC_ID.severity", "critical, warning, info"]),
    (["--set", "run.fail_on=sometimes"], ["run.fail_on", "never"]),
    (["--set", "storage.rooot=/x"], ["rooot"]),
    (["--conf", "/no/such.yaml"], ["--conf", "No such file"]),
])
def test_user_errors_are_one_line_exit_2_before_spark(tmp_path, capsys, extra, names):
    (tmp_path / "capture").mkdir()
    assert nightly.main(["--capture", str(tmp_path / "capture"), "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert all(name in err for name in names), err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["status"] == "error" and summary["stage"] == "startup"


def test_unknown_uri_scheme_is_a_usage_error(tmp_path, capsys):
    assert nightly.main(["--capture", "ftp://host/captures", "--out", str(tmp_path / "o")]) == 2
    assert "'ftp'" in capsys.readouterr().err


def test_late_gaps_name_the_missing_brokers_and_a_shrunk_capture():
    from jobs.run_outcome import gaps_after_ingest, gaps_after_reconcile

    assert gaps_after_ingest({"bronze_log_dirs": 3, "bronze_metadata_records": 10}, True) == []
    assert [g["reason"] for g in gaps_after_ingest({"bronze_log_dirs": 0, "bronze_metadata_records": 12}, False)] == [
        "no_log_dirs", "no_controller_view"]  # bootstrap.checkpoint records are no controller view
    assert gaps_after_ingest({"bronze_log_dirs": 2, "bronze_zk_events": 5}, False) == []
    gaps = gaps_after_reconcile([7, 3], files_seen=40, previous_files_seen=100, min_ratio=0.5)
    assert gaps[0]["brokers"] == [3, 7] and "3, 7" in gaps[0]["message"]
    assert gaps[1]["reason"] == "capture_shrunk"
    assert gaps_after_reconcile([], 60, 100, 0.5) == [] and gaps_after_reconcile([], 1, 100, 0) == []


def test_cli_lists_commands_and_rejects_unknown_ones(capsys):
    assert cli_main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("nightly", "simulate", "collect", "decode", "demo"):
        assert command in out
    assert cli_main(["frobnicate"]) == 2


def test_library_code_calling_sys_exit_mid_run_is_an_error_with_a_summary(monkeypatch, tmp_path, devsample_dir):
    """sys.exit(0) from a library inside a stage (PySpark's doctest guess did so while Great Expectations was
    imported) must not end the run green: exit 1 and an error summary naming where it stopped."""
    from jobs import pipeline

    def exits(settings, timer, **kwargs):
        with timer.stage("quality"):
            raise SystemExit(0)

    monkeypatch.setattr(pipeline, "run_pipeline", exits)
    out = tmp_path / "out"
    assert nightly.main(["--capture", str(devsample_dir), "--out", str(out), "--quiet"]) == nightly.EXIT_ERROR
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "error" and summary["exit_code"] == nightly.EXIT_ERROR
    assert summary["stage"] == "quality" and summary["error"]["kind"] == "SystemExit"
