"""summary.json's published JSON Schema: what the job writes validates, the docs and the schema name the same
fields, and no published field disappears within a schema version."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jobs.report.aggregates import ReportData, RunInfo
from jobs.report.summary import SCHEMA_VERSION, build_summary, schema_errors, summary_schema
from jobs.run_outcome import outcome_summary

DOCS = Path(__file__).resolve().parents[2] / "docs" / "report.md"
# the fields schema_version 1 published: removing or renaming one needs a new schema version
PUBLISHED_V1 = {"schema_version", "run_id", "capture_id", "cluster_id", "capture_time", "started_at", "finished_at",
                "generated_at", "status", "exit_code", "fail_on", "stage", "error", "inputs", "counts",
                "bytes_reclaimable", "files", "stages", "findings_open", "findings_new", "findings_resolved", "dq",
                "report_files"}


def report_data() -> ReportData:
    return ReportData(
        run=RunInfo("run-1", "cap-1", "EKJ41Lv86vWjqGSh58Dg2w", "2026-11-27T00:10:00Z", 1, "2026-11-27T01:00:00Z",
                    "2026-11-27T01:03:10Z"),
        by_severity={"critical": 1, "warning": 1, "info": 0},
        by_check={"STALE_TOPIC_ID": {"count": 1, "severity": "critical", "bytes": 4430},
                  "STRAY_DIR": {"count": 1, "severity": "warning", "bytes": 10}},
        by_broker={"103": {"critical": 1, "warning": 0, "info": 0, "total": 1},
                   "unknown": {"critical": 0, "warning": 1, "info": 0, "total": 1}},
        reclaimable={"total": 4430, "by_broker": {"103": 4430}, "by_check": {"STALE_TOPIC_ID": 4430}},
        findings_open=2, findings_new=1, findings_resolved=3, rows=[], rows_total=2)


def test_a_report_summary_validates():
    doc = build_summary(report_data(), {"files_seen": 3, "files_ok": 2, "files_quarantined": 1,
                                        "stage_seconds_json": json.dumps({"ingest": 1.5})}, "critical",
                        {"success": True, "suites": 3, "expectations": 9, "failed": 0, "skipped": 1},
                        {"summary_json": "summary.json", "data_docs": None}, "2026-11-27T01:03:12Z")
    assert schema_errors(json.loads(json.dumps(doc))) == []
    assert doc["exit_code"] == 10 and doc["status"] == "findings"


@pytest.mark.parametrize("status,code,stage", [("error", 1, "ingest"), ("incomplete", 3, "ingest"),
                                               ("error", 2, "startup")])
def test_an_early_end_summary_validates(status, code, stage):
    doc = outcome_summary("run-2", status, code, "critical", stage=stage,
                          error={"kind": "OSError", "message": "no such capture"} if status == "error" else None,
                          gaps=[{"reason": "no_log_dirs", "message": "no broker log dir"}] if code == 3 else ())
    assert schema_errors(json.loads(json.dumps(doc, default=str))) == []


def test_the_schema_rejects_what_readers_could_not_use():
    doc = json.loads(json.dumps(build_summary(report_data(), {}, "never", None, {}, "2026-11-27T01:03:12Z")))
    assert schema_errors(doc) == []
    broken = {**doc, "status": "fine", "findings_open": -1}
    del broken["run_id"]
    errors = schema_errors(broken)
    assert any(e.startswith("(document): 'run_id' is a required property") for e in errors)
    assert any(e.startswith("status:") for e in errors) and any(e.startswith("findings_open:") for e in errors)
    assert schema_errors({**doc, "counts": {**doc["counts"], "by_severity": {"critical": 1}}})  # all three kept


def test_no_published_field_is_dropped_without_a_version_bump():
    schema = summary_schema()
    assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    if SCHEMA_VERSION == 1:
        assert PUBLISHED_V1 <= set(schema["required"]) <= set(schema["properties"])


def test_the_docs_show_the_schema_fields_and_a_valid_example():
    text = DOCS.read_text(encoding="utf-8")
    assert "jobs/report/summary.schema.json" in text
    section = text.split("### summary.json", 1)[1].split("### Exit codes", 1)[0]
    example = json.loads(re.search(r"```json\n(.*?)\n```", section, re.S).group(1))
    assert schema_errors(example) == []
    documented = {name.split(".")[0] for cell in re.findall(r"^\| (`[^|]+`) \|", section, re.M)
                  for name in re.findall(r"`([^`]+)`", cell)}
    assert documented == set(summary_schema()["properties"])
