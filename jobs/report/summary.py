"""summary.json: the versioned, documented record of one run for dashboards (docs/report.md), with a
published JSON Schema (``summary.schema.json`` beside this module, shipped in the package).

Bump ``SCHEMA_VERSION`` (and the schema's ``schema_version`` const) only for breaking changes (a field
removed, renamed or retyped); new fields may be added within a version, so readers must ignore fields they do
not know. Tests validate every summary the job writes against the schema.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from .aggregates import SEVERITY_RANK, ReportData

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("summary.schema.json")
# exit codes (README "Exit codes"; Spark reserves 50-52, 124 and 127): one owner, here
EXIT_OK = 0  # no open finding at or above --fail-on
EXIT_ERROR = 1  # the job failed (summary.json: status error, the stage, the error)
EXIT_USAGE = 2  # bad command line or configuration (one line naming the flag or key)
EXIT_INCOMPLETE = 3  # the capture cannot support a verdict (summary.json inputs.gaps); --allow-partial accepts some
EXIT_FINDINGS = 10  # at least one open finding at or above --fail-on
EXIT_SIGINT = 130  # cancelled by SIGINT (Ctrl-C): 128 + the signal number, as shells report it
EXIT_SIGTERM = 143  # cancelled by SIGTERM (a scheduler stopping the job)
EXIT_CODES = {EXIT_OK: "ok", EXIT_FINDINGS: "findings", EXIT_ERROR: "error", EXIT_USAGE: "usage error",
              EXIT_INCOMPLETE: "incomplete", EXIT_SIGINT: "cancelled", EXIT_SIGTERM: "cancelled"}
FAIL_ON = ("info", "warning", "critical", "never")


def exit_code_for(counts_by_severity: Dict[str, int], fail_on: str) -> int:
    """10 when an open finding is at or above ``fail_on``, else 0 (``never``: always 0)."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {FAIL_ON}, got {fail_on!r}")
    if fail_on == "never":
        return EXIT_OK
    threshold = SEVERITY_RANK[fail_on]
    hit = any(n for sev, n in counts_by_severity.items() if SEVERITY_RANK.get(sev, 0) >= threshold)
    return EXIT_FINDINGS if hit else EXIT_OK


def run_status(data: ReportData, run_summary: Dict[str, Any]) -> str:
    """error / incomplete as the pipeline decided, else findings or ok."""
    decided = str(run_summary.get("status") or "")
    if decided in ("error", "incomplete"):
        return decided
    return "findings" if data.findings_open else "ok"


def _stages(run_summary: Dict[str, Any]) -> Dict[str, float]:
    stages = run_summary.get("stages")
    if stages is None and run_summary.get("stage_seconds_json"):
        try:
            stages = json.loads(run_summary["stage_seconds_json"])
        except (TypeError, ValueError):
            stages = None
    if not isinstance(stages, dict):
        return {}
    out = {}
    for name, seconds in stages.items():
        try:
            out[str(name)] = round(float(seconds), 3)
        except (TypeError, ValueError):
            continue
    return out


def _int_or_none(value: Any) -> Optional[int]:
    return None if value is None else int(value)


def build_summary(data: ReportData, run_summary: Dict[str, Any], fail_on: str,
                  dq_summary: Optional[Dict[str, Any]], report_files: Dict[str, Optional[str]],
                  generated_at: str) -> Dict[str, Any]:
    """The summary.json document (a plain dict, JSON-serializable)."""
    status = run_status(data, run_summary)
    exit_code = {"error": EXIT_ERROR, "incomplete": EXIT_INCOMPLETE}.get(status) \
        or exit_code_for(data.by_severity, fail_on)
    dq = None
    if dq_summary:
        dq = {k: dq_summary.get(k) for k in ("success", "suites", "expectations", "failed", "skipped")}
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": data.run.run_id,
        "capture_id": data.run.capture_id,
        "cluster_id": data.run.cluster_id,
        "capture_time": data.run.capture_time,
        "started_at": data.run.started_at,
        "finished_at": data.run.finished_at,
        "generated_at": generated_at,
        "status": status,
        "exit_code": exit_code,
        "fail_on": fail_on,
        "stage": None,
        "error": None,
        "inputs": {"complete": not run_summary.get("input_gaps"), "allow_partial": bool(run_summary.get("allow_partial")),
                   "gaps": list(run_summary.get("input_gaps") or [])},
        "counts": {
            "by_severity": dict(data.by_severity),
            "by_check": {check: v["count"] for check, v in data.by_check.items()},
            "by_broker": {broker: dict(v) for broker, v in data.by_broker.items()},
        },
        "bytes_reclaimable": {
            "total": data.reclaimable["total"],
            "by_broker": dict(data.reclaimable["by_broker"]),
            "by_check": dict(data.reclaimable["by_check"]),
        },
        "files": {
            "seen": _int_or_none(run_summary.get("files_seen")),
            "ok": _int_or_none(run_summary.get("files_ok")),
            "quarantined": _int_or_none(run_summary.get("files_quarantined")),
        },
        "stages": _stages(run_summary),
        "findings_open": data.findings_open,
        "findings_new": data.findings_new,
        "findings_resolved": data.findings_resolved,
        "dq": dq,
        "report_files": dict(report_files),
    }


def summary_schema() -> Dict[str, Any]:
    """The published JSON Schema of summary.json (draft 2020-12)."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def schema_errors(doc: Any) -> List[str]:
    """Every way ``doc`` breaks the published schema, one line each (``path: message``); empty when valid.
    Uses ``jsonschema`` (installed with Great Expectations), imported only here."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(summary_schema())
    return [f"{'/'.join(map(str, e.absolute_path)) or '(document)'}: {e.message}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]
