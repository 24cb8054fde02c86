"""The real devsample capture as a newer Kafka writes it: Kafka 4.3's registrations give exactly the original's
findings, and a record version no Kafka has written yet is named in summary.json, never a divergence.

Kafka 4.3 writes ``RegisterBrokerRecord`` v4 (KIP-1066: only the nullable tagged ``CordonedLogDirs`` is new, so a
broker with no cordoned dir gets the v3 body under version 4); tests/kafka_renumber.py rewrites the capture's
registrations that way, batch CRCs redone. The oracle is the capture's own truth (tests/devsample_truth.py):
the records say the same, so the findings must be the same.
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from jobs import nightly
from tests import devsample_truth
from tests.kafka_renumber import renumber_capture

pytestmark = pytest.mark.slow  # two whole nightly runs: `make test-slow`


def _run(capture: Path, base: Path, name: str) -> tuple:
    out = base / f"out-{name}"
    code = nightly.main(["--capture", str(capture), "--out", str(out), "--fail-on", "critical",
                         "--capture-time", "2026-11-21T02:00:00Z", "--set", f"storage.root={base / name}",
                         "--skip-quality"])
    with (out / "findings.csv").open() as fh:
        findings = list(csv.DictReader(fh))
    return code, findings, json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("newer-kafka")


def test_kafka_43_registrations_give_the_original_findings(spark, base, devsample_dir):
    capture = base / "kafka-4.3"
    shutil.copytree(devsample_dir, capture, ignore=shutil.ignore_patterns("tool-output", "expected.json"))
    assert renumber_capture(capture, api_key=0, new_version=4) == 48  # every registration of every copy
    code, findings, summary = _run(capture, base, "v4")
    assert devsample_truth.from_rows(findings) == devsample_truth.FINDINGS
    assert (code, summary["status"], summary["inputs"]["gaps"]) == (nightly.EXIT_FINDINGS, "findings", [])


def test_a_version_no_kafka_writes_yet_is_named_never_a_divergence(spark, base, devsample_dir):
    # the capture's own dump-log text (of the bytes before the rewrite) stays in: it must not outvote the disks
    capture = base / "kafka-next"
    shutil.copytree(devsample_dir, capture, ignore=shutil.ignore_patterns("expected.json"))
    renumber_capture(capture, api_key=0, new_version=99)
    code, findings, summary = _run(capture, base, "v99")
    assert not [f for f in findings if f["check_id"] == "METADATA_LOG_DIVERGENCE"]
    assert devsample_truth.from_rows(findings) == devsample_truth.FINDINGS
    assert (code, summary["status"], summary["inputs"]["complete"]) == (nightly.EXIT_INCOMPLETE, "incomplete", False)
    [gap] = summary["inputs"]["gaps"]
    # the authoritative sequence is broker 101's log from offset 0: registrations at 5-8 (v2) and 26-29 (v3)
    assert {k: gap[k] for k in ("reason", "record_type", "api_key", "version", "count", "first_offset")} == {
        "reason": "unreadable_metadata_records", "record_type": "REGISTER_BROKER_RECORD", "api_key": 0,
        "version": 99, "count": 8, "first_offset": 5}
    assert "kafka-recon needs an upgrade" in gap["message"]
