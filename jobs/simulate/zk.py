"""ZooKeeper-mode cluster: the znode tree, the ZK controller's actions, and the log lines they leave.

Formats are those of the real captures in fixtures/kafka-zk-sample (Kafka 3.9, ZooKeeper 3.9.4):
- ``zk-znodes.jsonl``: one ``{"path", "data", "stat"}`` object per znode, sorted by path, ``json.dumps``
  default separators; stat keys czxid, mzxid, pzxid, ctime, mtime, version, cversion, aversion,
  ephemeralOwner, dataLength, numChildren.
- topic znode ``{"partitions":{..},"topic_id":..,"adding_replicas":{},"removing_replicas":{},"version":3}``
  (the key order seen in the real dump); partition state ``{"controller_epoch":..,"leader":..,"version":1,
  "leader_epoch":..,"isr":[..]}``; ``/latest_producer_id_block`` ``{"version":1,"broker":..,"block_start":"..",
  "block_end":".."}`` (strings), ZkData.scala.
- log lines ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)`` with the texts of KafkaController,
  TopicDeletionManager, ControllerChannelManager, ReplicaManager and LogManager (3.9 branch).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from udfs import kafka_uuid

from .clock import Clock, log4j_time
from .controller import PRODUCER_ID_BLOCK_SIZE, ProducerIdBlock
from .fleet import Broker, Fleet, default_bytes_per_day

KAFKA_LOG_ROOT = "/var/lib/kafka"


@dataclass
class Znode:
    data: Optional[str]
    czxid: int
    mzxid: int
    pzxid: int
    ctime: int
    mtime: int
    version: int = 0
    cversion: int = 0
    aversion: int = 0
    ephemeral_owner: int = 0
    children: int = 0


class ZkTree:
    """An in-memory ZooKeeper tree with the zxid/version bookkeeping ZooKeeper does."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.zxid = 0
        self.nodes: Dict[str, Znode] = {"/": Znode("", 0, 0, 0, 0, 0)}
        for path in ("/zookeeper", "/zookeeper/config", "/zookeeper/quota"):
            self.nodes[path] = Znode("", 0, 0, 0, 0, 0)
        self.nodes["/zookeeper"].children = 2
        self.nodes["/zookeeper"].cversion = -2
        self.nodes["/zookeeper/config"].aversion = -1
        self.nodes["/"].children = 1

    def _next(self) -> int:
        self.zxid += 1
        return self.zxid

    @staticmethod
    def parent(path: str) -> str:
        head = path.rsplit("/", 1)[0]
        return head or "/"

    def exists(self, path: str) -> bool:
        return path in self.nodes

    def create(self, path: str, data: Optional[str] = None, ephemeral_owner: int = 0, recursive: bool = True) -> None:
        if path in self.nodes:
            raise ValueError(f"NodeExists: {path}")
        parent = self.parent(path)
        if parent not in self.nodes:
            if not recursive:
                raise ValueError(f"NoNode: {parent}")
            self.create(parent, None)
        zxid, now = self._next(), self.clock.now
        self.nodes[path] = Znode(data, zxid, zxid, zxid, now, now, ephemeral_owner=ephemeral_owner)
        p = self.nodes[parent]
        p.cversion += 1
        p.pzxid = zxid
        p.children += 1

    def set(self, path: str, data: Optional[str]) -> int:
        node = self.nodes[path]
        node.data = data
        node.mzxid = self._next()
        node.mtime = self.clock.now
        node.version += 1
        return node.version

    def delete(self, path: str, recursive: bool = False) -> None:
        children = [p for p in self.nodes if p.startswith(path + "/")]
        if children and not recursive:
            raise ValueError(f"NotEmpty: {path}")
        for child in sorted(children, key=len, reverse=True):
            self._delete_one(child)
        self._delete_one(path)

    def _delete_one(self, path: str) -> None:
        del self.nodes[path]
        p = self.nodes[self.parent(path)]
        p.cversion += 1
        p.pzxid = self._next()
        p.children -= 1

    def dump_lines(self) -> List[str]:
        out = []
        for path in sorted(self.nodes):
            n = self.nodes[path]
            length = len(n.data.encode("utf-8")) if n.data else 0
            stat = {"czxid": n.czxid, "mzxid": n.mzxid, "pzxid": n.pzxid, "ctime": n.ctime, "mtime": n.mtime,
                    "version": n.version, "cversion": n.cversion, "aversion": n.aversion,
                    "ephemeralOwner": n.ephemeral_owner, "dataLength": length, "numChildren": n.children}
            out.append(json.dumps({"path": path, "data": n.data, "stat": stat}))
        return out


def _replica_map(assignment: Dict[int, List[int]]) -> str:
    return "{" + ",".join(f'"{p}":{json.dumps(r, separators=(",", ":"))}' for p, r in sorted(assignment.items())) + "}"


def topic_znode(assignment: Dict[int, List[int]], topic_id: Optional[bytes], old_format: bool = False,
                adding: Optional[Dict[int, List[int]]] = None, removing: Optional[Dict[int, List[int]]] = None) -> str:
    """TopicZNode.encode; ``old_format`` is what a pre-2.8 tool writes (v2, no topic_id); ``adding`` and
    ``removing`` are the partitions of a reassignment in progress (KIP-455, only non-empty ones)."""
    parts = _replica_map(assignment)
    add, rem = _replica_map(adding or {}), _replica_map(removing or {})
    if old_format or topic_id is None:
        return f'{{"version":2,"partitions":{parts},"adding_replicas":{add},"removing_replicas":{rem}}}'
    return (f'{{"partitions":{parts},"topic_id":"{kafka_uuid.to_string(topic_id)}","adding_replicas":{add},'
            f'"removing_replicas":{rem},"version":3}}')


def state_znode(controller_epoch: int, leader: int, leader_epoch: int, isr: Sequence[int]) -> str:
    return (f'{{"controller_epoch":{controller_epoch},"leader":{leader},"version":1,"leader_epoch":{leader_epoch},'
            f'"isr":{json.dumps(list(isr), separators=(",", ":"))}}}')


def scala_set(items: Sequence[str]) -> str:
    return ("Set(" if len(items) <= 4 else "HashSet(") + ", ".join(items) + ")"


@dataclass
class ZkPartition:
    replicas: List[int]
    leader: int
    leader_epoch: int = 0
    isr: List[int] = field(default_factory=list)


@dataclass
class ZkTopic:
    name: str
    topic_id: Optional[bytes]
    partitions: Dict[int, ZkPartition]
    created_ms: int
    deleted_on: set = field(default_factory=set)  # brokers that answered StopReplica(delete) for it
    adding: Dict[int, List[int]] = field(default_factory=dict)  # reassignment in progress (KIP-455)
    removing: Dict[int, List[int]] = field(default_factory=dict)


class ZkLogs:
    """Per-broker controller.log / server.log / state-change.log, in time order."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.files: Dict[Tuple[int, str], List[str]] = {}

    def line(self, broker: int, file: str, level: str, message: str, logger: str) -> None:
        self.clock.tick(1)  # log lines of one action are a millisecond or so apart
        self.files.setdefault((broker, file), []).append(
            f"[{log4j_time(self.clock.now)}] {level} {message} ({logger})")


class ZkController:
    """The ZooKeeper-mode controller (one of the brokers) and AdminZkClient, driving the fleet's disks."""

    def __init__(self, tree: ZkTree, logs: ZkLogs, fleet: Fleet, clock: Clock, rng, cluster_id: str,
                 controller_id: int):
        self.tree = tree
        self.logs = logs
        self.fleet = fleet
        self.clock = clock
        self.rng = rng
        self.cluster_id = cluster_id
        self.controller_id = controller_id
        self.epoch = 0
        self.topics: Dict[str, ZkTopic] = {}
        self.pending_deletes: Dict[str, int] = {}  # topic -> time the delete was requested
        self.blocks: List[ProducerIdBlock] = []
        self.correlation: Dict[int, int] = {}
        self.session = 72057857113915392
        self.deleted: Dict[str, Tuple[Optional[bytes], int]] = {}
        self.id_changes: List[Tuple[str, bytes, bytes, int]] = []  # name, old id, new id, time

    # ---- helpers ----

    def _tick(self, ms: int = 3) -> None:
        self.clock.tick(ms)

    def _ctl(self, level: str, message: str, logger: str = "kafka.controller.KafkaController") -> None:
        self.logs.line(self.controller_id, "controller.log", level, f"[Controller id={self.controller_id}] {message}",
                       logger)

    def _tdm(self, level: str, message: str) -> None:
        self.logs.line(self.controller_id, "controller.log", level,
                       f"[Topic Deletion Manager {self.controller_id}] {message}", "kafka.controller.TopicDeletionManager")

    def _sc(self, message: str) -> None:
        self.logs.line(self.controller_id, "state-change.log", "INFO",
                       f"[Controller id={self.controller_id} epoch={self.epoch}] {message}", "state.change.logger")

    def _broker_sc(self, broker: int, level: str, message: str) -> None:
        self.logs.line(broker, "state-change.log", level, f"[Broker id={broker}] {message}", "state.change.logger")

    def _server(self, broker: int, message: str, logger: str = "kafka.log.LogManager") -> None:
        self.logs.line(broker, "server.log", "INFO", message, logger)

    def _next_correlation(self, broker: int) -> int:
        self.correlation[broker] = self.correlation.get(broker, 0) + 1
        return self.correlation[broker]

    def live(self) -> List[int]:
        return sorted(b.broker_id for b in self.fleet.brokers.values() if b.running)

    @staticmethod
    def path_of(broker: Broker, log_dir_name: str, entry: str = "") -> str:
        base = f"{KAFKA_LOG_ROOT}/{log_dir_name}"
        return f"{base}/{entry}" if entry else base

    # ---- cluster start ----

    def start(self) -> None:
        for path in ("/consumers", "/brokers/ids", "/brokers/topics", "/brokers/seqid", "/config/changes",
                     "/admin/delete_topics", "/isr_change_notification", "/latest_producer_id_block",
                     "/log_dir_event_notification", "/config/topics", "/config/clients", "/config/users",
                     "/config/brokers", "/config/ips"):
            self.tree.create(path, None)
            self._tick(5)
        self.tree.create("/cluster/id", json.dumps({"version": "1", "id": self.cluster_id}, separators=(",", ":")))
        for broker in sorted(self.fleet.brokers):
            self.register_broker(broker)
        self.elect(self.controller_id)
        self.tree.create("/feature", '{"features":{},"version":2,"status":1}')

    def register_broker(self, broker_id: int) -> None:
        self._tick(40)
        b = self.fleet[broker_id]
        port = 9092
        data = (f'{{"features":{{}},"listener_security_protocol_map":{{"PLAINTEXT":"PLAINTEXT"}},'
                f'"endpoints":["PLAINTEXT://{b.host}:{port}"],"jmx_port":-1,"port":{port},"host":"{b.host}",'
                f'"version":5,"timestamp":"{self.clock.now}"}}')
        self.session += 2
        self.tree.create(f"/brokers/ids/{broker_id}", data, ephemeral_owner=self.session)

    def elect(self, controller_id: int) -> None:
        self._tick(20)
        self.controller_id = controller_id
        self.epoch += 1
        data = f'{{"version":2,"brokerid":{controller_id},"timestamp":"{self.clock.now}","kraftControllerEpoch":-1}}'
        if self.tree.exists("/controller"):
            self.tree.delete("/controller")
        self.tree.create("/controller", data, ephemeral_owner=self.session)
        if self.tree.exists("/controller_epoch"):
            zk_version = self.tree.set("/controller_epoch", str(self.epoch))
        else:
            self.tree.create("/controller_epoch", "0")
            zk_version = self.tree.set("/controller_epoch", str(self.epoch))
        self._ctl("INFO", f"{controller_id} successfully elected as the controller. Epoch incremented to {self.epoch} "
                          f"and epoch zk version is now {zk_version}")
        self._ctl("INFO", f"Currently active brokers in the cluster: {scala_set([str(b) for b in self.live()])}")

    # ---- topics ----

    def create_topic(self, name: str, assignment: List[List[int]], configs: Optional[Dict[str, str]] = None,
                     topic_id: Optional[bytes] = None, bytes_per_day: Optional[int] = None) -> ZkTopic:
        """AdminZkClient.createTopic, then the controller's TopicChange handling and LeaderAndIsr."""
        self._tick(30)
        tid = topic_id or kafka_uuid.random_uuid(self.rng)
        amap = {p: list(r) for p, r in enumerate(assignment)}
        conf = json.dumps({"version": 1, "config": dict(configs or {})}, separators=(",", ":"))
        props = "{" + ", ".join(f"{k}={v}" for k, v in (configs or {}).items()) + "}"
        initial = ", ".join(f"{p} -> ArrayBuffer({', '.join(map(str, r))})" for p, r in amap.items())
        self._server(self.controller_id, f"Creating topic {name} with configuration {props} and initial partition "
                                         f"assignment HashMap({initial})", "kafka.zk.AdminZkClient")
        self.tree.create(f"/config/topics/{name}", conf)
        self.tree.create(f"/brokers/topics/{name}", topic_znode(amap, tid))
        self._tick(20)
        topic = ZkTopic(name, tid, {}, self.clock.now)
        self.topics[name] = topic
        assigns = ", ".join(f"{name}-{p} -> ReplicaAssignment(replicas={','.join(map(str, r))}, addingReplicas=, "
                            f"removingReplicas=)" for p, r in amap.items())
        self._ctl("INFO", f"New topics: [Set({name})], deleted topics: [HashSet()], new partition replica assignment "
                          f"[Set(TopicIdReplicaAssignment({name},Some({kafka_uuid.to_string(tid)}),Map({assigns})))]")
        self._ctl("INFO", "New partition creation callback for " + ",".join(f"{name}-{p}" for p in amap))
        rate = bytes_per_day or default_bytes_per_day(self.rng)
        self._new_partitions(topic, amap, rate)
        return topic

    def _new_partitions(self, topic: ZkTopic, amap: Dict[int, List[int]], rate: int) -> None:
        name = topic.name
        live = set(self.live())
        for p, reps in amap.items():
            self._sc(f"Changed partition {name}-{p} state from NonExistentPartition to NewPartition with assigned "
                     f"replicas {','.join(map(str, reps))}")
        for p, reps in amap.items():
            isr = [r for r in reps if r in live] or list(reps[:1])
            leader = isr[0]
            topic.partitions[p] = ZkPartition(list(reps), leader, 0, isr)
            self.tree.create(f"/brokers/topics/{name}/partitions/{p}/state", state_znode(self.epoch, leader, 0, isr))
            states = ", ".join(f"BrokerState(brokerId={r}, brokerEpoch=-1)" for r in isr)
            self._sc(f"Changed partition {name}-{p} from NewPartition to OnlinePartition with state LeaderAndIsr("
                     f"leader={leader}, leaderEpoch=0, isrWithBrokerEpoch=List({states}), leaderRecoveryState=RECOVERED, "
                     f"partitionEpoch=0)")
        for broker in sorted({r for reps in amap.values() for r in reps} & live):
            leaders = sum(1 for p in amap if topic.partitions[p].leader == broker)
            follows = sum(1 for p, reps in amap.items() if broker in reps) - leaders
            self._sc(f"Sending LeaderAndIsr request to broker {broker} with {leaders} become-leader and {follows} "
                     f"become-follower partitions")
            self._leader_and_isr(broker, topic, [p for p, reps in amap.items() if broker in reps], rate)
        self._sc(f"Sending UpdateMetadata request to brokers {scala_set([str(b) for b in sorted(live)])} for "
                 f"{len(amap)} partitions")

    def _leader_and_isr(self, broker_id: int, topic: ZkTopic, partitions: List[int], rate: int) -> None:
        """The broker side of LeaderAndIsr: create logs, or refuse an inconsistent topic id (KIP-516)."""
        broker = self.fleet[broker_id]
        corr = self._next_correlation(broker_id)
        self._broker_sc(broker_id, "INFO", f"Handling LeaderAndIsr request correlationId {corr} from controller "
                                           f"{self.controller_id} for {len(partitions)} partitions")
        for p in partitions:
            found = broker.find(topic.name, p)
            if found:
                log_dir, replica = found[0]
                if replica.topic_id is not None and topic.topic_id is not None and replica.topic_id != topic.topic_id:
                    self._broker_sc(broker_id, "ERROR", f"Topic ID in memory: {kafka_uuid.to_string(replica.topic_id)}"
                                                        f" does not match the topic ID for partition {topic.name}-{p} "
                                                        f"received: {kafka_uuid.to_string(topic.topic_id)}.")
                continue
            log_dir, replica = self.fleet.create_replica(broker, topic.name, p, topic.topic_id, self.clock.now, rate)
            self._server(broker_id, f"Created log for partition {topic.name}-{p} in "
                                    f"{self.path_of(broker, log_dir.name, replica.name)} with properties {{}}")

    def start_reassignment(self, name: str, pid: int, target: List[int]) -> None:
        """KafkaController.onPartitionReassignment, first steps (KIP-455): the topic znode gets replicas = target +
        removing with adding_replicas/removing_replicas, and the adding brokers get LeaderAndIsr and start
        fetching. It completes only when the target replicas are all in the ISR (isReassignmentComplete); this
        model stops here, as a reassignment whose target never catches up does."""
        self._tick(30)
        topic = self.topics[name]
        part = topic.partitions[pid]
        current = list(part.replicas)
        adding = [b for b in target if b not in current]
        removing = [b for b in current if b not in target]
        part.replicas = list(target) + removing
        topic.adding[pid], topic.removing[pid] = adding, removing
        amap = {p: list(x.replicas) for p, x in topic.partitions.items()}
        self.tree.set(f"/brokers/topics/{name}", topic_znode(
            amap, topic.topic_id, adding={p: a for p, a in topic.adding.items() if a},
            removing={p: r for p, r in topic.removing.items() if r}))
        live = set(self.live())
        for broker in adding:
            if broker in live:
                self._leader_and_isr(broker, topic, [pid], default_bytes_per_day(self.rng))

    def delete_topic(self, name: str) -> bool:
        """/admin/delete_topics/<t>; the controller deletes now, or halts while a replica's broker is offline."""
        self._tick(30)
        self.tree.create(f"/admin/delete_topics/{name}", None)
        self.pending_deletes[name] = self.clock.now
        self._tick(5)
        self._ctl("DEBUG", f"Delete topics listener fired for topics {name} to be deleted")
        self._ctl("INFO", f"Starting topic deletion for topics {name}")
        return self._try_delete(name)

    def _try_delete(self, name: str) -> bool:
        topic = self.topics[name]
        live = set(self.live())
        self._tdm("INFO", f"Handling deletion for topics {name}")
        self._tdm("INFO", f"Deletion of topic {name} (re)started")
        dead = [(p, r) for p, part in sorted(topic.partitions.items()) for r in part.replicas if r not in live]
        if dead:
            text = ",".join(f"[Topic={name},Partition={p},Replica={r}]" for p, r in dead)
            self._tdm("DEBUG", f"Dead Replicas ({text}) found for topic {name}")
            self._tdm("INFO", f"Halted deletion of topics {name} due to offline replicas")
        for broker_id in sorted({r for part in topic.partitions.values() for r in part.replicas} & live):
            parts = [p for p, part in sorted(topic.partitions.items()) if broker_id in part.replicas]
            self._sc(f"Sending StopReplica request for {len(parts)} replicas to broker {broker_id}")
            self._stop_replicas(broker_id, topic, parts)
            errors = ", ".join(f"{name}-{p} -> NONE" for p in parts)
            self._ctl("DEBUG", f"Delete topic callback invoked on StopReplica response received from broker "
                               f"{broker_id}: request error = NONE, partition errors = Map({errors})")
            done = ",".join(f"[Topic={name},Partition={p},Replica={broker_id}]" for p in parts)
            self._tdm("DEBUG", f"Deletion successfully completed for replicas {done}")
            self._mark_deleted(topic, broker_id)
        if dead:
            text = ",".join(f"[Topic={name},Partition={p},Replica={r}]" for p, r in dead)
            self._tdm("INFO", f"Handling deletion for topics {name}")
            self._tdm("DEBUG", f"Retrying deletion of topics {name} since replicas {text} were not successfully deleted")
            return False
        self._complete_delete(name)
        return True

    @staticmethod
    def _mark_deleted(topic: ZkTopic, broker_id: int) -> None:
        topic.deleted_on.add(broker_id)

    def _stop_replicas(self, broker_id: int, topic: ZkTopic, partitions: List[int]) -> None:
        broker = self.fleet[broker_id]
        corr = self._next_correlation(broker_id)
        self._broker_sc(broker_id, "INFO", f"Handling StopReplica request correlationId {corr} from controller "
                                           f"{self.controller_id} for {len(partitions)} partitions")
        for p in partitions:
            for log_dir, replica in broker.find(topic.name, p):
                self.fleet.rename(log_dir, replica, "delete", self.clock.now)
                self._server(broker_id, f"Log for partition {topic.name}-{p} is renamed to "
                                        f"{self.path_of(broker, log_dir.name, replica.name)} and is scheduled for deletion")

    def _complete_delete(self, name: str) -> None:
        topic = self.topics.pop(name)
        self._tick(20)
        self.tree.delete(f"/brokers/topics/{name}", recursive=True)
        self.tree.delete(f"/config/topics/{name}")
        self.tree.delete(f"/admin/delete_topics/{name}")
        self.pending_deletes.pop(name, None)
        self.deleted[name] = (topic.topic_id, self.clock.now)
        self._tdm("INFO", f"Deletion of topic {name} successfully completed")
        self._ctl("INFO", f"New topics: [HashSet()], deleted topics: [HashSet({name})], new partition replica "
                          f"assignment [HashSet()]")

    def log_deleted_dirs(self, now_ms: int) -> None:
        """``Deleted log for partition ...`` lines for -delete dirs a running broker removes (after the delay)."""
        for broker in self.fleet.brokers.values():
            if not broker.running or broker.broker_id in self.fleet.broken_delete:
                continue
            for log_dir in broker.log_dirs:
                for entry in list(log_dir.entries.values()):
                    due = getattr(entry, "delete_due_ms", None)
                    if getattr(entry, "kind", None) == "delete" and due is not None and due <= now_ms:
                        self._server(broker.broker_id, f"Deleted log for partition {entry.topic}-{entry.partition} in "
                                                       f"{self.path_of(broker, log_dir.name, entry.name)}.")

    # ---- brokers ----

    def broker_down(self, broker_id: int) -> None:
        self._tick(10)
        self.tree.delete(f"/brokers/ids/{broker_id}")
        live = self.live()
        self._ctl("INFO", f"Newly added brokers: , deleted brokers: {broker_id}, bounced brokers: , all live brokers: "
                          f"{','.join(map(str, live))}")
        self._ctl("INFO", f"Broker failure callback for {broker_id}")
        for topic in self.topics.values():
            for p, part in sorted(topic.partitions.items()):
                if broker_id not in part.isr:
                    continue
                part.isr = [r for r in part.isr if r != broker_id] or part.isr
                if part.leader == broker_id:
                    alive = [r for r in part.isr if r in live]
                    part.leader = alive[0] if alive else -1
                part.leader_epoch += 1
                zk_version = self.tree.set(f"/brokers/topics/{topic.name}/partitions/{p}/state",
                                           state_znode(self.epoch, part.leader, part.leader_epoch, part.isr))
                self._sc(f"Partition {topic.name}-{p} state changed to (Leader:{part.leader},ISR:"
                         f"{','.join(map(str, part.isr))},LeaderRecoveryState:RECOVERED,LeaderEpoch:"
                         f"{part.leader_epoch},ZkVersion:{zk_version},ControllerEpoch:{self.epoch}) after removing "
                         f"replica {broker_id} from the ISR as part of transition to OfflineReplica")

    def broker_up(self, broker_id: int) -> None:
        self.register_broker(broker_id)
        live = self.live()
        self._ctl("INFO", f"Newly added brokers: {broker_id}, deleted brokers: , bounced brokers: , all live brokers: "
                          f"{','.join(map(str, live))}")
        self._ctl("INFO", f"New broker startup callback for {broker_id}")
        for topic in list(self.topics.values()):
            parts = [p for p, part in sorted(topic.partitions.items()) if broker_id in part.replicas]
            if parts and topic.name not in self.pending_deletes:
                self._sc(f"Sending LeaderAndIsr request to broker {broker_id} with 0 become-leader and {len(parts)} "
                         f"become-follower partitions")
                self._leader_and_isr(broker_id, topic, parts, default_bytes_per_day(self.rng))
        for name in list(self.pending_deletes):
            self._tdm("INFO", f"Handling deletion for topics {name}")
            self._try_delete_resume(name, broker_id)

    def _try_delete_resume(self, name: str, broker_id: int) -> None:
        topic = self.topics[name]
        parts = [p for p, part in sorted(topic.partitions.items()) if broker_id in part.replicas]
        if parts:
            self._sc(f"Sending StopReplica request for {len(parts)} replicas to broker {broker_id}")
            self._stop_replicas(broker_id, topic, parts)
            self._mark_deleted(topic, broker_id)
        live = set(self.live())
        if all(r in live for part in topic.partitions.values() for r in part.replicas):
            self._complete_delete(name)

    # ---- topic ids (KAFKA-12835 / KAFKA-14190) ----

    def rewrite_without_topic_id(self, name: str) -> None:
        """A pre-2.8 tool rewrites /brokers/topics/<t> in the v2 format: the topic id is gone from ZooKeeper."""
        self._tick(50)
        topic = self.topics[name]
        amap = {p: part.replicas for p, part in topic.partitions.items()}
        self.tree.set(f"/brokers/topics/{name}", topic_znode(amap, None, old_format=True))

    def failover(self, new_controller: int) -> None:
        """Controller moves; initializeControllerContext gives topics without an id a new one (setTopicIds)."""
        self._tick(500)
        self.elect(new_controller)
        for topic in self.topics.values():
            node = self.tree.nodes[f"/brokers/topics/{topic.name}"]
            if '"topic_id"' not in (node.data or ""):
                old = topic.topic_id
                topic.topic_id = kafka_uuid.random_uuid(self.rng)
                amap = {p: part.replicas for p, part in topic.partitions.items()}
                self.tree.set(f"/brokers/topics/{topic.name}", topic_znode(amap, topic.topic_id))
                self.id_changes.append((topic.name, old, topic.topic_id, self.clock.now))
        for broker_id in self.live():
            for topic in self.topics.values():
                parts = [p for p, part in sorted(topic.partitions.items()) if broker_id in part.replicas]
                if parts:
                    self._sc(f"Sending LeaderAndIsr request to broker {broker_id} with "
                             f"{sum(topic.partitions[p].leader == broker_id for p in parts)} become-leader and "
                             f"{sum(topic.partitions[p].leader != broker_id for p in parts)} become-follower partitions")
                    self._leader_and_isr(broker_id, topic, parts, default_bytes_per_day(self.rng))

    # ---- producer ids ----

    def allocate_producer_ids(self, broker_id: int) -> ProducerIdBlock:
        """KafkaController.processAllocateProducerIds: read /latest_producer_id_block, write the next block."""
        self._tick(30)
        node = self.tree.nodes["/latest_producer_id_block"]
        if node.data is None:
            self._ctl("DEBUG", f"There is no producerId block yet (Zk path version {node.version}), creating the "
                               f"first block")
            first = 0
        else:
            current = json.loads(node.data)
            cur_first = int(current["block_start"])
            cur_size = int(current["block_end"]) - cur_first + 1
            self._ctl("DEBUG", f"Read current producerId block ProducerIdsBlock(assignedBrokerId={current['broker']}, "
                               f"firstProducerId={cur_first}, size={cur_size}), Zk path version {node.version}")
            first = int(current["block_end"]) + 1
        data = (f'{{"version":1,"broker":{broker_id},"block_start":"{first}",'
                f'"block_end":"{first + PRODUCER_ID_BLOCK_SIZE - 1}"}}')
        version = self.tree.set("/latest_producer_id_block", data)
        self._ctl("INFO", f"Acquired new producerId block ProducerIdsBlock(assignedBrokerId={broker_id}, "
                          f"firstProducerId={first}, size={PRODUCER_ID_BLOCK_SIZE}) by writing to Zk with path "
                          f"version {version}")
        block = ProducerIdBlock(broker_id, first, PRODUCER_ID_BLOCK_SIZE, "zk", self.clock.now)
        self.blocks.append(block)
        return block

    def dual_write_producer_ids(self, next_producer_id: int) -> None:
        """KRaftMigrationZkWriter: ``ProducerIdsBlock(-1, nextProducerId, 1000)`` written unconditionally."""
        data = (f'{{"version":1,"broker":-1,"block_start":"{next_producer_id}",'
                f'"block_end":"{next_producer_id + PRODUCER_ID_BLOCK_SIZE - 1}"}}')
        self.tree.set("/latest_producer_id_block", data)

    def start_migration(self, kraft_controller_id: int, kraft_epoch: int) -> None:
        """The KRaft controller claims /controller (kraftControllerEpoch) and writes /migration."""
        self._tick(100)
        self.epoch += 1
        self.tree.delete("/controller")
        self.tree.create("/controller", f'{{"version":2,"brokerid":{kraft_controller_id},"timestamp":"{self.clock.now}",'
                                        f'"kraftControllerEpoch":{kraft_epoch}}}', ephemeral_owner=self.session + 99)
        self.tree.set("/controller_epoch", str(self.epoch))
        self.controller_id = -1
