"""Inline SVG charts for report.html: horizontal bars, stacked bars, a trend line, a producer-id block timeline.

Plain string building, no library and nothing external: every label and tooltip goes through ``esc``
(``html.escape`` with quotes), numbers are formatted here. Each data mark is a ``<g class="mark">`` carrying
``data-label`` / ``data-value`` so tests (and people with dev tools) can read what was drawn.
"""
from __future__ import annotations

import html
from typing import Any, Dict, List, Optional, Sequence, Tuple

COLORS = {"critical": "#c0392b", "warning": "#d68910", "info": "#2e86c1", "ok": "#1e8449",
          "bytes": "#5b6f82", "open": "#2c3e50", "new": "#8e44ad"}
SOURCE_COLORS = {"kraft": "#2e86c1", "zk": "#7d3c98", "migration": "#16a085"}
FLAG_COLORS = {"overlap": "#c0392b", "regression": "#d68910"}


def source_kind(source: Any) -> str:
    """kraft_log / kraft_snapshot -> kraft, zk_znode / zk_log -> zk, migration, else other."""
    text = str(source or "").lower()
    for kind in ("kraft", "zk", "migration"):
        if text.startswith(kind):
            return kind
    return "other"


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def human_bytes(n: Optional[int]) -> str:
    if n is None:
        return ""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _empty(chart_id: str, width: int, text: str) -> str:
    return (f'<svg id="{esc(chart_id)}" class="chart" viewBox="0 0 {width} 40" width="100%" role="img" '
            f'aria-label="{esc(text)}"><text x="8" y="24" class="muted">{esc(text)}</text></svg>')


def hbar_chart(chart_id: str, items: Sequence[Tuple[str, int, str, str, str]], width: int = 560,
               empty_text: str = "Nothing to show") -> str:
    """Horizontal bars; ``items`` = (label, value, color, value text, tooltip)."""
    if not items:
        return _empty(chart_id, width, empty_text)
    row_h, bar_h, top = 26, 16, 6
    label_w = min(300, max(60, int(7.8 * max(len(str(i[0])) for i in items)) + 14))
    plot_w = width - label_w - 90
    top_value = max(max(i[1] for i in items), 1)
    height = top + row_h * len(items) + 4
    parts = [f'<svg id="{esc(chart_id)}" class="chart" viewBox="0 0 {width} {height}" width="100%" '
             f'role="img" aria-label="{esc(chart_id)}">']
    for n, (label, value, color, value_text, tip) in enumerate(items):
        y = top + n * row_h
        w = 0 if value <= 0 else max(2.0, plot_w * value / top_value)
        parts.append(
            f'<g class="mark" data-label="{esc(label)}" data-value="{int(value)}"><title>{esc(tip)}</title>'
            f'<text x="{label_w - 8}" y="{y + 13}" text-anchor="end" class="label">{esc(label)}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" rx="2" fill="{esc(color)}"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 13}" class="value">{esc(value_text)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def stacked_hbar_chart(chart_id: str, items: Sequence[Tuple[str, Sequence[Tuple[str, int]], int]],
                       width: int = 560, empty_text: str = "Nothing to show") -> str:
    """Stacked horizontal bars; ``items`` = (label, [(severity, count)...], total)."""
    if not items:
        return _empty(chart_id, width, empty_text)
    row_h, bar_h, top = 26, 16, 6
    label_w = min(300, max(60, int(7.8 * max(len(str(i[0])) for i in items)) + 14))
    plot_w = width - label_w - 60
    top_value = max(max(i[2] for i in items), 1)
    height = top + row_h * len(items) + 4
    parts = [f'<svg id="{esc(chart_id)}" class="chart" viewBox="0 0 {width} {height}" width="100%" '
             f'role="img" aria-label="{esc(chart_id)}">']
    for n, (label, segments, total) in enumerate(items):
        y = top + n * row_h
        tip = f"{label}: " + ", ".join(f"{c} {s}" for s, c in segments if c) + f" (total {total})"
        parts.append(f'<g class="mark" data-label="{esc(label)}" data-value="{int(total)}"><title>{esc(tip)}</title>'
                     f'<text x="{label_w - 8}" y="{y + 13}" text-anchor="end" class="label">{esc(label)}</text>')
        x = float(label_w)
        for sev, count in segments:
            if count <= 0:
                continue
            w = max(2.0, plot_w * count / top_value)
            parts.append(f'<rect class="seg" data-severity="{esc(sev)}" data-value="{int(count)}" x="{x:.1f}" '
                         f'y="{y}" width="{w:.1f}" height="{bar_h}" fill="{COLORS.get(sev, "#888")}"/>')
            x += w
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 13}" class="value">{int(total)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def trend_chart(chart_id: str, points: Sequence[Dict[str, Any]], width: int = 1100, height: int = 240) -> str:
    """Open and critical findings per run, oldest left; the current run is the last, ringed point."""
    if not points:
        return _empty(chart_id, width, "No runs yet")
    if len(points) == 1:  # one dot is no trend: say so instead of drawing it
        only = points[0]
        return _empty(chart_id, width, f"First run of this cluster: {only.get('open', 0)} open, "
                                       f"{only.get('critical', 0)} critical; the trend starts with the next run")
    left, right, top, bottom = 44, 16, 14, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    top_value = max(max(max(p.get("open", 0), p.get("critical", 0)) for p in points), 1)
    ticks = _ticks(top_value)
    y_max = ticks[-1]

    def xy(i: int, v: int) -> Tuple[float, float]:
        x = left + (plot_w / 2 if len(points) == 1 else plot_w * i / (len(points) - 1))
        return x, top + plot_h - plot_h * v / y_max

    parts = [f'<svg id="{esc(chart_id)}" class="chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-label="open findings per run">']
    for t in ticks:
        _, y = xy(0, t)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="axis">{t}</text>')
    for key in ("open", "critical"):
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(i, p.get(key, 0)) for i, p in enumerate(points)))
        parts.append(f'<polyline class="line line-{key}" points="{coords}" fill="none" stroke="{COLORS[key]}" '
                     f'stroke-width="2"/>')
    for i, p in enumerate(points):
        x, y = xy(i, p.get("open", 0))
        _, yc = xy(i, p.get("critical", 0))
        tip = (f"{p.get('capture_time') or '?'} run {p.get('run_id')}: {p.get('open', 0)} open "
               f"({p.get('critical', 0)} critical, {p.get('warning', 0)} warning, {p.get('info', 0)} info), "
               f"{p.get('new', 0)} new, {p.get('resolved', 0)} resolved")
        ring = ' stroke="#000" stroke-width="2"' if p.get("current") else ""
        parts.append(f'<g class="mark" data-label="{esc(p.get("run_id"))}" data-value="{int(p.get("open", 0))}" '
                     f'data-critical="{int(p.get("critical", 0))}"><title>{esc(tip)}</title>'
                     f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{COLORS["open"]}"{ring}/>'
                     f'<circle cx="{x:.1f}" cy="{yc:.1f}" r="3" fill="{COLORS["critical"]}"/></g>')
    first, last = points[0].get("capture_time") or "", points[-1].get("capture_time") or ""
    base = height - 10
    parts.append(f'<text x="{left}" y="{base}" class="axis">{esc(first[:10])}</text>')
    if len(points) > 1:
        parts.append(f'<text x="{width - right}" y="{base}" text-anchor="end" class="axis">{esc(last[:10])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _ticks(top_value: int) -> List[int]:
    step = 1
    for candidate in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000,
                      100_000, 250_000, 500_000, 1_000_000):
        step = candidate
        if top_value / candidate <= 5:
            break
    else:
        step = max(1, top_value // 5)
    n = -(-top_value // step)
    return [step * k for k in range(0, n + 1)]


def classify_blocks(blocks: Sequence[Dict[str, Any]]) -> List[str]:
    """Per block (in allocation order): "overlap" when its range intersects another block's, "regression"
    when it starts at or below the highest id handed out before it without overlapping, else ""."""
    flags = [""] * len(blocks)
    spans = sorted((b["block_start"], b["block_end"], i) for i, b in enumerate(blocks)
                   if b.get("block_start") is not None and b.get("block_end") is not None)
    reach_end, reach_idx = None, None
    for start, end, i in spans:
        if reach_end is not None and start <= reach_end:
            flags[i] = "overlap"
            flags[reach_idx] = "overlap"
        if reach_end is None or end > reach_end:
            reach_end, reach_idx = end, i
    high = None
    for i, b in enumerate(blocks):
        start, end = b.get("block_start"), b.get("block_end")
        if start is None or end is None:
            continue
        if high is not None and start <= high and not flags[i]:
            flags[i] = "regression"
        high = end if high is None else max(high, end)
    return flags


def pid_timeline(chart_id: str, blocks: Sequence[Dict[str, Any]], width: int = 1100) -> str:
    """Lanes per broker, allocation order left to right; flagged blocks in red (overlap) / amber (regression)."""
    if not blocks:
        return _empty(chart_id, width, "No producer-id blocks in this capture")
    brokers = sorted({str(b["broker_id"]) for b in blocks},
                     key=lambda s: (0, int(s), "") if s.lstrip("-").isdigit() else (1, 0, s))
    lane_h, label_w, top, bottom = 30, 90, 8, 26
    plot_w = width - label_w - 10
    step = plot_w / len(blocks)
    height = top + lane_h * len(brokers) + bottom
    flags = classify_blocks(blocks)
    parts = [f'<svg id="{esc(chart_id)}" class="chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-label="producer-id blocks by broker">']
    for n, broker in enumerate(brokers):
        y = top + n * lane_h
        parts.append(f'<rect x="{label_w}" y="{y}" width="{plot_w}" height="{lane_h - 4}" class="lane"/>'
                     f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end" class="label">broker {esc(broker)}</text>')
    lane_of = {b: n for n, b in enumerate(brokers)}
    for i, (block, flag) in enumerate(zip(blocks, flags, strict=True)):
        y = top + lane_of[str(block["broker_id"])] * lane_h
        x = label_w + i * step
        w = max(step - 2, 1.5)
        fill = FLAG_COLORS.get(flag) or SOURCE_COLORS.get(source_kind(block.get("source")), "#5d6d7e")
        when = block.get("allocated_at") or (f"offset {block['offset']}" if block.get("offset") is not None else "")
        rng = f"{block['block_start']}–{block['block_end']}"
        tip = (f"broker {block['broker_id']}: producer ids {rng}"
               + (f", {block.get('source')}" if block.get("source") else "") + (f", {when}" if when else "")
               + (f" — {flag.upper()}" if flag else ""))
        parts.append(f'<g class="mark block{" flag-" + flag if flag else ""}" data-label="{esc(block["broker_id"])}" '
                     f'data-value="{esc(rng)}" data-flag="{esc(flag)}"><title>{esc(tip)}</title>'
                     f'<rect x="{x + 1:.1f}" y="{y + 2}" width="{w:.1f}" height="{lane_h - 8}" rx="2" fill="{fill}"/>')
        if w >= 8 * len(rng):
            parts.append(f'<text x="{x + 1 + w / 2:.1f}" y="{y + 17}" text-anchor="middle" class="in-bar">{esc(rng)}</text>')
        parts.append("</g>")
    base = height - 8
    parts.append(f'<text x="{label_w}" y="{base}" class="axis">first allocation shown</text>'
                 f'<text x="{width - 10}" y="{base}" text-anchor="end" class="axis">latest allocation →</text>')
    parts.append("</svg>")
    return "".join(parts)


def sparkline(values: Sequence[int], color: str, label: str, width: int = 180, height: int = 26) -> str:
    """A small line of one series across runs (oldest left); ``data-values`` carries the numbers drawn."""
    if not values:
        return ""
    top = max(max(values), 1)
    step = 0 if len(values) == 1 else (width - 6) / (len(values) - 1)
    coords = " ".join(f"{3 + i * step:.1f},{height - 3 - (height - 6) * v / top:.1f}" for i, v in enumerate(values))
    last_x, last_y = coords.split(" ")[-1].split(",")
    return (f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{esc(label)}" data-values="{",".join(str(int(v)) for v in values)}">'
            f'<title>{esc(label)}</title><polyline points="{coords}" fill="none" stroke="{color}" stroke-width="1.6"/>'
            f'<circle cx="{last_x}" cy="{last_y}" r="2.5" fill="{color}"/></svg>')
