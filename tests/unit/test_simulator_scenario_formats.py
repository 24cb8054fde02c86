"""The fleet simulator's per-scenario output is in Kafka's real formats and states: the KRaft metadata log and
snapshots (replayed by tests/unit/sim_replay.py), ZooKeeper znode dumps and logs, dedicated controllers, JBOD
dir failures, decommissioned brokers, divergent/gapped log copies, corrupt partition.metadata outcomes and an
in-progress reassignment."""
from __future__ import annotations

import json
import os
import re

import simulator_helpers
from sim_replay import (
    METADATA_DIR,
    authoritative_copy,
    capture_doc,
    copy_files,
    entries,
    expected_doc,
    log_dirs,
    pm_result,
    records,
    replay,
)
from simulator_helpers import _files

from jobs.simulate.simulation import SimParams
from udfs import (
    metadata_log,
    partition_metadata,
    zookeeper,
)

capture = simulator_helpers.capture  # the module-scoped fixture, bound here so pytest finds it
LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR) .+ \([\w.$]+\)$")


def test_healthy_creates_survive_only_in_the_snapshot_and_producer_ids_increase(capture):
    root = capture("healthy")
    copy = authoritative_copy(root)
    image, snapshot_end, first = replay(copy)
    assert snapshot_end > first > 0  # old segments deleted by retention, log start below the newest snapshot
    orders = image.names["orders"]
    assert image.created[orders] == -1  # its TopicRecord exists only in the snapshot
    nexts = [d["nextProducerId"] for _, d in image.producer_ids]
    assert nexts == sorted(set(nexts)) and all(n % 1000 == 0 for n in nexts)
    leo = json.loads(open(os.path.join(copy, "quorum-state")).read())
    assert leo["leaderId"] in capture_doc(root)["controller"]["kraft"]["voters"]


def test_delete_create_in_snapshot_places_deletes_on_both_sides_of_the_log_start(capture):
    root = capture("delete-create-in-snapshot")
    image, snapshot_end, first = replay(authoritative_copy(root))
    _, snapshots = copy_files(authoritative_copy(root))
    earliest = metadata_log.parse_snapshot_file_name(os.path.basename(snapshots[0]))[0]
    offsets = sorted(image.log_removed.values())
    assert first <= offsets[0] < earliest <= offsets[1]  # one below the log start, one above it
    assert not set(image.log_removed) & set(image.log_created)  # no create in any retained segment


def test_zookeeper_captures_have_real_formats(capture):
    for name in ("zk-healthy", "zk-delete-stuck", "zk-topic-id-changed"):
        root = capture(name)
        znodes = [json.loads(line) for line in open(os.path.join(root, "zk", "zk-znodes.jsonl"), encoding="utf-8")]
        assert [z["path"] for z in znodes] == sorted(z["path"] for z in znodes)
        assert all(set(z["stat"]) == {"czxid", "mzxid", "pzxid", "ctime", "mtime", "version", "cversion",
                                      "aversion", "ephemeralOwner", "dataLength", "numChildren"} for z in znodes)
        by_path = {z["path"]: z for z in znodes}
        if by_path["/latest_producer_id_block"]["data"] is not None:
            block = json.loads(by_path["/latest_producer_id_block"]["data"])
            assert list(block) == ["version", "broker", "block_start", "block_end"]
            assert isinstance(block["block_start"], str)
        with open(os.path.join(root, "zk", "zk-znodes.jsonl"), encoding="utf-8") as f:
            assert zookeeper.parse_znode_dump(f, "zk-znodes.jsonl").errors == []
        events = set()
        for _dirpath, _name, path in _files(os.path.join(root, "zk", "logs")):
            for line in open(path, encoding="utf-8"):
                assert LOG_LINE.match(line.rstrip("\n")), (path, line)
            with open(path, encoding="utf-8") as f:
                parsed = zookeeper.parse_zk_log(f, path)
            assert parsed.errors == []
            events |= {r["event_type"] for r in parsed.rows}
        assert {"topic_created", "topic_create_requested"} <= events
        if name == "zk-delete-stuck":
            assert {"topic_deletion_halted", "log_renamed_for_delete", "log_deleted"} <= events
        if name == "zk-topic-id-changed":
            assert "topic_id_mismatch" in events
    stuck = capture("zk-delete-stuck")
    by_path = {json.loads(line)["path"] for line in open(os.path.join(stuck, "zk", "zk-znodes.jsonl"))}
    assert "/admin/delete_topics/orders" in by_path and "/brokers/topics/orders" in by_path
    controller_log = open(os.path.join(stuck, "zk", "logs", "broker-2", "controller.log")).read()
    assert "Halted deletion of topics orders due to offline replicas" in controller_log
    assert os.path.isdir(os.path.join(stuck, "broker-3", "kafka-logs", "orders-0"))
    changed = capture("zk-topic-id-changed")
    topic = next(json.loads(json.loads(line)["data"]) for line in open(os.path.join(changed, "zk", "zk-znodes.jsonl"))
                 if json.loads(line)["path"] == "/brokers/topics/orders")
    on_disk = pm_result(os.path.join(changed, "broker-1", "kafka-logs", "orders-0")).topic_id
    assert topic["topic_id"] != on_disk
    errors = open(os.path.join(changed, "zk", "logs", "broker-1", "state-change.log")).read()
    assert f"Topic ID in memory: {on_disk} does not match the topic ID for partition orders-0 received: " \
           f"{topic['topic_id']}." in errors


def test_migration_reissues_the_last_zookeeper_block(capture):
    root = capture("pid-migration-reuse")
    image, _, _ = replay(authoritative_copy(root))
    zk_blocks = [int(m.group(1)) for m in re.finditer(r"firstProducerId=(\d+), size=1000\) by writing",
                                                      open(os.path.join(root, "zk", "logs", "broker-1",
                                                                        "controller.log")).read())]
    records_ = [d for _, d in image.log_producer_ids]
    assert records_[0]["brokerEpoch"] == -1 and records_[0]["nextProducerId"] == zk_blocks[-1]  # KAFKA-15552
    assert records_[1]["nextProducerId"] == zk_blocks[-1] + 1000 and records_[1]["brokerId"] == 1
    znode = next(json.loads(line) for line in open(os.path.join(root, "zk", "zk-znodes.jsonl"))
                 if json.loads(line)["path"] == "/latest_producer_id_block")
    assert json.loads(znode["data"])["broker"] == -1  # dual-write names the next, unallocated block


def test_dedicated_controllers_hold_only_the_metadata_log_and_register_as_controllers(capture):
    root = capture("dedicated-controllers")
    doc = capture_doc(root)
    controllers = sorted(int(n) for n, info in doc["brokers"].items() if info["state"] == "controller")
    assert controllers
    image, _, _ = replay(authoritative_copy(root))
    assert sorted(image.controllers) == controllers and not set(controllers) & set(image.brokers)
    assert not any(c in part["replicas"] for c in controllers
                   for topic in image.topics.values() for part in topic["partitions"].values())
    for c in controllers:
        (view,) = [v for v in log_dirs(root) if v.broker_id == c]
        assert os.path.basename(os.path.dirname(view.path)) == f"controller-{c}"
        assert [name for name, _, _ in entries(view) if not name.startswith(".")] == [
            METADATA_DIR, "bootstrap.checkpoint", "meta.properties"]
        assert copy_files(os.path.join(view.path, METADATA_DIR))[0]  # its own copy of the log


def test_failed_dir_leaves_the_registration_and_a_returned_dir_duplicates_what_was_recreated(capture):
    failed = capture("jbod-dir-failure")
    image, _, _ = replay(authoritative_copy(failed))
    dead = os.path.join(failed, "broker-2", "kafka-logs-b")
    assert os.path.isfile(dead) and os.path.getsize(dead) == 0  # unreadable: no meta.properties to match
    assert len(image.brokers[2]["logDirs"]) == 1
    returned = capture("jbod-dir-returns")
    image, _, _ = replay(authoritative_copy(returned))
    dirs = {v.name: v for v in log_dirs(returned) if v.broker_id == 2}
    assert image.brokers[2]["logDirs"] == [dirs["kafka-logs-a"].meta.directory_id]
    both = set(os.listdir(dirs["kafka-logs-a"].path)) & set(os.listdir(dirs["kafka-logs-b"].path))
    assert {n for n in both if n[-1].isdigit()} == {f["dir_name"] for f in expected_doc(returned)["findings"]
                                                   if f["check_id"] == "DUPLICATE_REPLICA"}


def test_decommissioned_broker_is_unregistered_and_owns_no_replicas(capture):
    root = capture("decommissioned-broker")
    image, _, _ = replay(authoritative_copy(root))
    (gone,) = image.unregistered
    assert gone not in image.brokers and doc_state(root, gone) == "unregistered"
    assert not any(gone in part["replicas"] for topic in image.topics.values() for part in topic["partitions"].values()
                   if topic["name"] in ("orders", "payments", "inventory"))  # the scenario's topics were moved off
    assert any(v.broker_id == gone for v in log_dirs(root))


def doc_state(root: str, node: int) -> str:
    return capture_doc(root)["brokers"][str(node)]["state"]


def test_divergent_copy_differs_at_the_same_offset_and_a_lagging_copy_is_a_prefix(capture):
    root = capture("metadata-log-divergence")

    def flat(broker):
        segments, _ = copy_files(os.path.join(root, f"broker-{broker}", "kafka-logs", METADATA_DIR))
        return {r.offset: (r.leader_epoch, r.type, r.payload_json()) for s in segments for r in records(s)}
    good, lagging, diverged = flat(1), flat(4), flat(5)
    assert all(good[o] == rec for o, rec in lagging.items() if o in good)
    different = [o for o, rec in diverged.items() if o in good and good[o] != rec]
    assert different and all(diverged[o][0] < good[o][0] for o in different)


def test_gap_scenario_misses_a_middle_segment(capture):
    root = capture("metadata-log-gap")
    ends = {}
    for broker in (1, 4):
        segments, _ = copy_files(os.path.join(root, f"broker-{broker}", "kafka-logs", METADATA_DIR))
        offsets = [r.offset for s in segments for r in records(s)]
        ends[broker] = offsets
    assert ends[1] == list(range(ends[1][0], ends[1][-1] + 1))
    assert len(ends[4]) < len(ends[1]) and ends[4][-1] == ends[1][-1]


def test_corrupt_variants_get_kafkas_outcomes(capture):
    root = capture("corrupt-partition-metadata")
    outcomes = expected_doc(root)["partition_metadata_outcomes"]
    assert {o["outcome"] for o in outcomes} == {partition_metadata.OK, partition_metadata.LOG_DIR_OFFLINE,
                                                partition_metadata.BROKER_START_FAILS}
    for o in outcomes:
        result = pm_result(os.path.join(root, f"broker-{o['broker_id']}", o["log_dir"], o["dir_name"]))
        assert result.outcome == o["outcome"], o

def test_reassignment_in_progress_is_what_kafka_writes(tmp_path):
    """KIP-455 left open: the KRaft start record carries replicas = target + removing with adding/removing (and
    no completion follows); the ZooKeeper topic znode decodes (TopicZNode) to the same adding/removing maps."""
    from jobs.simulate.simulation import Layout, Simulation
    from jobs.simulate.zk import topic_znode

    sim = Simulation("unit", SimParams(seed=3), Layout(partitions_per_broker=0), str(tmp_path))
    sim.start_kraft_cluster()
    sim.create_topic("t", 1, 3, replicas=[[1, 2, 3]])
    sim.start_reassignment("t", 0, [1, 2, 4])
    part = sim.live_topic("t").partitions[0]
    assert (part.replicas, part.adding, part.removing, part.isr) == ([1, 2, 4, 3], [4], [3], [1, 2, 3])
    assert sim.fleet[4].find("t", 0), "the adding broker creates its replica and starts fetching"
    znode = zookeeper.decode_topic_znode(topic_znode({0: [1, 2, 4, 3], 1: [2, 3, 1]}, b"\x07" * 16,
                                                     adding={0: [4]}, removing={0: [3]}))
    assert znode.error is None and znode.partitions[0] == [1, 2, 4, 3]
    assert znode.adding_replicas == {0: [4]} and znode.removing_replicas == {0: [3]}
