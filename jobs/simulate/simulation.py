"""One simulated cluster's life: brokers, a controller (KRaft or ZooKeeper), time, and the ground truth.

Scenarios (:mod:`jobs.simulate.scenarios`) script a story with the methods here (create/delete topics,
stop/start brokers, reassign, allocate producer ids, tamper with a disk) and declare the findings they expect;
:mod:`jobs.simulate.writer` then lays the result out as a capture.
"""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from udfs import kafka_uuid

from .background import Background
from .clock import DAY, DEFAULT_CAPTURE_MS, HOUR, MINUTE, Clock
from .controller import Delta, KraftController, ProducerIdBlock
from .fleet import Broker, Fleet, LogDir, ProducerBatch, Replica, default_bytes_per_day
from .image import MIGRATING_DIR, UNASSIGNED_DIR, TopicState
from .metalog import SEGMENT_MS, MetadataLog
from .zk import ZkController, ZkLogs, ZkTree

SNAPSHOT_INTERVAL_MS = DAY  # coarser than Kafka's hourly metadata.log.max.snapshot.interval.ms, same rules


@dataclass
class SimParams:
    """CLI knobs. ``None`` means "the scenario's default"."""

    seed: int = 42
    brokers: Optional[int] = None
    log_dirs: Optional[int] = None
    partitions_per_broker: Optional[int] = None  # background replicas per broker (scale)
    metadata_records: Optional[int] = None  # pad the metadata log to about this many records
    packed: bool = False
    metadata_log_copies: Optional[int] = None  # packs embedding the metadata log (None: every KRaft broker's)
    kafka_version: Optional[Tuple[int, int]] = None  # the Kafka release whose records the brokers write


@dataclass
class Expected:
    check_id: str
    keys: Dict[str, object]

    def as_dict(self) -> dict:
        out: Dict[str, object] = {"check_id": self.check_id}
        out.update(self.keys)
        return out


@dataclass
class Layout:
    """Fleet shape a scenario asks for (CLI flags may enlarge it)."""

    brokers: int = 4
    log_dirs: int = 1
    partitions_per_broker: int = 6
    min_brokers: int = 3
    min_log_dirs: int = 1
    jbod_brokers: Optional[Sequence[int]] = None  # only these brokers get ``log_dirs`` dirs (others 1)


class Simulation:
    def __init__(self, scenario: str, params: SimParams, layout: Layout, work_dir: str, mode: str = "kraft",
                 version: Tuple[int, int] = (3, 9), age_days: int = 30, capture_ms: int = DEFAULT_CAPTURE_MS):
        self.scenario = scenario
        self.params = params
        self.mode = mode
        self.version = version
        self.rng = random.Random(f"{params.seed}:{scenario}")
        self.capture_ms = capture_ms
        self.clock = Clock(capture_ms - age_days * DAY)
        self.cluster_id = kafka_uuid.to_string(kafka_uuid.random_uuid(self.rng))
        self.fleet = Fleet(self.rng)
        self.expected: List[Expected] = []
        self.notes: List[str] = []
        self.decode_outcomes: List[dict] = []
        self.topic_rates: Dict[str, int] = {}
        self.sequences: Dict[Tuple[int, str, int], int] = {}
        self.work_dir = work_dir
        self.log: Optional[MetadataLog] = None
        self.kraft: Optional[KraftController] = None
        self.zk: Optional[ZkController] = None
        self.zk_tree: Optional[ZkTree] = None
        self.zk_logs: Optional[ZkLogs] = None
        self.background: Optional[Background] = None
        self.next_snapshot_ms = self.clock.now + SNAPSHOT_INTERVAL_MS
        self.diverged: Dict[int, List[Tuple[int, list]]] = {}  # broker -> [(offset, records)] appended after its cut
        self.gap_segments: Dict[int, str] = {}  # broker -> "middle": a middle segment is missing from its copy
        self.metadata_segment_ms = SEGMENT_MS
        self.voters: List[int] = []
        self.background_created_ms = self.clock.now
        self.dump_controller_log: Optional[int] = None  # node id: write kafka-dump-log text of its metadata log
        self.capture_metadata_log = True  # False: the capture leaves out every __cluster_metadata-0 (disks only)
        n = max(layout.min_brokers, params.brokers or layout.brokers)
        m = max(layout.min_log_dirs, params.log_dirs or layout.log_dirs)
        self.layout = layout
        self.broker_ids = list(range(1, n + 1))
        self.dirs_per_broker = {b: (m if layout.jbod_brokers is None or b in layout.jbod_brokers else 1)
                                for b in self.broker_ids}
        self.replicas_per_broker = (params.partitions_per_broker if params.partitions_per_broker is not None
                                    else layout.partitions_per_broker)

    # ------------------------------------------------------------------ time

    @property
    def now(self) -> int:
        return self.clock.now

    def advance(self, ms: int) -> None:
        """Move time forward; snapshots, NoOps and brokers' delete tasks happen on the way."""
        target = self.clock.now + ms
        while True:
            due = self.fleet.next_delete_due()
            snapshot = self.next_snapshot_ms if self.kraft is not None else None
            step = min(t for t in (due, snapshot, target + 1) if t is not None)
            if step > target:
                break
            self.clock.now = max(self.clock.now, step)
            self._housekeeping()
            if step == snapshot:
                self.kraft.noops(1)
                self.log.take_snapshot(self.clock.now, self.kraft.snapshot_source())
                self.next_snapshot_ms += SNAPSHOT_INTERVAL_MS
        self.clock.now = max(self.clock.now, target)
        self._housekeeping()

    def advance_to_before_capture(self, ms_before: int) -> None:
        """Jump to ``ms_before`` before the capture (incidents go there, inside the retained metadata log)."""
        target = self.capture_ms - ms_before
        if target < self.now:
            raise ValueError(f"the story is already past capture - {ms_before} ms")
        self.advance(target - self.now)

    def _housekeeping(self) -> None:
        now = self.clock.now
        if self.zk is not None:
            self.zk.log_deleted_dirs(now)
        self.fleet.run_delete_tasks(now)

    # ------------------------------------------------------------------ fleet set-up

    def _log_dir_names(self, count: int) -> List[str]:
        if count == 1:
            return ["kafka-logs"]
        if count <= 26:
            return [f"kafka-logs-{chr(ord('a') + i)}" for i in range(count)]
        return [f"kafka-logs-{i}" for i in range(count)]

    def _make_brokers(self, meta_version: int, with_directory_ids: bool) -> None:
        racks = ("az-a", "az-b", "az-c")
        for b in self.broker_ids:
            dirs = []
            for name in self._log_dir_names(self.dirs_per_broker[b]):
                dir_id = kafka_uuid.random_uuid(self.rng) if with_directory_ids else None
                dirs.append(LogDir(name, dir_id, self.cluster_id, b, meta_version, self.clock.now,
                                   meta_written_ms=self.clock.now))
            broker = Broker(b, f"kafka-{b}.sim.example", racks[(b - 1) % 3], self.version, self.mode, dirs)
            self.fleet.add(broker)

    def start_kraft_cluster(self, voters: int = 3, dedicated_controllers: Sequence[int] = ()) -> None:
        """Format, start, register and unfence every broker; the first ``voters`` are combined controllers,
        or, with ``dedicated_controllers``, those node ids are the quorum (``process.roles=controller``): each
        one metadata dir holding only ``__cluster_metadata-0``, a RegisterControllerRecord, no broker record."""
        self.log = MetadataLog(os.path.join(self.work_dir, "metadata-master"), self.metadata_segment_ms)
        self._make_brokers(1, True)
        for b in self.broker_ids:
            self.fleet[b].log_dirs[0].holds_metadata_log = True
        for c in dedicated_controllers:
            meta = LogDir("meta", kafka_uuid.random_uuid(self.rng), self.cluster_id, c, 1, self.clock.now,
                          registered=False, holds_background=False, holds_metadata_log=True,
                          meta_written_ms=self.clock.now)
            self.fleet.add(Broker(c, f"controller-{c}.sim.example", None, self.version, "kraft", [meta],
                                  role="controller"))
        self.voters = list(dedicated_controllers) or self.broker_ids[:voters]
        for b in self.voters:
            self.fleet[b].is_voter = True
        self.background = Background(self.params.seed, self.broker_ids,
                                     {b: [d.directory_id for d in self.fleet[b].log_dirs] for b in self.broker_ids},
                                     self.replicas_per_broker, rf=3)
        self.kraft = KraftController(self.log, self.clock, self.rng, self.version, self.voters, self.background)
        self.advance(2 * MINUTE)
        self.kraft.elect_leader(self.voters[0])
        self.kraft.bootstrap()
        for c in dedicated_controllers:
            self.kraft.register_controller(c, self.fleet[c].host)
        for b in self.broker_ids:
            broker = self.fleet[b]
            broker.epoch = self.kraft.register(b, [d.directory_id for d in broker.registered_dirs()], broker.rack,
                                               broker.host)
            broker.registered_ms = self.now
        for b in self.broker_ids:
            self.kraft.unfence(b)
        self.kraft.set_broker_config("", "log.retention.ms", "604800000")
        self.advance(10 * MINUTE)
        self.background_created_ms = self.now
        for _ in self.kraft.background_creation():
            self.clock.tick(20)

    def start_zk_cluster(self, controller_id: int = 1) -> None:
        self.zk_tree = ZkTree(self.clock)
        self.zk_logs = ZkLogs(self.clock)
        self._make_brokers(0, False)
        self.zk = ZkController(self.zk_tree, self.zk_logs, self.fleet, self.clock, self.rng, self.cluster_id,
                               controller_id)
        self.advance(MINUTE)
        self.zk.start()
        for b in self.broker_ids:
            self.fleet[b].registered_ms = self.now

    # ------------------------------------------------------------------ operations (KRaft and ZooKeeper)

    def rate(self, topic: str) -> int:
        if topic not in self.topic_rates:
            self.topic_rates[topic] = default_bytes_per_day(self.rng)
        return self.topic_rates[topic]

    def create_topic(self, name: str, partitions: int = 3, rf: int = 3, replicas: Optional[List[List[int]]] = None,
                     configs: Optional[Dict[str, str]] = None, bytes_per_day: Optional[int] = None):
        if bytes_per_day is not None:
            self.topic_rates[name] = bytes_per_day
        self.clock.tick(1000)
        if self.kraft is None:
            if replicas is None:
                live = self.zk.live()
                start = self.rng.randrange(len(live))
                replicas = [[live[(start + p + j) % len(live)] for j in range(rf)] for p in range(partitions)]
            return self.zk.create_topic(name, replicas, configs, bytes_per_day=self.rate(name))
        topic, deltas = self.kraft.create_topic(name, partitions, rf, replicas, configs)
        self._apply(deltas)
        return topic

    def delete_topic(self, name: str) -> bytes:
        self.clock.tick(1000)
        if self.kraft is None:
            topic_id = self.zk.topics[name].topic_id
            self.zk.delete_topic(name)
            return topic_id
        topic_id = self.kraft.image.ids_by_name[name]
        self._apply(self.kraft.delete_topic(name))
        return topic_id

    def reassign(self, name: str, partition: int, target: List[int]) -> None:
        self.clock.tick(1000)
        current = list(self.kraft.image.topic(name).partitions[partition].replicas)
        removing = [b for b in current if b not in target]
        self._apply(self.kraft.reassign(name, partition, target))
        self.advance(3 * MINUTE)
        self._apply(self.kraft.complete_reassignment(name, partition, target, removing))

    def start_reassignment(self, name: str, partition: int, target: List[int]) -> None:
        """Begin a reassignment (KIP-455) and leave it open: adding replicas are created on running brokers and
        copy the partition; it completes only when they join the ISR (never, if their broker goes down)."""
        self.clock.tick(1000)
        if self.kraft is None:
            self.zk.start_reassignment(name, partition, target)
            return
        self._apply(self.kraft.reassign(name, partition, target))

    def add_partitions(self, name: str, count: int) -> None:
        self.clock.tick(1000)
        self._apply(self.kraft.add_partitions(name, count))

    def allocate_producer_ids(self, broker: int) -> ProducerIdBlock:
        self.clock.tick(500)
        if self.kraft is None:
            return self.zk.allocate_producer_ids(broker)
        block = self.kraft.allocate_producer_ids(broker)
        if self.zk is not None:  # migration: dual-write to ZooKeeper
            self.zk.dual_write_producer_ids(self.kraft.image.next_producer_id)
        return block

    def stop_broker(self, broker_id: int, clean: bool = True) -> None:
        self.clock.tick(1000)
        broker = self.fleet[broker_id]
        if self.kraft is None:
            self.fleet.stop(broker, self.now, clean)
            self.zk.broker_down(broker_id)
            return
        broker.metadata_cut = self.log.next_offset
        self.fleet.stop(broker, self.now, clean)
        if broker_id == self.log.leader_id:
            others = [v for v in self.voters if v != broker_id and self.fleet[v].running]
            self.clock.tick(2000)
            self.kraft.elect_leader(others[0])
        self.clock.tick(9000)  # broker.session.timeout.ms
        self.kraft.broker_lost(broker_id)

    def fail_log_dir(self, broker_id: int, name: str) -> None:
        """A running broker's disk dies: Kafka marks the dir offline, the controller narrows the broker's
        LogDirs (BrokerRegistrationChangeRecord v2) and moves leadership and ISR off its partitions, whose
        Directories still name the dead dir."""
        self.clock.tick(1000)
        broker = self.fleet[broker_id]
        log_dir = next(d for d in broker.log_dirs if d.name == name)
        for entry in log_dir.entries.values():
            if isinstance(entry, Replica) and entry.stopped_ms is None:
                entry.stopped_ms = self.now
        log_dir.dead, log_dir.registered, log_dir.holds_background = True, False, False
        self.kraft.log_dir_offline(broker_id, log_dir.directory_id,
                                   [d.directory_id for d in broker.registered_dirs()])

    def cordon_log_dirs(self, broker_id: int, names: List[str]) -> None:
        """The operator cordons dirs of a running broker (``kafka-configs --alter --add-config
        cordoned.log.dirs=...``, KIP-1066): no new replica is placed there, the ones inside stay."""
        self.clock.tick(1000)
        broker = self.fleet[broker_id]
        dirs = [d for d in broker.log_dirs if d.name in names]
        self.kraft.cordon(broker_id, [d.directory_id for d in dirs], ",".join(d.name for d in dirs))

    def restore_log_dir(self, broker_id: int, name: str) -> None:
        """The disk comes back (with the contents it had when it died); the broker registers it at its next
        start."""
        log_dir = next(d for d in self.fleet[broker_id].log_dirs if d.name == name)
        log_dir.dead, log_dir.holds_background = False, True  # its background replicas are back too

    def unregister_broker(self, broker_id: int) -> None:
        """``kafka-cluster remove`` / UnregisterBrokerRecord: the broker is decommissioned (its disks stay)."""
        self.clock.tick(1000)
        self.kraft.unregister(broker_id)
        self.fleet[broker_id].unregistered = True

    def start_broker(self, broker_id: int) -> None:
        """Restart: load logs (stray handling per version), register, catch up, create missing replicas."""
        self.clock.tick(1000)
        broker = self.fleet[broker_id]
        self.fleet.broken_delete.discard(broker_id)  # whatever broke the delete task is fixed by the restart
        if self.kraft is None:
            broker.running = True
            broker.down_since_ms = None
            self.fleet.resume_data(broker, self.now)
            self.fleet.restart_delete_timers(broker, self.now)
            broker.registered_ms = self.now
            self.zk.broker_up(broker_id)
            return
        image = self.kraft.image
        for log_dir, replica in broker.replicas():
            if self._is_stray(broker_id, replica):
                kind = "stray" if self.version >= (3, 7) else "delete"
                self.fleet.rename(log_dir, replica, kind, self.now)
                broker.notes.append(f"{replica.name} renamed at restart ({kind})")
        self.fleet.restart_delete_timers(broker, self.now)
        broker.running = True
        broker.down_since_ms = None
        broker.metadata_cut = None
        self.fleet.resume_data(broker, self.now)
        broker.epoch = self.kraft.broker_back(broker_id, [d.directory_id for d in broker.registered_dirs()],
                                              broker.rack, broker.host)
        broker.registered_ms = self.now
        deltas = []
        for topic in image.topics.values():
            for pid, part in topic.partitions.items():
                if broker_id in part.replicas:
                    deltas.append(Delta("assign", topic.name, topic.topic_id, pid, broker_id,
                                        part.directory_of(broker_id)))
        self._apply(deltas)

    def _is_stray(self, broker_id: int, replica: Replica) -> bool:
        """LogManager.isStrayKraftReplica (3.7.1+: a log without topic id is stray too)."""
        if replica.topic_id is None or replica.pm_missing:
            return True
        topic = self.kraft.image.topics.get(replica.topic_id)
        if topic is None or replica.partition not in topic.partitions:
            return True
        return broker_id not in topic.partitions[replica.partition].replicas

    def _apply(self, deltas: List[Delta]) -> None:
        """Running brokers react to a metadata change at once; down brokers miss it."""
        assignments = []
        for d in deltas:
            broker = self.fleet[d.broker]
            if not broker.running:
                continue
            if d.kind == "assign":
                wanted = d.directory if d.directory not in (None, UNASSIGNED_DIR, MIGRATING_DIR) else None
                created = self.fleet.create_replica(broker, d.topic, d.partition, d.topic_id, self.now,
                                                    self.rate(d.topic), wanted)
                if created is None:  # assigned to an offline dir: Kafka skips creating it
                    continue
                log_dir, replica = created
                if self.kraft.image.uses_directories and d.directory != log_dir.directory_id:
                    assignments.append((d.topic_id, d.partition, d.broker, log_dir.directory_id))
            else:
                self.fleet.delete_replica(broker, d.topic, d.partition, d.topic_id, self.now)
        if assignments:
            self.clock.tick(300)
            self.kraft.assign_directories(assignments)

    # ------------------------------------------------------------------ data with producer ids

    def produce(self, topic: str, partition: int, producer_id: int, count: int = 5, epoch: int = 0,
                transactional: bool = False, committed: Optional[bool] = True, brokers: Optional[List[int]] = None
                ) -> None:
        """An idempotent/transactional producer appends a batch; every running replica gets it."""
        self.clock.tick(200)
        key = (producer_id, topic, partition)
        base_seq = self.sequences.get(key, 0)
        self.sequences[key] = base_seq + count
        batch = ProducerBatch(producer_id, epoch, base_seq, count, self.now, transactional,
                              committed if transactional else None)
        targets = brokers if brokers is not None else [b.broker_id for b in self.fleet.brokers.values() if b.running]
        for b in targets:
            for _, replica in self.fleet[b].find(topic, partition):
                replica.producer_batches.append(batch)

    # ------------------------------------------------------------------ ground truth

    def expect(self, check_id: str, **keys) -> None:
        self.expected.append(Expected(check_id, {k: v for k, v in keys.items() if v is not None}))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def topic_id(self, name: str) -> bytes:
        if self.kraft is None:
            return self.zk.topics[name].topic_id
        return self.kraft.image.ids_by_name[name]

    def live_topic(self, name: str) -> TopicState:
        return self.kraft.image.topic(name)

    def replica_on(self, broker_id: int, topic: str, partition: int, kinds=("partition",)) -> Tuple[LogDir, Replica]:
        found = self.fleet[broker_id].find(topic, partition, kinds)
        if not found:
            raise KeyError(f"broker {broker_id} has no {kinds} replica of {topic}-{partition}")
        return found[0]

    # ------------------------------------------------------------------ metadata padding and the end

    def pad_metadata(self, until_ms: int) -> None:
        """Spread ISR flaps and NoOps until ``until_ms`` so the log holds about ``--metadata-records`` records."""
        target = self.params.metadata_records
        if not target or self.kraft is None:
            return
        steps = 6
        span = max(0, until_ms - self.now)
        for i in range(steps):
            deficit = target - self.log.record_count
            if deficit <= 0:
                break
            share = deficit // (steps - i)
            if self.background is not None and self.background.total_partitions:
                self.kraft.isr_flaps(max(1, share * 9 // 20))  # two records per flap: ~90% flaps, like real logs
            rest = target - self.log.record_count
            self.kraft.noops(max(0, min(rest, share // 10 + 1)))
            self.advance(span // (steps + 1))

    def finish(self) -> None:
        """Advance to capture time (padding on the way) and close the metadata log."""
        if self.now > self.capture_ms:
            raise ValueError(f"scenario {self.scenario!r} ran {self.now - self.capture_ms} ms past the capture time")
        self.pad_metadata(self.capture_ms - 10 * MINUTE)
        if self.now < self.capture_ms:
            self.advance(self.capture_ms - self.now)
        if self.log is not None:
            self.log.close()

    def broker_state(self, broker: Broker) -> str:
        if not broker.captured:
            return "absent"
        if broker.role == "controller":
            return "controller"
        if broker.unregistered:
            return "unregistered"
        if not broker.running:
            return "down"
        if self.kraft is not None:
            reg = self.kraft.image.brokers.get(broker.broker_id)
            if reg is not None and reg.fenced:
                return "fenced"
        return "active"


def hours(n: float) -> int:
    return int(n * HOUR)


def days(n: float) -> int:
    return int(n * DAY)


# ---------------------------------------------------------------------- disk tampering (what operators and bugs do)

def add_entry(sim: Simulation, broker_id: int, name: str, is_dir: bool, content: bytes = b"",
              children: Optional[Dict[str, bytes]] = None, log_dir_index: int = 0) -> LogDir:
    """Put something Kafka did not write into a log dir (lost+found, a backup folder, a note...)."""
    from .fleet import OtherEntry

    log_dir = sim.fleet[broker_id].log_dirs[log_dir_index]
    log_dir.entries[name] = OtherEntry(name, is_dir, content, sim.now, dict(children or {}))
    return log_dir
