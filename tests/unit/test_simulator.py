"""The fleet simulator: every scenario decodes with the project's decoders and its ground truth is what the
bytes say (checked by an independent replay, tests/unit/sim_replay.py); healthy captures have nothing to find;
same seed, same tree; scale flags stream."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import re

import pytest
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

from jobs.reconcile.catalogue import CHECK_IDS  # the one list of check ids
from jobs.simulate import command
from jobs.simulate.scenarios import CATALOGUE
from jobs.simulate.simulation import SimParams
from udfs import (
    json_state_files,
    kafka_uuid,
    metadata_log,
    pack_reader,
    partition_metadata,
    producer_state,
    properties_files,
    record_batch,
    zookeeper,
)
from udfs.errors import DecodeError

MATCH_KEYS = {"broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition"}
LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR) .+ \([\w.$]+\)$")
SMALL = dict(seed=7, partitions_per_broker=2)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    made = {}

    def make(name: str, **overrides) -> str:
        key = (name, tuple(sorted(overrides.items())))
        if key not in made:
            out = str(tmp_path_factory.mktemp(name.replace("-", "_")) / "capture")
            params = SimParams(**{**SMALL, **overrides})
            command.run(name, out, params)
            made[key] = out
        return made[key]
    return make


def _files(root: str):
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            yield dirpath, name, os.path.join(dirpath, name)


def _expected_unreadable_epoch_dirs(root: str) -> set:
    """Replica dirs whose leader-epoch-checkpoint the scenario damaged on purpose (an expected finding)."""
    return {os.path.join(root, f"broker-{f['broker_id']}", f["log_dir"], f["dir_name"])
            for f in expected_doc(root)["findings"] if f["check_id"] == "LEADER_EPOCH_CHECKPOINT_UNREADABLE"}


def _decode_everything(root: str) -> dict:
    """Decode every Kafka file with the project's decoders; returns counts, fails on any error."""
    counts = {"metadata_records": 0, "segments": 0, "producer_snapshots": 0, "pm": 0}
    for dirpath, name, path in _files(root):
        parent = os.path.basename(dirpath)
        if os.path.relpath(path, root).startswith("zk" + os.sep) or name.endswith(".json"):
            continue
        with open(path, "rb") as f:
            head = f.read(1 << 20)
        if (parent == METADATA_DIR and (name.endswith(".log") or name.endswith(".checkpoint"))) \
                or name == "bootstrap.checkpoint":
            recs = records(path)
            bad = [r for r in recs if r.error is not None]
            assert not bad, (path, bad[0].error)
            assert recs, path
            counts["metadata_records"] += len(recs)
        elif name.endswith(".log"):
            for item in record_batch.read_batches(path):
                assert not isinstance(item, DecodeError), (path, item)
                assert item.header.crc_valid is not False, path
            counts["segments"] += 1
        elif name.endswith(".snapshot"):
            snap = producer_state.decode_producer_snapshot(head)
            assert snap.error is None, (path, snap.error)
            counts["producer_snapshots"] += 1
        elif name == "meta.properties":
            assert properties_files.parse_meta_properties(head).ok, path
        elif name == "quorum-state":
            assert json_state_files.parse_quorum_state(head).error is None, path
        elif name == "leader-epoch-checkpoint":
            if os.path.dirname(path) not in _expected_unreadable_epoch_dirs(root):
                assert properties_files.parse_leader_epoch_checkpoint(head).error is None, path
        elif name.endswith("-checkpoint"):
            assert properties_files.parse_offset_checkpoint(head).error is None, path
        elif name == ".kafka_cleanshutdown":
            assert json_state_files.parse_clean_shutdown(head).error is None, path
        elif name == "partition.metadata":
            counts["pm"] += 1
    return counts


def _find_dir(root: str, broker_id: int, log_dir: str, dir_name: str) -> str:
    path = os.path.join(root, f"broker-{broker_id}", log_dir, dir_name)
    assert os.path.isdir(path), path
    return path


def _epoch_entries(path: str):
    """(entries, Kafka's load error or None) of a leader-epoch-checkpoint, read with the udfs decoders."""
    from udfs import leader_epochs
    from udfs.properties_files import parse_leader_epoch_checkpoint

    with open(path, "rb") as f:
        parsed = parse_leader_epoch_checkpoint(f.read())
    if parsed.error is not None:
        return [], parsed.error
    entries = [(e.epoch, e.start_offset) for e in parsed.entries]
    return entries, leader_epochs.load(entries).error


def _check_epoch_finding_against_bytes(root: str, finding: dict) -> None:
    check, name = finding["check_id"], f"{finding['topic_name']}-{finding['partition']}"
    files = {}  # broker -> entries of its replica of the partition
    for broker_dir in os.listdir(root):
        for log_dir in os.listdir(os.path.join(root, broker_dir)) if broker_dir.startswith("broker-") else ():
            path = os.path.join(root, broker_dir, log_dir, name, "leader-epoch-checkpoint")
            if os.path.isfile(path):
                files[int(broker_dir.split("-")[1])] = _epoch_entries(path)
    if check == "LEADER_EPOCH_DIVERGENCE":
        starts = {}
        for entries, _ in files.values():
            for epoch, start in entries[1:]:  # never a first entry (truncateFromStart may have moved it)
                starts.setdefault(epoch, set()).add(start)
        assert any(len(s) > 1 for s in starts.values()), files
        return
    path = os.path.join(_find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"]),
                        "leader-epoch-checkpoint")
    entries, error = _epoch_entries(path)
    if check == "LEADER_EPOCH_CHECKPOINT_UNREADABLE":
        assert error is not None, path
    elif check == "LEADER_EPOCH_NOT_MONOTONIC":
        pairs = zip(entries, entries[1:], strict=False)
        assert error is None and any(b[0] <= a[0] or b[1] < a[1] for a, b in pairs), entries
    elif check == "LEADER_EPOCH_AHEAD_OF_METADATA":  # the other replicas follow the controller
        others = [e for b, (es, _) in files.items() if b != finding["broker_id"] for e, _ in es]
        assert error is None and others and max(e for e, _ in entries) > max(others), files


def _check_expected_against_bytes(root: str, finding: dict) -> None:
    """What each expected finding claims must be visible in the capture's bytes."""
    check = finding["check_id"]
    if check.startswith("LEADER_EPOCH_"):
        _check_epoch_finding_against_bytes(root, finding)
        return
    doc = capture_doc(root)
    with_log = doc["mode"] != "zk" and doc.get("metadata_log_captured", True)
    image, _, _ = replay(authoritative_copy(root)) if with_log else (None, 0, 0)
    if check == "TOPIC_ID_DIVERGENCE":  # replicas disagree and the capture holds no id to decide
        name = f"{finding['topic_name']}-{finding['partition']}"
        held = {pm_result(os.path.join(v.path, name)).topic_id for v in log_dirs(root)
                if os.path.isdir(os.path.join(v.path, name))}
        assert len(held) > 1 and not with_log
    elif check in ("STALE_TOPIC_ID", "STRAY_NOT_ASSIGNED", "ORPHAN_REPLICA"):
        path = _find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"])
        on_disk = pm_result(path).topic_id
        assert on_disk == finding["topic_id"]
        if check == "STALE_TOPIC_ID":
            assert image.names[finding["topic_name"]] != on_disk and on_disk not in image.topics
        elif check == "STRAY_NOT_ASSIGNED":
            part = image.topics[on_disk]["partitions"][finding["partition"]]
            assert finding["broker_id"] not in part["replicas"]
        else:
            assert on_disk not in image.topics and on_disk not in image.removed
            assert finding["topic_name"] not in image.names
    elif check in ENSEMBLE_CHECKS:
        _check_ensemble_against_bytes(root, finding)
    elif check == "STUCK_REASSIGNMENT":
        _check_stuck_reassignment_against_bytes(root, finding, with_log)
    elif check == "STRAY_DIR":
        path = _find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"])
        assert finding["dir_name"].endswith("-stray") and pm_result(path).ok
    elif check == "LINGERING_DELETE_DIR":
        assert _find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"]).endswith("-delete")
    elif check == "MISSING_PARTITION_METADATA":
        assert pm_result(_find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"])) is None
    elif check == "CORRUPT_PARTITION_METADATA":
        result = pm_result(_find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"]))
        assert result is not None and not result.ok
    elif check == "UNKNOWN_LOG_DIR_ENTRY":
        path = os.path.join(root, f"broker-{finding['broker_id']}", finding["log_dir"], finding["dir_name"])
        assert os.path.lexists(path)
        view = next(v for v in log_dirs(root) if v.path == os.path.dirname(path))
        kinds = {name: e.kind for name, _, e in entries(view)}
        assert kinds[finding["dir_name"]] == "non_kafka"
    elif check == "MISSING_REPLICA":
        part = image.topics[finding["topic_id"]]["partitions"][finding["partition"]]
        assert finding["broker_id"] in part["replicas"]
        name = f"{finding['topic_name']}-{finding['partition']}"
        broker_root = os.path.join(root, f"broker-{finding['broker_id']}")
        assert not any(os.path.isdir(os.path.join(broker_root, d, name)) for d in os.listdir(broker_root))
    elif check == "DUPLICATE_REPLICA":
        broker_root = os.path.join(root, f"broker-{finding['broker_id']}")
        copies = [d for d in os.listdir(broker_root) if os.path.isdir(os.path.join(broker_root, d, finding["dir_name"]))]
        assert len(copies) == 2
    elif check == "WRONG_LOG_DIR":
        view = next(v for v in log_dirs(root) if v.broker_id == finding["broker_id"] and v.name == finding["log_dir"])
        part = image.topics[finding["topic_id"]]["partitions"][finding["partition"]]
        assigned = part["directories"][part["replicas"].index(finding["broker_id"])]
        assert assigned != view.meta.directory_id and os.path.isdir(os.path.join(view.path, finding["dir_name"]))
    elif check == "FOREIGN_LOG_DIR":
        view = next(v for v in log_dirs(root) if v.name == finding["log_dir"])
        registered = {d for b in image.brokers.values() for d in b.get("logDirs", [])}
        assert view.meta.cluster_id != capture_doc(root)["cluster_id"] or view.meta.directory_id not in registered
    elif check == "PARTITION_COUNT_CHANGED":
        assert len(image.topics[finding["topic_id"]]["partitions"]) > 4
    elif check == "DELETE_WITHOUT_CREATE":
        segments, _ = copy_files(authoritative_copy(root))
        first = records(segments[0])[0].offset
        assert first == 0 and finding["topic_id"] in image.log_removed
        assert finding["topic_id"] not in image.log_created and finding["topic_id"] not in image.created
    elif check in ("PID_BLOCK_OVERLAP", "PID_BLOCK_REGRESSION"):
        nexts = [image.baseline_next_producer_id] + [d["nextProducerId"] for off, d in image.log_producer_ids
                                                      if off >= image.log_start]
        steps = [n - max(nexts[:i]) for i, n in enumerate(nexts) if i]
        if check == "PID_BLOCK_OVERLAP":  # a block of this broker shares ids with another owner's block
            blocks = [(d["brokerId"], d["nextProducerId"] - 1000, d["nextProducerId"] - 1)
                      for off, d in image.log_producer_ids if off >= image.log_start and d["brokerId"] >= 0]
            owner = finding.get("broker_id")
            assert any(owner in (None, a[0]) and b[0] != a[0] and a[1] <= b[2] and b[1] <= a[2]
                       for a in blocks for b in blocks)
        else:
            assert any(step <= 0 for step in steps)
    elif check == "OFFLINE_LOG_DIR":  # a dir the metadata assigns replicas to: out of the registration, not on disk
        broker = finding["broker_id"]
        assigned = {part["directories"][part["replicas"].index(broker)]
                    for topic in image.topics.values() for part in topic["partitions"].values()
                    if broker in part["replicas"] and part["directories"]}
        on_disk = {v.meta.directory_id for v in log_dirs(root) if v.broker_id == broker}
        assert assigned - set(image.brokers[broker]["logDirs"]) - on_disk
    elif check == "UNREGISTERED_LOG_DIR":
        view = next(v for v in log_dirs(root) if v.broker_id == finding["broker_id"] and v.name == finding["log_dir"])
        assert view.meta.directory_id not in image.brokers[finding["broker_id"]]["logDirs"]
    elif check == "DECOMMISSIONED_BROKER_DATA":
        assert finding["broker_id"] in image.unregistered and finding["broker_id"] not in image.brokers
        assert any(v.broker_id == finding["broker_id"] and v.name == finding["log_dir"] for v in log_dirs(root))
    elif check == "FUTURE_MOVE_STUCK":
        path = _find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"])
        assert finding["dir_name"].endswith("-future") and os.path.isdir(path)
        topic = image.topics[image.names[finding["topic_name"]]]
        assert finding["broker_id"] in topic["partitions"][finding["partition"]]["replicas"]
    elif check == "PID_MIGRATION_REUSE":
        migrated = [d for _, d in image.log_producer_ids if d["brokerEpoch"] == -1]
        allocated = [d for _, d in image.log_producer_ids if d["brokerEpoch"] >= 0]
        assert migrated and allocated[0]["brokerId"] == finding["broker_id"]
        assert allocated[0]["nextProducerId"] - 1000 == migrated[0]["nextProducerId"]
    elif check == "PID_OUTSIDE_BLOCKS":
        high = max(d["nextProducerId"] for _, d in image.producer_ids + image.log_producer_ids)
        used = []
        for view in log_dirs(root):
            part_dir = os.path.join(view.path, f"{finding['topic_name']}-{finding['partition']}")
            for name in os.listdir(part_dir) if os.path.isdir(part_dir) else ():
                if name.endswith(".snapshot"):
                    with open(os.path.join(part_dir, name), "rb") as f:
                        used += [e.producer_id for e in producer_state.decode_producer_snapshot(f.read()).entries]
        assert used and max(used) >= high
    elif check == "ZK_DELETE_STUCK":
        paths = {json.loads(line)["path"] for line in open(os.path.join(root, "zk", "zk-znodes.jsonl"))}
        assert f"/admin/delete_topics/{finding['topic_name']}" in paths
    elif check == "TOPIC_ID_CHANGED_WITHOUT_DELETE":
        znode = next(json.loads(line) for line in open(os.path.join(root, "zk", "zk-znodes.jsonl"))
                     if json.loads(line)["path"] == f"/brokers/topics/{finding['topic_name']}")
        assert json.loads(znode["data"])["topic_id"] == finding["topic_id"]
        held = {pm_result(os.path.join(v.path, n)).topic_id for v in log_dirs(root) for n in os.listdir(v.path)
                if n.startswith(finding["topic_name"] + "-")}
        assert held and finding["topic_id"] not in held
    elif check == "DELETE_INCOMPLETE":
        assert finding["topic_id"] in image.log_removed
        broker_root = os.path.join(root, f"broker-{finding['broker_id']}")
        held = [d for ld in os.listdir(broker_root) for d in os.listdir(os.path.join(broker_root, ld))
                if d.startswith(finding["topic_name"] + "-") and not d.endswith(("-delete", "-stray"))]
        assert held


ENSEMBLE_CHECKS = ("DUPLICATE_DIRECTORY_ID", "RESERVED_DIRECTORY_ID", "NODE_CLUSTER_ID_MISMATCH", "NODE_ID_MISMATCH",
                   "META_VERSION_MIXED")
DAY_MS = 86_400_000


def _check_ensemble_against_bytes(root: str, finding: dict) -> None:
    """The meta.properties files themselves (read with Kafka's rules) show the ensemble fact; a node is the
    capture folder holding its log dirs."""
    check, broker = finding["check_id"], finding.get("broker_id")
    views = log_dirs(root)
    node = [v for v in views if os.path.basename(os.path.dirname(v.path)) == f"broker-{broker}"]
    if check == "DUPLICATE_DIRECTORY_ID":
        by_id = {}
        for v in views:
            by_id.setdefault(v.meta.directory_id, []).append(v)
        shared = [vs for d, vs in by_id.items() if d is not None and len(vs) > 1]
        assert shared
        if broker is not None:
            assert any(all(v.meta.node_id == broker for v in vs) for vs in shared)
    elif check == "RESERVED_DIRECTORY_ID":
        (view,) = [v for v in node if v.name == finding["log_dir"]]
        assert view.meta.directory_id_reserved and kafka_uuid.is_reserved_directory_id(kafka_uuid.from_string(view.meta.directory_id))
    elif check == "NODE_CLUSTER_ID_MISMATCH":
        assert len({v.meta.cluster_id for v in node}) > 1
    elif check == "NODE_ID_MISMATCH":
        ids = {v.meta.node_id for v in node}
        assert len(ids) > 1 and broker in ids
    else:
        assert {v.meta.version for v in node if v.meta.node_id == broker} == {0, 1}


def _check_stuck_reassignment_against_bytes(root: str, finding: dict, with_log: bool) -> None:
    """The reassignment began over a day before the capture and the broker it waits for is not in the ISR:
    from the metadata log's records (KRaft) or the topic and state znodes (ZooKeeper)."""
    capture_ms = _ms(capture_doc(root)["capture_time"])
    topic, p, broker = finding["topic_name"], finding["partition"], finding["broker_id"]
    if with_log:
        segments, snapshots = copy_files(authoritative_copy(root))
        recs = [r for path in snapshots[-1:] + segments for r in records(path) if r.data is not None]
        topic_id = next(r.data["topicId"] for r in recs if r.type == "TOPIC_RECORD" and r.data["name"] == topic)
        mine = [r for r in recs if r.type in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD")
                and r.data.get("topicId") == topic_id and r.data.get("partitionId") == p]
        setters = [r for r in mine if r.data.get("addingReplicas") is not None]
        isr = [r.data["isr"] for r in mine if r.data.get("isr") is not None][-1]
        start = setters[-1]
        assert broker in start.data["addingReplicas"] and broker not in isr
        assert capture_ms - start.timestamp > DAY_MS
        return
    with open(os.path.join(root, "zk", "zk-znodes.jsonl"), encoding="utf-8") as f:
        nodes = {n["path"]: n for n in map(json.loads, f)}
    znode = nodes[f"/brokers/topics/{topic}"]
    state = json.loads(nodes[f"/brokers/topics/{topic}/partitions/{p}/state"]["data"])
    assert broker in json.loads(znode["data"])["adding_replicas"][str(p)] and broker not in state["isr"]
    assert capture_ms - znode["stat"]["mtime"] > DAY_MS


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_every_scenario_decodes_and_its_ground_truth_is_in_the_bytes(capture, name):
    root = capture(name)
    doc, expected = capture_doc(root), expected_doc(root)
    assert doc["format"] == "kafka-recon-capture" and doc["version"] == 1 and doc["scenario"] == name
    assert set(b["state"] for b in doc["brokers"].values()) <= {"active", "fenced", "absent", "down", "controller", "unregistered"}
    assert expected["scenario"] == name
    for finding in expected["findings"]:
        assert finding["check_id"] in CHECK_IDS
        assert set(finding) - {"check_id"} <= MATCH_KEYS
    counts = _decode_everything(root)
    assert counts["pm"] > 0 and counts["segments"] > 0
    if doc["mode"] != "zk" and doc.get("metadata_log_captured", True):
        assert counts["metadata_records"] > 0
    mixed = {f["broker_id"] for f in expected["findings"] if f["check_id"] == "META_VERSION_MIXED"}
    for view in log_dirs(root):
        assert view.meta.ok
        if view.meta.node_id not in mixed:
            assert view.meta.version == (0 if doc["mode"] in ("zk", "migration") else 1)
    for finding in expected["findings"]:
        _check_expected_against_bytes(root, finding)
    assert not os.path.exists(os.path.join(root, command.WORK_DIR_NAME))


def _assert_disk_matches_metadata(root: str) -> None:
    """A full mini-reconciliation: every assigned replica present with the live id in its assigned dir, and
    nothing else on disk (no stray/old/foreign entries, -delete dirs only within file.delete.delay.ms)."""
    doc = capture_doc(root)
    image, _, _ = replay(authoritative_copy(root))
    capture_ms = _ms(doc["capture_time"])
    seen = set()
    for view in log_dirs(root):
        assert view.meta.cluster_id == doc["cluster_id"]
        for name, _is_dir, entry in entries(view):
            assert entry.kind != "non_kafka", (view.path, name)
            if entry.kind == "delete":
                assert capture_ms - os.stat(os.path.join(view.path, name)).st_mtime * 1000 < 60_000 * 60 * 24 * 365
                continue
            assert entry.kind not in ("stray",), name
            if entry.kind != "partition":
                continue
            result = pm_result(os.path.join(view.path, name))
            assert result is not None and result.ok, (view.path, name)
            topic = image.topics[result.topic_id]
            assert topic["name"] == entry.topic
            part = topic["partitions"][entry.partition]
            assert view.broker_id in part["replicas"], (view.path, name)
            if part["directories"]:
                assigned = part["directories"][part["replicas"].index(view.broker_id)]
                assert assigned == view.meta.directory_id, (view.path, name)
            assert (view.broker_id, result.topic_id, entry.partition) not in seen
            seen.add((view.broker_id, result.topic_id, entry.partition))
    captured = {int(b) for b, info in doc["brokers"].items() if info["state"] != "absent"}
    for topic_id, topic in image.topics.items():
        for p, part in topic["partitions"].items():
            for b in part["replicas"]:
                if b in captured:
                    assert (b, topic_id, p) in seen, (topic["name"], p, b)


def _ms(iso: str) -> int:
    import datetime as dt

    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


@pytest.mark.parametrize("name,overrides", [("healthy", {}), ("healthy", {"log_dirs": 3, "brokers": 5}),
                                            ("delete-create-in-snapshot", {})])
def test_healthy_captures_have_nothing_to_find(capture, name, overrides):
    root = capture(name, **overrides)
    assert expected_doc(root)["findings"] == []
    _assert_disk_matches_metadata(root)
    copies = [os.path.join(v.path, METADATA_DIR) for v in log_dirs(root)]
    contents = {tuple(sorted(os.listdir(c))) for c in copies if os.path.isdir(c)}
    assert len(contents) == 1  # every copy identical in layout: nobody lags or diverges


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


def tree_hash(root: str) -> str:
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        st = os.stat(dirpath)
        digest.update(f"D {os.path.relpath(dirpath, root)} {st.st_mtime_ns}\n".encode())
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            st = os.stat(path)
            digest.update(f"F {os.path.relpath(path, root)} {st.st_size} {st.st_mtime_ns}\n".encode())
            with open(path, "rb") as f:
                digest.update(f.read(1 << 16))
    return digest.hexdigest()


def test_same_seed_same_bytes_and_mtimes(tmp_path):
    hashes = []
    for run, seed in (("a", 11), ("b", 11), ("c", 12)):
        out = str(tmp_path / run)
        command.run("demo", out, SimParams(seed=seed, partitions_per_broker=1))
        hashes.append(tree_hash(out))
    assert hashes[0] == hashes[1] != hashes[2]


def test_scale_flags_stream_background_replicas(tmp_path):
    out = str(tmp_path / "scale")
    stats = command.run("healthy", out, SimParams(seed=3, brokers=3, log_dirs=2, partitions_per_broker=2000,
                                                  metadata_records=20_000))
    assert stats["background_replica_dirs"] == 6000
    assert stats["metadata_records"] >= 20_000
    per_dir = [len([n for n in os.listdir(v.path) if "." in n and n[-1].isdigit()]) for v in log_dirs(out)]
    assert sum(per_dir) == 6000 and min(per_dir) > 0  # spread over all 6 log dirs
    image, _, _ = replay(authoritative_copy(out))
    assert sum(len(t["partitions"]) for t in image.topics.values()) >= 2000
    _assert_disk_matches_metadata(out)  # JBOD directories of every background replica agree with the metadata
    sample = next(v for v in log_dirs(out))
    big = max((os.path.join(sample.path, n) for n in os.listdir(sample.path) if n.startswith(("billing", "catalog",
              "checkout", "fraud", "inventory.", "logistics", "marketing", "orders.", "payments.", "pricing",
              "search", "shipping", "users", "warehouse"))), key=lambda p: os.stat(os.path.join(p, sorted(
                  os.listdir(p))[0])).st_size)
    seg = os.path.join(big, "00000000000000000000.log")
    st = os.stat(seg)
    assert st.st_blocks * 512 < st.st_size  # sparse
    assert [b for b in record_batch.read_batches(seg)]


def test_packed_capture_is_one_pack_per_broker(tmp_path):
    out = str(tmp_path / "packed")
    stats = command.run("missing-partition-metadata", out, SimParams(seed=5, partitions_per_broker=1, packed=True))
    assert stats["packs"] == [f"broker-{b}.jsonl.gz" for b in range(1, 5)]
    assert not any(name.startswith("broker-") and os.path.isdir(os.path.join(out, name)) for name in os.listdir(out))
    with pack_reader.PackReader(os.path.join(out, "broker-2.jsonl.gz")) as pack:
        items = list(pack)
    assert pack.complete, pack.errors
    assert pack.header["broker_id"] == 2 and pack.header["capture_time"] == capture_doc(out)["capture_time"]
    by_path = {e["path"]: e for e in items}
    assert any(p.endswith("/partition.metadata") and e["content"] for p, e in by_path.items())
    assert any(p.startswith(METADATA_DIR + "/") and p.endswith(".log") and e["content"] for p, e in by_path.items())


def _pack_lines(path: str, trees: str = "") -> list:
    """The pack's lines with the wall-clock trailer dropped and the folder of the packed trees taken out."""
    folder = trees or os.path.dirname(path)
    with gzip.open(path, "rt") as f:
        return [line.replace(folder, "<trees>") for line in f if '"rec":"trailer"' not in line]


def test_packed_fleet_written_in_passes_or_on_scratch_equals_one_pass(tmp_path, monkeypatch):
    params = SimParams(seed=9, brokers=5, partitions_per_broker=40, metadata_records=2000, packed=True)
    command.run("healthy", str(tmp_path / "one"), params)
    monkeypatch.setattr(command, "PACK_PASS_REPLICA_DIRS", 80)  # two brokers' trees at a time: three passes
    stats = command.run("healthy", str(tmp_path / "passes"), params)
    assert stats["packs"] == [f"broker-{b}.jsonl.gz" for b in range(1, 6)]
    scratch = tmp_path / "scratch"
    assert command.run("healthy", str(tmp_path / "scratched"), params, scratch=str(scratch))["packs"] == stats["packs"]
    assert os.listdir(scratch) == []  # trees and work files removed
    for name in stats["packs"]:
        one, passes = str(tmp_path / "one" / name), str(tmp_path / "passes" / name)
        assert _pack_lines(passes) == _pack_lines(one), name
        assert _pack_lines(str(tmp_path / "scratched" / name), str(scratch / "scratched")) == _pack_lines(one)
        assert os.stat(passes).st_mtime_ns == os.stat(one).st_mtime_ns


def test_metadata_log_embedded_in_the_voters_packs_only(tmp_path):
    out = str(tmp_path / "copies")
    command.run("healthy", out, SimParams(seed=9, brokers=5, partitions_per_broker=10, metadata_records=2000,
                                          packed=True, metadata_log_copies=2))
    voters = capture_doc(out)["controller"]["kraft"]["voters"]
    embedded = set()
    for b in range(1, 6):
        with pack_reader.PackReader(os.path.join(out, f"broker-{b}.jsonl.gz")) as pack:
            segments = [e for e in pack if e["path"].startswith(METADATA_DIR + "/") and e["path"].endswith(".log")]
        assert segments, b  # every broker's copy is listed ...
        if all(e["content"] for e in segments):
            embedded.add(b)
        else:
            assert not any(e["content"] for e in segments), b  # ... and embedded whole or not at all
    assert embedded == set(sorted(voters)[:2])
    assert command.main(["--scenario", "healthy", "--out", str(tmp_path / "raw"), "--metadata-log-copies", "1"]) == 2
    assert command.main(["--scenario", "healthy", "--out", str(tmp_path / "raw"), "--scratch", str(tmp_path)]) == 2


def test_cli_lists_validates_and_refuses_foreign_folders(tmp_path, capsys):
    assert command.main(["--list"]) == 0
    assert "demo" in capsys.readouterr().out
    assert command.main(["--scenario", "nope", "--out", str(tmp_path / "x")]) == 2
    assert command.main(["--scenario", "healthy"]) == 2
    foreign = tmp_path / "not-a-capture"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    assert command.main(["--scenario", "healthy", "--out", str(foreign), "--force"]) == 2
    assert (foreign / "precious.txt").read_text() == "keep me"
    assert command.main(["--scenario", "healthy", "--out", str(tmp_path / "y"), "--brokers", "0"]) == 2
    ok = tmp_path / "z"
    assert command.main(["--scenario", "zk-healthy", "--out", str(ok), "--partitions-per-broker", "0"]) == 0
    assert command.main(["--scenario", "zk-healthy", "--out", str(ok)]) == 2
    assert command.main(["--scenario", "zk-healthy", "--out", str(ok), "--force"]) == 0


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
