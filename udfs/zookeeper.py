"""ZooKeeper-mode facts: a znode dump and the controller / state-change / server logs, as ``bronze_zk_events`` rows.

**Znode dump format** (what our collector writes, and what the real captures in
tests/fixtures/kafka-zk-sample/Z1.tar.gz, Z2.tar.gz hold as ``zk-znodes.jsonl``): UTF-8 JSON lines, one per
znode, parents before children::

    {"path": "/brokers/topics/orders", "data": "<znode bytes as UTF-8 text>" | null,
     "stat": {"czxid": 78, "mzxid": 78, "pzxid": 79, "ctime": 1795338195539, "mtime": 1795338195539,
              "version": 0, "cversion": 1, "aversion": 0, "ephemeralOwner": 0, "dataLength": 144,
              "numChildren": 1}}

``data`` is null for znodes created without data (``/admin/delete_topics/<t>``, ``.../partitions/<p>``) and
``""`` for empty data; ``ctime``/``mtime`` are epoch milliseconds (ZooKeeper ``Stat``); ``version`` is the
data version (for a partition ``state`` znode: the partition epoch, Kafka's ``zkVersion``).

Znodes turned into rows (core/src/main/scala/kafka/zk/ZkData.scala, apache/kafka@1eb7644 / 3.9):
``/brokers/topics/<t>`` (v1-v3, ``topic_id`` since 2.8) -> ``topic_znode``;
``.../partitions/<p>/state`` -> ``partition_state``; ``/admin/delete_topics/<t>`` -> ``delete_marker``;
``/latest_producer_id_block`` (``block_start``/``block_end`` are JSON *strings*) -> ``producer_id_block``;
``/migration`` -> ``migration``; ``/controller`` -> ``controller``; ``/controller_epoch`` ->
``controller_epoch``; ``/brokers/ids/<id>`` -> ``broker_registration``; ``/cluster/id`` -> ``cluster_id``;
``/config/topics/<t>`` -> ``topic_config``. Other znodes give no row.

**Log lines** (log4j pattern ``[%d] %p %m (%c)%n``; continuation lines such as stack traces are skipped):
``Creating topic ...`` (AdminZkClient, server.log) -> ``topic_create_requested``; ``New topics: [...], deleted
topics: [...], new partition replica assignment [...]`` -> ``topic_created`` (one row per topic, with its id)
and ``topic_removed``; ``Starting topic deletion for topics a,b`` -> ``topic_deletion_requested``;
``Ignoring request to delete non-existing topics`` -> ``topic_deletion_ignored``; ``Deletion of topic <t>
(re)started`` -> ``topic_deletion_started``; ``Halted deletion of topics <..> due to <reason>`` ->
``topic_deletion_halted``; ``Deletion of topic <t> successfully completed`` -> ``topic_deletion_completed``;
``Log for partition <tp> is renamed to <dir> and is scheduled for deletion`` -> ``log_renamed_for_delete``;
``... is marked as stray and renamed to <dir>`` / ``Log in <dir> marked stray and renamed to <dir>`` ->
``log_renamed_for_stray``; ``Deleted log for partition <tp> in <dir>.`` -> ``log_deleted``;
``Acquired new producerId block ProducerIdsBlock(assignedBrokerId=B, firstProducerId=F, size=S) by writing
to Zk with path version V`` -> ``producer_id_block_acquired``; ``Topic ID in memory: X does not match the
topic ID for partition <tp> received: Y.`` -> ``topic_id_mismatch``.

Rows are dicts with exactly :data:`ROW_COLUMNS` (the non-run columns of ``bronze_zk_events``).
``event_time`` is a timezone-aware UTC ``datetime`` (log times are read in the ``tz`` given, default UTC).
``seq`` is the 1-based line number; a log line naming several topics gives one row per topic with the same
``seq`` (so the table key needs ``topic_name`` too).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from typing import Any, Dict, Iterable, List, Optional, Tuple

from . import kafka_uuid
from .errors import DecodeError
from .java_text import parse_int, parse_long

ROW_COLUMNS = ("source_file", "source_kind", "seq", "event_time", "event_type", "zk_path", "topic_name", "topic_id",
               "partition", "broker_id", "replicas", "block_start", "block_end", "zk_version", "payload_json",
               "message")
SOURCE_KINDS = ("znode_dump", "controller_log", "server_log", "state_change_log")


@dataclass
class ZkParse:
    """Rows plus the problems met (bad lines, znodes whose data Kafka could not decode)."""

    rows: List[Dict[str, Any]] = field(default_factory=list)
    errors: List[DecodeError] = field(default_factory=list)


def _row(source_file: Optional[str], source_kind: str, seq: int, event_time: Optional[datetime], event_type: str,
         **values: Any) -> Dict[str, Any]:
    row = dict.fromkeys(ROW_COLUMNS)
    row.update(source_file=source_file, source_kind=source_kind, seq=seq, event_time=event_time,
               event_type=event_type)
    row.update(values)
    return row


def _ms_to_utc(ms: Any) -> Optional[datetime]:
    if not isinstance(ms, int) or isinstance(ms, bool):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


# ------------------------------------------------------------------------------------------ znode decoders


@dataclass(frozen=True)
class TopicZnode:
    """``TopicZNode.decode``: partition -> replicas, plus adding/removing replicas and the topic id."""

    version: Optional[int]
    topic_id: Optional[str]
    partitions: Dict[int, List[int]]
    adding_replicas: Dict[int, List[int]]
    removing_replicas: Dict[int, List[int]]
    error: Optional[DecodeError] = None


def _int_list(value: Any) -> Optional[List[int]]:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    return None


def _replica_map(obj: Any, what: str) -> Tuple[Dict[int, List[int]], Optional[str]]:
    if obj is None:
        return {}, None
    if not isinstance(obj, dict):
        return {}, f"'{what}' is not a JSON object"
    out: Dict[int, List[int]] = {}
    for key, value in obj.items():
        partition = parse_int(key)
        replicas = _int_list(value)
        if partition is None:
            return out, f"'{what}' key {key!r} is not an int partition"
        if replicas is None:
            return out, f"'{what}' of partition {key} is not a list of ints"
        out[partition] = replicas
    return out, None


def _load_json(data: Optional[str]) -> Tuple[Any, Optional[str]]:
    if data is None:
        return None, "znode has no data"
    try:
        return json.loads(data), None
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON: {exc}"


def decode_topic_znode(data: Optional[str]) -> TopicZnode:
    """Decode ``/brokers/topics/<t>`` data (v1: version+partitions; v2: + adding/removing; v3: + topic_id)."""
    doc, problem = _load_json(data)
    if problem is None and not isinstance(doc, dict):
        problem = "topic znode is not a JSON object"
    if problem is not None:
        return TopicZnode(None, None, {}, {}, {}, DecodeError("bad_json", problem))
    version = doc.get("version") if isinstance(doc.get("version"), int) else None
    partitions, p1 = _replica_map(doc.get("partitions"), "partitions")
    adding, p2 = _replica_map(doc.get("adding_replicas"), "adding_replicas")
    removing, p3 = _replica_map(doc.get("removing_replicas"), "removing_replicas")
    topic_id = None
    error = None
    if "topic_id" in doc:
        raw_id = doc["topic_id"]
        parsed = kafka_uuid.parse(raw_id) if isinstance(raw_id, str) else kafka_uuid.UuidParse(None, "topic_id is not a string")
        if parsed.ok:
            topic_id = parsed.text
        else:
            error = DecodeError("invalid_uuid", f"topic_id {raw_id!r}: {parsed.reason}")
    problem = p1 or p2 or p3
    if problem and error is None:
        error = DecodeError("bad_json", problem)
    return TopicZnode(version, topic_id, partitions, adding, removing, error)


@dataclass(frozen=True)
class PartitionState:
    """``TopicPartitionStateZNode.decode`` (+ the znode's stat version = partition epoch)."""

    leader: Optional[int]
    leader_epoch: Optional[int]
    isr: Optional[List[int]]
    controller_epoch: Optional[int]
    leader_recovery_state: int = 0
    error: Optional[DecodeError] = None


def _get_int(doc: dict, key: str) -> Optional[int]:
    value = doc.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def decode_partition_state(data: Optional[str]) -> PartitionState:
    doc, problem = _load_json(data)
    if problem is None and not isinstance(doc, dict):
        problem = "partition state is not a JSON object"
    if problem is not None:
        return PartitionState(None, None, None, None, 0, DecodeError("bad_json", problem))
    leader, epoch, controller_epoch = _get_int(doc, "leader"), _get_int(doc, "leader_epoch"), _get_int(doc, "controller_epoch")
    isr = _int_list(doc.get("isr"))
    recovery = _get_int(doc, "leader_recovery_state")
    missing = [k for k, v in (("leader", leader), ("leader_epoch", epoch), ("isr", isr),
                              ("controller_epoch", controller_epoch)) if v is None]
    error = DecodeError("missing_key", f"partition state lacks or mistypes {', '.join(missing)}") if missing else None
    return PartitionState(leader, epoch, isr, controller_epoch, recovery if recovery is not None else 0, error)


@dataclass(frozen=True)
class ProducerIdBlock:
    """``ProducerIdBlockZNode.parseProducerIdBlockData``; ``block_end`` is inclusive. In dual-write (after a
    ZK->KRaft migration) ``broker == -1`` and the block is the *next*, unallocated one."""

    broker: Optional[int]
    block_start: Optional[int]
    block_end: Optional[int]
    version: Optional[int] = None
    error: Optional[DecodeError] = None


def decode_producer_id_block(data: Optional[str]) -> ProducerIdBlock:
    doc, problem = _load_json(data)
    if problem is not None or not isinstance(doc, dict):
        text = data if data is not None else ""
        return ProducerIdBlock(None, None, None, None,
                               DecodeError("bad_json", f"Failed to parse the producerId block json {text}"))
    broker = _get_int(doc, "broker")
    start_text, end_text = doc.get("block_start"), doc.get("block_end")
    start = parse_long(start_text) if isinstance(start_text, str) else None
    end = parse_long(end_text) if isinstance(end_text, str) else None
    error = None
    if broker is None or not isinstance(start_text, str) or not isinstance(end_text, str):
        error = DecodeError("bad_json", f"Failed to parse the producerId block json {data}")
    elif start is None or end is None:
        error = DecodeError("value_too_large",
                            f"Read jason data {data} contains producerIds that have exceeded long type limit")
    elif not -(2**31) <= end - start + 1 < 2**31:
        error = DecodeError("value_too_large", "integer overflow")  # Math.toIntExact
    return ProducerIdBlock(broker, start, end, _get_int(doc, "version"), error)


# ------------------------------------------------------------------------------------------ znode dump

_TOPIC = re.compile(r"/brokers/topics/([^/]+)")
_STATE = re.compile(r"/brokers/topics/([^/]+)/partitions/([^/]+)/state")
_DELETE = re.compile(r"/admin/delete_topics/([^/]+)")
_BROKER = re.compile(r"/brokers/ids/([^/]+)")
_TOPIC_CONFIG = re.compile(r"/config/topics/([^/]+)")


def _znode_row(path: str, data: Optional[str], stat: Dict[str, Any], source_file: Optional[str], seq: int
               ) -> Tuple[Optional[Dict[str, Any]], Optional[DecodeError]]:
    zk_version = _get_int(stat, "version")
    base = dict(zk_path=path, zk_version=zk_version, payload_json=data, message=path)
    when = _ms_to_utc(stat.get("mtime"))

    def row(event_type: str, **values: Any) -> Dict[str, Any]:
        return _row(source_file, "znode_dump", seq, when, event_type, **{**base, **values})

    def located(error: Optional[DecodeError]) -> Optional[DecodeError]:
        return DecodeError(error.kind, f"{path}: {error.message}", line=seq) if error else None

    m = _STATE.fullmatch(path)
    if m:
        state = decode_partition_state(data)
        return row("partition_state", topic_name=m.group(1), partition=parse_int(m.group(2)),
                   broker_id=state.leader), located(state.error)
    m = _TOPIC.fullmatch(path)
    if m:
        topic = decode_topic_znode(data)
        return row("topic_znode", topic_name=m.group(1), topic_id=topic.topic_id), located(topic.error)
    m = _DELETE.fullmatch(path)
    if m:
        return row("delete_marker", topic_name=m.group(1)), None
    if path == "/latest_producer_id_block":
        if data is None or data == "":  # created empty at controller start-up: no block allocated yet
            return row("producer_id_block"), None
        block = decode_producer_id_block(data)
        return row("producer_id_block", broker_id=block.broker, block_start=block.block_start,
                   block_end=block.block_end), located(block.error)
    if path == "/controller":
        doc, problem = _load_json(data)
        broker = _get_int(doc, "brokerid") if isinstance(doc, dict) else None
        error = DecodeError("bad_json", problem or "controller znode lacks 'brokerid'") if broker is None else None
        return row("controller", broker_id=broker), located(error)
    if path == "/controller_epoch":
        return row("controller_epoch"), None
    if path == "/migration":
        doc, problem = _load_json(data)
        controller = _get_int(doc, "kraft_controller_id") if isinstance(doc, dict) else None
        error = None
        if not isinstance(doc, dict):
            error = DecodeError("bad_json", f"Failed to parse the migration json {data}")
        elif _get_int(doc, "version") != 0:
            error = DecodeError("bad_version",
                                f"Encountered unknown version {doc.get('version')} when parsing migration json {data}")
        return row("migration", broker_id=controller), located(error)
    if path == "/cluster/id":
        return row("cluster_id"), None
    m = _BROKER.fullmatch(path)
    if m:
        return row("broker_registration", broker_id=parse_int(m.group(1))), None
    m = _TOPIC_CONFIG.fullmatch(path)
    if m:
        return row("topic_config", topic_name=m.group(1)), None
    return None, None


def parse_znode_dump(lines: Iterable[str], source_file: Optional[str] = None) -> ZkParse:
    """Rows for the znodes listed in the module docstring; never raises.

    Example::

        with open("zk-znodes.jsonl") as f:
            dump = parse_znode_dump(f, "zk-znodes.jsonl")
        [r["topic_name"] for r in dump.rows if r["event_type"] == "delete_marker"]  # ['orders']
    """
    out = ZkParse()
    for seq, line in enumerate(lines, start=1):
        if not isinstance(line, str):
            line = bytes(line).decode("utf-8", "replace")
        line = line.strip()
        if not line:
            continue
        try:
            node = json.loads(line)
        except (ValueError, RecursionError) as exc:
            out.errors.append(DecodeError("bad_json", f"znode line is not JSON: {exc}", line=seq))
            continue
        if not (isinstance(node, dict) and isinstance(node.get("path"), str)
                and (node.get("data") is None or isinstance(node.get("data"), str))
                and isinstance(node.get("stat"), dict)):
            out.errors.append(DecodeError("bad_json", 'expected {"path": str, "data": str|null, "stat": {...}}',
                                          line=seq))
            continue
        row, error = _znode_row(node["path"], node.get("data"), node["stat"], source_file, seq)
        if row is not None:
            out.rows.append(row)
        if error is not None:
            out.errors.append(error)
    return out


# ------------------------------------------------------------------------------------------ log lines

_LOG_LINE = re.compile(
    r"\[(?P<time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] (?P<level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL) "
    r"(?P<msg>.*) \((?P<logger>[^()\s]*)\)", re.ASCII | re.DOTALL)
_PREFIX = re.compile(r"\[(?:Controller id=(?P<c>-?\d+)(?: epoch=-?\d+)?|Topic Deletion Manager (?P<t>-?\d+)"
                     r"|Broker id=(?P<b>-?\d+)|KafkaController id=(?P<k>-?\d+))\]:? ", re.ASCII)
_SET = re.compile(r"\w*\((?P<items>.*)\)", re.DOTALL)

_CREATING = re.compile(r"Creating topic (?P<topic>\S+) with configuration (?P<config>\{.*\}) and initial partition "
                       r"assignment (?P<assignment>.*)", re.DOTALL)
_ASSIGNMENT_ENTRY = re.compile(r"(?P<p>-?\d+) -> \w*\((?P<replicas>[^)]*)\)", re.ASCII)
_NEW_TOPICS = re.compile(r"New topics: \[(?P<new>.*?)\], deleted topics: \[(?P<deleted>.*?)\], new partition replica "
                         r"assignment \[(?P<assignment>.*)\]", re.DOTALL)
_TIRA = re.compile(r"TopicIdReplicaAssignment\((?P<topic>[^,()]+),(?P<id>Some\((?P<uuid>[^()]*)\)|None),"
                   r"Map\((?P<map>.*?)\)\)\)")
_REPLICA_ASSIGNMENT = re.compile(r"(?P<tp>\S+) -> ReplicaAssignment\(replicas=(?P<replicas>[-\d,]*), "
                                 r"addingReplicas=(?P<adding>[-\d,]*), removingReplicas=(?P<removing>[-\d,]*)\)")
_SIMPLE_EVENTS = (
    ("topic_deletion_requested", re.compile(r"Starting topic deletion for topics (?P<topics>.*)", re.DOTALL)),
    ("topic_deletion_ignored", re.compile(r"Ignoring request to delete non-existing topics (?P<topics>.*)", re.DOTALL)),
    ("topic_deletion_started", re.compile(r"Deletion of topic (?P<topics>\S+) \(re\)started")),
    ("topic_deletion_halted", re.compile(r"Halted deletion of topics (?P<topics>.*?) due to (?P<reason>.*)", re.DOTALL)),
    ("topic_deletion_completed", re.compile(r"Deletion of topic (?P<topics>\S+) successfully completed")),
)
_RENAMED_DELETE = re.compile(r"Log for partition (?P<tp>\S+) is renamed to (?P<dir>.*) and is scheduled for deletion",
                             re.DOTALL)
_RENAMED_STRAY = re.compile(r"Log for partition (?P<tp>\S+) is marked as stray and renamed to (?P<dir>.*)", re.DOTALL)
_MARKED_STRAY = re.compile(r"Log in (?P<old>.*) marked stray and renamed to (?P<dir>.*)", re.DOTALL)
_DELETED_LOG = re.compile(r"Deleted log for partition (?P<tp>\S+) in (?P<dir>.*)\.", re.DOTALL)
_PID_BLOCK = re.compile(r"Acquired new producerId block ProducerIdsBlock\(assignedBrokerId=(?P<broker>-?\d+), "
                        r"firstProducerId=(?P<first>-?\d+), size=(?P<size>-?\d+)\) by writing to Zk with path "
                        r"version (?P<version>-?\d+)", re.ASCII)
_ID_MISMATCH = re.compile(r"Topic ID in memory: (?P<log_id>\S+) does not match the topic ID for partition (?P<tp>\S+) "
                          r"received: (?P<request_id>\S+)\.")


def _split_tp(text: str) -> Tuple[Optional[str], Optional[int]]:
    topic, _, part = text.rpartition("-")
    partition = parse_int(part)
    return (topic, partition) if topic and partition is not None else (None, None)


def _scala_collection(text: str) -> List[str]:
    """``Set(a, b)`` / ``HashSet(a)`` / ``List(1, 2)`` -> items (empty for ``Set()``)."""
    m = _SET.fullmatch(text.strip())
    inner = m.group("items") if m else text
    return [item.strip() for item in inner.split(",") if item.strip()]


def _ints(text: str) -> List[int]:
    return [v for v in (parse_int(x.strip()) for x in text.split(",") if x.strip()) if v is not None]


def _canonical_id(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    parsed = kafka_uuid.parse(text)
    return parsed.text if parsed.ok else None


def infer_log_source_kind(source_file: Optional[str]) -> str:
    """controller_log / state_change_log / server_log from the file name (server_log by default)."""
    name = (source_file or "").rsplit("/", 1)[-1]
    if name.startswith("controller"):
        return "controller_log"
    if name.startswith("state-change"):
        return "state_change_log"
    return "server_log"


def _log_events(msg: str) -> List[Tuple[str, Dict[str, Any]]]:
    """(event_type, column values) found in one log message (prefix already removed)."""
    m = _PID_BLOCK.fullmatch(msg)
    if m:
        first, size = int(m.group("first")), int(m.group("size"))
        payload = {"assignedBrokerId": int(m.group("broker")), "firstProducerId": first, "size": size}
        return [("producer_id_block_acquired", dict(broker_id=int(m.group("broker")), block_start=first,
                                                    block_end=first + size - 1, zk_version=int(m.group("version")),
                                                    payload_json=json.dumps(payload)))]
    m = _NEW_TOPICS.fullmatch(msg)
    if m:
        events: List[Tuple[str, Dict[str, Any]]] = []
        for t in _TIRA.finditer(m.group("assignment")):
            assignment: Dict[str, Any] = {}
            for entry in _REPLICA_ASSIGNMENT.finditer(t.group("map") + ")"):
                _, partition = _split_tp(entry.group("tp"))
                if partition is not None:
                    assignment[str(partition)] = {"replicas": _ints(entry.group("replicas")),
                                                  "addingReplicas": _ints(entry.group("adding")),
                                                  "removingReplicas": _ints(entry.group("removing"))}
            topic_id = _canonical_id(t.group("uuid"))
            payload = {"topic": t.group("topic"), "topic_id": topic_id, "assignment": assignment}
            events.append(("topic_created", dict(topic_name=t.group("topic"), topic_id=topic_id,
                                                 payload_json=json.dumps(payload))))
        for topic in _scala_collection(m.group("deleted")):
            events.append(("topic_removed", dict(topic_name=topic)))
        return events
    m = _CREATING.fullmatch(msg)
    if m:
        assignment = {e.group("p"): _ints(e.group("replicas")) for e in _ASSIGNMENT_ENTRY.finditer(m.group("assignment"))}
        payload = {"topic": m.group("topic"), "config": m.group("config"), "assignment": assignment}
        return [("topic_create_requested", dict(topic_name=m.group("topic"), payload_json=json.dumps(payload)))]
    for event_type, regex in _SIMPLE_EVENTS:
        m = regex.fullmatch(msg)
        if m:
            reason = m.groupdict().get("reason")
            payload = json.dumps({"reason": reason}) if reason is not None else None
            return [(event_type, dict(topic_name=topic, payload_json=payload))
                    for topic in m.group("topics").split(",") if topic]
    for event_type, regex in (("log_renamed_for_delete", _RENAMED_DELETE), ("log_renamed_for_stray", _RENAMED_STRAY),
                              ("log_deleted", _DELETED_LOG)):
        m = regex.fullmatch(msg)
        if m:
            topic, partition = _split_tp(m.group("tp"))
            return [(event_type, dict(topic_name=topic, partition=partition,
                                      payload_json=json.dumps({"dir": m.group("dir")})))]
    m = _MARKED_STRAY.fullmatch(msg)
    if m:
        from .log_dir_names import classify_entry  # local import: log_dir_names does not need this module

        entry = classify_entry(m.group("dir").rstrip("/").rsplit("/", 1)[-1], is_dir=True)
        return [("log_renamed_for_stray", dict(topic_name=entry.topic, partition=entry.partition,
                                               payload_json=json.dumps({"old_dir": m.group("old"),
                                                                        "dir": m.group("dir")})))]
    m = _ID_MISMATCH.fullmatch(msg)
    if m:
        topic, partition = _split_tp(m.group("tp"))
        return [("topic_id_mismatch", dict(topic_name=topic, partition=partition,
                                           topic_id=_canonical_id(m.group("request_id")),
                                           payload_json=json.dumps({"log_topic_id": m.group("log_id"),
                                                                    "request_topic_id": m.group("request_id")})))]
    return []


def parse_log_time(text: str, tz: tzinfo = timezone.utc) -> Optional[datetime]:
    """``2026-11-22 08:57:56,272`` (log4j ``%d``, in the broker's zone ``tz``) -> aware UTC datetime."""
    try:
        local = datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=tz)
    except ValueError:
        return None
    return local.astimezone(timezone.utc)


def iter_zk_log_events(lines: Iterable[str], source_file: Optional[str] = None, source_kind: Optional[str] = None,
                       broker_id: Optional[int] = None, tz: tzinfo = timezone.utc) -> Iterable[Dict[str, Any]]:
    """Rows for the recognised ZK-mode log lines (see module docstring); never raises.

    :param source_kind: controller_log / server_log / state_change_log; inferred from ``source_file`` if None
    :param broker_id: the broker whose log this is; used when the line has no ``[Controller id=N]``-style prefix
        (a producer-id block row always carries the block's owner instead)
    :param tz: the zone the broker logged in (log4j ``%d`` has no zone)
    """
    kind = source_kind or infer_log_source_kind(source_file)
    for seq, line in enumerate(lines, start=1):
        if not isinstance(line, str):
            line = bytes(line).decode("utf-8", "replace")
        line = line.rstrip("\r\n")
        m = _LOG_LINE.fullmatch(line)
        if not m:
            continue  # continuation (stack trace) or not a log4j line
        msg = m.group("msg")
        line_broker = broker_id
        p = _PREFIX.match(msg)
        if p:
            ident = next(v for v in p.groups() if v is not None)
            line_broker = int(ident)
            msg = msg[p.end():]
        events = _log_events(msg)
        if not events:
            continue
        when = parse_log_time(m.group("time"), tz)
        for event_type, values in events:
            values.setdefault("broker_id", line_broker)
            yield _row(source_file, kind, seq, when, event_type, message=line, **values)


def parse_zk_log(lines: Iterable[str], source_file: Optional[str] = None, source_kind: Optional[str] = None,
                 broker_id: Optional[int] = None, tz: tzinfo = timezone.utc) -> ZkParse:
    """:func:`iter_zk_log_events` collected into a :class:`ZkParse` (log lines yield no errors)."""
    return ZkParse(rows=list(iter_zk_log_events(lines, source_file, source_kind, broker_id, tz)))


__all__ = [
    "PartitionState", "ProducerIdBlock", "ROW_COLUMNS", "SOURCE_KINDS", "TopicZnode", "ZkParse",
    "decode_partition_state", "decode_producer_id_block", "decode_topic_znode", "infer_log_source_kind",
    "iter_zk_log_events", "parse_log_time", "parse_zk_log", "parse_znode_dump",
]
