"""udfs.zookeeper on the two real ZooKeeper-mode captures (tests/fixtures/kafka-zk-sample) and their expected.json,
plus synthetic log lines in Kafka's exact shapes and malformed znodes."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from zk_sample import extract

from jobs.tables.bronze import RUN_COLS, ZK_EVENTS
from udfs import zookeeper as zk

UTC = timezone.utc


@pytest.fixture(scope="module", params=["Z1", "Z2"])
def capture(request, tmp_path_factory):
    root = extract(request.param, tmp_path_factory.mktemp(request.param))
    expected = json.loads((root / "expected.json").read_text())
    with (root / "zk-znodes.jsonl").open() as f:
        dump = zk.parse_znode_dump(f, "zk-znodes.jsonl")
    logs = []
    for path in sorted(root.glob("server-logs/broker-*/*.log")):
        if path.name in ("controller.log", "server.log", "state-change.log"):
            broker = int(path.parent.name.split("-")[1])
            with path.open() as f:
                logs += list(zk.iter_zk_log_events(f, str(path.relative_to(root)), broker_id=broker))
    return root, expected, dump, logs


def _rows(rows, event_type):
    return [r for r in rows if r["event_type"] == event_type]


def test_rows_have_exactly_the_bronze_columns(capture):
    _, _, dump, logs = capture
    columns = tuple(c.name for c in ZK_EVENTS.columns if c.name not in {name for name, _, _ in RUN_COLS})
    assert zk.ROW_COLUMNS == columns
    assert all(tuple(r) == columns for r in dump.rows + logs)
    assert all(isinstance(r["event_time"], datetime) and r["event_time"].tzinfo is not None for r in dump.rows + logs)


def test_znode_dump_parses_cleanly(capture):
    _, _, dump, _ = capture
    assert dump.errors == []


def test_topics_match_expected(capture):
    _, expected, dump, _ = capture
    topic_rows = {r["topic_name"]: r for r in _rows(dump.rows, "topic_znode")}
    assert set(topic_rows) == set(expected["topics"])
    markers = {r["topic_name"] for r in _rows(dump.rows, "delete_marker")}
    for name, want in expected["topics"].items():
        row = topic_rows[name]
        assert (row["topic_id"], row["zk_version"], row["zk_path"]) == (want["topic_id"], want["znodeVersion"],
                                                                      f"/brokers/topics/{name}")
        decoded = zk.decode_topic_znode(row["payload_json"])
        assert decoded.version == 3 and decoded.error is None and decoded.topic_id == want["topic_id"]
        assert {str(p): r for p, r in decoded.partitions.items()} == want["assignment"]
        assert decoded.adding_replicas == {} and decoded.removing_replicas == {}
        states = {r["partition"]: r for r in _rows(dump.rows, "partition_state") if r["topic_name"] == name}
        assert set(states) == {int(p) for p in want["partitionStates"]}
        for p, ps in want["partitionStates"].items():
            row = states[int(p)]
            assert json.loads(row["payload_json"]) == ps["state"]
            assert row["broker_id"] == ps["state"]["leader"]
            state = zk.decode_partition_state(row["payload_json"])
            assert (state.leader, state.leader_epoch, state.isr, state.controller_epoch, state.error) == (
                ps["state"]["leader"], ps["state"]["leader_epoch"], ps["state"]["isr"], ps["state"]["controller_epoch"],
                None)
        assert (name in markers) == want["markedForDeletion"]


def test_controller_cluster_and_brokers_match_expected(capture):
    _, expected, dump, _ = capture
    (controller,) = _rows(dump.rows, "controller")
    assert controller["broker_id"] == expected["zkController"]["brokerid"]
    assert json.loads(controller["payload_json"]) == expected["zkController"]
    (cluster,) = _rows(dump.rows, "cluster_id")
    assert json.loads(cluster["payload_json"]) == expected["clusterId"]
    brokers = {r["broker_id"]: json.loads(r["payload_json"]) for r in _rows(dump.rows, "broker_registration")}
    assert brokers == {int(k): v for k, v in expected["brokersRegistered"].items()}
    (epoch,) = _rows(dump.rows, "controller_epoch")
    assert int(epoch["payload_json"]) == expected["controllerEpoch"]


def test_producer_id_block_znode_and_log_lines_match_expected(capture):
    root, expected, dump, logs = capture
    want = expected["producerIdBlocks"]
    (block,) = _rows(dump.rows, "producer_id_block")
    data = want["znode"]["data"]
    assert (block["zk_path"], block["broker_id"], block["block_start"], block["block_end"], block["zk_version"]) == (
        want["znode"]["path"], data["broker"], int(data["block_start"]), int(data["block_end"]), want["znode"]["version"])
    acquired = _rows(logs, "producer_id_block_acquired")
    assert [(r["event_time"], r["broker_id"], r["block_start"], json.loads(r["payload_json"])["size"], r["block_end"],
             r["zk_version"], r["source_file"], r["source_kind"]) for r in acquired] == [
        (datetime.strptime(a["time"], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC), a["assignedBrokerId"],
         a["firstProducerId"], a["size"], a["lastProducerId"], a["zkPathVersion"], a["source"], "controller_log")
        for a in want["acquiredFromLogs"]]
    assert all("Acquired new producerId block ProducerIdsBlock(" in r["message"] for r in acquired)


def test_deletion_log_lines_match_expected(capture):
    _, expected, _, logs = capture
    for event_type, key in (("topic_deletion_halted", "deletionHaltedLogLines"),
                            ("topic_deletion_started", "deletionRestartedLogLines"),
                            ("topic_deletion_completed", "deletionCompletedLogLines"),
                            ("topic_id_mismatch", "topicIdMismatchLogLines")):
        got = [{"file": r["source_file"], "line": r["message"]} for r in _rows(logs, event_type)]
        assert got == expected[key], event_type
    for row in _rows(logs, "topic_deletion_halted"):
        assert json.loads(row["payload_json"]) == {"reason": "offline replicas"} and row["broker_id"] == 2


def test_pending_delete_and_renamed_dirs_match_expected(capture):
    root, expected, dump, logs = capture
    markers = {r["topic_name"]: r for r in _rows(dump.rows, "delete_marker")}
    assert set(markers) == {p["topic"] for p in expected["pendingDeletes"]}
    for pending in expected["pendingDeletes"]:
        row = markers[pending["topic"]]
        assert row["zk_path"] == pending["znode"]
        assert row["event_time"] == datetime.fromtimestamp(pending["markedAtCtime"] / 1000, UTC)
    renamed = {(r["broker_id"], json.loads(r["payload_json"])["dir"].rsplit("/", 1)[-1])
               for r in _rows(logs, "log_renamed_for_delete")}
    want = {(int(p.split("/")[0].split("-")[1]), p.split("/")[1])
            for p in expected["replicaSummary"].get("pending-delete", [])}
    assert renamed == want


def test_topic_creation_log_lines(capture):
    _, expected, _, logs = capture
    created = {r["topic_name"]: r for r in _rows(logs, "topic_created")}
    assert set(created) == set(expected["topics"])
    for name, want in expected["topics"].items():
        payload = json.loads(created[name]["payload_json"])
        assert created[name]["topic_id"] == want["topic_id"] and created[name]["broker_id"] == 2
        assert {p: a["replicas"] for p, a in payload["assignment"].items()} == want["assignment"]
    requested = {r["topic_name"]: json.loads(r["payload_json"])["assignment"] for r in _rows(logs, "topic_create_requested")}
    assert requested == {name: want["assignment"] for name, want in expected["topics"].items()}


def L(msg, level="INFO", logger="kafka.controller.KafkaController", when="2026-11-22 09:03:32,580"):
    return f"[{when}] {level} {msg} ({logger})"


def test_synthetic_log_lines_in_kafkas_shapes():
    lines = [
        L("[Controller id=5] New topics: [HashSet(a-b, c)], deleted topics: [Set(old)], new partition replica assignment "
          "[Set(TopicIdReplicaAssignment(a-b,Some(xWt6cg-LDx4r6BAz2rYsCg),Map(a-b-0 -> ReplicaAssignment(replicas=1,2, "
          "addingReplicas=3, removingReplicas=), a-b-1 -> ReplicaAssignment(replicas=2,1, addingReplicas=, "
          "removingReplicas=))), TopicIdReplicaAssignment(c,None,Map(c-0 -> ReplicaAssignment(replicas=7, "
          "addingReplicas=, removingReplicas=))))]"),
        L("[Controller id=5] Starting topic deletion for topics a-b,c"),
        L("[Topic Deletion Manager 5] Halted deletion of topics a-b,c due to topic reassignment in progress",
          logger="kafka.controller.TopicDeletionManager"),
        L("[Topic Deletion Manager 5] Deletion of topic c successfully completed", logger="kafka.controller.TopicDeletionManager"),
        "java.io.IOException: boom",
        "\tat kafka.Foo.bar(Foo.scala:1)",
        L("Deleted log for partition c-0 in /data/c-0.b0adbe214c0843f99d086465639b4414-delete.", logger="kafka.log.LogManager"),
        L("Log for partition a-b-1 is marked as stray and renamed to /data/a-b-1.b0adbe214c0843f99d086465639b4414-stray",
          level="WARN", logger="kafka.log.LogManager"),
        L("Log in /data/a-b-0 marked stray and renamed to /data/a-b-0.b0adbe214c0843f99d086465639b4414-stray",
          level="WARN", logger="kafka.log.LogManager"),
        L("[Broker id=3] Topic ID in memory: A4HaLNH_zheTrtxgg-IBNA does not match the topic ID for partition clicks-0 "
          "received: OgLh3kIiODWuf2JCQPKw4w.", level="ERROR", logger="state.change.logger"),
        L("Creating topic old with configuration {} and initial partition assignment Map(0 -> List(1, 2), 1 -> List(2))",
          logger="kafka.zk.AdminZkClient"),
        L("[Controller id=5] Ignoring request to delete non-existing topics ghost", level="WARN"),
        L("[Controller id=5] Acquired new producerId block ProducerIdsBlock(assignedBrokerId=-1, firstProducerId=7000, "
          "size=1000) by writing to Zk with path version 9"),
        "[not a time] INFO x (y)",
    ]
    rows = list(zk.iter_zk_log_events(lines, "logs/broker-5/controller.log", broker_id=9,
                                      tz=timezone(timedelta(hours=2))))
    got = [(r["seq"], r["event_type"], r["topic_name"], r["partition"], r["topic_id"], r["broker_id"]) for r in rows]
    assert got == [
        (1, "topic_created", "a-b", None, "xWt6cg-LDx4r6BAz2rYsCg", 5),
        (1, "topic_created", "c", None, None, 5),
        (1, "topic_removed", "old", None, None, 5),
        (2, "topic_deletion_requested", "a-b", None, None, 5),
        (2, "topic_deletion_requested", "c", None, None, 5),
        (3, "topic_deletion_halted", "a-b", None, None, 5),
        (3, "topic_deletion_halted", "c", None, None, 5),
        (4, "topic_deletion_completed", "c", None, None, 5),
        (7, "log_deleted", "c", 0, None, 9),
        (8, "log_renamed_for_stray", "a-b", 1, None, 9),
        (9, "log_renamed_for_stray", "a-b", 0, None, 9),
        (10, "topic_id_mismatch", "clicks", 0, "OgLh3kIiODWuf2JCQPKw4w", 3),
        (11, "topic_create_requested", "old", None, None, 9),
        (12, "topic_deletion_ignored", "ghost", None, None, 5),
        (13, "producer_id_block_acquired", None, None, None, -1),
    ]
    assert json.loads(rows[0]["payload_json"])["assignment"] == {
        "0": {"replicas": [1, 2], "addingReplicas": [3], "removingReplicas": []},
        "1": {"replicas": [2, 1], "addingReplicas": [], "removingReplicas": []}}
    assert json.loads(rows[5]["payload_json"]) == {"reason": "topic reassignment in progress"}
    assert json.loads(rows[12]["payload_json"])["assignment"] == {"0": [1, 2], "1": [2]}
    assert (rows[-1]["block_start"], rows[-1]["block_end"], rows[-1]["zk_version"]) == (7000, 7999, 9)
    assert rows[0]["event_time"] == datetime(2026, 11, 22, 7, 3, 32, 580000, tzinfo=UTC)  # +02:00 log clock
    assert all(r["source_kind"] == "controller_log" for r in rows)
    assert zk.infer_log_source_kind("x/state-change.log.2026-11-22-09") == "state_change_log"
    assert zk.infer_log_source_kind("server.log") == "server_log"


def znode(path, data, version=0, mtime=1795338212526):
    return json.dumps({"path": path, "data": data, "stat": {"czxid": 1, "mzxid": 1, "ctime": mtime, "mtime": mtime,
                                                            "version": version, "cversion": 0, "ephemeralOwner": 0,
                                                            "numChildren": 0}})


def test_topic_znode_versions_1_to_3_and_migration_block():
    lines = [
        znode("/brokers/topics/v1", '{"version":1,"partitions":{"0":[1,2]}}'),
        znode("/brokers/topics/v2", '{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"0":[3]},"removing_replicas":{}}'),
        znode("/brokers/topics/v3", '{"partitions":{"12":[1],"0":[2]},"removing_replicas":{},"topic_id":"OgLh3kIiODWuf2JCQPKw4w",'
                                    '"adding_replicas":{},"version":3}'),
        znode("/latest_producer_id_block", '{"version":1,"broker":-1,"block_start":"7000","block_end":"7999"}', 12),
        znode("/migration", '{"version":0,"kraft_controller_id":3000,"kraft_controller_epoch":1,'
                            '"kraft_metadata_offset":60,"kraft_metadata_epoch":2}', 4),
        znode("/brokers/topics/v3/partitions/0/state", '{"controller_epoch":1,"leader":2,"version":1,'
                                                      '"leader_recovery_state":1,"leader_epoch":4,"isr":[2]}', 5),
        znode("/config/changes", None),
    ]
    dump = zk.parse_znode_dump(lines, "dump.jsonl")
    assert dump.errors == []
    assert [(r["event_type"], r["topic_name"], r["topic_id"], r["broker_id"]) for r in dump.rows] == [
        ("topic_znode", "v1", None, None), ("topic_znode", "v2", None, None),
        ("topic_znode", "v3", "OgLh3kIiODWuf2JCQPKw4w", None), ("producer_id_block", None, None, -1),
        ("migration", None, None, 3000), ("partition_state", "v3", None, 2)]
    v2 = zk.decode_topic_znode(json.loads(lines[1])["data"])
    assert (v2.version, v2.partitions, v2.adding_replicas) == (2, {0: [1, 2]}, {0: [3]})
    assert zk.decode_topic_znode(json.loads(lines[2])["data"]).partitions == {12: [1], 0: [2]}
    assert (dump.rows[3]["block_start"], dump.rows[3]["block_end"], dump.rows[3]["zk_version"]) == (7000, 7999, 12)
    assert zk.decode_partition_state(json.loads(lines[5])["data"]).leader_recovery_state == 1
    assert dump.rows[0]["event_time"] == datetime.fromtimestamp(1795338212.526, UTC)


@pytest.mark.parametrize("line,kind", [
    ("not json", "bad_json"),
    ('{"path": 1, "data": null, "stat": {}}', "bad_json"),
    (znode("/brokers/topics/t", "{not json"), "bad_json"),
    (znode("/brokers/topics/t", '{"version":3,"partitions":{"x":[1]}}'), "bad_json"),
    (znode("/brokers/topics/t", '{"version":3,"partitions":{},"topic_id":"nope"}'), "invalid_uuid"),
    (znode("/brokers/topics/t/partitions/0/state", '{"leader":1}'), "missing_key"),
    (znode("/latest_producer_id_block", '{"version":1,"broker":1,"block_start":0,"block_end":"999"}'), "bad_json"),
    (znode("/latest_producer_id_block", '{"version":1,"broker":1,"block_start":"99999999999999999999","block_end":"1"}'),
     "value_too_large"),
    (znode("/migration", '{"version":1}'), "bad_version"),
    (znode("/controller", '{"version":2}'), "bad_json"),
])
def test_malformed_znodes_are_reported(line, kind):
    dump = zk.parse_znode_dump([line])
    assert [e.kind for e in dump.errors] == [kind] and dump.errors[0].line == 1


def test_producer_id_block_messages_are_kafkas():
    bad = zk.decode_producer_id_block('{"broker":1,"block_start":"x","block_end":"1"}')
    assert bad.error.message == ('Read jason data {"broker":1,"block_start":"x","block_end":"1"} contains producerIds '
                                 'that have exceeded long type limit')
    assert zk.decode_producer_id_block(None).error.message == "Failed to parse the producerId block json "


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=10))
def test_random_lines_never_raise(lines):
    zk.parse_znode_dump(lines)
    list(zk.iter_zk_log_events(lines))
    list(zk.iter_zk_log_events([L(x) for x in lines]))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["/brokers/topics/t", "/brokers/topics/t/partitions/0/state", "/latest_producer_id_block",
                        "/migration", "/controller", "/brokers/ids/1"]),
       st.one_of(st.none(), st.text(max_size=60), st.recursive(
           st.none() | st.booleans() | st.integers() | st.text(max_size=5),
           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
           max_leaves=8).map(json.dumps)))
def test_random_znode_data_never_raises(path, data):
    zk.parse_znode_dump([znode(path, data)])


def test_deeply_nested_znode_data_is_an_error_not_a_crash():
    dump = zk.parse_znode_dump([znode("/brokers/topics/t", "[" * 100000), "[" * 100000])
    assert [e.kind for e in dump.errors] == ["bad_json", "bad_json"]


def test_empty_latest_producer_id_block_means_no_block_yet_not_an_error():
    # the controller creates /latest_producer_id_block empty at start-up; no block was handed out yet
    line = json.dumps({"path": "/latest_producer_id_block", "data": None,
                       "stat": {"czxid": 1, "mzxid": 1, "ctime": 0, "mtime": 0, "version": 0, "cversion": 0,
                                "ephemeralOwner": 0, "numChildren": 0}})
    dump = zk.parse_znode_dump([line])
    assert dump.errors == []
    [row] = [r for r in dump.rows if r["event_type"] == "producer_id_block"]
    assert row["block_start"] is None and row["block_end"] is None
