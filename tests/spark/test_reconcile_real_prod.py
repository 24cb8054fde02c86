"""Real production topology captures (dedicated KRaft controllers + JBOD brokers, a disk that fails and comes
back) give exactly the truth written from Kafka's own behaviour (tests/fixtures/kafka-real-prod/*/expected.json).

The oracle is each capture's expected.json, not this code: its ``checkerShouldReport`` entries are translated
kind by kind into the findings a correct checker gives, nothing at warning or above may appear that the truth
does not list, an info finding must be one the truth allows, and nothing may name what ``checkerMustNotReport``
lists (the dedicated controllers above all).
"""
from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from epoch_files import epoch_files_as_written, epoch_rows

from jobs.reconcile import run_reconcile
from tests.settings_from import settings_from

pytestmark = pytest.mark.spark

ARCHIVES = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-real-prod"
CAPTURES = ("P1", "P2a", "P2b", "P2c", "P2d")


def _extract(name: str, dest: Path) -> Path:
    with tarfile.open(ARCHIVES / f"{name}.tar.gz") as tar:
        tar.extractall(dest, filter="data")
    return dest / name


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """capture name -> (truth, findings as dicts, silver_log_dirs rows, silver_brokers rows)."""
    from jobs.ingest.stage import run_ingest

    s = settings_from()
    out = {}
    for name in CAPTURES:
        root = _extract(name, tmp_path_factory.mktemp(name))
        truth = json.loads((root / "expected.json").read_text())
        ingest = run_ingest(spark, s.ingest, None, [str(root)], f"cap-{name}", "run-1", execution=s.spark)
        try:
            result = run_reconcile(spark, s.catalogue, ingest.tables, f"cap-{name}", "run-1", ingest.capture_time)
            findings = [r.asDict() for r in result.findings.collect()]
            log_dirs = [r.asDict() for r in result.silver["silver_log_dirs"].collect()]
            brokers = [r.asDict() for r in result.silver["silver_brokers"].collect()]
            epochs = [r.asDict() for r in ingest.tables["bronze_leader_epochs"].collect()]
        finally:
            ingest.release()
        out[name] = (truth, findings, log_dirs, brokers)
        out[(name, "leader_epochs")] = (epoch_files_as_written(root), epochs)
    return out


@pytest.mark.parametrize("name", CAPTURES)
def test_leader_epoch_rows_are_what_the_real_files_say(runs, name):
    """Kafka-written leader-epoch-checkpoints: one row per entry line, as written, every one kept on load."""
    written, rows = runs[(name, "leader_epochs")]
    got = epoch_rows(rows)
    assert len(rows) == len(got) and got == written
    assert written and all(r["kafka_keeps"] and r["broker_id"] is not None for r in rows)
    _, findings, _, _ = runs[name]
    assert [f for f in findings if f["check_id"].startswith("LEADER_EPOCH_")] == []


def _dir_id(truth: dict, broker: int, dir_name: str) -> str:
    return truth["nodes"][f"broker-{broker}"]["dirs"][dir_name]["directoryId"]


def _expected_keys(truth: dict):
    """The findings Kafka's behaviour calls for, as (check_id, broker, key) tuples, plus the replicas that must be
    listed inside an OFFLINE_LOG_DIR finding (in-offline-dir)."""
    keys, in_offline = set(), set()
    for item in truth["checkerShouldReport"]:
        kind, broker = item["kind"], item["broker"]
        if kind == "duplicate":  # one finding per duplicated partition of a broker
            keys.add(("DUPLICATE_REPLICA", broker, f"{item['topic']}-{item['partition']}"))
        elif kind == "offline-dir":
            keys.add(("OFFLINE_LOG_DIR", broker, _dir_id(truth, broker, item["dir"])))
        elif kind == "in-offline-dir":
            in_offline.add((broker, _dir_id(truth, broker, item["dir"]), f"{item['topic']}-{item['partition']}"))
        else:
            raise AssertionError(f"truth kind {kind!r} has no mapping: extend this test and the job")
    return keys, in_offline


def _actual_key(f: dict):
    if f["check_id"] == "DUPLICATE_REPLICA":
        return (f["check_id"], f["broker_id"], f"{f['topic_name']}-{f['partition']}")
    if f["check_id"] == "OFFLINE_LOG_DIR":
        return (f["check_id"], f["broker_id"], json.loads(f["evidence"])["directory_id"])
    return (f["check_id"], f["broker_id"], f["log_dir"], f["dir_name"], f["topic_name"], f["partition"])


@pytest.mark.parametrize("name", CAPTURES)
def test_findings_at_warning_or_above_are_exactly_the_truth(runs, name):
    truth, findings, _, _ = runs[name]
    expected, _ = _expected_keys(truth)
    actual = {_actual_key(f) for f in findings if f["severity"] in ("warning", "critical")}
    assert actual == expected, [f["message"] for f in findings if _actual_key(f) not in expected]


@pytest.mark.parametrize("name", CAPTURES)
def test_replicas_in_an_offline_dir_are_listed_in_its_finding_and_never_missing(runs, name):
    truth, findings, _, _ = runs[name]
    _, in_offline = _expected_keys(truth)
    listed = set()
    for f in findings:
        if f["check_id"] == "OFFLINE_LOG_DIR":
            ev = json.loads(f["evidence"])
            listed |= {(f["broker_id"], ev["directory_id"], p) for p in ev["partitions"]}
    assert in_offline <= listed
    missing = {(f["broker_id"], f"{f['topic_name']}-{f['partition']}") for f in findings
               if f["check_id"] == "MISSING_REPLICA"}
    assert not missing & {(b, p) for b, _, p in in_offline}


@pytest.mark.parametrize("name", CAPTURES)
def test_info_findings_are_ones_the_truth_allows(runs, name):
    """Info: a dir back on disk that the stopped broker's registration (per the truth) does not list yet."""
    truth, findings, _, _ = runs[name]
    allowed = set()
    for spec in truth["nodes"].values():
        if spec["role"] != "broker" or spec.get("runningAtCapture"):
            continue
        registered = set((spec.get("registration") or {}).get("logDirs") or [])
        for dir_name, d in spec["dirs"].items():
            if d.get("status") == "online" and d["directoryId"] not in registered:
                allowed.add(("UNREGISTERED_LOG_DIR", spec["nodeId"], dir_name))
    info = {(f["check_id"], f["broker_id"], f["log_dir"]) for f in findings if f["severity"] == "info"}
    assert info <= allowed


@pytest.mark.parametrize("name", CAPTURES)
def test_nothing_is_reported_on_what_the_truth_says_must_not_be(runs, name):
    truth, findings, _, _ = runs[name]
    controllers = {spec["nodeId"] for spec in truth["nodes"].values() if spec["role"] == "controller"}
    assert not [f for f in findings if f["broker_id"] in controllers]
    paths = {f"broker-{f['broker_id']}/{f['log_dir']}/{f['dir_name']}" for f in findings if f["dir_name"]}
    clean = {item["path"] for item in truth["checkerMustNotReport"] if item["kind"] == "not-a-problem"}
    assert not paths & clean


@pytest.mark.parametrize("name", CAPTURES)
def test_node_roles_and_log_dir_states_follow_the_truth(runs, name):
    truth, _, log_dirs, brokers = runs[name]
    roles = {b["broker_id"]: b["role"] for b in brokers}
    states = {(d["broker_id"], d["directory_id"]): d["state"] for d in log_dirs}
    for spec in truth["nodes"].values():
        assert roles[spec["nodeId"]] == spec["role"]
        for d in spec["dirs"].values():
            state = states[(spec["nodeId"], d["directoryId"])]
            if spec["role"] == "controller":
                assert state == "controller_metadata"
            elif d["status"] == "offline-dir":
                assert state == "offline"
            elif d["directoryId"] in set((spec.get("registration") or {}).get("logDirs") or []):
                assert state == "registered"
            else:
                assert state == "unregistered"
