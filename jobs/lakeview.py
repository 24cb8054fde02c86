"""The bundle's Databricks AI/BI (Lakeview) dashboard, built from the dashboard SQL (notebooks/sql/*.sql):
one dataset per query, the query text as it is in the file (one SQL source for the dashboard, the notebooks
and local runs), and the widgets below. ``python -m jobs.dashboards`` writes ``dashboards/kafka_recon.lvdash.json``;
``databricks.yml`` deploys it (``resources.dashboards``) and the two SQL alerts (``resources.alerts``, whose
query texts are ``alert_*.sql``); tests keep all three equal to what this module builds.

Serialized dashboard format: Databricks' ``.lvdash.json`` (datasets with ``queryLines``; pages whose ``layout``
holds widgets with ``queries`` on a dataset and a ``spec`` of widget type and encodings, at grid positions 6
columns wide).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from jobs.dashboards import SQL_DIR

DASHBOARD_FILE = Path(__file__).resolve().parent.parent / "dashboards" / "kafka_recon.lvdash.json"
ALERT_PREFIX = "alert_"

# (query, title, widget type, x field, y field or None, colour/group field or None, width, height)
WIDGETS: Tuple[Tuple[str, str, str, str, Optional[str], Optional[str], int, int], ...] = (
    ("open_findings_by_family_over_time", "Open findings by family over time", "line",
     "capture_time", "open_findings", "family", 3, 6),
    ("open_findings_by_severity_over_time", "Open findings by severity over time", "line",
     "capture_time", "open_findings", "severity", 3, 6),
    ("new_vs_resolved_per_run", "New findings per capture", "bar", "capture_time", "new_findings", "cluster_id", 3, 5),
    ("new_vs_resolved_per_run", "Resolved findings per capture", "bar",
     "capture_time", "resolved_findings", "cluster_id", 3, 5),
    ("new_vs_resolved_per_run", "Bytes reclaimable over time", "line",
     "capture_time", "bytes_reclaimable", "cluster_id", 3, 5),
    ("data_quality_pass_rate_over_time", "Data-quality pass rate over time", "line",
     "capture_time", "pass_rate", "cluster_id", 3, 5),
    ("freshness_per_cluster", "Freshness: hours since the last successful run", "table",
     "cluster_id", None, None, 3, 4),
    ("time_to_resolve", "Time to resolve per check", "table", "check_id", None, None, 3, 4),
    ("bytes_reclaimable_by_broker", "Bytes reclaimable by broker now", "bar",
     "broker_id", "bytes_reclaimable", "cluster_id", 3, 5),
    ("critical_findings_now", "Critical findings now", "table", "check_id", None, None, 3, 5),
)


def dashboard_queries() -> Dict[str, str]:
    """Query name -> SQL text of every dashboard query (the alerts' queries are not datasets)."""
    return {p.stem: p.read_text() for p in sorted(SQL_DIR.glob("*.sql")) if not p.stem.startswith(ALERT_PREFIX)}


def alert_queries() -> Dict[str, str]:
    return {p.stem: p.read_text() for p in sorted(SQL_DIR.glob("*.sql")) if p.stem.startswith(ALERT_PREFIX)}


def _dataset(name: str, sql: str) -> Dict[str, object]:
    return {"name": name, "displayName": name.replace("_", " "), "queryLines": sql.splitlines(keepends=True)}


def _widget(index: int, spec, x: int, y: int) -> Dict[str, object]:
    query, title, kind, x_field, y_field, colour, width, height = spec
    frame = {"showTitle": True, "title": title}
    if kind == "table":
        fields = [{"name": "*", "expression": "*"}]
        body = {"version": 1, "widgetType": "table", "encodings": {}, "frame": frame}
        queries = [{"name": "main_query", "query": {"datasetName": query, "fields": fields, "disaggregated": True}}]
    else:
        y_name = f"sum({y_field})"
        fields = [{"name": x_field, "expression": f"`{x_field}`"},
                  {"name": y_name, "expression": f"SUM(`{y_field}`)"}]
        encodings: Dict[str, object] = {
            "x": {"fieldName": x_field, "displayName": x_field.replace("_", " "),
                  "scale": {"type": "temporal" if x_field.endswith("_time") else "categorical"}},
            "y": {"fieldName": y_name, "displayName": y_field.replace("_", " "), "scale": {"type": "quantitative"}},
        }
        if colour:
            fields.append({"name": colour, "expression": f"`{colour}`"})
            encodings["color"] = {"fieldName": colour, "displayName": colour.replace("_", " "),
                                  "scale": {"type": "categorical"}}
        body = {"version": 3, "widgetType": kind, "encodings": encodings, "frame": frame}
        queries = [{"name": "main_query", "query": {"datasetName": query, "fields": fields, "disaggregated": False}}]
    return {"widget": {"name": f"w{index:02d}_{query}", "queries": queries, "spec": body},
            "position": {"x": x, "y": y, "width": width, "height": height}}


def dashboard() -> Dict[str, object]:
    """The serialized dashboard as a dict."""
    queries = dashboard_queries()
    used = {w[0] for w in WIDGETS}
    missing = sorted(used - set(queries))
    if missing:
        raise KeyError(f"dashboard widgets name queries that notebooks/sql lacks: {missing}")
    layout: List[Dict[str, object]] = []
    x = y = row_height = 0
    for index, spec in enumerate(WIDGETS):
        width, height = spec[6], spec[7]
        if x + width > 6:
            x, y, row_height = 0, y + row_height, 0
        layout.append(_widget(index, spec, x, y))
        x, row_height = x + width, max(row_height, height)
    return {"datasets": [_dataset(name, sql) for name, sql in queries.items()],
            "pages": [{"name": "kafka_recon", "displayName": "kafka-recon", "pageType": "PAGE_TYPE_CANVAS",
                       "layout": layout}]}


def dashboard_text() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"
