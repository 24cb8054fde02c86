"""Entries of a log dir that are not Kafka data (symlinks, dangling links, FIFOs) get their own entry kind,
say what they are, are never replicas, and never move the capture time (issue #65). On a copy of the real
devsample capture (Kafka-written log dirs), through the executors' own ingest code (no Spark).

Kafka's rule for what it loads: LogManager.loadLogs keeps the entries for which java.io.File.isDirectory is
true (a link to a directory counts, a dangling link or a FIFO does not); kafka-recon never follows any."""
from __future__ import annotations

import os

import pytest

from jobs.ingest.input_damage import FACT
from tests.reliability.conftest import ingest_rows
from tests.reliability.corpus_capture import copy_devsample

LOG_DIR = "broker-101/kafka-logs"


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    clean = copy_devsample(tmp_path_factory.mktemp("clean") / "capture")
    odd = copy_devsample(tmp_path_factory.mktemp("odd") / "capture")
    log_dir = odd / LOG_DIR
    before = log_dir.stat()
    os.symlink("/etc", log_dir / "evil-0")
    os.symlink(str(odd / "no-such-dir"), log_dir / "dangling-0")
    os.mkfifo(log_dir / "pipe-0")
    # the entries' own times are now; the log dir's time is put back (adding any entry moves it, as Kafka's
    # own creates and renames do): what is tested is that the entries themselves count for nothing
    os.utime(log_dir, ns=(before.st_atime_ns, before.st_mtime_ns))
    return ingest_rows(clean), ingest_rows(odd)


def _entries(rows, name):
    return [r for r in rows["bronze_dir_entries"] if r["entry_name"] == name and r["log_dir"].endswith(LOG_DIR)]


def test_links_and_fifos_are_special_entries_that_say_what_they_are(captures):
    _, odd = captures
    (evil,) = _entries(odd, "evil-0")
    (dangling,) = _entries(odd, "dangling-0")
    (pipe,) = _entries(odd, "pipe-0")
    assert {evil["entry_kind"], dangling["entry_kind"], pipe["entry_kind"]} == {"special"}
    assert evil["name_error"] == "symlink to '/etc'"
    assert dangling["name_error"].startswith("symlink to ") and "no-such-dir" in dangling["name_error"]
    assert pipe["name_error"] == "FIFO (named pipe)"
    for entry in (evil, dangling, pipe):  # no topic or partition parsed from the name: never a replica
        assert entry["topic"] is None and entry["partition"] is None and entry["topic_id"] is None


def test_special_entries_do_not_move_the_capture_time(captures):
    """The default capture time is the newest mtime of the capture's data; a link made now must not move it."""
    clean, odd = captures

    def newest(rows):
        return max(f["time_value"] for f in rows["_ingest_facts"] if f["fact"] == "newest_mtime")

    assert newest(odd) == newest(clean)


def test_special_entries_are_not_damaged_input(captures):
    _, odd = captures
    assert not [f for f in odd["_ingest_facts"] if f["fact"] == FACT]
