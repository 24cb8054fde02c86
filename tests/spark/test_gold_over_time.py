"""gold_findings over many runs: any order of the same captures (re-runs and backfills included) leaves the
table the capture-time order leaves, and each run's summary.json agrees with its gold_run_summary row.

The captures are real-format bronze (metadata records and log-dir entries as ingest writes them) of one KRaft
cluster on four nights: a stale orphan goes and comes back, -delete dirs go, a newcomer orphan comes, goes and
comes back. The oracle is the definition of the table, folded here in plain Python over each capture's set of
finding ids: first_seen = the earliest capture showing a finding, last_seen = the latest; open while the latest
capture of the cluster shows it, else resolved at the first capture after its last sighting.
"""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

import pytest
from test_reconcile_kraft_checks import build

from jobs.dashboards import run_query
from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from jobs.reconcile.gold import findings_as_of, run_summary_frame, run_summary_values, write_findings
from jobs.report.summary import schema_errors
from jobs.report.writer import write_reports
from jobs.tables.delta_store import DeltaStore
from tests.settings_from import settings_from

COMPARED = ("status", "first_seen", "first_seen_capture", "last_seen", "last_seen_capture", "resolved_at",
            "message", "evidence", "bytes")


def _night(days: int, drop=(), add=()):
    c = build()
    c.entries = [e for e in c.entries if (e["broker_id"], e["entry_name"]) not in drop
                 and not any(e["entry_name"].startswith(p) for b, p in drop if p.endswith("."))]
    c.advance(timedelta(days=days))
    for broker, name, topic_id in add:
        c.dir(broker, name, topic_id)
    return c


def _captures():
    """Four nights of one cluster, in capture-time order."""
    old = (1, "old-0."), (2, "old-0.")
    newcomer = (1, "newcomer-0", "AAAAAAAAAAAAAAAAAAAAnA")
    return [
        ("cap-a", _night(0)),
        ("cap-b", _night(1, drop=((2, "mystery-0"), *old), add=(newcomer,))),      # orphan and -delete dirs gone
        ("cap-c", _night(2, drop=old)),                                            # orphan back, newcomer gone
        ("cap-d", _night(3, drop=((2, "mystery-0"), *old),
                         add=(newcomer, (2, "latecomer-0", "AAAAAAAAAAAAAAAAAAAAnQ")))),
    ]


@pytest.fixture(scope="module")
def nights(spark):
    """capture id -> (capture time, reconcile result), each reconciled once."""
    out = {}
    for capture_id, cluster in _captures():
        when = cluster.now.replace(tzinfo=timezone.utc) if cluster.now.tzinfo is None else cluster.now
        result = run_reconcile(spark, default_catalogue(), cluster.bronze(spark), capture_id, f"run-{capture_id}",
                               when)
        result.findings = result.findings.cache()
        out[capture_id] = (when, result, {r["finding_id"] for r in result.findings.collect()})
    return out


def _utc(value):
    return None if value is None else (value.replace(tzinfo=timezone.utc) if value.tzinfo is None
                                       else value.astimezone(timezone.utc))


def _oracle(nights):
    """finding_id -> (status, first_seen, first_seen_capture, last_seen, last_seen_capture, resolved_at)."""
    order = sorted(nights, key=lambda c: nights[c][0])
    times = [nights[c][0] for c in order]
    out = {}
    for fid in set().union(*(ids for _, _, ids in nights.values())):
        seen = [c for c in order if fid in nights[c][2]]
        first, last = seen[0], seen[-1]
        later = [t for t in times if t > nights[last][0]]
        out[fid] = ("resolved" if later else "open", nights[first][0], first, nights[last][0], last,
                    later[0] if later else None)
    return out


def _run(spark, store, nights, capture_id, run_number, out_dir=None):
    when, result, _ = nights[capture_id]
    run_id = f"run-{run_number}-{capture_id}"
    counts = write_findings(store, result, capture_id=capture_id, run_id=run_id, capture_time=when)
    row = run_summary_values(counts, run_id=run_id, capture_id=capture_id, cluster_id=result.cluster_id,
                             capture_time=when, started_at=datetime.now(timezone.utc), bronze={},
                             stage_seconds={})
    store.replace_slice("gold_run_summary", run_summary_frame(spark, row), slice={"capture_id": capture_id},
                        run_id=run_id)
    if out_dir is not None:
        settings = settings_from()
        write_reports(spark, settings.report, default_catalogue(), out_dir,
                      findings_as_of(store, result.findings, result.cluster_id, when), {**row, "fail_on": "never"},
                      history_df=store.read("gold_run_summary"), fail_on="never",
                      history_findings_df=store.read("gold_findings"))
    return row


def _table(store):
    return {r["finding_id"]: tuple(_utc(r[c]) if c in ("first_seen", "last_seen", "resolved_at") else r[c]
                                   for c in COMPARED)
            for r in store.read("gold_findings").collect()}


def _store(spark, root):
    return DeltaStore.from_settings(spark, settings_from(storage={"backend": "embedded", "root": str(root)}).storage)


@pytest.mark.spark
@pytest.mark.slow
def test_any_order_of_captures_gives_the_capture_time_order_table(spark, tmp_path, nights):
    oracle = _oracle(nights)
    # the captures really differ: something resolves, something re-opens, something comes back
    assert {v[0] for v in oracle.values()} == {"open", "resolved"}
    assert any(v[2] == "cap-a" and v[4] == "cap-c" for v in oracle.values())  # the orphan that came back
    in_time = sorted(nights, key=lambda c: nights[c][0])
    reference = _store(spark, tmp_path / "in-time")
    for n, capture_id in enumerate(in_time):
        _run(spark, reference, nights, capture_id, n)
    expected = _table(reference)
    assert {fid: v[:6] for fid, v in expected.items()} == oracle
    # the dashboard's over-time queries read the same one point per capture
    per_capture = {c: len(nights[c][2]) for c in in_time}
    trend = {r["capture_id"]: r for r in run_query(spark, reference, "new_vs_resolved_per_run").collect()}
    assert {c: r["open_findings"] for c, r in trend.items()} == per_capture
    assert {c: (r["new_findings"], r["resolved_findings"]) for c, r in trend.items()} == {
        c: (sum(v[2] == c for v in oracle.values()), sum(v[5] == nights[c][0] for v in oracle.values()))
        for c in in_time}
    new_vs_resolved = run_query(spark, reference, "new_vs_resolved_per_run").collect()
    by_time = {}
    for r in run_query(spark, reference, "open_findings_by_family_over_time").collect():
        by_time[_utc(r["capture_time"])] = by_time.get(_utc(r["capture_time"]), 0) + r["open_findings"]
    assert by_time == {nights[c][0]: n for c, n in per_capture.items()}

    rng = random.Random(66)
    orders = [list(reversed(in_time)), rng.sample(in_time, len(in_time)),
              [*rng.sample(in_time, 3), in_time[0], in_time[-1], in_time[1]]]  # with re-runs of captures
    for i, order in enumerate(orders):
        if set(order) != set(in_time):
            order = [*order, *[c for c in in_time if c not in order]]
        store = _store(spark, tmp_path / f"order-{i}")
        for n, capture_id in enumerate(order):
            _run(spark, store, nights, capture_id, n)
        assert _table(store) == expected, f"order {order}"
        summary = store.read("gold_run_summary").collect()
        assert sorted(r["capture_id"] for r in summary) == sorted(in_time)  # one trend point per capture
        reference_rows = {r["capture_id"]: r for r in reference.read("gold_run_summary").collect()}
        for r in summary:  # what a capture showed is the same in any order (new/resolved: as of its run)
            want = reference_rows[r["capture_id"]]
            assert (r["open_findings"], r["bytes_reclaimable"], r["counts_by_check_json"]) == \
                (want["open_findings"], want["bytes_reclaimable"], want["counts_by_check_json"])
        assert sorted(run_query(spark, store, "new_vs_resolved_per_run").collect()) == sorted(new_vs_resolved)


@pytest.mark.spark
def test_a_backfill_reports_its_capture_and_leaves_the_current_state(spark, tmp_path, nights):
    """The issue's story: the newest capture, then an older one. The older one's summary.json and its
    gold_run_summary row say the same, both describe that capture, and the current open set is the newest's."""
    store = _store(spark, tmp_path / "tables")
    newest, older = "cap-d", "cap-b"
    _run(spark, store, nights, newest, 0)
    open_now = {r["finding_id"] for r in store.read("gold_findings").where("status = 'open'").collect()}
    assert open_now == nights[newest][2]
    for n, capture_id in enumerate((older, newest, older), start=1):
        out = tmp_path / f"out-{n}"
        row = _run(spark, store, nights, capture_id, n, out_dir=out)
        summary = json.loads((out / "summary.json").read_text())
        assert schema_errors(summary) == []
        stored = store.read("gold_run_summary").where(f"capture_id = '{capture_id}'").collect()
        assert len(stored) == 1 and stored[0]["run_id"] == row["run_id"]
        stored = stored[0]
        assert summary["findings_open"] == stored["open_findings"] == len(nights[capture_id][2])
        assert summary["findings_new"] == stored["new_findings"]
        assert summary["findings_resolved"] == stored["resolved_findings"]
        assert summary["bytes_reclaimable"]["total"] == stored["bytes_reclaimable"]
        assert {k: summary["counts"]["by_severity"].get(k, 0) for k in ("critical", "warning", "info")} == \
            {k: stored[k] for k in ("critical", "warning", "info")}
        assert summary["counts"]["by_check"] == json.loads(stored["counts_by_check_json"])
        trend = [p["capture_time"] for p in json.loads((out / "summary.json").read_text()).get("trend", [])]
        assert len(trend) == len(set(trend))
        assert {r["finding_id"] for r in store.read("gold_findings").where("status = 'open'").collect()} == open_now
