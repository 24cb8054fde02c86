"""write_reports on the devsample scenario (real devsample facts, gold schemas): summary.json, findings.csv,
report.md and report.html say exactly what the findings say; hostile strings stay text; rows are bounded."""
from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from jobs.report import write_reports
from tests.settings_from import settings_from
from tests.table_rows import as_timestamp, frame

pytestmark = pytest.mark.spark

SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "report"
RUN = "run-2025-02-01"


_ts, _frame = as_timestamp, frame


def load_scenario(spark, name):
    doc = json.loads((SCENARIOS / f"{name}_scenario.json").read_text())
    pid = _frame(spark, "silver_producer_id_blocks", doc["pid_blocks"])
    return (_frame(spark, "gold_findings", doc["findings"]), doc["run_summary"],
            _frame(spark, "gold_run_summary", doc["history"]), pid)


def _write(spark, out, findings, summary, history, pid, *sets, fail_on=None):
    settings = settings_from(*sets)
    return write_reports(spark, settings.report, settings.catalogue, out, findings, summary, history, pid,
                         dq_summary=None, fail_on=fail_on)


@pytest.fixture(scope="module")
def devsample(spark, tmp_path_factory):
    findings, summary, history, pid = load_scenario(spark, "devsample")
    out = tmp_path_factory.mktemp("report-devsample")
    return _write(spark, out, findings, summary, history, pid)


@pytest.fixture(scope="module")
def hostile(spark, tmp_path_factory):
    findings, summary, history, pid = load_scenario(spark, "hostile")
    out = tmp_path_factory.mktemp("report-hostile")
    return _write(spark, out, findings, summary, history, pid)


@pytest.fixture(scope="module")
def bounded(spark, tmp_path_factory):
    findings, summary, history, pid = load_scenario(spark, "devsample")
    out = tmp_path_factory.mktemp("report-bounded")
    return _write(spark, out, findings, summary, history, pid, "report.max_rows_in_html=2", "report.max_pid_blocks=3",
                  "report.trend_runs=2", fail_on="never")


def test_summary_json_is_the_documented_document(devsample):
    summary = json.loads(devsample.summary_json.read_text())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", summary.pop("generated_at"))
    assert summary == {
        "schema_version": 1,
        "run_id": RUN,
        "capture_id": "devsample-2025-02-01",
        "cluster_id": "EKJ41Lv86vWjqGSh58Dg2w",
        "capture_time": "2025-02-01T00:10:00Z",
        "started_at": "2025-02-01T01:00:00Z",
        "finished_at": "2025-02-01T01:03:10Z",
        "status": "findings",
        "exit_code": 10,
        "fail_on": "critical",
        "stage": None,
        "error": None,
        "inputs": {"complete": True, "allow_partial": False, "gaps": []},
        "counts": {
            "by_severity": {"critical": 2, "warning": 2, "info": 0},
            "by_check": {"CORRUPT_PARTITION_METADATA": 1, "MISSING_PARTITION_METADATA": 1, "STALE_TOPIC_ID": 1,
                         "STRAY_DIR": 1},
            "by_broker": {"102": {"critical": 0, "warning": 1, "info": 0, "total": 1},
                          "103": {"critical": 1, "warning": 0, "info": 0, "total": 1},
                          "104": {"critical": 1, "warning": 1, "info": 0, "total": 2}},
        },
        "bytes_reclaimable": {"total": 8876, "by_broker": {"103": 4430, "104": 4446},
                              "by_check": {"STALE_TOPIC_ID": 4430, "STRAY_DIR": 4446}},
        "files": {"seen": 112, "ok": 111, "quarantined": 1},
        "stages": {"ingest": 41.2, "reconcile": 22.7, "quality": 14.1, "report": 3.4},
        "findings_open": 4,
        "findings_new": 2,
        "findings_resolved": 1,
        "dq": None,
        "report_files": {"summary_json": "summary.json", "findings_csv": "findings.csv", "report_md": "report.md",
                         "report_html": "report.html", "data_docs": None},
    }
    assert (devsample.exit_code, devsample.status) == (10, "findings")
    assert devsample.counts_by_severity == {"critical": 2, "warning": 2, "info": 0}


def test_findings_csv_has_every_finding_of_the_run_in_report_order(devsample):
    with open(devsample.findings_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    root = "/data/captures/devsample-2025-02-01"
    assert rows == [
        ["check_id", "severity", "broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition", "bytes",
         "first_seen", "status", "message"],
        ["CORRUPT_PARTITION_METADATA", "critical", "104", f"{root}/broker-104/kafka-logs", "inventory-1", "inventory",
         "", "1", "4428", "2025-01-31T00:10:00Z", "open",
         "partition.metadata of inventory-1 is truncated ('topic_id: ' with no value): Kafka fails with "
         "'Malformed line in checkpoint file'"],
        ["STALE_TOPIC_ID", "critical", "103", f"{root}/broker-103/kafka-logs", "clicks-0", "clicks",
         "A4HaLNH_zheTrtxgg-IBNA", "0", "4430", "2025-01-31T00:10:00Z", "open",
         "clicks-0 holds topic id A4HaLNH_zheTrtxgg-IBNA of the deleted first incarnation of clicks; the live topic "
         "clicks has id OgLh3kIiODWuf2JCQPKw4w"],
        ["MISSING_PARTITION_METADATA", "warning", "102", f"{root}/broker-102/kafka-logs-a", "clicks-0", "clicks", "",
         "0", "4100", "2025-02-01T00:10:00Z", "open", "clicks-0 has no partition.metadata: Kafka treats the dir as stray"],
        ["STRAY_DIR", "warning", "104", f"{root}/broker-104/kafka-logs",
         "inventory-2.89dae8f0999baf24f653d531c05f9ed6-stray", "inventory", "xWt6cg-LDx4r6BAz2rYsCg", "2", "4446",
         "2025-02-01T00:10:00Z", "open",
         "inventory-2 was renamed -stray after broker 104 left its replicas; the data is no longer needed"],
        ["ORPHAN_REPLICA", "warning", "101", f"{root}/broker-101/kafka-logs", "old-topic-0", "old-topic",
         "kx2Wn3HfRKeO0-dOqGz1Ug", "0", "2048", "2025-01-30T00:10:00Z", "resolved",
         "old-topic-0 holds a topic id the controller never knew"],
    ]


class _Dom(HTMLParser):
    """Elements with their attributes, plus the text of <script> and <style>."""

    def __init__(self):
        super().__init__()
        self.elements, self.scripts, self.styles, self._in = [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)


def _dom(path: Path) -> _Dom:
    dom = _Dom()
    dom.feed(path.read_text(encoding="utf-8"))
    return dom


def test_html_is_self_contained_and_locked_by_its_csp(devsample):
    dom = _dom(devsample.report_html)
    text = devsample.report_html.read_text()
    assert [t for t, _ in dom.elements if t in ("script", "style")] == ["style", "script"]
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert not any(a.get("src") for _, a in dom.elements)  # no element loads anything
    policy = next(a["content"] for t, a in dom.elements if a.get("http-equiv") == "Content-Security-Policy")

    def sha(s):
        return base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()

    assert f"script-src 'sha256-{sha(dom.scripts[0])}'" in policy
    assert f"style-src 'sha256-{sha(dom.styles[0])}'" in policy
    assert policy.startswith("default-src 'none';") and "unsafe-inline" not in policy


def test_html_charts_and_table_carry_the_counts(devsample):
    dom = _dom(devsample.report_html)

    def marks(chart_id):
        inside, out = False, {}
        for tag, attrs in dom.elements:
            if tag == "svg":
                inside = attrs.get("id") == chart_id
            elif inside and tag == "g" and "mark" in attrs.get("class", ""):
                out[attrs["data-label"]] = attrs["data-value"]
        return out

    assert marks("chart-severity") == {"critical": "2", "warning": "2", "info": "0"}
    assert marks("chart-check") == {"CORRUPT_PARTITION_METADATA": "1", "MISSING_PARTITION_METADATA": "1",
                                    "STALE_TOPIC_ID": "1", "STRAY_DIR": "1"}
    assert marks("chart-broker") == {"broker 102": "1", "broker 103": "1", "broker 104": "2"}
    assert marks("chart-bytes") == {"broker 103": "4430", "broker 104": "4446"}
    assert marks("chart-trend") == {"run-2025-01-29": "0", "run-2025-01-30": "1", "run-2025-01-31": "3", RUN: "4"}
    blocks = [(a["data-label"], a["data-value"]) for t, a in dom.elements if t == "g" and "block" in a.get("class", "")]
    assert blocks == [("101", "0–999"), ("102", "1000–1999"), ("103", "2000–2999"), ("104", "3000–3999"),
                      ("101", "4000–4999")]
    rows = [a for t, a in dom.elements if t == "tr" and "finding" in a.get("class", "")]
    assert [(r["data-severity"], r["data-check"], r["data-broker"], r["data-status"]) for r in rows] == [
        ("critical", "CORRUPT_PARTITION_METADATA", "104", "open"), ("critical", "STALE_TOPIC_ID", "103", "open"),
        ("warning", "MISSING_PARTITION_METADATA", "102", "open"), ("warning", "STRAY_DIR", "104", "open"),
        ("warning", "ORPHAN_REPLICA", "101", "resolved")]


def test_plan_is_a_dry_run_checklist_with_exact_dirs(devsample):
    text = devsample.report_md.read_text()
    root = "/data/captures/devsample-2025-02-01"
    assert (f"- [ ] Move STALE\\_TOPIC\\_ID dir aside: `mv -- {root}/broker-103/kafka-logs/clicks-0 "
            f"{root}/broker-103/kafka-recon-quarantine/devsample-2025-02-01/kafka-logs/clicks-0`") in text
    assert (f"- [ ] Move STRAY\\_DIR dir aside: `mv -- {root}/broker-104/kafka-logs/"
            f"inventory-2.89dae8f0999baf24f653d531c05f9ed6-stray "
            f"{root}/broker-104/kafka-recon-quarantine/devsample-2025-02-01/kafka-logs/"
            f"inventory-2.89dae8f0999baf24f653d531c05f9ed6-stray`") in text
    # corrupt / missing partition.metadata are never moved by the plan, and nothing is planned for resolved ones
    assert "mv -- " + f"{root}/broker-104/kafka-logs/inventory-1" not in text
    assert "old-topic-0 " not in text.split("## Remediation plan")[1]
    assert text.count("`mv -- ") == 2


def test_log_dir_paths_come_from_bronze_log_dirs(spark):
    from jobs.report.writer import log_dir_paths

    rows = [{"capture_id": "c", "run_id": "r", "broker_id": 103, "log_dir": "broker-103/kafka-logs"},
            {"capture_id": "c", "run_id": "r", "broker_id": 102, "log_dir": "/p/b102.jsonl.gz!/var/kafka/logs-a"},
            {"capture_id": "c", "run_id": "r", "broker_id": None, "log_dir": "broken/kafka-logs"}]
    assert log_dir_paths(_frame(spark, "bronze_log_dirs", rows)) == {
        ("103", "kafka-logs"): "broker-103/kafka-logs", ("102", "logs-a"): "/p/b102.jsonl.gz!/var/kafka/logs-a"}


def test_hostile_strings_stay_text(hostile):
    dom = _dom(hostile.report_html)
    tags = [t for t, _ in dom.elements]
    assert tags.count("script") == 1 and "img" not in tags
    assert all(not k.startswith("on") for _, a in dom.elements for k in a)
    assert not any(a.get("id", "").startswith("pwn") for _, a in dom.elements)
    assert not any("javascript:" in (a.get("href") or "") for _, a in dom.elements)
    svgs = [a.get("class") for t, a in dom.elements if t == "svg"]  # only our charts and sparklines
    spark_rows = [a for t, a in dom.elements if t == "tr" and ("data-check" in a or "data-broker" in a)
                  and "finding" not in a.get("class", "")]
    assert svgs.count("chart") == 6 and svgs.count("spark") == sum(1 if "data-check" in a else 2 for a in spark_rows)
    assert len(svgs) == 6 + svgs.count("spark") and spark_rows
    html_text = hostile.report_html.read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in html_text
    assert "&lt;script&gt;window.PWNED=1&lt;/script&gt;" in html_text
    # the traversal name gets no command; the hostile but contained name gets a shell-quoted one
    md_text = hostile.report_md.read_text()
    assert "(no command: the dir name could point outside its log dir)" in md_text
    assert ("`mv -- '/data/captures/\"><svg onload=alert(2)>/broker-103/kafka-logs/<img src=x onerror=alert(1)>' "
            in md_text)
    assert "&lt;script&gt;window.PWNED=3&lt;/script&gt;" in md_text
    with open(hostile.findings_csv, newline="", encoding="utf-8") as fh:
        messages = [r["message"] for r in csv.DictReader(fh)]
    assert "'=HYPERLINK(\"http://evil.example/\",\"click\")" in messages


def test_rows_in_html_are_bounded_but_csv_is_complete(bounded):
    dom = _dom(bounded.report_html)
    rows = [a for t, a in dom.elements if t == "tr" and "finding" in a.get("class", "")]
    assert [r["data-check"] for r in rows] == ["CORRUPT_PARTITION_METADATA", "STALE_TOPIC_ID"]
    text = bounded.report_html.read_text()
    assert "This page lists the first 2 of 5 findings" in text
    with open(bounded.findings_csv, newline="", encoding="utf-8") as fh:
        assert len(list(csv.reader(fh))) == 1 + 5
    summary = json.loads(bounded.summary_json.read_text())
    assert (summary["fail_on"], summary["exit_code"], summary["status"]) == ("never", 0, "findings")
    blocks = [a["data-value"] for t, a in dom.elements if t == "g" and "block" in a.get("class", "")]
    assert blocks == ["2000–2999", "3000–3999", "4000–4999"]  # the 3 most recent, in allocation order
    trend = [a["data-label"] for t, a in dom.elements if t == "g" and a.get("data-critical") is not None]
    assert trend == ["run-2025-01-31", RUN]


def test_trends_per_check_and_broker_follow_the_findings_history(devsample):
    """Each run's open count per check / per broker, recomputed here from the fixture's first_seen and
    resolved_at, and the per-check sums equal gold_run_summary's open_findings of those runs."""
    doc = json.loads((SCENARIOS / "devsample_scenario.json").read_text())
    cluster = doc["run_summary"]["cluster_id"]
    doc["history"] = [r for r in doc["history"] if r["cluster_id"] == cluster]
    doc["findings"] = [f for f in doc["findings"] if f["cluster_id"] == cluster]
    dom = _dom(devsample.report_html)
    spark_values = [a["data-values"] for t, a in dom.elements if t == "svg" and a.get("class") == "spark"]
    rows = [a for t, a in dom.elements if t == "tr" and ("data-check" in a or "data-broker" in a)
            and "finding" not in a.get("class", "")]
    times = [r["capture_time"] for r in sorted(doc["history"], key=lambda r: r["capture_time"])]
    times = [t for t in times if t != doc["run_summary"]["capture_time"]] + [doc["run_summary"]["capture_time"]]

    def open_at(t, key, value):
        return sum(1 for f in doc["findings"] if str(f[key]) == value and f["first_seen"] <= t
                   and (f.get("resolved_at") is None or f["resolved_at"] > t))

    got, i = {}, 0
    for row in rows:
        key, value = ("check_id", row["data-check"]) if "data-check" in row else ("broker_id", row["data-broker"])
        got[(key, value)] = [int(v) for v in spark_values[i].split(",")]
        i += 1 if key == "check_id" else 2
    assert got and all(v == [open_at(t, k, val) for t in times] for (k, val), v in got.items()), got
    per_run = [sum(v[n] for (k, _), v in got.items() if k == "check_id") for n in range(len(times))]
    history_open = {r["capture_time"]: r["open_findings"] for r in doc["history"]}
    assert per_run[:-1] == [history_open[t] for t in times[:-1]]
