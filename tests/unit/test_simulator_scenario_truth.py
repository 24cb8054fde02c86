"""The fleet simulator's scenario catalogue: every scenario decodes with the project's decoders and its ground
truth is what the bytes say (checked by an independent replay, tests/unit/sim_replay.py); healthy captures have
nothing to find."""
from __future__ import annotations

import json
import os

import pytest
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
from simulator_helpers import _assert_disk_matches_metadata, _files, _ms

from jobs.reconcile.catalogue import CHECK_IDS  # the one list of check ids
from jobs.simulate import command
from jobs.simulate.scenarios import CATALOGUE
from udfs import (
    json_state_files,
    kafka_uuid,
    producer_state,
    properties_files,
    record_batch,
)
from udfs.errors import DecodeError

capture = simulator_helpers.capture  # the module-scoped fixture, bound here so pytest finds it
MATCH_KEYS = {"broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition"}


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


def _checkpoint_text(path: str) -> dict:
    """(topic, partition) -> offset of an offset checkpoint, read as plain text (version, count, entry lines)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines[0] == "0" and len(lines) == 2 + int(lines[1]), path
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines[2:])}


def _check_checkpoint_finding_against_bytes(root: str, finding: dict) -> None:
    """A truncation: the follower's latest epoch is missing from a replica with a newer one (its leader's history
    skipped it), and its log dir records a high watermark for it. A previous incarnation's entry: the file is
    older than the dir's partition.metadata, and a -stray dir of the same name is beside it."""
    path = _find_dir(root, finding["broker_id"], finding["log_dir"], finding["dir_name"])
    log_dir = os.path.dirname(path)
    name = f"{finding['topic_name']}-{finding['partition']}"
    key = (finding["topic_name"], finding["partition"])
    if finding["check_id"] == "REPLICA_TRUNCATION_ACKNOWLEDGED":
        own = _epoch_entries(os.path.join(path, "leader-epoch-checkpoint"))[0]
        others = [_epoch_entries(os.path.join(root, b, d, name, "leader-epoch-checkpoint"))[0]
                  for b in os.listdir(root) if b.startswith("broker-") for d in os.listdir(os.path.join(root, b))
                  if os.path.isfile(os.path.join(root, b, d, name, "leader-epoch-checkpoint")) and
                  os.path.join(root, b, d, name) != path]
        latest = own[-1][0]
        assert any(o[-1][0] > latest and latest not in {e for e, _ in o} for o in others), (own, others)
        assert key in _checkpoint_text(os.path.join(log_dir, "replication-offset-checkpoint"))
        return
    checkpoint = os.path.join(log_dir, "recovery-point-offset-checkpoint")
    assert key in _checkpoint_text(checkpoint)
    assert os.stat(checkpoint).st_mtime_ns < os.stat(os.path.join(path, "partition.metadata")).st_mtime_ns
    assert any(d.startswith(name + ".") and d.endswith("-stray") for d in os.listdir(log_dir))


def _check_expected_against_bytes(root: str, finding: dict) -> None:
    """What each expected finding claims must be visible in the capture's bytes."""
    check = finding["check_id"]
    if check.startswith("LEADER_EPOCH_"):
        _check_epoch_finding_against_bytes(root, finding)
        return
    if check in ("REPLICA_TRUNCATION_ACKNOWLEDGED", "CHECKPOINT_OF_PREVIOUS_INCARNATION"):
        _check_checkpoint_finding_against_bytes(root, finding)
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
    elif check == "CORDONED_LOG_DIR_HOLDS_REPLICAS":  # the dir's id in the broker's latest CordonedLogDirs, long ago
        view = next(v for v in log_dirs(root) if v.broker_id == finding["broker_id"] and v.name == finding["log_dir"])
        segments, snapshots = copy_files(authoritative_copy(root))
        lists = [r for path in snapshots + segments for r in records(path)
                 if r.type in ("REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD") and r.data
                 and r.data.get("brokerId") == finding["broker_id"] and "cordonedLogDirs" in r.data]
        assert lists and view.meta.directory_id in lists[-1].data["cordonedLogDirs"]
        since = min(r.timestamp for r in lists if view.meta.directory_id in r.data["cordonedLogDirs"])
        assert _ms(doc["capture_time"]) - since > 7 * DAY_MS  # conf: reconcile.cordoned_dir_max_ms
        assert any(os.path.isdir(os.path.join(view.path, n)) and not n.startswith("__") for n in os.listdir(view.path))
    elif check == "CORDON_ON_UNREGISTERED_BROKER":  # a ConfigRecord for a broker id with no registration
        segments, snapshots = copy_files(authoritative_copy(root))
        configs = [r.data for path in snapshots + segments for r in records(path)
                   if r.type == "CONFIG_RECORD" and r.data["resourceType"] == 4 and r.data["name"] == "cordoned.log.dirs"
                   and r.data["resourceName"] == str(finding["broker_id"])]
        assert configs and configs[-1]["value"] and finding["broker_id"] not in image.brokers
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


@pytest.mark.parametrize("name,overrides", [("healthy", {}), ("healthy", {"log_dirs": 3, "brokers": 5}),
                                            ("delete-create-in-snapshot", {})])
def test_healthy_captures_have_nothing_to_find(capture, name, overrides):
    root = capture(name, **overrides)
    assert expected_doc(root)["findings"] == []
    _assert_disk_matches_metadata(root)
    copies = [os.path.join(v.path, METADATA_DIR) for v in log_dirs(root)]
    contents = {tuple(sorted(os.listdir(c))) for c in copies if os.path.isdir(c)}
    assert len(contents) == 1  # every copy identical in layout: nobody lags or diverges
