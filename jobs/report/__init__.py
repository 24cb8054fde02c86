"""Reports for SREs and dashboards: summary.json, findings.csv, report.md and a self-contained report.html.

Entry point: :func:`write_reports` (``writer.py``). Schema of summary.json and the exit codes:
docs/report.md. Nothing here touches a broker: the remediation plan is a dry-run checklist.
"""
from .summary import SCHEMA_VERSION, exit_code_for
from .writer import ReportPaths, write_reports

__all__ = ["SCHEMA_VERSION", "ReportPaths", "exit_code_for", "write_reports"]
