"""Every exit leaves summary.json and says what happened in one line (issue #65): ``--out`` is checked before
Spark starts (so nothing is merged into gold for a run that cannot report), SIGINT / SIGTERM end the run
``cancelled`` with the stage it was in (exit 130 / 143, as shells report 128 + the signal), and an undecodable
``--conf`` is a usage error."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from jobs import nightly
from jobs.report.summary import EXIT_SIGINT, EXIT_SIGTERM

REPO = Path(__file__).resolve().parents[2]


def _cli(args, cwd, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "jobs.cli", "nightly", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


@pytest.mark.parametrize("out, says", [
    ("/proc/kafka-recon-x", "/proc is a kernel filesystem"),
    ("{file}/sub", "cannot create it"),
    ("{file}", "exists and is not a directory"),
])
def test_an_out_that_cannot_hold_reports_stops_before_spark_and_before_any_table_write(tmp_path, out, says,
                                                                                        devsample_dir):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    out = out.format(file=a_file)
    proc = _cli(["--capture", str(devsample_dir), "--out", out], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "--out" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and "SparkContext" not in proc.stderr
    assert not (tmp_path / "kafka-recon-tables").exists()  # the default table root (cwd-relative): untouched
    assert a_file.read_text() == "x"


def test_a_conf_file_that_is_not_utf8_is_a_one_line_usage_error(tmp_path):
    (tmp_path / "capture").mkdir()
    conf = tmp_path / "conf.yaml"
    data = b"run:\n  fail_on: \xff\xfewarning\n"  # Latin-1 / UTF-16 bytes, not UTF-8
    conf.write_bytes(data)
    out = tmp_path / "out"
    proc = _cli(["--capture", str(tmp_path / "capture"), "--out", str(out), "--conf", str(conf)], cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--conf" in lines[0] and "not UTF-8" in lines[0] and f"0xff at offset {data.index(0xff)}" in lines[0]
    assert "Traceback" not in proc.stderr and "UnicodeDecodeError" not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "error" and summary["error"]["kind"] == "usage" and summary["exit_code"] == 2


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, EXIT_SIGINT), (signal.SIGTERM, EXIT_SIGTERM)])
def test_a_signal_mid_stage_ends_cancelled_with_the_stage_in_one_line(monkeypatch, tmp_path, capsys,
                                                                      devsample_dir, signum, code):
    """The signal arrives inside a stage, as from a shell's Ctrl-C or a scheduler's stop; the pipeline is
    replaced so that no Spark starts (the real one: tests/integration/test_run_cancelled.py)."""
    from jobs import pipeline

    def signalled(settings, timer, **kwargs):
        with timer.stage("ingest"):
            pass
        with timer.stage("reconcile"):
            os.kill(os.getpid(), signum)
            raise AssertionError("the signal did not stop the run")

    monkeypatch.setattr(pipeline, "run_pipeline", signalled)
    out = tmp_path / "out"
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        assert nightly.main(["--capture", str(devsample_dir), "--out", str(out), "--quiet"]) == code
    finally:
        signal.signal(signal.SIGINT, before[1])
    assert signal.getsignal(signal.SIGTERM) == before[0]  # the job's SIGTERM handler is its own business
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = [line for line in err.splitlines() if "status=cancelled exit_code=" in line]
    assert len(last) == 1 and f"cancelled by {signal.Signals(signum).name} during reconcile" in last[0]
    assert len(err.strip().splitlines()) == 1  # --quiet: the final line only; the rest is in the run's log
    log = (out / "kafka-recon.log").read_text()
    assert "stage=reconcile status=cancelled" in log  # the stage's own line says cancelled, not failed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "cancelled" and summary["exit_code"] == code and summary["stage"] == "reconcile"
    assert summary["error"]["kind"] == "cancelled" and summary["stages"]["ingest"] >= 0


@pytest.mark.parametrize("layout", ["a text file", "a folder of junk"])
def test_a_capture_of_nothing_recognisable_stops_before_spark_listing_what_it_found(tmp_path, layout):
    if layout == "a text file":
        capture = tmp_path / "notes.txt"
        capture.write_text("nothing to see\n")
        names = ["notes.txt"]
    else:
        capture = tmp_path / "junk"
        (capture / "sub").mkdir(parents=True)
        (capture / "README").write_text("hello\n")
        (capture / "sub" / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0 not kafka")
        names = ["README", "sub/photo.jpg"]
    out = tmp_path / "out"
    proc = _cli(["--capture", str(capture), "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "SparkContext" not in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    summary = json.loads((out / "summary.json").read_text())
    (gap,) = summary["inputs"]["gaps"]
    assert gap["reason"] == "no_input_files" and summary["stage"] == "discover"
    assert all(any(found.startswith(name) for found in gap["found"]) for name in names), gap
    assert all(name in gap["message"] for name in names)


def test_a_capture_time_in_the_future_is_a_usage_error_unless_allowed(tmp_path):
    from datetime import datetime, timedelta, timezone

    from jobs.run_outcome import UsageError, check_capture_time_not_future

    now = datetime(2026, 11, 22, 3, 0, tzinfo=timezone.utc)
    check_capture_time_not_future(now + timedelta(minutes=4), 300, False, now=now)  # clock skew: fine
    check_capture_time_not_future(now - timedelta(days=400), 300, False, now=now)  # the past: fine
    with pytest.raises(UsageError, match="ahead of this machine's clock"):
        check_capture_time_not_future(now + timedelta(minutes=6), 300, False, now=now)
    check_capture_time_not_future(now + timedelta(days=3 * 365), 300, True, now=now)
    (tmp_path / "capture").mkdir()
    proc = _cli(["--capture", str(tmp_path / "capture"), "--out", str(tmp_path / "out"),
                 "--capture-time", "2030-11-22T03:00:00Z"], cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "--capture-time" in line and "--allow-future-capture-time" in line
    allowed = _cli(["--capture", str(tmp_path / "capture"), "--out", str(tmp_path / "out2"),
                    "--capture-time", "2030-11-22T03:00:00Z", "--allow-future-capture-time"], cwd=tmp_path)
    assert allowed.returncode == 3  # accepted; the empty capture then ends incomplete as always


def test_collect_on_a_folder_that_is_not_a_log_dir_is_a_one_line_usage_error(tmp_path):
    folder = tmp_path / "not-a-log-dir"
    folder.mkdir()
    (folder / "notes.txt").write_text("x")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "collect", "--log-dir", str(folder), "--out",
                           str(tmp_path / "p.jsonl.gz")], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=env)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "not a Kafka log dir" in line and "meta.properties" in line and "notes.txt" in line
    assert not (tmp_path / "p.jsonl.gz").exists()
