"""Bronze DataFrames for reconcile tests, without running the ingest stage.

Two sources:

* :func:`devsample_bronze` rebuilds the bronze rows of the real kafka-devsample capture from its ground truth
  (tests/fixtures/kafka-devsample/expected.json: every metadata record with Kafka's own JSON, the snapshot's
  records, every replica dir and what Kafka's PartitionMetadataFile.read() returned).
* :class:`Cluster` is a small builder for hand-made cases: brokers and log dirs, metadata records appended
  like the controller would (offsets and append times advance), snapshots, replica dirs, producer states
  and ZooKeeper events. Typed columns come from the ingest's own mapping (jobs.ingest.metadata_rows).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from jobs.ingest.metadata_rows import typed_columns
from jobs.tables import bronze

UTC = timezone.utc
SEGMENT = "segment"


def _ms(ts: int) -> datetime:
    return datetime.fromtimestamp(ts / 1000.0, tz=UTC)


def _hash(record_type: str, version, data) -> str:
    text = f"{record_type}|{version}|{json.dumps(data, separators=(',', ':'))}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def record_row(copy_id: str, broker: Optional[int], section: str, offset: int, batch_base: int, epoch: int,
               time: datetime, record_type: str, data: dict, version: int = 0, is_control: bool = False,
               snapshot_end: Optional[int] = None, source_file: str = "00000000000000000000.log") -> dict:
    row = {
        "capture_id": "cap", "run_id": "run", "copy_id": copy_id, "source_broker_id": broker,
        "source_file": source_file, "source_kind": "snapshot" if section == "snapshot" else SEGMENT,
        "section": section, "snapshot_end_offset": snapshot_end, "offset": offset, "batch_base_offset": batch_base,
        "leader_epoch": epoch, "append_time": time, "is_control": is_control, "record_type": record_type,
        "api_key": None, "version": version, "payload_json": json.dumps(data, separators=(",", ":")),
        "record_hash": _hash(record_type, version, data), "error_kind": None, "error_message": None,
        "in_authoritative_sequence": None,
    }
    row.update(typed_columns(None if is_control else record_type, data))
    return row


def to_frames(spark, tables: Dict[str, List[dict]]) -> dict:
    """Rows per bronze table -> DataFrames with the spec's schema (missing columns null)."""
    out = {}
    for spec in bronze.TABLES:
        schema = spec.spark_schema()
        rows = [tuple(r.get(f.name) for f in schema.fields) for r in tables.get(spec.name, [])]
        out[spec.name] = spark.createDataFrame(rows, schema)
    return out


# ----------------------------------------------------------------------------------------- devsample

def devsample_tables(expected_json: Path) -> Dict[str, List[dict]]:
    d = json.loads(Path(expected_json).read_text())
    cluster = d["clusterId"]
    tables: Dict[str, List[dict]] = {s.name: [] for s in bronze.TABLES}
    ends = {int(k.rsplit("broker", 1)[1]): v for k, v in d["metadataLog"].items() if k.startswith("logEndOffset_")}
    meta_dirs = {int(b): n["metadataLogDir"] for b, n in d["nodes"].items()}
    snap = d["metadataSnapshot"]
    for b, node in d["nodes"].items():
        for ld in node["logDirs"]:
            tables["bronze_log_dirs"].append({
                "capture_id": "cap", "run_id": "run", "cluster_id": cluster, "broker_id": int(b),
                "log_dir": ld["logDir"], "directory_id": ld["directoryId"], "meta_version": 1,
                "has_metadata_log": ld["logDir"] == node["metadataLogDir"], "entry_count": None})
    for b, log_dir in meta_dirs.items():
        copy_id = f"{log_dir}/__cluster_metadata-0"
        end = ends[b]
        for r in d["metadataLog"]["records"]:
            if r["offset"] >= end:
                continue
            tables["bronze_metadata_records"].append(record_row(
                copy_id, b, "log", r["offset"], r["batchBaseOffset"], r["partitionLeaderEpoch"], _ms(r["timestamp"]),
                r["type"], r["data"], r.get("version", 0), r["isControl"]))
        for r in snap["records_broker101"]:
            tables["bronze_metadata_records"].append(record_row(
                copy_id, b, "snapshot", r["offset"], r["batchBaseOffset"], r["partitionLeaderEpoch"],
                _ms(r["timestamp"]), r["type"], r["data"], r.get("version", 0), r["isControl"],
                snapshot_end=snap["endOffsetExclusive"], source_file=snap["fileName"]))
        tables["bronze_metadata_copies"].append({
            "capture_id": "cap", "run_id": "run", "copy_id": copy_id, "source_broker_id": b,
            "snapshot_end_offset": snap["endOffsetExclusive"], "first_offset": 0, "last_offset": end - 1,
            "records": end, "is_authoritative": b == 101, "diverges_at_offset": None, "gap_after_offset": None,
            "sequence_snapshot_end_offset": None, "source_kind": SEGMENT, "log_dir": log_dir})
    for r in d["replicas"]:
        name = r["path"].rsplit("/", 1)[1]
        kind = next((k for k in ("delete", "future", "stray") if name.endswith("-" + k)), "partition")
        pm = r["partitionMetadata"]
        status = "ok" if pm.get("kafkaRead") == "ok" else ("missing" if not pm["exists"] else "log_dir_offline")
        tables["bronze_dir_entries"].append({
            "capture_id": "cap", "run_id": "run", "cluster_id": cluster, "broker_id": r["broker"],
            "log_dir": r["logDir"], "directory_id": r["logDirId"], "entry_name": name, "entry_kind": kind,
            "is_dir": True, "topic": r["topic"], "partition": r["partition"], "bytes": 100 + r["logEndOffset"],
            "segment_count": 1, "newest_mtime": datetime(2026, 11, 22, tzinfo=UTC),
            "log_start_offset": 0, "pm_status": status, "pm_message": None if status == "ok" else pm["kafkaRead"],
            "topic_id": pm.get("topicIdOnDisk")})
    for part, batches in d["dataBatches"].items():
        topic_part = part.split(" ", 1)[0]
        topic, p = topic_part.rsplit("-", 1)
        for r in d["replicas"]:
            if r["path"].rsplit("/", 1)[1] != topic_part or r["status"] == "corrupt_partition_metadata":
                continue
            if "incarnation" in part and r["topicIdWritten"] not in part:
                continue
            for batch in batches:
                if batch["producerId"] < 0:
                    continue
                tables["bronze_producer_states"].append({
                    "capture_id": "cap", "run_id": "run", "broker_id": r["broker"], "log_dir": r["logDir"],
                    "entry_name": topic_part, "topic": topic, "partition": int(p), "topic_id": r["topicIdWritten"],
                    "source_file": "00000000000000000000.log", "source_kind": "batch_header",
                    "producer_id": batch["producerId"], "producer_epoch": batch["producerEpoch"],
                    "timestamp": _ms(batch["maxTimestamp"])})
    return tables


def devsample_bronze(spark, expected_json: Path) -> dict:
    return to_frames(spark, devsample_tables(expected_json))


# ----------------------------------------------------------------------------------------- builder

@dataclass
class Cluster:
    """Hand-made capture: one KRaft metadata log (copy on ``metadata_broker``), brokers, dirs, producer states.

    Example::

        c = Cluster()
        c.broker(1); c.broker(2)
        c.topic("orders", "T1", {0: [1, 2]})
        c.dir(1, "orders-0", "T1"); c.dir(2, "orders-0", "T1")
        bronze = c.bronze(spark)
    """

    cluster_id: str = "C-test-cluster"
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    step: timedelta = timedelta(seconds=1)
    metadata_broker: int = 1
    records: List[dict] = field(default_factory=list)
    snapshot_records: List[dict] = field(default_factory=list)
    snapshot_end: Optional[int] = None
    log_dirs: List[dict] = field(default_factory=list)
    entries: List[dict] = field(default_factory=list)
    producer_states: List[dict] = field(default_factory=list)
    zk_events: List[dict] = field(default_factory=list)
    extra_copies: List[dict] = field(default_factory=list)
    next_offset: int = 0
    now: Optional[datetime] = None

    def __post_init__(self) -> None:
        self.now = self.start

    # -- time and metadata records
    def advance(self, delta: timedelta) -> "Cluster":
        self.now = self.now + delta
        return self

    @property
    def copy_id(self) -> str:
        return f"broker-{self.metadata_broker}/kafka-logs/__cluster_metadata-0"

    def append(self, *records: tuple, epoch: int = 1) -> int:
        """Append one batch of (type, data) records; returns the batch's base offset."""
        base = self.next_offset
        self.now = self.now + self.step
        for record_type, data in records:
            version = 1 if record_type in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD") else 0
            self.records.append(record_row(self.copy_id, self.metadata_broker, "log", self.next_offset, base, epoch,
                                           self.now, record_type, data, version))
            self.next_offset += 1
        return base

    def register(self, broker_id: int, epoch: Optional[int] = None, fenced: bool = False,
                 log_dirs: Sequence[str] = ()) -> int:
        data = {"brokerId": broker_id, "brokerEpoch": epoch if epoch is not None else self.next_offset,
                "fenced": fenced, "logDirs": list(log_dirs)}
        return self.append(("REGISTER_BROKER_RECORD", data))

    def register_controller(self, controller_id: int) -> int:
        return self.append(("REGISTER_CONTROLLER_RECORD", {"controllerId": controller_id,
                                                           "incarnationId": "AAAAAAAAAAAAAAAAAAAAAA"}))

    def unregister(self, broker_id: int, epoch: int = 0) -> int:
        return self.append(("UNREGISTER_BROKER_RECORD", {"brokerId": broker_id, "brokerEpoch": epoch}))

    def log_dirs_change(self, broker_id: int, log_dirs: Sequence[str]) -> int:
        """BrokerRegistrationChangeRecord v2 with LogDirs: what the controller writes when a dir goes offline."""
        return self.append(("BROKER_REGISTRATION_CHANGE_RECORD",
                            {"brokerId": broker_id, "brokerEpoch": 0, "logDirs": list(log_dirs)}))

    def fence(self, broker_id: int, fenced: bool = True) -> int:
        return self.append(("BROKER_REGISTRATION_CHANGE_RECORD",
                            {"brokerId": broker_id, "brokerEpoch": 0, "fenced": 1 if fenced else -1}))

    def topic(self, name: str, topic_id: str, partitions: Dict[int, List[int]],
              directories: Optional[Dict[int, List[str]]] = None) -> int:
        recs = [("TOPIC_RECORD", {"name": name, "topicId": topic_id})]
        for p, replicas in sorted(partitions.items()):
            data = {"partitionId": p, "topicId": topic_id, "replicas": replicas, "isr": replicas,
                    "removingReplicas": [], "addingReplicas": [], "leader": replicas[0], "leaderEpoch": 0,
                    "partitionEpoch": 0}
            if directories and p in directories:
                data["directories"] = directories[p]
            recs.append(("PARTITION_RECORD", data))
        return self.append(*recs)

    def add_partitions(self, topic_id: str, partitions: Dict[int, List[int]]) -> int:
        return self.append(*[("PARTITION_RECORD", {
            "partitionId": p, "topicId": topic_id, "replicas": r, "isr": r, "removingReplicas": [],
            "addingReplicas": [], "leader": r[0], "leaderEpoch": 0, "partitionEpoch": 0})
            for p, r in sorted(partitions.items())])

    def change(self, topic_id: str, partition: int, **fields) -> int:
        data = {"partitionId": partition, "topicId": topic_id}
        names = {"replicas": "replicas", "isr": "isr", "leader": "leader", "directories": "directories",
                 "adding": "addingReplicas", "removing": "removingReplicas"}
        for key, value in fields.items():
            data[names[key]] = value
        return self.append(("PARTITION_CHANGE_RECORD", data))

    def remove_topic(self, topic_id: str) -> int:
        return self.append(("REMOVE_TOPIC_RECORD", {"topicId": topic_id}))

    def producer_ids(self, broker_id: int, next_producer_id: int, broker_epoch: int = 1) -> int:
        return self.append(("PRODUCER_IDS_RECORD", {"brokerId": broker_id, "brokerEpoch": broker_epoch,
                                                    "nextProducerId": next_producer_id}))

    def snapshot_and_truncate(self, image: Sequence[tuple], keep_log_from: Optional[int] = None) -> None:
        """Write a snapshot ending at the current log end with ``image`` (type, data) records and drop the
        log records below ``keep_log_from`` (default: the snapshot end, i.e. the whole covered log)."""
        end = self.next_offset
        self.snapshot_end = end
        self.snapshot_records = [
            record_row(self.copy_id, self.metadata_broker, "snapshot", i, 0, 1, self.now, t, d,
                       1 if t in ("PARTITION_RECORD",) else 0, snapshot_end=end,
                       source_file=f"{end:020d}-0000000001.checkpoint")
            for i, (t, d) in enumerate(image)]
        cut = end if keep_log_from is None else keep_log_from
        self.records = [r for r in self.records if r["offset"] >= cut]

    # -- disks
    def broker(self, broker_id: int, log_dirs: Sequence[str] = ("kafka-logs",), directory_ids: Sequence[str] = (),
               cluster_id: Optional[str] = None, meta_version: int = 1, has_metadata_log: Optional[bool] = None,
               node: str = "broker") -> None:
        """A node's captured log dirs (``node`` names the capture folder: broker-N or controller-N)."""
        for i, name in enumerate(log_dirs):
            self.log_dirs.append({
                "capture_id": "cap", "run_id": "run", "cluster_id": cluster_id or self.cluster_id,
                "broker_id": broker_id, "log_dir": f"{node}-{broker_id}/{name}",
                "directory_id": directory_ids[i] if i < len(directory_ids) else None,
                "meta_version": meta_version, "has_metadata_log": has_metadata_log})

    def dir(self, broker_id: int, name: str, topic_id: Optional[str], log_dir: str = "kafka-logs",
            pm_status: str = "ok", bytes: int = 1000, kind: Optional[str] = None, is_dir: bool = True,
            mtime: Optional[datetime] = None) -> None:
        if kind is None:
            kind = next((k for k in ("delete", "future", "stray") if name.endswith("-" + k)), "partition")
        topic, partition = None, None
        if kind != "non_kafka":
            base = name.rsplit(".", 1)[0] if kind in ("delete", "future", "stray") else name
            topic, p = base.rsplit("-", 1)
            partition = int(p)
        directory_id = next((d["directory_id"] for d in self.log_dirs
                             if d["broker_id"] == broker_id and d["log_dir"].endswith("/" + log_dir)), None)
        self.entries.append({
            "capture_id": "cap", "run_id": "run", "cluster_id": self.cluster_id, "broker_id": broker_id,
            "log_dir": f"broker-{broker_id}/{log_dir}", "directory_id": directory_id, "entry_name": name,
            "entry_kind": kind, "is_dir": is_dir, "topic": topic, "partition": partition, "bytes": bytes,
            "segment_count": 1, "newest_mtime": mtime or self.start, "log_start_offset": 0,
            "pm_status": pm_status if kind != "non_kafka" else "not_applicable",
            "pm_message": None if pm_status in ("ok", "missing") else f"Malformed line ({pm_status})",
            "topic_id": topic_id if pm_status == "ok" else None,
            "name_error": "not in the form of topic-partition" if kind == "non_kafka" else None})

    def producer(self, broker_id: int, dir_name: str, producer_id: int, topic_id: Optional[str] = None,
                 log_dir: str = "kafka-logs") -> None:
        topic, p = dir_name.rsplit("-", 1)
        self.producer_states.append({
            "capture_id": "cap", "run_id": "run", "broker_id": broker_id, "log_dir": f"broker-{broker_id}/{log_dir}",
            "entry_name": dir_name, "topic": topic, "partition": int(p), "topic_id": topic_id,
            "source_file": "00000000000000000010.snapshot", "source_kind": "producer_snapshot",
            "producer_id": producer_id, "producer_epoch": 0, "timestamp": self.now})

    def zk(self, **row) -> None:
        base = {"capture_id": "cap", "run_id": "run", "source_file": "zk-znodes.jsonl", "source_kind": "znode_dump",
                "seq": len(self.zk_events), "event_time": self.now}
        base.update(row)
        self.zk_events.append(base)

    # -- output
    def tables(self) -> Dict[str, List[dict]]:
        recs = self.records + self.snapshot_records
        first = min((r["offset"] for r in self.records), default=None)
        copies = []
        if recs:
            copies.append({
                "capture_id": "cap", "run_id": "run", "copy_id": self.copy_id, "source_broker_id": self.metadata_broker,
                "snapshot_end_offset": self.snapshot_end, "first_offset": first,
                "last_offset": max((r["offset"] for r in self.records), default=None), "records": len(self.records),
                "is_authoritative": True, "diverges_at_offset": None, "gap_after_offset": None,
                "sequence_snapshot_end_offset": self.snapshot_end if first not in (0, None) else None,
                "source_kind": SEGMENT, "log_dir": f"broker-{self.metadata_broker}/kafka-logs"})
        copies += self.extra_copies
        return {"bronze_metadata_records": recs, "bronze_metadata_copies": copies, "bronze_log_dirs": self.log_dirs,
                "bronze_dir_entries": self.entries, "bronze_producer_states": self.producer_states,
                "bronze_zk_events": self.zk_events}

    def bronze(self, spark) -> dict:
        return to_frames(spark, self.tables())
