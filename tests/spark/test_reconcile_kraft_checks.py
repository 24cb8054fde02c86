"""Every KRaft check on one hand-made capture: each problem sits on its own topic/broker, and the run must
report exactly the expected findings (precision = recall = 1), nothing for healthy or lagging replicas."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from bronze_builders import Cluster, record_row

from jobs.reconcile import run_reconcile
from jobs.reconcile.catalogue import default_catalogue
from tests.settings_from import settings_from

H1, H2, H3 = "a" * 32, "b" * 32, "c" * 32
D1, D2, D3, D4A, D4B, D5 = ("AAAAAAAAAAAAAAAAAAAAZA", "AAAAAAAAAAAAAAAAAAAAZQ", "AAAAAAAAAAAAAAAAAAAAZg",
                            "AAAAAAAAAAAAAAAAAAAAZw", "AAAAAAAAAAAAAAAAAAAAaA", "AAAAAAAAAAAAAAAAAAAAaQ")
D8, D9A, D9B, DC100, DC101 = ("AAAAAAAAAAAAAAAAAAAAbA", "AAAAAAAAAAAAAAAAAAAAbQ", "AAAAAAAAAAAAAAAAAAAAbg",
                              "AAAAAAAAAAAAAAAAAAAAcA", "AAAAAAAAAAAAAAAAAAAAcQ")
T = {name: f"{name.upper():_<21}A"[:22] for name in (
    "healthy", "ordersold", "ordersnew", "gone", "mystery", "mystery2", "lonely", "remote", "dup", "moved", "moving",
    "pm", "old", "local", "grow", "twinone", "twintwo", "neverseen", "fenced", "fadeout", "lostdisk", "stuckmove",
    "leftover")}


def build() -> Cluster:
    c = Cluster()
    for b, dirs, ids in ((1, ["kafka-logs"], [D1]), (2, ["kafka-logs"], [D2]), (3, ["kafka-logs"], [D3]),
                         (4, ["d1", "d2"], [D4A, D4B]), (5, ["kafka-logs"], [D5])):
        c.broker(b, dirs, ids)
        c.register(b, log_dirs=ids)
    c.broker(6, cluster_id="SOME-OTHER-CLUSTER")  # a disk of another cluster; broker 6 never registered
    c.broker(100, ["meta"], [DC100], node="controller")  # dedicated controllers: never brokers, never foreign
    c.register_controller(100)
    c.broker(101, ["meta"], [DC101], has_metadata_log=True, node="controller")  # no RegisterControllerRecord
    c.broker(8, ["kafka-logs"], [D8])
    c.register(8, log_dirs=[D8])
    c.broker(9, ["a"], [D9A])                     # its dir b (D9B) died: offline, not in the capture
    c.register(9, log_dirs=[D9A, D9B])
    c.fence(5)
    c.topic("healthy", T["healthy"], {0: [1, 2]})
    c.change(T["healthy"], 0, isr=[1], leader=1)                     # broker 2 lags: still valid
    c.topic("orders", T["ordersold"], {0: [1, 3]})
    c.topic("gone", T["gone"], {0: [2, 3]})
    c.topic("old", T["old"], {0: [1, 2]})
    c.remove_topic(T["gone"])                                        # broker 3 keeps gone-0: DELETE_INCOMPLETE
    c.remove_topic(T["old"])                                         # -delete dirs left behind
    c.remove_topic(T["ordersold"])
    c.topic("orders", T["ordersnew"], {0: [1, 2]})                   # broker 3 keeps the old incarnation
    c.append(("BEGIN_TRANSACTION_RECORD", {"name": "committed create"}))
    c.topic("lonely", T["lonely"], {0: [1, 2]})                      # broker 2 has no dir
    c.append(("END_TRANSACTION_RECORD", {}))                         # committed: in the image
    c.topic("remote", T["remote"], {0: [1, 7]})                      # broker 7 is not captured: no finding
    c.topic("dup", T["dup"], {0: [4, 1]}, {0: [D4A, D1]})
    c.topic("moved", T["moved"], {0: [4]}, {0: [D4A]})               # lives in d2: WRONG_LOG_DIR
    c.topic("moving", T["moving"], {0: [4]}, {0: [D4B]})             # -future in d2: move in progress
    c.topic("pmtopic", T["pm"], {0: [1, 2], 1: [1, 2]})
    c.topic("local", T["local"], {0: [1, 2]})
    c.topic("grow", T["grow"], {0: [1, 2]})
    c.add_partitions(T["grow"], {1: [2, 1]})
    c.topic("twin", T["twinone"], {0: [1]})
    c.topic("twin", T["twintwo"], {0: [2]})                          # no RemoveTopicRecord in between
    c.topic("fencedtopic", T["fenced"], {0: [5, 1]})
    c.topic("fadeout", T["fadeout"], {0: [5, 1]})
    c.topic("lostdisk", T["lostdisk"], {0: [9, 1], 1: [1, 9]}, {0: [D9B, D1], 1: [D1, D9A]})
    c.log_dirs_change(9, [D9A])                                      # the controller marks D9B offline
    c.topic("stuckmove", T["stuckmove"], {0: [4]}, {0: [D4B]})      # -future in d2 stopped 3 days ago
    c.topic("leftover", T["leftover"], {0: [8, 1]})
    c.change(T["leftover"], 0, replicas=[1], isr=[1])                # moved off broker 8, then 8 unregistered
    c.unregister(8)
    c.append(("BEGIN_TRANSACTION_RECORD", {"name": "aborted create"}))
    c.topic("ghost", "GHOST________________A", {0: [1, 2]})         # aborted: never in the image
    c.append(("ABORT_TRANSACTION_RECORD", {}))
    c.remove_topic(T["neverseen"])                                   # log starts at 0: provably never created
    c.producer_ids(1, 1000)
    c.producer_ids(2, 2000)
    c.producer_ids(3, 1500)                                          # went backwards
    c.producer_ids(1, 3000)
    c.producer_ids(2, 3000)                                          # the same block again, another owner
    c.advance(timedelta(days=1))
    c.register(2, log_dirs=[D2])                                     # broker 2 restarted: its delete timer re-armed
    c.advance(timedelta(seconds=30))
    c.remove_topic(T["fadeout"])                                     # fenced broker 5 keeps fadeout-0: at once
    c.append(("BEGIN_TRANSACTION_RECORD", {"name": "never ended"}))
    c.topic("unfinished", "UNFINISHED___________A", {0: [1, 2]})    # a Begin never ended: not in the image

    for b in (1, 2):
        c.dir(b, "healthy-0", T["healthy"])
        c.dir(b, "orders-0", T["ordersnew"])
        c.dir(b, "grow-0", T["grow"])
        c.dir(b, "grow-1", T["grow"])
    c.dir(3, "orders-0", T["ordersold"], bytes=5000)
    c.dir(3, "gone-0", T["gone"], bytes=7000)
    c.dir(2, "mystery-0", "AAAAAAAAAAAAAAAAAAAAmA")
    c.dir(5, "mystery2-0", "AAAAAAAAAAAAAAAAAAAAmQ")
    c.dir(3, "healthy-0", T["healthy"])                              # not in replicas [1, 2]
    c.dir(1, "healthy-5", T["healthy"])                              # beyond the partition count
    c.dir(3, f"healthy-0.{H3}-stray", T["healthy"])
    c.dir(1, "lonely-0", T["lonely"])
    c.dir(1, "remote-0", T["remote"])
    c.dir(4, "dup-0", T["dup"], log_dir="d1")
    c.dir(4, "dup-0", T["dup"], log_dir="d2", bytes=300)
    c.dir(1, "dup-0", T["dup"])
    c.dir(4, "moved-0", T["moved"], log_dir="d2")
    c.dir(4, "moving-0", T["moving"], log_dir="d1")
    c.dir(4, f"moving-0.{H1}-future", T["moving"], log_dir="d2")
    c.dir(1, "pmtopic-0", T["pm"])
    c.dir(1, "pmtopic-1", T["pm"])
    c.dir(2, "pmtopic-0", None, pm_status="missing")
    c.dir(2, "pmtopic-1", None, pm_status="log_dir_offline")
    c.dir(1, f"old-0.{H1}-delete", T["old"], bytes=900)
    c.dir(2, f"old-0.{H2}-delete", T["old"])                        # re-armed by broker 2's restart
    c.dir(1, "local-0", T["local"])
    c.dir(2, f"local-0.{H2}-delete", T["local"])
    c.dir(1, "twin-0", T["twinone"])
    c.dir(2, "twin-0", T["twintwo"])
    c.dir(5, "fencedtopic-0", T["fenced"])
    c.dir(1, "fencedtopic-0", T["fenced"])
    c.dir(5, "fadeout-0", T["fadeout"], bytes=4000)
    c.dir(9, "lostdisk-1", T["lostdisk"], log_dir="a")
    c.dir(1, "lostdisk-0", T["lostdisk"])
    c.dir(1, "lostdisk-1", T["lostdisk"])
    c.dir(4, "stuckmove-0", T["stuckmove"], log_dir="d1", mtime=c.start + timedelta(days=3))
    c.dir(4, f"stuckmove-0.{H2}-future", T["stuckmove"], log_dir="d2", mtime=c.start)
    c.dir(8, "leftover-0", T["leftover"], bytes=2500)
    c.dir(1, "leftover-0", T["leftover"])
    c.dir(1, "lost+found", None, kind="non_kafka")
    c.dir(1, "notes.txt", None, kind="non_kafka", is_dir=False)     # Kafka ignores files
    c.producer(1, "healthy-0", 10, T["healthy"])
    c.producer(1, "healthy-0", 50_000, T["healthy"])                 # above every block
    c.producer(2, "healthy-0", 50_000, T["healthy"])
    _other_copies(c)
    return c


def _other_copies(c: Cluster) -> None:
    """Broker 2's copy of the metadata log diverges at offset 5; broker 3's has a hole at offsets 3-4."""
    for broker, rows in ((2, [r for r in c.records if r["offset"] < 8]), (3, [r for r in c.records if r["offset"] < 8])):
        copy_id = f"broker-{broker}/kafka-logs/__cluster_metadata-0"
        for r in rows:
            if broker == 3 and r["offset"] in (3, 4):
                continue
            row = dict(r, copy_id=copy_id, source_broker_id=broker)
            if broker == 2 and r["offset"] == 5:
                row = record_row(copy_id, 2, "log", 5, 5, 2, r["append_time"], "NO_OP_RECORD", {})
            c.records.append(row)
        c.extra_copies.append({
            "capture_id": "cap", "run_id": "run", "copy_id": copy_id, "source_broker_id": broker,
            "first_offset": 0, "last_offset": 7, "records": len(rows), "is_authoritative": False,
            "diverges_at_offset": 5 if broker == 2 else None, "gap_after_offset": 2 if broker == 3 else None,
            "source_kind": "segment", "log_dir": f"broker-{broker}/kafka-logs"})


EXPECTED = {
    ("STALE_TOPIC_ID", 3, "orders-0", "orders", 0),
    ("DELETE_INCOMPLETE", 3, None, "gone", None),
    ("ORPHAN_REPLICA", 2, "mystery-0", "mystery", 0),
    ("ORPHAN_REPLICA", 5, "mystery2-0", "mystery2", 0),
    ("STRAY_NOT_ASSIGNED", 3, "healthy-0", "healthy", 0),
    ("STRAY_NOT_ASSIGNED", 1, "healthy-5", "healthy", 5),
    ("MISSING_REPLICA", 2, None, "lonely", 0),
    ("DUPLICATE_REPLICA", 4, "dup-0", "dup", 0),
    ("WRONG_LOG_DIR", 4, "moved-0", "moved", 0),
    ("MISSING_PARTITION_METADATA", 2, "pmtopic-0", "pmtopic", 0),
    ("CORRUPT_PARTITION_METADATA", 2, "pmtopic-1", "pmtopic", 1),
    ("LINGERING_DELETE_DIR", 1, f"old-0.{H1}-delete", "old", 0),
    ("STRAY_DIR", 3, f"healthy-0.{H3}-stray", "healthy", 0),
    ("UNKNOWN_LOG_DIR_ENTRY", 1, "lost+found", None, None),
    ("FOREIGN_LOG_DIR", 6, None, None, None),
    ("LOCAL_DELETE_WITHOUT_CONTROLLER_DELETE", 2, f"local-0.{H2}-delete", "local", 0),
    ("PARTITION_COUNT_CHANGED", None, None, "grow", None),
    ("TOPIC_ID_CHANGED_WITHOUT_DELETE", None, None, "twin", None),
    ("DELETE_WITHOUT_CREATE", None, None, None, None),
    ("PID_BLOCK_REGRESSION", 3, None, None, None),
    ("PID_BLOCK_OVERLAP", 3, None, None, None),                      # the regression also overlaps brokers 1, 2
    ("PID_BLOCK_OVERLAP", 2, None, None, None),
    ("PID_OUTSIDE_BLOCKS", None, None, "healthy", 0),
    ("METADATA_LOG_DIVERGENCE", 2, "__cluster_metadata-0", None, None),
    ("METADATA_LOG_GAP", 3, "__cluster_metadata-0", None, None),
    ("DELETE_INCOMPLETE", 5, None, "fadeout", None),                # 30 s old, but broker 5 is fenced
    ("OFFLINE_LOG_DIR", 9, None, None, None),                        # lostdisk-0 on 9 is not MISSING_REPLICA
    ("FUTURE_MOVE_STUCK", 4, f"stuckmove-0.{H2}-future", "stuckmove", 0),
    ("DECOMMISSIONED_BROKER_DATA", 8, None, None, None),            # and no STRAY_NOT_ASSIGNED for leftover-0
}


@pytest.fixture(scope="module")
def cluster():
    return build()


@pytest.fixture(scope="module")
def result(spark, cluster):
    return run_reconcile(spark, default_catalogue(), cluster.bronze(spark), "cap-k1", "run-k1", cluster.now)


@pytest.fixture(scope="module")
def findings(result):
    return [r.asDict() for r in result.findings.collect()]


@pytest.mark.spark
def test_a_regressed_block_that_overlaps_other_owners_says_so(findings):
    """Broker 3's block [500, 1499] goes below the high-water 2000 and overlaps broker 1's [0, 999] and broker
    2's [1000, 1999]: the overlap finding names both owners and the shared ids, and the regression mentions it."""
    overlap = next(f for f in findings if f["check_id"] == "PID_BLOCK_OVERLAP" and f["broker_id"] == 3)
    assert "[0, 999] of broker 1" in overlap["message"] and "ids 500-999" in overlap["message"]
    assert "[1000, 1999] of broker 2" in overlap["message"] and "ids 1000-1499" in overlap["message"]
    assert json.loads(overlap["evidence"])["overlapping_owners"] == [1, 2]
    regression = next(f for f in findings if f["check_id"] == "PID_BLOCK_REGRESSION")
    assert "broker(s) 1, 2" in regression["message"]


@pytest.mark.spark
def test_node_roles_and_log_dir_states(result):
    s = result.silver
    roles = {r["broker_id"]: (r["role"], r["state"]) for r in s["silver_brokers"].collect()}
    assert roles[100] == ("controller", "controller") and roles[8] == ("broker", "unregistered")
    assert roles[101][1] == "absent"  # no RegisterControllerRecord: only its dir tells it is a controller
    states = {(r["broker_id"], r["directory_id"]): (r["state"], r["captured"]) for r in s["silver_log_dirs"].collect()}
    assert states[(100, DC100)] == ("controller_metadata", True)
    assert states[(101, DC101)] == ("controller_metadata", True)
    assert states[(8, D8)] == ("decommissioned", True)
    assert states[(9, D9A)] == ("registered", True) and states[(9, D9B)] == ("offline", False)
    assert states[(2, D2)] == ("registered", True) and states[(6, None)] == ("foreign", True)
    events = {(r["node_id"], r["event"]) for r in s["silver_node_registrations"].collect()}
    assert {(100, "controller_registered"), (9, "log_dirs_changed"), (8, "unregistered"), (5, "fenced")} <= events


@pytest.mark.spark
def test_offline_dir_finding_lists_its_partitions(findings):
    f = next(f for f in findings if f["check_id"] == "OFFLINE_LOG_DIR")
    ev = json.loads(f["evidence"])
    assert ev["directory_id"] == D9B and ev["partitions"] == ["lostdisk-0"] and f["severity"] == "warning"
    assert "lostdisk-0" in f["message"] and "missing from the capture" in f["message"]
    assert not [m for m in findings if m["check_id"] == "MISSING_REPLICA" and m["topic_name"] == "lostdisk"]


@pytest.mark.spark
def test_exactly_the_expected_findings(findings):
    got = {(f["check_id"], f["broker_id"], f["dir_name"], f["topic_name"], f["partition"]) for f in findings}
    assert len(got) == len(findings), "two findings share their keys"
    assert got == EXPECTED


@pytest.mark.spark
def test_findings_carry_keys_severity_texts_and_evidence(findings, result):
    by = {(f["check_id"], f["broker_id"], f["dir_name"]): f for f in findings}
    stale = by[("STALE_TOPIC_ID", 3, "orders-0")]
    assert stale["topic_id"] == T["ordersold"] and stale["severity"] == "critical" and stale["bytes"] == 5000
    assert stale["log_dir"] == "kafka-logs" and stale["cluster_id"] == "C-test-cluster"
    assert T["ordersnew"] in stale["message"] and stale["broker_state"] == "active"
    assert json.loads(stale["evidence"])["path"] == "broker-3/kafka-logs/orders-0"
    assert stale["since"] is not None and stale["status"] == "open" and len(stale["finding_id"]) == 64
    orphan = by[("ORPHAN_REPLICA", 5, "mystery2-0")]
    assert orphan["broker_state"] == "fenced" and "Broker 5 is fenced at capture time." in orphan["message"]
    foreign = next(f for f in findings if f["check_id"] == "FOREIGN_LOG_DIR")
    assert foreign["broker_state"] == "absent" and "SOME-OTHER-CLUSTER" in foreign["message"]
    incomplete = next(f for f in findings if f["check_id"] == "DELETE_INCOMPLETE" and f["broker_id"] == 3)
    assert incomplete["topic_id"] == T["gone"] and incomplete["bytes"] == 7000
    at_once = next(f for f in findings if f["check_id"] == "DELETE_INCOMPLETE" and f["broker_id"] == 5)
    assert at_once["bytes"] == 4000 and "Broker 5 is fenced at capture time." in at_once["message"]
    assert json.loads(at_once["evidence"])["broker_state"] == "fenced"
    dup = by[("DUPLICATE_REPLICA", 4, "dup-0")]
    assert dup["log_dir"] == "d2" and dup["bytes"] == 300   # the copy outside the assigned directory
    pid = next(f for f in findings if f["check_id"] == "PID_OUTSIDE_BLOCKS")
    assert "50000" in pid["message"] and json.loads(pid["evidence"])["allocation_high_water"] == 3000
    for f in findings:
        assert f["message"] and "?" not in f["message"].replace("?'", ""), f["message"]
        assert f["remediation"] and f["severity"] in ("critical", "warning", "info")
        json.loads(f["evidence"])


@pytest.mark.spark
def test_silver_tables(result):
    s = result.silver
    brokers = {r["broker_id"]: r["state"] for r in s["silver_brokers"].collect()}
    assert brokers == {1: "active", 2: "active", 3: "active", 4: "active", 5: "fenced", 6: "absent", 7: "absent",
                       8: "unregistered", 9: "active", 100: "controller", 101: "absent"}
    inc = {(r["topic_name"], r["topic_id"]): r for r in s["silver_topic_incarnations"].collect()}
    old, new = inc[("orders", T["ordersold"])], inc[("orders", T["ordersnew"])]
    assert old["deleted"] and not old["is_live"] and old["deleted_offset"] is not None and old["source"] == "log"
    assert new["is_live"] and not new["deleted"] and new["created_offset"] > old["deleted_offset"]
    assert not any(name == "ghost" for name, _ in inc)             # created in an aborted transaction
    assert not any(name == "unfinished" for name, _ in inc)        # created in a transaction never ended
    assert inc[("lonely", T["lonely"])]["is_live"]                  # created in a committed transaction
    grow = inc[("grow", T["grow"])]
    assert grow["partition_count"] == 2 and grow["initial_partition_count"] == 1
    assert [(c["from"], c["to"]) for c in json.loads(grow["partition_count_changes_json"])] == [(1, 2)]
    asg = {(r["topic_name"], r["partition"]): r for r in s["silver_partition_assignments"].collect()}
    assert asg[("healthy", 0)]["replicas"] == [1, 2] and asg[("healthy", 0)]["isr"] == [1]
    assert asg[("dup", 0)]["directories"] == [D4A, D1]
    assert ("gone", 0) not in asg and ("orders", 0) in asg
    reps = {(r["broker_id"], r["log_dir_name"], r["dir_name"]): r for r in s["silver_replicas"].collect()}
    assert reps[(2, "kafka-logs", "healthy-0")]["classification"] == "valid"          # lagging, not in ISR
    assert not reps[(2, "kafka-logs", "healthy-0")]["in_isr"]
    assert reps[(4, "d1", "moving-0")]["classification"] == "valid"
    assert reps[(3, "kafka-logs", "healthy-0")]["reason"] == (
        "the current replica assignment [1, 2] does not contain the local brokerId 3")
    blocks = sorted((r["source"], r["first_producer_id"], r["broker_id"])
                    for r in s["silver_producer_id_blocks"].collect())
    assert blocks == [("kraft_log", 0, 1), ("kraft_log", 500, 3), ("kraft_log", 1000, 2), ("kraft_log", 2000, 1),
                      ("kraft_log", 2000, 2)]
    used = {(r["producer_id"], r["in_block"]) for r in s["silver_producer_ids_in_use"].collect()}
    assert used == {(10, True), (50_000, False)}
    for name, df in s.items():
        assert df.filter("capture_id != 'cap-k1' OR run_id != 'run-k1'").count() == 0, name


# ------------------------------------------------------------------ gold: MERGE across two captures

def _second_capture() -> Cluster:
    """The next night: broker 2's orphan and the -delete dirs of 'old' are gone, broker 1 got a new orphan;
    everything else is unchanged."""
    c = build()
    c.entries = [e for e in c.entries if not (e["broker_id"] == 2 and e["entry_name"] == "mystery-0")
                 and not e["entry_name"].startswith("old-0.")]
    c.advance(timedelta(days=1))
    c.dir(1, "newcomer-0", "AAAAAAAAAAAAAAAAAAAAnA")
    return c


@pytest.mark.spark
def test_gold_merge_keeps_ids_and_resolves_what_disappeared(spark, tmp_path, result, cluster):
    from jobs.reconcile.gold import write_findings
    from jobs.tables.delta_store import DeltaStore

    store = DeltaStore.from_settings(spark, settings_from(storage={"backend": "embedded",
                                                                  "root": str(tmp_path / "tables")}).storage)
    first_time = cluster.now
    counts = write_findings(store, result, capture_id="cap-k1", run_id="run-k1", capture_time=first_time)
    assert counts.open_findings == len(EXPECTED) and counts.new_findings == len(EXPECTED)
    gold = {r["finding_id"]: r.asDict() for r in store.read("gold_findings").collect()}
    assert len(gold) == len(EXPECTED) and all(r["status"] == "open" for r in gold.values())

    # the same capture again (a re-run): nothing moves, and it reports what the first run of it reported
    again = write_findings(store, result, capture_id="cap-k1", run_id="run-k1b", capture_time=first_time)
    assert (again.open_findings, again.new_findings, again.resolved_findings) == (len(EXPECTED), len(EXPECTED), 0)
    assert {r["finding_id"]: (r["first_seen"], r["status"]) for r in store.read("gold_findings").collect()} == \
        {k: (v["first_seen"], v["status"]) for k, v in gold.items()}

    c2 = _second_capture()
    second = run_reconcile(spark, default_catalogue(), c2.bronze(spark), "cap-k2", "run-k2", c2.now)
    counts2 = write_findings(store, second, capture_id="cap-k2", run_id="run-k2", capture_time=c2.now)
    assert (counts2.open_findings, counts2.new_findings, counts2.resolved_findings) == (len(EXPECTED) - 1, 1, 2)
    assert counts2.by_check["ORPHAN_REPLICA"] == 2
    after = {r["finding_id"]: r.asDict() for r in store.read("gold_findings").collect()}
    gone = {k for k, v in gold.items() if (v["check_id"], v["broker_id"], v["dir_name"]) in
            {("ORPHAN_REPLICA", 2, "mystery-0"), ("LINGERING_DELETE_DIR", 1, f"old-0.{H1}-delete")}}
    assert len(gone) == 2
    for fid, row in gold.items():
        now = after[fid]
        assert now["first_seen"] == row["first_seen"] and now["first_seen_capture"] == "cap-k1"
        if fid in gone:
            assert now["status"] == "resolved" and now["resolved_at"].replace(tzinfo=None) == c2.now.replace(tzinfo=None)
            assert now["last_seen_capture"] == "cap-k1"
        else:
            assert now["status"] == "open" and now["last_seen_capture"] == "cap-k2"
    new = [v for k, v in after.items() if k not in gold]
    assert [(v["check_id"], v["dir_name"], v["first_seen_capture"]) for v in new] == \
        [("ORPHAN_REPLICA", "newcomer-0", "cap-k2")]
