"""report.html: one self-contained page (inline CSS, JS and SVG; no external resource of any kind).

Pure string building. Every value that comes from input — topic names, paths, messages, evidence, ids — goes
through ``esc`` (``html.escape`` with quotes) exactly once, in this module or in ``svg.py``. On top of that,
a Content-Security-Policy meta tag allows only *this* stylesheet and *this* script (by sha256 hash), no
network, and images only as data: URIs — so even a mistake in escaping could not run an injected script.
"""
from __future__ import annotations

import base64
import hashlib
import json
from importlib import resources
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from .aggregates import SEVERITIES, ReportData
from .remediation import BrokerPlan
from .settings import ReportSettings
from .svg import (
    COLORS,
    esc,
    hbar_chart,
    human_bytes,
    pid_timeline,
    source_kind,
    sparkline,
    stacked_hbar_chart,
    trend_chart,
)

if TYPE_CHECKING:
    from jobs.reconcile.catalogue import Catalogue

TABLE_COLUMNS = (
    # (header, column key, type for sorting). Eight columns with fixed widths (report.css th.col-*) and wrapping
    # text fit 1366 px without sideways scrolling; the message and the remediation are always on screen.
    ("Severity", "severity", "text"), ("Check", "check_id", "text"), ("Where", "where", "num"),
    ("Topic", "topic", "text"), ("Bytes", "bytes", "num"), ("First seen", "first_seen", "text"),
    ("Status", "status", "text"), ("Message and remediation", "message", "text"),
)
SEVERITY_SORT = {"critical": "1", "warning": "2", "info": "3"}


def _asset(name: str) -> str:
    return resources.files("jobs.report").joinpath("static", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def csp(style: str, script: str) -> str:
    return ("default-src 'none'; "
            f"style-src 'sha256-{_sha256(style)}'; script-src 'sha256-{_sha256(script)}'; "
            "img-src data:; font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")


def _fmt_int(n: Optional[int]) -> str:
    return "–" if n is None else f"{int(n):,}"


def broker_label(broker: str) -> str:
    """"broker 103", or "not broker-specific" for findings without a broker (summary key "unknown")."""
    return "not broker-specific" if broker == "unknown" else f"broker {broker}"


def _card(label: str, value: str, cls: str = "", metric: str = "", tip: str = "") -> str:
    title = f' title="{esc(tip)}"' if tip else ""
    return (f'<div class="card {esc(cls)}"{title}><span class="num" data-metric="{esc(metric)}">{esc(value)}</span>'
            f'<span class="lbl">{esc(label)}</span></div>')


def _evidence(text: Optional[str], limit: int) -> str:
    if not text:
        return ""
    try:
        pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        pretty = str(text)
    if len(pretty) > limit:
        pretty = pretty[:limit] + f"\n… cut at {limit} characters (full evidence in gold_findings)"
    return pretty


def _glance(data: ReportData, summary: Dict[str, Any], dq: Optional[Dict[str, Any]], links: Dict[str, str]) -> str:
    status = summary["status"]
    crit = " has-critical" if data.by_severity.get("critical") else ""
    label = {"ok": "OK", "findings": "FINDINGS", "error": "ERROR"}.get(status, status.upper())
    files = summary["files"]
    cards = [
        _card("open findings", _fmt_int(data.findings_open), "", "open"),
        _card("critical", _fmt_int(data.by_severity.get("critical", 0)), "critical", "critical"),
        _card("warning", _fmt_int(data.by_severity.get("warning", 0)), "warning", "warning"),
        _card("info", _fmt_int(data.by_severity.get("info", 0)), "info", "info"),
        _card("new this run", _fmt_int(data.findings_new), "", "new"),
        _card("resolved this run", _fmt_int(data.findings_resolved), "", "resolved"),
        _card("bytes reclaimable", human_bytes(data.reclaimable["total"]), "", "bytes_reclaimable",
              f"{data.reclaimable['total']:,} bytes"),
        _card("files seen", _fmt_int(files.get("seen")), "", "files_seen"),
        _card("files ok", _fmt_int(files.get("ok")), "", "files_ok"),
        _card("files quarantined", _fmt_int(files.get("quarantined")), "", "files_quarantined"),
    ]
    if dq:
        cards.append(_card("data-quality checks failed", f"{dq.get('failed', 0)} / {dq.get('expectations', 0)}",
                           "critical" if dq.get("failed") else "", "dq_failed"))
    dq_link = ""
    if links.get("data_docs"):
        dq_link = f' · <a href="{esc(links["data_docs"])}">Data Docs</a>'
    return (
        f'<section id="glance"><div class="banner status-{esc(status)}{crit}">'
        f'<span class="state" id="run-status">{esc(label)}</span>'
        f'<span>exit code <b id="exit-code">{esc(summary["exit_code"])}</b> (fail on {esc(summary["fail_on"])})</span>'
        f'<span>{esc(_fmt_int(data.findings_open))} open · {esc(_fmt_int(data.findings_new))} new · '
        f'{esc(_fmt_int(data.findings_resolved))} resolved</span></div>'
        f'{_input_gaps(summary)}'
        f'<div class="cards">{"".join(cards)}</div>'
        f'<p class="muted">Files: <a href="{esc(links["summary_json"])}">summary.json</a> · '
        f'<a href="{esc(links["findings_csv"])}">findings.csv</a> · <a href="{esc(links["report_md"])}">report.md</a>'
        f'{dq_link}</p></section>'
    )


def _input_gaps(summary: Dict[str, Any]) -> str:
    """What the capture lacks or could not be read, right under the banner: a damaged or missing input is
    about the capture, and the findings it leaves undecided say so."""
    inputs = summary.get("inputs") or {}
    gaps = inputs.get("gaps") or []
    if not gaps:
        return ""
    head = ("Input incomplete (accepted with --allow-partial)" if inputs.get("allow_partial")
            else "Input incomplete: this run cannot give a verdict on what it could not read")
    items = "".join(f'<li data-reason="{esc(g.get("reason"))}"><code>{esc(g.get("reason"))}</code> '
                    f'{esc(g.get("message"))}</li>' for g in gaps)
    return f'<div class="input-gaps" id="input-gaps"><b>{esc(head)}</b><ul>{items}</ul></div>'


def _charts(data: ReportData) -> str:
    sev_items = [(s, data.by_severity.get(s, 0), COLORS[s], _fmt_int(data.by_severity.get(s, 0)),
                  f"{data.by_severity.get(s, 0)} open {s} findings") for s in SEVERITIES]
    check_items = [(c, v["count"], COLORS.get(v["severity"], "#888"), _fmt_int(v["count"]),
                    f"{c}: {v['count']} open ({v['severity']}), {human_bytes(v['bytes'])}")
                   for c, v in data.by_check.items()]
    broker_items = [(broker_label(b), [(s, v.get(s, 0)) for s in SEVERITIES], v["total"])
                    for b, v in data.by_broker.items()]
    bytes_items = [(broker_label(b), n, COLORS["bytes"], human_bytes(n), f"{broker_label(b)}: {n:,} bytes reclaimable")
                   for b, n in data.reclaimable["by_broker"].items()]
    legend = ('<div class="legend"><span class="sw sw-critical"></span>critical<span class="sw sw-warning"></span>'
              'warning<span class="sw sw-info"></span>info</div>')
    return (
        '<section id="charts"><div class="grid2">'
        f'<div class="panel"><h3>Open findings by severity</h3>{hbar_chart("chart-severity", sev_items)}</div>'
        f'<div class="panel"><h3>Open findings by check</h3>{legend}'
        f'{hbar_chart("chart-check", check_items, empty_text="No open findings")}</div>'
        f'<div class="panel"><h3>Open findings by broker</h3>{legend}'
        f'{stacked_hbar_chart("chart-broker", broker_items, empty_text="No open findings")}</div>'
        f'<div class="panel"><h3>Bytes reclaimable per broker</h3>'
        f'<p class="muted">Open findings of leftover-data checks: '
        f'{esc(human_bytes(data.reclaimable["total"]))} in total.</p>'
        f'{hbar_chart("chart-bytes", bytes_items, empty_text="Nothing to reclaim")}</div>'
        '</div></section>'
    )


def _pid_section(data: ReportData) -> str:
    shown = len(data.pid_blocks)
    note = (f"{shown} most recent of {data.pid_blocks_total} blocks shown."
            if data.pid_blocks_total > shown else f"{shown} blocks.")
    sources = sorted({str(b.get("source") or "unknown source") for b in data.pid_blocks})
    sw = "".join(f'<span class="sw sw-{source_kind(s)}"></span>{esc(s)}' for s in sources)
    return (
        '<section id="pid"><div class="panel"><h2>Producer-id blocks by broker</h2>'
        f'<div class="legend">{sw}<span class="sw sw-overlap"></span>overlaps another block'
        f'<span class="sw sw-regression"></span>starts below an earlier block</div>'
        f'{pid_timeline("chart-pid", data.pid_blocks)}<p class="muted">{esc(note)} Hover a block for its range, '
        'source and allocation; flags are computed over the blocks drawn — the PID_* findings are authoritative.</p>'
        '</div></section>'
    )


def _trend_section(data: ReportData) -> str:
    return (
        '<section id="trend"><div class="panel"><h2>Open findings across runs</h2>'
        '<div class="legend"><span class="sw sw-open"></span>open<span class="sw sw-critical"></span>critical'
        ' (ringed point: this run)</div>'
        f'{trend_chart("chart-trend", data.trend)}<p class="muted">{len(data.trend)} runs from gold_run_summary.</p>'
        f'</div>{_trend_tables(data)}</section>'
    )


MAX_TREND_BROKERS = 20


def _trend_tables(data: ReportData) -> str:
    """Per check and per broker across the same runs: open findings (and bytes reclaimable per broker)."""
    if not data.trend_by_check and not data.trend_by_broker:
        return ""
    runs = len(data.trend)
    checks = "".join(
        f'<tr data-check="{esc(c)}"><td><a href="#check-{esc(c)}">{esc(c)}</a></td>'
        f'<td>{sparkline(v, COLORS["open"], f"{c}: open findings over {runs} runs")}</td>'
        f'<td class="num">{v[-1]:,}</td></tr>' for c, v in data.trend_by_check.items())
    ranked = sorted(data.trend_by_broker.items(),
                    key=lambda kv: (-kv[1]["open"][-1], -kv[1]["reclaimable"][-1]))[:MAX_TREND_BROKERS]
    brokers = "".join(
        f'<tr data-broker="{esc(b)}"><td>{esc(broker_label(b))}</td>'
        f'<td>{sparkline(v["open"], COLORS["open"], f"broker {b}: open findings over {runs} runs")}</td>'
        f'<td class="num">{v["open"][-1]:,}</td>'
        f'<td>{sparkline(v["reclaimable"], COLORS["bytes"], f"broker {b}: bytes reclaimable over {runs} runs")}</td>'
        f'<td class="num">{esc(human_bytes(v["reclaimable"][-1]))}</td></tr>' for b, v in ranked)
    more = len(data.trend_by_broker) - len(ranked)
    note = f'<p class="muted">{more} more brokers not shown (fewest open findings).</p>' if more > 0 else ""
    return (
        '<div class="grid2 trend-tables">'
        '<div class="panel"><h3>Per check across runs</h3><table id="trend-checks"><thead><tr><th>Check</th>'
        f'<th>Open findings</th><th class="num">Now</th></tr></thead><tbody>{checks}</tbody></table></div>'
        '<div class="panel"><h3>Per broker across runs</h3><table id="trend-brokers"><thead><tr><th>Broker</th>'
        '<th>Open findings</th><th class="num">Now</th><th>Bytes reclaimable</th><th class="num">Now</th></tr>'
        f'</thead><tbody>{brokers}</tbody></table>{note}</div></div>'
    )


def _options(name: str, label: str, values: Sequence[str]) -> str:
    opts = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
    return (f'<label>{esc(label)} <select data-filter="{esc(name)}" id="filter-{esc(name)}">'
            f'<option value="">all</option>{opts}</select></label>')


def _cell(row: Dict[str, Any], key: str) -> str:
    value = row.get(key)
    if key == "severity":
        sev = str(value or "")
        return f'<td data-sort="{SEVERITY_SORT.get(sev, "9")}"><span class="sev sev-{esc(sev)}">{esc(sev)}</span></td>'
    if key == "check_id":
        return f'<td class="c-check_id"><a href="#check-{esc(value)}" title="what it means">{esc(value)}</a></td>'
    if key == "where":
        broker = row.get("broker_id")
        place = "".join(f'<code class="path">{esc(row.get(k))}</code>' for k in ("log_dir", "dir_name") if row.get(k))
        label = "" if broker is None else f'<b>broker {esc(broker)}</b>'
        return f'<td class="c-where" data-sort="{esc("" if broker is None else broker)}">{label}{place}</td>'
    if key == "topic":
        name, part, tid = row.get("topic_name"), row.get("partition"), row.get("topic_id")
        title = f'{esc(name or "")}{"-" + esc(part) if part is not None else ""}'
        ident = f'<code class="path">{esc(tid)}</code>' if tid else ""
        return f'<td class="c-topic">{title}{ident}</td>'
    if key == "bytes":
        sort = "" if value is None else str(int(value))
        return f'<td class="num" data-sort="{sort}" title="{esc(_fmt_int(value))} bytes">{esc(human_bytes(value))}</td>'
    if key == "message":
        return (f'<td class="c-message"><p class="msg">{esc(value)}</p>'
                f'<p class="fix"><b>Fix:</b> {esc(row.get("remediation"))}</p></td>')
    return f'<td class="c-{key}">{esc(value)}</td>'


def _findings_section(data: ReportData, settings: ReportSettings, links: Dict[str, str]) -> str:
    rows = data.rows
    checks = sorted({str(r.get("check_id")) for r in rows if r.get("check_id")})
    brokers = sorted({str(r.get("broker_id")) for r in rows if r.get("broker_id") is not None},
                     key=lambda b: (len(b), b))
    severities = [s for s in SEVERITIES if any(r.get("severity") == s for r in rows)]
    statuses = sorted({str(r.get("status")) for r in rows if r.get("status")})
    head = "".join(f'<th data-type="{t}" class="col-{key}{" num" if key == "bytes" else ""}">'
                   f'<button type="button">{esc(h)}</button></th>' for h, key, t in TABLE_COLUMNS)
    body: List[str] = []
    for r in rows:
        attrs = (f'data-severity="{esc(r.get("severity"))}" data-check="{esc(r.get("check_id"))}" '
                 f'data-broker="{esc(r.get("broker_id"))}" data-status="{esc(r.get("status"))}"')
        cells = "".join(_cell(r, key) for _, key, _ in TABLE_COLUMNS)
        evidence = _evidence(r.get("evidence"), settings.max_evidence_chars)
        details = (f'<details><summary>evidence</summary><pre>{esc(evidence)}</pre>'
                   f'<p class="muted">since {esc(r.get("since") or "–")} · last seen {esc(r.get("last_seen") or "–")}'
                   f' · finding <code class="path">{esc(r.get("finding_id"))}</code></p></details>')
        cells = cells[:-len("</td>")] + details + "</td>"
        body.append(f'<tr class="finding status-{esc(r.get("status"))}" {attrs}>{cells}</tr>')
    cut = ""
    if data.rows_truncated:
        cut = (f'<p class="note">This page lists the first {len(rows):,} of {data.rows_total:,} findings '
               f'(report.max_rows_in_html); <a href="{esc(links["findings_csv"])}">findings.csv</a> has all.</p>')
    return (
        '<section id="findings"><h2>Findings</h2>'
        f'{cut}<div class="filters"><input type="search" id="filter-text" placeholder="Filter: topic, dir, message…" '
        f'aria-label="filter text">{_options("severity", "Severity", severities)}{_options("check", "Check", checks)}'
        f'{_options("broker", "Broker", brokers)}{_options("status", "Status", statuses)}'
        f'<span class="muted">Showing <b id="visible-count">{len(rows)}</b> of <b id="row-count">{len(rows)}</b> rows'
        f' (<span id="total-count">{data.rows_total}</span> findings in this run)</span></div>'
        f'<div class="table-fit"><table id="findings-table"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table></div>'
        '<p class="muted">Click a bar in the charts above to filter this table by that severity, check or broker; '
        'a check id opens its explanation below.</p></section>'
    )


def _checks_section(data: ReportData, catalogue: Optional["Catalogue"]) -> str:
    """What each check in this report means, why it matters and how to fix it (from the catalogue), so a check
    id in the table links to its explanation inside this self-contained page."""
    if catalogue is None:
        return ""
    seen = {str(r.get("check_id")) for r in data.rows} | set(data.by_check)
    parts = ['<section id="checks"><h2>What the checks mean</h2>']
    for check_id in (c for c in catalogue.checks if c in seen):
        spec = catalogue[check_id]
        reclaim = " · reclaimable" if spec.reclaimable else ""
        parts.append(f'<div class="panel check-doc" id="check-{esc(check_id)}"><h3><code>{esc(check_id)}</code> — '
                     f'{esc(spec.title)}</h3><p class="muted">{esc(spec.severity)} · {esc(spec.family)}{reclaim}</p>'
                     f'<p>{esc(spec.description)}</p><p><b>Why it matters.</b> {esc(spec.why)}</p></div>')
    parts.append('<p class="muted">All checks: docs/checks.md in the kafka-recon repository.</p></section>')
    return "".join(parts)


def _plan_section(plans: Sequence[BrokerPlan], settings: ReportSettings, truncated: bool) -> str:
    parts = ['<section id="plan"><h2>Remediation plan (dry run)</h2>',
             '<p class="note">kafka-recon changed nothing on any broker. This is a checklist for a person: review each '
             'step, run it yourself in a maintenance window, one broker at a time. Paths are as recorded in the '
             'capture — if the capture is a copy, use the broker\'s own log.dirs path.</p>']
    if truncated:
        parts.append('<p class="note">The plan covers the findings listed on this page only; see findings.csv for '
                     'the rest.</p>')
    if not plans:
        parts.append('<p class="muted">Nothing to do.</p>')
    for plan in plans:
        n = len(plan.quarantine) + len(plan.review)
        parts.append(f'<div class="plan" id="plan-broker-{esc(plan.broker)}" data-broker="{esc(plan.broker)}">'
                     f'<h3>{esc(broker_label(plan.broker).capitalize())} — {n} item{"s" if n != 1 else ""}'
                     f'{", " + esc(human_bytes(plan.reclaimable_bytes)) + " to reclaim" if plan.quarantine else ""}</h3>')
        steps = plan.steps(settings)
        if steps:
            parts.append('<ol class="steps">')
            for i, step in enumerate(steps):
                cmd = f' <span class="cmd">{esc(step.command)}</span>' if step.command else ""
                text = esc(step.text) + (":" if step.command else "")
                parts.append(f'<li><label><input type="checkbox" id="step-{esc(plan.broker)}-{i}"> {text}{cmd}'
                             '</label></li>')
            parts.append('</ol>')
            why = "".join(f'<li><code>{esc(item.dir_name)}</code> — {esc(item.check_id)}: {esc(item.message)} '
                          f'<span class="why">({esc(human_bytes(item.bytes))})</span></li>' for item in plan.quarantine)
            parts.append(f'<p class="why">Why these dirs:</p><ul>{why}</ul>')
        if plan.review:
            parts.append('<p><b>Review by hand (no disk command)</b></p><ul>')
            for item in plan.review:
                where = f'<code>{esc(item.dir_name)}</code> ' if item.dir_name else ""
                unsafe = f' <span class="why">No command: {esc(item.unsafe_reason)}.</span>' if item.unsafe_reason else ""
                parts.append(f'<li><label><input type="checkbox"> <span class="sev sev-{esc(item.severity)}">'
                             f'{esc(item.severity)}</span> {esc(item.check_id)} {where}— {esc(item.message)} → '
                             f'<i>{esc(item.remediation)}</i>{unsafe}</label></li>')
            parts.append('</ul>')
        parts.append('</div>')
    parts.append('</section>')
    return "".join(parts)


def _dq_section(dq: Optional[Dict[str, Any]], links: Dict[str, str]) -> str:
    if not dq:
        return ('<section id="dq"><h2>Data quality</h2><p class="muted">Great Expectations did not run for this '
                'run.</p></section>')
    rows = "".join(
        f'<tr data-suite="{esc(name)}"><td><code>{esc(name)}</code></td><td>{esc(s.get("table"))}</td>'
        f'<td class="num">{esc(s.get("expectations"))}</td><td class="num">{esc(s.get("failed"))}</td>'
        f'<td class="num">{esc(s.get("skipped"))}</td></tr>'
        for name, s in sorted((dq.get("by_suite") or {}).items()))
    failures = "".join(
        f'<li><code>{esc(f.get("table"))}</code> {esc(f.get("expectation"))} on <code>{esc(f.get("column"))}</code>: '
        f'{esc(_fmt_int(f.get("unexpected_count")))} unexpected</li>' for f in (dq.get("failures") or [])[:50])
    docs = (f'<p><a href="{esc(links["data_docs"])}">Open the Data Docs</a> (static pages, work offline).</p>'
            if links.get("data_docs") else "")
    return (
        '<section id="dq"><h2>Data quality (Great Expectations)</h2>'
        f'<p>{esc(dq.get("expectations", 0))} expectations in {esc(dq.get("suites", 0))} suites: '
        f'<b id="dq-failed">{esc(dq.get("failed", 0))}</b> failed, {esc(dq.get("skipped", 0))} skipped '
        f'(missing columns). Results are in <code>gold_dq_results</code>.</p>{docs}'
        '<div class="table-wrap"><table id="dq-table"><thead><tr><th>Suite</th><th>Table</th><th class="num">Expectations'
        '</th><th class="num">Failed</th><th class="num">Skipped</th></tr></thead>'
        f'<tbody>{rows}</tbody></table></div>'
        f'{"<h3>Failed expectations</h3><ul>" + failures + "</ul>" if failures else ""}</section>'
    )


def render_html(data: ReportData, summary: Dict[str, Any], plans: Sequence[BrokerPlan], settings: ReportSettings,
                dq: Optional[Dict[str, Any]], links: Dict[str, str], catalogue: Optional["Catalogue"] = None) -> str:
    """The whole page as text (``catalogue``: the explanations the check ids link to)."""
    style, script = _asset("report.css"), _asset("report.js")
    run = data.run
    title = f"{settings.title} — {run.cluster_id or 'cluster'} — {run.capture_time or run.capture_id or ''}"
    meta = "".join(
        f'<span>{esc(k)}: <code id="meta-{esc(k.replace(" ", "-"))}">{esc(v)}</code></span>'
        for k, v in (("cluster", run.cluster_id), ("capture", run.capture_id), ("capture time", run.capture_time),
                     ("run", run.run_id), ("generated", summary.get("generated_at"))) if v)
    nav = "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in (
        ("glance", "At a glance"), ("charts", "Charts"), ("pid", "Producer ids"), ("trend", "Trend"),
        ("findings", "Findings"), ("plan", "Remediation plan"), ("checks", "Checks"), ("dq", "Data quality")))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp(style, script))}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title><style>{style}</style></head><body>"
        f'<header class="top"><h1>{esc(settings.title)}</h1><div class="meta">{meta}</div></header>'
        f'<nav class="toc">{nav}</nav><main>'
        f"{_glance(data, summary, dq, links)}{_charts(data)}{_pid_section(data)}{_trend_section(data)}"
        f"{_findings_section(data, settings, links)}{_plan_section(plans, settings, data.rows_truncated)}"
        f"{_checks_section(data, catalogue)}{_dq_section(dq, links)}</main>"
        f'<footer>kafka-recon · summary.json schema_version {esc(summary["schema_version"])} · '
        f'this page loads nothing from the network.</footer>'
        f"<script>{script}</script></body></html>\n"
    )
