"""Test helper: read a simulated capture back with the project's own decoders, independently of the simulator.

It replays a broker's metadata-log copy (newest snapshot, then the log after it) into a small image and walks
the log dirs, so tests can check the simulator's ground truth against what the bytes actually say.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from udfs import log_dir_names, metadata_log, partition_metadata, properties_files
from udfs.metadata_record import MetadataRecord

METADATA_DIR = "__cluster_metadata-0"


@dataclass
class Image:
    topics: Dict[str, dict] = field(default_factory=dict)  # id -> {"name", "partitions": {p: {...}}}
    names: Dict[str, str] = field(default_factory=dict)  # name -> id
    brokers: Dict[int, dict] = field(default_factory=dict)
    controllers: Dict[int, dict] = field(default_factory=dict)  # RegisterControllerRecord data by id
    unregistered: Dict[int, int] = field(default_factory=dict)  # broker id -> its last UnregisterBrokerRecord offset
    producer_ids: List[Tuple[int, dict]] = field(default_factory=list)  # (offset, ProducerIdsRecord data)
    removed: Dict[str, int] = field(default_factory=dict)  # id -> offset
    created: Dict[str, int] = field(default_factory=dict)  # id -> offset (in the log or snapshot)
    # history: every record physically in the copy's segments, including those below the newest snapshot
    log_removed: Dict[str, int] = field(default_factory=dict)
    log_created: Dict[str, int] = field(default_factory=dict)
    log_producer_ids: List[Tuple[int, dict]] = field(default_factory=list)
    baseline_next_producer_id: int = -1  # NextProducerId in the copy's earliest snapshot (state at log start)
    log_start: int = 0  # the earliest snapshot's end offset

    def remember(self, r: MetadataRecord) -> None:
        if r.type == "REMOVE_TOPIC_RECORD":
            self.log_removed[r.data["topicId"]] = r.offset
        elif r.type == "TOPIC_RECORD":
            self.log_created[r.data["topicId"]] = r.offset
        elif r.type == "PRODUCER_IDS_RECORD":
            self.log_producer_ids.append((r.offset, r.data))
        elif r.type == "UNREGISTER_BROKER_RECORD":  # also below the newest snapshot, which simply lacks the broker
            self.unregistered[r.data["brokerId"]] = r.offset
        elif r.type == "REGISTER_BROKER_RECORD":
            self.unregistered.pop(r.data["brokerId"], None)

    def apply(self, r: MetadataRecord, in_snapshot: bool = False) -> None:
        d = r.data
        if r.type == "TOPIC_RECORD":
            self.topics[d["topicId"]] = {"name": d["name"], "partitions": {}}
            self.names[d["name"]] = d["topicId"]
            self.created[d["topicId"]] = -1 if in_snapshot else r.offset
        elif r.type == "PARTITION_RECORD":
            self.topics[d["topicId"]]["partitions"][d["partitionId"]] = {
                "replicas": d["replicas"], "directories": d.get("directories", []), "leader": d["leader"]}
        elif r.type == "PARTITION_CHANGE_RECORD":
            part = self.topics[d["topicId"]]["partitions"][d["partitionId"]]
            for key in ("replicas", "directories", "leader"):
                if key in d:
                    part[key] = d[key]
        elif r.type == "REMOVE_TOPIC_RECORD":
            topic = self.topics.pop(d["topicId"], None)
            if topic is not None and self.names.get(topic["name"]) == d["topicId"]:
                del self.names[topic["name"]]
            self.removed[d["topicId"]] = r.offset
        elif r.type == "REGISTER_BROKER_RECORD":
            self.brokers[d["brokerId"]] = dict(d)
        elif r.type == "BROKER_REGISTRATION_CHANGE_RECORD":
            if d["brokerId"] in self.brokers and d.get("logDirs"):  # absent or empty: no change
                self.brokers[d["brokerId"]]["logDirs"] = d["logDirs"]
        elif r.type == "UNREGISTER_BROKER_RECORD":
            self.brokers.pop(d["brokerId"], None)
        elif r.type == "REGISTER_CONTROLLER_RECORD":
            self.controllers[d["controllerId"]] = d
        elif r.type == "PRODUCER_IDS_RECORD":
            self.producer_ids.append((-1 if in_snapshot else r.offset, d))


def records(path: str) -> List[MetadataRecord]:
    return list(metadata_log.iter_metadata_records(path))


def copy_files(metadata_dir: str) -> Tuple[List[str], List[str]]:
    names = sorted(os.listdir(metadata_dir))
    segments = [os.path.join(metadata_dir, n) for n in names if n.endswith(".log")]
    snapshots = sorted((os.path.join(metadata_dir, n) for n in names if n.endswith(".checkpoint")),
                       key=lambda p: metadata_log.parse_snapshot_file_name(os.path.basename(p))[0])
    return segments, snapshots


@lru_cache(maxsize=64)
def replay(metadata_dir: str) -> Tuple[Image, int, int]:
    """(image, snapshot end offset used (0 if none), first offset physically in the log)."""
    segments, snapshots = copy_files(metadata_dir)
    image = Image()
    start = 0
    if snapshots:
        start = metadata_log.parse_snapshot_file_name(os.path.basename(snapshots[-1]))[0]
        for r in records(snapshots[-1]):
            if not r.is_control:
                image.apply(r, in_snapshot=True)
    if snapshots:
        image.log_start = metadata_log.parse_snapshot_file_name(os.path.basename(snapshots[0]))[0]
        for r in records(snapshots[0]):
            if r.type == "PRODUCER_IDS_RECORD":
                image.baseline_next_producer_id = r.data["nextProducerId"]
    first = None
    for seg in segments:
        for r in records(seg):
            first = r.offset if first is None else first
            if not r.is_control:
                image.remember(r)
            if r.offset >= start and not r.is_control:
                image.apply(r)
    return image, start, first if first is not None else 0


def capture_doc(root: str) -> dict:
    with open(os.path.join(root, "capture.json"), encoding="utf-8") as f:
        return json.load(f)


def expected_doc(root: str) -> dict:
    with open(os.path.join(root, "expected_findings.json"), encoding="utf-8") as f:
        return json.load(f)


@dataclass
class LogDirView:
    path: str
    broker_id: int
    name: str
    meta: properties_files.MetaProperties


def log_dirs(root: str) -> List[LogDirView]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        if "meta.properties" in filenames:
            with open(os.path.join(dirpath, "meta.properties"), "rb") as f:
                meta = properties_files.parse_meta_properties(f.read())
            out.append(LogDirView(dirpath, meta.node_id, os.path.basename(dirpath), meta))
            dirnames[:] = []
    return sorted(out, key=lambda v: v.path)


def pm_result(replica_dir: str) -> Optional[partition_metadata.PartitionMetadataResult]:
    path = os.path.join(replica_dir, "partition.metadata")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return partition_metadata.read_partition_metadata(f.read())


def entries(view: LogDirView):
    """(name, is_dir, classified) for every entry of a log dir."""
    for name in sorted(os.listdir(view.path)):
        is_dir = os.path.isdir(os.path.join(view.path, name))
        yield name, is_dir, log_dir_names.classify_entry(name, is_dir)


def authoritative_copy(root: str) -> str:
    """The metadata-log copy of the first running voter (what the quorum committed)."""
    doc = capture_doc(root)
    for broker_id, info in sorted(doc["brokers"].items(), key=lambda kv: int(kv[0])):
        if info["state"] == "active":
            for d in info["log_dirs"]:
                path = os.path.join(root, f"broker-{broker_id}", d["name"], METADATA_DIR)
                if d["metadata_log_dir"] and os.path.isdir(path):
                    return path
    raise AssertionError("no active broker with a metadata log")
