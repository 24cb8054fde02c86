"""A damaged input is about the capture, never about Kafka (issue #65): the real devsample's brokers packed by
the collector, broker 101's pack cut to its first 3,000 bytes (``head -c 3000``). The run names the cut pack in
summary.json ``inputs.gaps`` and on the report's first screen, ends ``incomplete`` (exit 3), still finds what
Kafka says is wrong on the other brokers (tests/devsample_truth.py), and reports nothing absence-based about
broker 101 above info: what was not read is not missing from the broker."""
from __future__ import annotations

import csv
import json

import pytest

from collector.cli import main as collect
from jobs import nightly
from jobs.reconcile.catalogue import default_catalogue
from tests import devsample_truth
from tests.reliability.corpus_capture import copy_devsample

pytestmark = pytest.mark.slow  # a whole nightly run: `make test-slow`
CUT = "broker-101.jsonl.gz"
LOG_DIRS = {"broker-101": ["kafka-logs"], "broker-102": ["kafka-logs-a", "kafka-logs-b"],
            "broker-103": ["kafka-logs"], "broker-104": ["kafka-logs"]}


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("damaged")
    tree = copy_devsample(base / "tree")
    capture = base / "capture"
    capture.mkdir()
    for broker, dirs in LOG_DIRS.items():
        assert collect(["--log-dir", *[str(tree / broker / d) for d in dirs], "--include-metadata-log",
                        "--out", str(capture / f"{broker}.jsonl.gz")]) == 0
    (capture / CUT).write_bytes((capture / CUT).read_bytes()[:3000])
    out = base / "out"
    code = nightly.main(["--capture", str(capture), "--out", str(out), "--set", f"storage.root={base / 'tables'}",
                         "--skip-quality", "--quiet"])
    with open(out / "findings.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return code, json.loads((out / "summary.json").read_text()), rows, (out / "report.html").read_text()


def test_the_cut_pack_is_a_gap_and_the_run_is_incomplete(run):
    code, summary, _, _ = run
    assert code == nightly.EXIT_INCOMPLETE == summary["exit_code"] and summary["status"] == "incomplete"
    assert summary["inputs"]["complete"] is False
    (gap,) = [g for g in summary["inputs"]["gaps"] if g["reason"] == "damaged_input"]
    assert gap["file"] == CUT and gap["node"] == 101 and gap["error_kind"] == "truncated_pack"
    assert gap["bytes"] == 3000 and gap["rows_read"] >= 0 and "truncated" in gap["message"]


def test_the_report_leads_with_the_damaged_input(run):
    _, _, _, html = run
    gaps_at = html.index('id="input-gaps"')
    assert gaps_at < html.index('class="cards"')  # above the count tiles, right under the banner
    assert CUT in html[gaps_at:gaps_at + 2000] and "truncated" in html[gaps_at:gaps_at + 2000]


def test_other_brokers_findings_are_still_kafkas_truth(run):
    _, _, rows, _ = run
    found = devsample_truth.from_rows(rows)
    expected = {f for f in devsample_truth.FINDINGS if f[1] in (102, 103, 104)}
    assert expected <= found
    assert {f for f in found if f[1] in (102, 103, 104)} == expected


def test_nothing_absence_based_about_the_damaged_broker_is_above_info(run):
    _, _, rows, _ = run
    absence = set(default_catalogue().absence_based())
    about_101 = [r for r in rows if r["broker_id"] == "101"]
    assert about_101, "the cut pack hides replica dirs: the absence checks must have something to say"
    for row in about_101:
        assert row["check_id"] in absence, row  # the cut hides data; it cannot create a presence finding
        assert row["severity"] == "info" and row["message"].startswith("Undecided: input damaged (" + CUT)
