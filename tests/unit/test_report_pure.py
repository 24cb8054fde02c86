"""The report's pure parts (no Spark session): exit codes, escaping, CSV neutralizing, the remediation plan's
path safety, producer-id block flags, chart marks."""
from __future__ import annotations

from dataclasses import replace

import pytest

from jobs.report.csv_out import neutralize
from jobs.report.markdown import code, md
from jobs.report.remediation import Step, build_plan, quarantine_root, unsafe_reason
from jobs.report.summary import exit_code_for
from jobs.report.svg import classify_blocks, hbar_chart, human_bytes
from jobs.settings import Settings

REPORT = Settings.shipped().report  # conf/report.yaml as shipped


@pytest.mark.parametrize("fail_on, counts, expected", [
    ("critical", {"critical": 1, "warning": 0, "info": 0}, 10),
    ("critical", {"critical": 0, "warning": 5, "info": 9}, 0),
    ("warning", {"critical": 0, "warning": 1, "info": 0}, 10),
    ("warning", {"critical": 0, "warning": 0, "info": 3}, 0),
    ("info", {"critical": 0, "warning": 0, "info": 1}, 10),
    ("info", {"critical": 0, "warning": 0, "info": 0}, 0),
    ("never", {"critical": 7, "warning": 0, "info": 0}, 0),
])
def test_exit_code_is_10_at_or_above_fail_on(fail_on, counts, expected):
    assert exit_code_for(counts, fail_on) == expected


def test_exit_code_rejects_an_unknown_threshold():
    with pytest.raises(ValueError, match="fail_on must be one of"):
        exit_code_for({}, "fatal")


def test_markdown_escaping_keeps_input_as_text():
    assert md("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert md("a|b [x](javascript:y) *z* _w_\nnext") == "a\\|b \\[x\\](javascript:y) \\*z\\* \\_w\\_ next"
    assert code("a`b") == "`` a`b ``"
    assert code("x|y", in_table=True) == "`x\\|y`"
    assert code("line1\nline2") == "`line1 line2`"


@pytest.mark.parametrize("value, expected", [
    ("=SUM(A1)", "'=SUM(A1)"), ("+1", "'+1"), ("@cmd", "'@cmd"), ("\tx", "'\tx"),
    ("-2+3", "'-2+3"), ("-my-topic.v2", "-my-topic.v2"), ("clicks-0", "clicks-0"), (42, 42), (None, None), ("", ""),
])
def test_csv_cells_cannot_become_formulas(value, expected):
    assert neutralize(value) == expected


@pytest.mark.parametrize("log_dir, dir_name, ok", [
    ("/var/lib/kafka/data", "clicks-0", True),
    ("/var/lib/kafka/data/", "orders-3.0a1b2c3d4e5f60718293a4b5c6d7e8f9-delete", True),
    ("/var/lib/kafka/data", "../../etc", False),
    ("/var/lib/kafka/data", "..", False),
    ("/var/lib/kafka/data", "a/b", False),
    ("/var/lib/kafka/data", "x\nrm -rf /", False),
    ("relative/data", "clicks-0", False),
    ("/var/lib/kafka/../data", "clicks-0", False),
    ("/", "clicks-0", False),
    (None, "clicks-0", False),
    ("/var/lib/kafka/data", None, False),
])
def test_plan_only_targets_exact_dirs(log_dir, dir_name, ok):
    assert (unsafe_reason(log_dir, dir_name) is None) is ok


def test_quarantine_sits_beside_the_log_dir():
    assert quarantine_root("/var/lib/kafka/data/", REPORT, "cap-1") == \
        "/var/lib/kafka/kafka-recon-quarantine/cap-1/data"


def test_plan_groups_open_findings_per_broker():
    rows = [
        {"status": "open", "broker_id": 3, "check_id": "STALE_TOPIC_ID", "severity": "critical",
         "log_dir": "/k/data", "dir_name": "orders-0", "bytes": 10, "message": "m1", "remediation": "r1"},
        {"status": "open", "broker_id": 3, "check_id": "WRONG_LOG_DIR", "severity": "warning",
         "log_dir": "/k/data", "dir_name": "orders-1", "bytes": 5, "message": "m2", "remediation": None},
        {"status": "resolved", "broker_id": 4, "check_id": "STALE_TOPIC_ID", "severity": "critical",
         "log_dir": "/k/data", "dir_name": "x-0", "bytes": 1, "message": "m3", "remediation": "r3"},
    ]
    plans = build_plan(rows, REPORT, "cap 1/..")
    assert [p.broker for p in plans] == ["3"]
    plan = plans[0]
    assert [(i.source, i.target) for i in plan.quarantine] == [
        ("/k/data/orders-0", "/k/kafka-recon-quarantine/cap_1_../data/orders-0")]
    assert [(i.check_id, i.remediation) for i in plan.review] == [
        ("WRONG_LOG_DIR", "Move the replica with kafka-reassign-partitions (log dir reassignment), not by hand.")]
    commands = [s.command for s in plan.steps(replace(REPORT, quarantine_days=3))]
    assert commands == [None, "mkdir -p -- /k/kafka-recon-quarantine/cap_1_../data",
                        "mv -- /k/data/orders-0 /k/kafka-recon-quarantine/cap_1_../data/orders-0", None,
                        "rm -rf -- /k/kafka-recon-quarantine/cap_1_../data"]
    assert plan.steps(replace(REPORT, quarantine_days=3))[-1].text == \
        "After 3 days without problems, delete the quarantine"
    assert plan.reclaimable_bytes == 10


STALE = {"status": "open", "broker_id": 103, "check_id": "STALE_TOPIC_ID", "severity": "critical",
         "log_dir": "kafka-logs", "dir_name": "clicks-0", "bytes": 334, "message": "m", "remediation": "r"}


def test_plan_uses_the_brokers_own_path_recorded_by_a_collector_pack():
    paths = {("103", "kafka-logs"): "/captures/b103.jsonl.gz!/var/lib/kafka/kafka-logs"}
    plan = build_plan([STALE], REPORT, "cap", paths)[0]
    assert [s.command for s in plan.steps(REPORT) if s.command] == [
        "mkdir -p -- /var/lib/kafka/kafka-recon-quarantine/cap/kafka-logs",
        "mv -- /var/lib/kafka/kafka-logs/clicks-0 /var/lib/kafka/kafka-recon-quarantine/cap/kafka-logs/clicks-0",
        "rm -rf -- /var/lib/kafka/kafka-recon-quarantine/cap/kafka-logs"]


def test_plan_is_relative_to_the_log_dir_when_only_a_copy_was_captured():
    paths = {("103", "kafka-logs"): "broker-103/kafka-logs"}
    plan = build_plan([STALE], REPORT, "cap", paths)[0]
    steps = plan.steps(REPORT)
    assert steps[1] == Step("cd into broker 103's log dir named 'kafka-logs' (captured as 'broker-103/kafka-logs'); "
                            "the next commands are relative to it.")
    assert [s.command for s in steps if s.command] == [
        "mkdir -p -- ../kafka-recon-quarantine/cap/kafka-logs",
        "mv -- clicks-0 ../kafka-recon-quarantine/cap/kafka-logs/clicks-0",
        "rm -rf -- ../kafka-recon-quarantine/cap/kafka-logs"]
    assert steps[-1].text == ("After 7 days without problems, delete the quarantine (from broker 103's log dir "
                              "'kafka-logs')")


def test_block_flags_mark_overlaps_and_regressions():
    blocks = [{"block_start": 0, "block_end": 999}, {"block_start": 1000, "block_end": 1999},
              {"block_start": 5000, "block_end": 5999}, {"block_start": 2000, "block_end": 2999},
              {"block_start": 1500, "block_end": 2499}, {"block_start": 6000, "block_end": 6999}]
    assert classify_blocks(blocks) == ["", "overlap", "", "overlap", "overlap", ""]
    assert classify_blocks([{"block_start": 0, "block_end": 9}, {"block_start": 20, "block_end": 29},
                            {"block_start": 10, "block_end": 19}]) == ["", "", "regression"]


def test_chart_labels_are_escaped_and_marks_carry_values():
    svg = hbar_chart("c", [("<b>x</b>", 3, "#000", "3", 'say "hi"')])
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg and "say &quot;hi&quot;" in svg
    assert 'data-value="3"' in svg
    assert human_bytes(4430) == "4.3 KiB" and human_bytes(12) == "12 B"


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match="quarantine_dir_name"):
        replace(REPORT, quarantine_dir_name="../x")
    with pytest.raises(ValueError, match="fail_on"):
        replace(REPORT, fail_on="sometimes")


def test_capture_tag_cannot_climb_out_of_the_quarantine():
    plans = build_plan([{"status": "open", "broker_id": 1, "check_id": "STRAY_DIR", "severity": "warning",
                         "log_dir": "/k/data", "dir_name": "t-0.0123456789abcdef0123456789abcdef-stray"}],
                       REPORT, "..")
    assert [g.root for g in plans[0].groups] == ["/k/kafka-recon-quarantine/capture/data"]


def test_findings_without_a_broker_are_labelled_cluster_wide():
    from jobs.report.aggregates import ReportData, RunInfo
    from jobs.report.html_page import render_html
    from jobs.report.markdown import render_markdown

    row = {"status": "open", "broker_id": None, "check_id": "PID_OUTSIDE_BLOCKS", "severity": "warning",
           "topic_name": "events", "partition": 0, "message": "producer id 1234 is outside every block",
           "remediation": "Check the producer's origin.", "evidence": '{"producer_id": 1234}'}
    data = ReportData(
        run=RunInfo("r1", "c1", "cl", "2025-02-01T00:10:00Z", 0), by_severity={"critical": 0, "warning": 1, "info": 0},
        by_check={"PID_OUTSIDE_BLOCKS": {"count": 1, "severity": "warning", "bytes": 0}},
        by_broker={"unknown": {"critical": 0, "warning": 1, "info": 0, "total": 1}},
        reclaimable={"total": 0, "by_broker": {}, "by_check": {}}, findings_open=1, findings_new=1,
        findings_resolved=0, rows=[row], rows_total=1)
    settings = REPORT
    plans = build_plan([row], settings, "c1")
    summary = {"status": "findings", "exit_code": 0, "fail_on": "critical", "schema_version": 1,
               "files": {"seen": None, "ok": None, "quarantined": None}, "generated_at": "2025-02-01T01:00:00Z"}
    links = {"summary_json": "summary.json", "findings_csv": "findings.csv", "report_md": "report.md",
             "report_html": "report.html", "data_docs": None}
    page = render_html(data, summary, plans, settings, None, links)
    assert 'data-label="not broker-specific" data-value="1"' in page
    assert "<h3>Not broker-specific — 1 item</h3>" in page
    assert "### Not broker-specific" in render_markdown(data, summary, plans, settings, None, links)


def test_a_single_run_trend_says_first_run_instead_of_a_lone_dot():
    from jobs.report.svg import trend_chart

    one = trend_chart("chart-trend", [{"run_id": "r1", "capture_time": "2026-11-22T03:00:00+00:00", "open": 7,
                                       "critical": 2, "current": True}])
    assert "First run of this cluster: 7 open, 2 critical" in one and "<circle" not in one
    two = trend_chart("chart-trend", [{"run_id": "r0", "capture_time": "2026-11-21T03:00:00+00:00", "open": 5,
                                       "critical": 1, "current": False},
                                      {"run_id": "r1", "capture_time": "2026-11-22T03:00:00+00:00", "open": 7,
                                       "critical": 2, "current": True}])
    assert "First run" not in two and "<circle" in two
