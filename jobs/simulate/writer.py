"""Lay a finished simulation out as a capture (docs/CONTRACTS.md): log-dir trees, metadata-log copies,
ZooKeeper artifacts, ``capture.json`` and ``expected_findings.json``.

Speed and memory: background replicas are streamed in one pass over the partitions (files written with
descriptor-relative calls, sparse segments via ``ftruncate``), identical files (closed metadata segments,
snapshots) are hard links to one encoded copy, and per-topic bytes (partition.metadata, the head batch) are
encoded once. Every mtime is set from simulated time, so the same seed gives the same tree. The files of each
replica dir, and the descriptor-relative writes everything goes through: :mod:`.replica_files`.
"""
from __future__ import annotations

import json
import os
import shutil
from typing import Callable, Dict, List, Optional, Tuple

from udfs import kafka_uuid

from . import codec, dump_log
from .background import MEAN_RECORD_BYTES, Background
from .clock import SECOND, iso_utc
from .epoch_history import EpochHistories, current_leader_epoch
from .fleet import Broker, LogDir, OtherEntry, Replica
from .metalog import (
    RETENTION_BYTES,
    CopyPlan,
    MetadataLog,
    SnapshotPoint,
    final_time_entry,
    index_entries,
    snapshot_parts,
)
from .replica_files import (
    _FLAGS,
    INDEX_PREALLOC,
    LEADER_EPOCH_FILE,
    SEGMENT_BYTES,
    TIMEINDEX_PREALLOC,
    ReplicaFiles,
    Segment,
    TreeWriter,
    _ns,
    _values,
    scenario_replica_files,
    with_log_end,
    write_replica,
)
from .simulation import Simulation

RECOVERY_POINT = "recovery-point-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"
METADATA_DIR = "__cluster_metadata-0"


class CheckpointSpill:
    """Checkpoint entries per log dir, spilled to disk so memory stays flat however many replicas there are.

    The checkpoint files need their entry count first, so entries are collected while replica dirs are written
    and the files are written at the end, one log dir at a time.
    """

    BUDGET = 50_000  # entries held in memory across all log dirs before spilling

    def __init__(self, work_dir: str):
        self.work_dir = work_dir
        self.buffers: Dict[Tuple[int, str], List[Tuple[str, int, int, int]]] = {}
        self.held = 0
        self.files: Dict[Tuple[int, str], str] = {}

    def add(self, key: Tuple[int, str], entry: Tuple[str, int, int, int]) -> None:
        self.buffers.setdefault(key, []).append(entry)
        self.held += 1
        if self.held >= self.BUDGET:
            self._spill()

    def _spill(self) -> None:
        os.makedirs(self.work_dir, exist_ok=True)
        for key, entries in self.buffers.items():
            if not entries:
                continue
            path = self.files.setdefault(key, os.path.join(self.work_dir, f"{key[0]}-{len(self.files)}.jsonl"))
            with open(path, "a", encoding="utf-8") as f:
                f.writelines(json.dumps(e) + "\n" for e in entries)
            entries.clear()
        self.held = 0

    def take(self, key: Tuple[int, str]) -> List[Tuple[str, int, int, int]]:
        """All entries of one log dir (spilled ones first), then forget them."""
        out: List[Tuple[str, int, int, int]] = []
        path = self.files.pop(key, None)
        if path is not None:
            with open(path, encoding="utf-8") as f:
                out.extend(tuple(json.loads(line)) for line in f)
            os.unlink(path)
        out.extend(self.buffers.pop(key, []))
        return out


class CaptureWriter:
    def __init__(self, sim: Simulation, out_dir: str, tree_root: Optional[str] = None):
        self.sim = sim
        self.out = out_dir
        self.tree_root = tree_root or out_dir  # where broker trees go (a scratch folder when they are packed)
        self.tree = TreeWriter()
        self.checkpoints = CheckpointSpill(os.path.join(self.tree_root, ".kafka-recon-sim-work", "checkpoints"))
        self.log_dir_fds: Dict[Tuple[int, str], int] = {}
        self.stats = {"replica_dirs": 0, "background_replica_dirs": 0}
        self.plans: Dict[int, CopyPlan] = {}  # broker -> what its metadata-log copy holds
        self.encoded: Dict[int, str] = {}  # snapshot end offset -> master file path (shared by every copy)
        self.epochs = EpochHistories(sim)  # every replica's leader-epoch-checkpoint, from its partition's history

    def broker_dir(self, broker_id: int) -> str:
        return os.path.join(self.tree_root, self.sim.fleet[broker_id].folder)

    def log_dir_path(self, broker: Broker, log_dir: LogDir) -> str:
        return os.path.join(self.broker_dir(broker.broker_id), log_dir.name)

    def captured(self) -> List[Broker]:
        return [b for _, b in sorted(self.sim.fleet.brokers.items()) if b.captured]

    def broker_written_ms(self, broker: Broker) -> int:
        """When the broker last wrote anything: capture time if running, else the time it went down."""
        return self.sim.capture_ms - 3 * SECOND if broker.running else (broker.down_since_ms or self.sim.capture_ms)

    def write(self, brokers_per_pass: Optional[int] = None,
              on_written: Optional[Callable[[List[Broker]], None]] = None) -> dict:
        """Write every captured broker's tree; ``brokers_per_pass`` brokers at a time when given.

        After each pass the pass's trees are complete (directory mtimes set) and ``on_written`` gets its
        brokers, so a caller can pack and remove them: disk and inode use then stay bounded by one pass.
        """
        os.makedirs(self.out, exist_ok=True)
        captured = self.captured()
        step = brokers_per_pass or max(1, len(captured))
        for first in range(0, len(captured), step):
            group = captured[first:first + step]
            self._write_brokers(group)
            self.tree.finish()
            if on_written is not None:
                on_written(group)
        if self.sim.kraft is not None and self.sim.capture_metadata_log and self.sim.dump_controller_log is not None:
            self._controller_dump(self.sim.log)
        if self.sim.zk_tree is not None:
            self._zk_artifacts()
        self._json_files()
        self.tree.finish()
        return self.stats

    def _write_brokers(self, brokers: List[Broker]) -> None:
        for broker in brokers:
            self.tree.mkdir(self.broker_dir(broker.broker_id), self.sim.capture_ms)
            for log_dir in broker.log_dirs:
                path = self.log_dir_path(broker, log_dir)
                if log_dir.dead:  # what a copy of a dead disk's mount point shows: a 0-byte file, nothing inside
                    with open(path, "wb"):
                        pass
                    os.utime(path, ns=(_ns(log_dir.created_ms),) * 2)
                    continue
                fd = self.tree.mkdir(path, self._log_dir_mtime(broker, log_dir))
                self.log_dir_fds[(broker.broker_id, log_dir.name)] = fd
                self._scenario_entries(broker, log_dir, fd)
        self._background(brokers)
        if self.sim.kraft is not None and self.sim.capture_metadata_log:
            self._metadata_copies(brokers)
        for broker in brokers:
            for log_dir in broker.readable_dirs():
                self._top_files(broker, log_dir)
                os.close(self.log_dir_fds.pop((broker.broker_id, log_dir.name)))

    def _log_dir_mtime(self, broker: Broker, log_dir: LogDir) -> int:
        times = [log_dir.created_ms]
        for entry in log_dir.entries.values():
            if isinstance(entry, Replica):
                times.append(entry.renamed_ms or entry.created_ms)
            else:
                times.append(entry.mtime_ms)
        return max(times)

    # ---- scenario entries ----

    def _leader_epoch(self, replica: Replica) -> int:
        return current_leader_epoch(self.sim, replica)

    def _scenario_entries(self, broker: Broker, log_dir: LogDir, fd: int) -> None:
        for name, entry in sorted(log_dir.entries.items()):
            if isinstance(entry, OtherEntry):
                self._other_entry(fd, entry)
                continue
            files = scenario_replica_files(entry, self.sim.capture_ms, self._leader_epoch(entry),
                                           self.epochs.of(entry))
            written = entry.stopped_ms if entry.stopped_ms is not None else self.broker_written_ms(broker)
            write_replica(self.tree, fd, name, files, entry.created_ms, max(entry.created_ms, written),
                          preallocate=broker.running and entry.is_current())
            self.stats["replica_dirs"] += 1
            if entry.kind in ("partition", "future"):
                self.checkpoints.add((broker.broker_id, log_dir.name),
                                     (entry.topic, entry.partition, files.log_end, files.log_start))
                for checkpoint, delta in entry.checkpoint_offsets.items():
                    log_dir.extra_checkpoint_entries.append((checkpoint, entry.topic, entry.partition,
                                                             files.log_end + delta))

    def _other_entry(self, fd: int, entry: OtherEntry) -> None:
        if entry.is_dir:
            os.mkdir(entry.name, 0o755, dir_fd=fd)
            sub = os.open(entry.name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0), dir_fd=fd)
            try:
                for child, data in sorted(entry.children.items()):
                    self.tree.write(sub, child, data, entry.mtime_ms)
            finally:
                os.close(sub)
            os.utime(entry.name, ns=(_ns(entry.mtime_ms), _ns(entry.mtime_ms)), dir_fd=fd)
        else:
            self.tree.write(fd, entry.name, entry.content, entry.mtime_ms)

    # ---- background ----

    def _background(self, brokers: List[Broker]) -> None:
        bg: Optional[Background] = self.sim.background
        if bg is None or not bg.total_partitions:
            return
        targets: Dict[int, Tuple[Broker, List[LogDir]]] = {}
        for broker in brokers:
            if broker.broker_id in bg.dirs:
                targets[broker.broker_id] = (broker, broker.log_dirs)
        uses_dirs = self.sim.kraft is not None and self.sim.kraft.image.uses_directories
        created = self.sim.background_created_ms
        epoch_file = codec.leader_epoch_checkpoint([(0, 0)])
        for topic in bg.topics():
            pm = codec.partition_metadata_file(topic.topic_id)
            heads: Dict[int, bytes] = {}
            tails: Dict[Tuple[int, int], bytes] = {}
            for p in range(topic.partitions):
                replicas = bg.replicas(topic, p)
                if not any(b in targets for b in replicas):
                    continue  # held by brokers of another pass
                size = bg.partition_size(topic, p)
                leo = max(3, size // MEAN_RECORD_BYTES)
                seg_count = max(1, -(-size // SEGMENT_BYTES))
                per_seg = leo // seg_count
                for b in replicas:
                    target = targets.get(b)
                    if target is None:
                        continue
                    broker, dirs = target
                    index, dir_id = bg.directory(topic, p, b)
                    log_dir = next((d for d in dirs if d.directory_id == dir_id), None) if uses_dirs else None
                    if log_dir is None:
                        log_dir = dirs[index % len(dirs)]
                    if not log_dir.holds_background:
                        continue
                    written = self.broker_written_ms(broker)
                    segments = []
                    for k in range(seg_count):
                        base = k * per_seg
                        if base not in heads:
                            heads[base] = codec.data_batch(_values(topic.name, 0, base, 3, created), base, 0)
                        head = heads[base]
                        if k == seg_count - 1:
                            if (base, leo) not in tails:
                                tails[(base, leo)] = with_log_end(head, base, leo, topic.name, 0, created, 0)
                            head = tails[(base, leo)]
                        seg_size = max(len(head), min(SEGMENT_BYTES, size - k * SEGMENT_BYTES))
                        tidx = codec.time_index([(written if k == seg_count - 1 else created, 0)])
                        segments.append(Segment(base, seg_size, head, b"", tidx, active=k == seg_count - 1))
                    files = ReplicaFiles(pm, segments, epoch_file, log_end=leo)
                    fd = self.log_dir_fds[(b, log_dir.name)]
                    write_replica(self.tree, fd, codec.partition_dir_name(topic.name, p), files, created, written,
                                  preallocate=broker.running)
                    self.checkpoints.add((b, log_dir.name), (topic.name, p, leo, 0))
                    self.stats["background_replica_dirs"] += 1

    # ---- top-level files ----

    def _top_files(self, broker: Broker, log_dir: LogDir) -> None:
        fd = self.log_dir_fds[(broker.broker_id, log_dir.name)]
        written = self.broker_written_ms(broker)
        node_id = log_dir.node_id
        self.tree.write(fd, "meta.properties", codec.meta_properties(
            log_dir.meta_version, node_id, log_dir.cluster_id, log_dir.directory_id, log_dir.meta_written_ms),
            log_dir.meta_written_ms)
        if broker.role == "controller":  # a controller's metadata dir: no LogManager, so no checkpoints
            self.tree.write(fd, "bootstrap.checkpoint",
                            codec.bootstrap_checkpoint(self.sim.kraft.image.metadata_version, log_dir.created_ms),
                            log_dir.created_ms)
            self.tree.write(fd, ".lock", b"", broker.registered_ms or log_dir.created_ms)
            return
        entries = sorted(self.checkpoints.take((broker.broker_id, log_dir.name)))
        extra: Dict[str, Dict[Tuple[str, int], int]] = {}
        for checkpoint, topic, partition, offset in log_dir.extra_checkpoint_entries:
            extra.setdefault(checkpoint, {})[(topic, partition)] = offset
        recovery = [(t, p, extra.get(RECOVERY_POINT, {}).get((t, p), leo if not broker.running else max(start, leo - 17)))
                    for t, p, leo, start in entries]
        recovery += [(t, p, o) for (t, p), o in sorted(extra.get(RECOVERY_POINT, {}).items())
                     if (t, p) not in {(e[0], e[1]) for e in entries}]
        flushed = log_dir.checkpoints_written_ms if log_dir.checkpoints_written_ms is not None else written
        self.tree.write(fd, "recovery-point-offset-checkpoint", codec.offset_checkpoint(recovery), flushed)
        self.tree.write(fd, "replication-offset-checkpoint",
                        codec.offset_checkpoint([(t, p, leo) for t, p, leo, _ in entries]), flushed)
        # Only logs whose start offset passed their first segment's base are listed; our segments start at the
        # log start offset, and __cluster_metadata is not a LogManager log, so the file is empty ("0\n0\n").
        self.tree.write(fd, "log-start-offset-checkpoint", codec.offset_checkpoint(
            [(t, p, o) for (t, p), o in sorted(extra.get(LOG_START, {}).items())]), flushed)
        if broker.mode in ("zk", "migration"):
            self.tree.write(fd, "cleaner-offset-checkpoint", b"", log_dir.created_ms)
        if broker.mode in ("kraft",):
            self.tree.write(fd, "bootstrap.checkpoint",
                            codec.bootstrap_checkpoint(self.sim.kraft.image.metadata_version, log_dir.created_ms),
                            log_dir.created_ms)
        if broker.running:
            self.tree.write(fd, ".lock", b"", broker.registered_ms)
        elif broker.clean_shutdown:
            epoch = broker.epoch if broker.mode == "kraft" else -1
            self.tree.write(fd, ".kafka_cleanshutdown", codec.clean_shutdown(epoch), written)

    # ---- metadata log copies ----

    def _metadata_copies(self, brokers: List[Broker]) -> None:
        log: MetadataLog = self.sim.log
        for broker in brokers:
            if broker.mode not in ("kraft", "migration") or not any(d.holds_metadata_log for d in broker.log_dirs):
                continue  # a ZooKeeper broker, or a node that holds no metadata log (a spare host's old disk)
            end = broker.metadata_cut if broker.metadata_cut is not None else log.next_offset
            now = broker.down_since_ms if not broker.running and broker.down_since_ms else self.sim.capture_ms
            log_dir = next(d for d in broker.log_dirs if d.holds_metadata_log)
            self._write_copy(broker, log_dir, log.plan_copy(end, now, self._snapshot_size))

    def _controller_dump(self, log: MetadataLog) -> None:
        """kafka-dump-log text of the (uncaptured) KRaft controller's log: its retained segments + snapshot."""
        plan = log.plan_copy(log.next_offset, self.sim.capture_ms, self._snapshot_size)
        paths = [seg.path for seg, _ in plan.segments]
        if plan.snapshots:
            paths.append(self._snapshot_file(plan.snapshots[-1]))
        out_dir = os.path.join(self.out, "dump-log")
        self.tree.mkdir(out_dir, self.sim.capture_ms)
        node = self.sim.dump_controller_log
        path = os.path.join(out_dir, f"controller-{node}-cluster-metadata.txt")
        dump_log.write_dump(paths, f"/var/lib/kafka/controller-{node}/{METADATA_DIR}", path)
        os.utime(path, ns=(_ns(self.sim.capture_ms),) * 2)

    def _snapshot_file(self, point: SnapshotPoint) -> str:
        """The snapshot's file, encoded the first time it is asked for (once for every copy holding it)."""
        if point.end_offset not in self.encoded:
            self.encoded[point.end_offset] = self._encode_snapshot(self.sim.log, point)
        return self.encoded[point.end_offset]

    def _snapshot_size(self, point: SnapshotPoint) -> int:
        """A snapshot file's size, for metadata.max.retention.bytes (MetadataLog.plan_copy)."""
        return os.path.getsize(self._snapshot_file(point))

    def _encode_snapshot(self, log: MetadataLog, point: SnapshotPoint) -> str:
        path = os.path.join(log.work_dir, codec.snapshot_name(point.end_offset, point.epoch))
        with open(path, "wb") as f:
            for part in snapshot_parts(point, point.taken_ms):
                f.write(part)
        os.utime(path, ns=(_ns(point.taken_ms), _ns(point.taken_ms)))
        return path

    def _write_copy(self, broker: Broker, log_dir: LogDir, plan: CopyPlan) -> None:
        log: MetadataLog = self.sim.log
        parent = self.log_dir_path(broker, log_dir)
        path = os.path.join(parent, METADATA_DIR)
        written = self.broker_written_ms(broker)
        fd = self.tree.mkdir(path, written)
        try:
            self.tree.write(fd, "partition.metadata", codec.partition_metadata_file(kafka_uuid.METADATA_TOPIC_ID),
                            log_dir.created_ms)
            diverged = self.sim.diverged.get(broker.broker_id, [])
            missing = set()
            if self.sim.gap_segments.get(broker.broker_id) == "middle":
                if len(plan.segments) < 3:
                    raise ValueError(f"broker {broker.broker_id}'s metadata-log copy has {len(plan.segments)} "
                                     f"segment(s); a gap in the middle needs at least 3")
                missing.add(log.segments.index(plan.segments[len(plan.segments) // 2][0]))
            end_offset = plan.end_offset
            last_ts = 0
            for i, (seg, size) in enumerate(plan.segments):
                seg_index = log.segments.index(seg)
                is_last = i == len(plan.segments) - 1
                if seg_index in missing:
                    continue
                batches = list(log.batches_in(seg_index, size))
                if batches:
                    last_ts = max(last_ts, batches[-1].timestamp)
                name = codec.segment_name(seg.base_offset, ".log")
                extra = b"".join(data for _, data in diverged) if is_last and diverged else b""
                if size == seg.size and not extra:
                    self._link(seg.path, fd, name, batches[-1].timestamp if batches else written)
                else:
                    with open(seg.path, "rb") as src:
                        data = src.read(size)
                    self.tree.write(fd, name, data + extra, written)
                offsets, times = index_entries(batches, seg.base_offset)
                active = is_last and broker.running
                if not active:
                    final = final_time_entry(batches, seg.base_offset)
                    if final is not None and (not times or final[0] > times[-1][0]):
                        times.append(final)
                mtime = batches[-1].timestamp if batches else written
                self.tree.write(fd, codec.segment_name(seg.base_offset, ".index"), codec.offset_index(offsets),
                                mtime, INDEX_PREALLOC if active else None)
                self.tree.write(fd, codec.segment_name(seg.base_offset, ".timeindex"), codec.time_index(times),
                                mtime, TIMEINDEX_PREALLOC if active else None)
                if seg.base_offset > 0:
                    self.tree.write(fd, codec.producer_snapshot_name(seg.base_offset), codec.producer_snapshot([]),
                                    batches[0].timestamp if batches else written)
            if diverged:
                end_offset = diverged[-1][0] + 1
            if not broker.running:
                self.tree.write(fd, codec.producer_snapshot_name(end_offset), codec.producer_snapshot([]), written)
            for point in plan.snapshots:
                self._link(self._snapshot_file(point), fd, codec.snapshot_name(point.end_offset, point.epoch),
                           point.taken_ms)
            epochs = log.epochs_upto(plan.end_offset, plan.log_start)
            self.tree.write(fd, LEADER_EPOCH_FILE, codec.leader_epoch_checkpoint(epochs), written)
            epoch, leader = log.last_epoch_before(plan.end_offset)
            self.tree.write(fd, "quorum-state", codec.quorum_state(leader, epoch, self.sim.voters), written)
        finally:
            os.close(fd)
        self.plans[broker.broker_id] = plan

    @staticmethod
    def _link(src: str, dir_fd: int, name: str, mtime_ms: int) -> None:
        try:
            os.link(src, name, dst_dir_fd=dir_fd)
        except OSError:
            fd = os.open(name, _FLAGS, 0o644, dir_fd=dir_fd)
            with open(src, "rb") as f, os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(f, out, 1 << 20)
        os.utime(name, ns=(_ns(mtime_ms), _ns(mtime_ms)), dir_fd=dir_fd)

    # ---- ZooKeeper ----

    def _zk_artifacts(self) -> None:
        zk_dir = os.path.join(self.out, "zk")
        self.tree.mkdir(zk_dir, self.sim.capture_ms)
        dump = os.path.join(zk_dir, "zk-znodes.jsonl")
        with open(dump, "w", encoding="utf-8") as f:
            f.write("\n".join(self.sim.zk_tree.dump_lines()) + "\n")
        os.utime(dump, ns=(_ns(self.sim.capture_ms),) * 2)
        logs = self.sim.zk_logs
        for broker_id in sorted(self.sim.fleet.brokers):
            bdir = os.path.join(zk_dir, "logs", f"broker-{broker_id}")
            self.tree.mkdir(os.path.join(zk_dir, "logs"), self.sim.capture_ms)
            self.tree.mkdir(bdir, self.sim.capture_ms)
            for file in ("controller.log", "server.log", "state-change.log"):
                lines = logs.files.get((broker_id, file), [])
                path = os.path.join(bdir, file)
                with open(path, "w", encoding="utf-8") as f:
                    f.write("".join(line + "\n" for line in lines))
                os.utime(path, ns=(_ns(self.sim.capture_ms),) * 2)

    # ---- JSON ----

    def _json_files(self) -> None:
        sim = self.sim
        brokers = {}
        for broker_id, broker in sorted(sim.fleet.brokers.items()):
            state = sim.broker_state(broker)
            since = broker.down_since_ms if state == "down" else broker.registered_ms
            brokers[str(broker_id)] = {
                "state": state,
                "since": iso_utc(since) if since else None,
                "host": broker.host,
                "rack": broker.rack,
                "kafka_version": "%d.%d" % broker.version,
                "voter": broker.is_voter,
                "broker_epoch": broker.epoch,
                "log_dirs": [{"name": d.name, "path": f"/var/lib/kafka/{d.name}",
                              "directory_id": kafka_uuid.to_string(d.directory_id) if d.directory_id else None,
                              "metadata_log_dir": d.holds_metadata_log} for d in broker.log_dirs],
            }
        capture = {
            "format": "kafka-recon-capture",
            "version": 1,
            "scenario": sim.scenario,
            "seed": sim.params.seed,
            "cluster_id": sim.cluster_id,
            "capture_time": iso_utc(sim.capture_ms),
            "mode": sim.mode,
            "metadata_log_captured": bool(sim.capture_metadata_log),
            "kafka_version": "%d.%d" % sim.version,
            "brokers": brokers,
            "controller": self._controller_info(),
            "config": {"file.delete.delay.ms": 60000, "metadata.max.retention.ms": 604800000,
                       "metadata.max.retention.bytes": RETENTION_BYTES,
                       "metadata.log.segment.ms": sim.metadata_segment_ms},
            "notes": " ".join(sim.notes),
            "generator": {"tool": "kafka-recon simulate", "brokers": len(sim.broker_ids),
                          "log_dirs": max(sim.dirs_per_broker.values()),
                          "partitions_per_broker": sim.replicas_per_broker,
                          "metadata_records": sim.params.metadata_records, "packed": sim.params.packed},
        }
        _dump_json(os.path.join(self.out, "capture.json"), capture, sim.capture_ms)
        expected = {"scenario": sim.scenario, "findings": [e.as_dict() for e in sim.expected],
                    "notes": " ".join(sim.notes), "partition_metadata_outcomes": sim.decode_outcomes}
        _dump_json(os.path.join(self.out, "expected_findings.json"), expected, sim.capture_ms)

    def _controller_info(self) -> dict:
        sim = self.sim
        info: dict = {}
        if sim.kraft is not None:
            info["kraft"] = {"voters": sim.voters, "leader": sim.log.leader_id, "epoch": sim.log.epoch,
                             "metadata_version": sim.kraft.image.metadata_version,
                             "log_end_offset": sim.log.next_offset,
                             "voters_captured": all(v in sim.fleet.brokers for v in sim.voters)}
        if sim.zk is not None:
            info["zk"] = {"controller_id": sim.zk.controller_id, "controller_epoch": sim.zk.epoch}
        return info


def _dump_json(path: str, doc: dict, mtime_ms: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=False)
        f.write("\n")
    os.utime(path, ns=(_ns(mtime_ms), _ns(mtime_ms)))
