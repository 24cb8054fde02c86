"""report.md: the same run in Markdown (for tickets, chat and git), readable raw and safe when rendered.

Input-derived text is escaped for Markdown *and* HTML (many renderers pass inline HTML through): ``&<>``
become entities, Markdown punctuation that could start a link, emphasis or a table cell is backslash-escaped,
and line breaks become spaces. Paths and ids go in code spans whose fence is longer than any backtick run
inside them (CommonMark), with ``|`` escaped for GitHub tables.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence

from .aggregates import SEVERITIES, ReportData
from .remediation import BrokerPlan
from .settings import ReportSettings
from .svg import human_bytes

_MD_PUNCT = re.compile(r"([\\`*_\[\]|#!~])")
_LINEBREAKS = re.compile(r"[\r\n\t\v\f\u2028\u2029]+")


def md(value: Any) -> str:
    """Plain text for a Markdown paragraph or table cell."""
    text = _LINEBREAKS.sub(" ", "" if value is None else str(value))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_PUNCT.sub(r"\\\1", text)


def code(value: Any, in_table: bool = False) -> str:
    """An inline code span that no content can break out of."""
    if value is None or value == "":
        return ""
    text = _LINEBREAKS.sub(" ", str(value))
    if in_table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def render_markdown(data: ReportData, summary: Dict[str, Any], plans: Sequence[BrokerPlan],
                    settings: ReportSettings, dq: Optional[Dict[str, Any]], links: Dict[str, str]) -> str:
    run = data.run
    lines: List[str] = [
        f"# {md(settings.title)}",
        "",
        f"**Status: {md(summary['status'].upper())}** — exit code {summary['exit_code']} (fail on "
        f"{md(summary['fail_on'])})",
        "",
        f"- Cluster: {code(run.cluster_id)}",
        f"- Capture: {code(run.capture_id)} at {md(run.capture_time or '?')}",
        f"- Run: {code(run.run_id)}",
        f"- Files: {md(links['report_html'])}, {md(links['summary_json'])}, {md(links['findings_csv'])}"
        + (f", Data Docs {md(links['data_docs'])}" if links.get("data_docs") else ""),
        "",
    ]
    gaps = (summary.get("inputs") or {}).get("gaps") or []
    if gaps:
        lines += ["## Input incomplete", ""] + [f"- `{g.get('reason')}` {md(g.get('message') or '')}" for g in gaps] + [""]
    lines += ["## At a glance", ""]
    files = summary["files"]
    lines += _table(["open", "critical", "warning", "info", "new", "resolved", "bytes reclaimable", "files seen",
                     "files ok", "files quarantined"],
                    [[str(data.findings_open), *(str(data.by_severity.get(s, 0)) for s in SEVERITIES),
                      str(data.findings_new), str(data.findings_resolved), md(human_bytes(data.reclaimable["total"])),
                      *("–" if files.get(k) is None else str(files[k]) for k in ("seen", "ok", "quarantined"))]])
    lines += ["", "## Open findings by check", ""]
    lines += _table(["check", "severity", "open", "bytes"],
                    [[md(c), md(v["severity"]), str(v["count"]), md(human_bytes(v["bytes"]))]
                     for c, v in data.by_check.items()]) if data.by_check else ["No open findings."]
    lines += ["", "## Open findings by broker", ""]
    lines += _table(["broker", "critical", "warning", "info", "total", "bytes reclaimable"],
                    [[md(b), *(str(v.get(s, 0)) for s in SEVERITIES), str(v["total"]),
                      md(human_bytes(data.reclaimable["by_broker"].get(b, 0)))]
                     for b, v in data.by_broker.items()]) if data.by_broker else ["No open findings."]
    shown = data.rows[: settings.max_rows_in_md]
    lines += ["", "## Findings", ""]
    if len(shown) < data.rows_total:
        lines += [f"First {len(shown)} of {data.rows_total} findings; findings.csv has all of them.", ""]
    if shown:
        lines += _table(["severity", "check", "broker", "log dir", "dir", "topic", "partition", "bytes", "status",
                         "message"],
                        [[md(r.get("severity")), md(r.get("check_id")), md(r.get("broker_id")),
                          code(r.get("log_dir"), True), code(r.get("dir_name"), True), md(r.get("topic_name")),
                          md(r.get("partition")), md(human_bytes(r.get("bytes"))), md(r.get("status")),
                          md(r.get("message"))] for r in shown])
    else:
        lines.append("No findings.")
    lines += ["", "## Remediation plan (dry run)", "",
              "kafka-recon changed nothing on any broker. Review each step and run it yourself, one broker at a time.",
              ""]
    for plan in plans:
        lines += [f"### {md('Not broker-specific' if plan.broker == 'unknown' else 'Broker ' + plan.broker)}", ""]
        for step in plan.steps(settings):
            lines.append(f"- [ ] {md(step.text)}: {code(step.command)}" if step.command else f"- [ ] {md(step.text)}")
        for item in plan.review:
            unsafe = f" (no command: {md(item.unsafe_reason)})" if item.unsafe_reason else ""
            where = f" {code(item.dir_name)}" if item.dir_name else ""
            lines.append(f"- [ ] review {md(item.check_id)}{where} — {md(item.message)} → "
                         f"{md(item.remediation)}{unsafe}")
        lines.append("")
    if not plans:
        lines += ["Nothing to do.", ""]
    lines += ["## Data quality", ""]
    if dq:
        lines.append(f"{dq.get('expectations', 0)} expectations in {dq.get('suites', 0)} suites: "
                     f"{dq.get('failed', 0)} failed, {dq.get('skipped', 0)} skipped.")
        for f in (dq.get("failures") or [])[:50]:
            lines.append(f"- {md(f.get('table'))}: {md(f.get('expectation'))} on {code(f.get('column'))} — "
                         f"{md(f.get('unexpected_count'))} unexpected")
    else:
        lines.append("Great Expectations did not run for this run.")
    lines.append("")
    return "\n".join(lines)
