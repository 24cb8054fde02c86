"""Small text files at the top of a log dir and in ``__cluster_metadata-0``: read and write them as Kafka does.

- ``meta.properties`` (metadata/.../properties/MetaProperties.java, MetaPropertiesVersion.java,
  PropertiesUtils.java): read with ``Properties.load(InputStream)`` - ISO-8859-1, so UTF-8 text written by
  ``store(Writer)`` comes back as mojibake - then validated in this order: version
  (``Invalid meta.properties version string 'x'`` / ``Unknown meta.properties version number N``),
  ``broker.id`` (v0, optional) or ``node.id`` (v1, ``Failed to find node.id``), ``directory.id``
  (``Unable to read directory.id as a Uuid: ...``), then v1's ``cluster.id was not found.``. Written by
  ``Properties.store(PrintWriter, "")``: ``#``, ``#<Date.toString()>``, ``key=value`` lines in the JDK 17
  ``ConcurrentHashMap`` iteration order (JDK >= 18 sorts keys).
- Offset checkpoints and ``leader-epoch-checkpoint`` (server-common/.../CheckpointFile.java,
  storage/.../checkpoint/OffsetCheckpointFile.java, LeaderEpochCheckpointFile.java): version line, count
  line, entry lines; the messages are Kafka's.
- ``quorum-state`` (raft/.../FileQuorumStateStore.java, QuorumStateData.json): one JSON line, ``data_version``
  0 (with clusterId/appliedOffset/currentVoters) or 1 (with votedDirectoryId).
- ``.kafka_cleanshutdown`` (storage/.../checkpoint/CleanShutdownFileHandler.java): ``{"version":0,"brokerEpoch":N}``.

Every reader returns a result with ``error`` (a :class:`~udfs.errors.DecodeError`) instead of raising;
``exception`` names the Java exception Kafka would throw, ``message`` is its text.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from collector.java_properties import MalformedProperty, java_properties

from . import kafka_uuid
from .errors import DecodeError
from .java_text import (
    decode_utf8_like_java,
    java_split,
    java_trim,
    number_format_message,
    parse_int,
    parse_long,
    read_lines,
)

# ----------------------------------------------------------------------------------------------------------
# java.util.Properties


def load_properties(data: bytes) -> Tuple[Dict[str, str], Optional[DecodeError]]:
    """``Properties.load(InputStream)``: ISO-8859-1 bytes, ``#``/``!`` comments, ``=``/``:``/whitespace
    separators, backslash escapes and continuations, ``\\uXXXX``. Later keys overwrite earlier ones. The parser
    is the collector's (:func:`collector.java_properties`: one parser, stdlib only, for brokers and ingest).

    Returns ``(props, None)`` or ``({...so far}, DecodeError)`` for Java's only load failure,
    ``IllegalArgumentException: Malformed \\uxxxx encoding.``.
    """
    props: Dict[str, str] = {}
    try:
        for _, key, value in java_properties(bytes(data).decode("latin-1")):
            props[key] = value
    except MalformedProperty as exc:
        return props, DecodeError("malformed_line", str(exc), line=exc.line)
    return props, None


def _save_convert(text: str, escape_space: bool) -> str:
    """``Properties.saveConvert`` for ``store(Writer)`` (no ``\\u`` escaping of non-ASCII)."""
    out: List[str] = []
    for x, c in enumerate(text):
        if 61 < ord(c) < 127:
            out.append("\\\\" if c == "\\" else c)
        elif c == " ":
            out.append("\\ " if x == 0 or escape_space else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def _java_string_hash(text: str) -> int:
    h = 0
    raw = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(raw), 2):
        h = (31 * h + int.from_bytes(raw[i:i + 2], "little")) & 0xFFFFFFFF
    return h


def jdk17_properties_order(keys: Sequence[str]) -> List[str]:
    """Iteration order of a ``java.util.Properties`` holding ``keys`` (inserted in this order) on JDK 9-17:
    its ``ConcurrentHashMap`` table (16 bins below 12 keys, doubling after), bins in index order.

    Exact below 12 keys; above that a resize may reorder keys that share a bin.
    """
    table = 16
    while len(keys) >= table - (table >> 2):
        table *= 2

    def bin_of(key: str) -> int:
        h = _java_string_hash(key)
        return ((h ^ (h >> 16)) & 0x7FFFFFFF) & (table - 1)

    return sorted(keys, key=bin_of)  # sorted() is stable: insertion order within a bin


def java_date_string(when: datetime) -> str:
    """``new java.util.Date(t).toString()`` with the JVM time zone UTC: ``Sun Nov 22 08:32:56 UTC 2026``."""
    utc = when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return utc.strftime("%a %b %d %H:%M:%S UTC %Y")


def store_properties(props: Mapping[str, str], when: datetime, key_order: str = "jdk17") -> bytes:
    """``Properties.store(PrintWriter, "")`` as Kafka writes ``meta.properties``: ``#``, ``#<date>``, then
    ``key=value`` lines, UTF-8. ``key_order`` is ``"jdk17"`` (hash order, what Kafka on JDK 17 writes) or
    ``"sorted"`` (JDK >= 18)."""
    if key_order not in ("jdk17", "sorted"):
        raise ValueError(f"key_order must be 'jdk17' or 'sorted', got {key_order!r}")
    keys = sorted(props) if key_order == "sorted" else jdk17_properties_order(list(props))
    lines = ["#", "#" + java_date_string(when)]
    lines += [_save_convert(k, True) + "=" + _save_convert(props[k], False) for k in keys]
    return ("\n".join(lines) + "\n").encode("utf-8")


# ----------------------------------------------------------------------------------------------------------
# meta.properties


@dataclass(frozen=True)
class MetaProperties:
    """A parsed ``meta.properties``. ``node_id`` is ``node.id`` (v1) or ``broker.id`` (v0).

    ``directory_id`` is the canonical 22-char form of the parsed id. On error the fields read before the
    failing check are kept; Kafka would put the whole log dir in its ``errorLogDirs``.
    """

    version: Optional[int]
    node_id: Optional[int]
    cluster_id: Optional[str]
    directory_id: Optional[str]
    raw: Dict[str, str]
    error: Optional[DecodeError] = None
    directory_id_reserved: bool = False  # DirectoryId.reserved: Kafka's startup check rejects these

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_meta_properties(data: bytes) -> MetaProperties:
    """Kafka's ``MetaProperties.Builder(Properties).build()`` on the file's bytes; never raises."""
    raw, load_error = load_properties(data)
    if load_error is not None:
        return MetaProperties(None, None, None, None, raw, load_error)

    version_text = raw.get("version", "0")
    version = parse_int(java_trim(version_text))
    if version is None:
        return MetaProperties(None, None, None, None, raw, DecodeError(
            "bad_version", f"Invalid meta.properties version string '{version_text}'"))
    if version not in (0, 1):
        return MetaProperties(version, None, None, None, raw, DecodeError(
            "bad_version", f"Unknown meta.properties version number {version}"))

    id_key = "broker.id" if version == 0 else "node.id"
    node_id: Optional[int] = None
    if version == 1 or id_key in raw:
        if id_key not in raw:
            return MetaProperties(version, None, None, None, raw, DecodeError("missing_key", f"Failed to find {id_key}"))
        node_id = parse_int(raw[id_key])
        if node_id is None:
            return MetaProperties(version, None, None, None, raw, DecodeError(
                "malformed_line", f"Unable to read {id_key} as a base-10 number."))

    cluster_id = raw.get("cluster.id")
    directory_id: Optional[str] = None
    reserved = False
    if "directory.id" in raw:
        parsed = kafka_uuid.parse(raw["directory.id"])
        if not parsed.ok:
            return MetaProperties(version, node_id, cluster_id, None, raw, DecodeError(
                "invalid_uuid", f"Unable to read directory.id as a Uuid: {parsed.reason}"))
        directory_id = parsed.text
        reserved = kafka_uuid.is_reserved_directory_id(parsed.raw)  # type: ignore[arg-type]

    if version == 1 and cluster_id is None:
        return MetaProperties(version, node_id, None, directory_id, raw,
                              DecodeError("missing_key", "cluster.id was not found."), reserved)
    return MetaProperties(version, node_id, cluster_id, directory_id, raw, None, reserved)


def meta_properties_dict(version: int, node_id: Optional[int], cluster_id: Optional[str] = None,
                         directory_id: Optional[str] = None) -> Dict[str, str]:
    """``MetaProperties.toProperties()``: the keys Kafka writes for these values."""
    if version not in (0, 1):
        raise ValueError(f"meta.properties version must be 0 or 1, got {version!r}")
    if version == 1 and (node_id is None or cluster_id is None):
        raise ValueError("a v1 meta.properties needs node_id and cluster_id")
    props = {"version": str(version)}
    if cluster_id is not None:
        props["cluster.id"] = cluster_id
    if version == 0:
        if node_id is not None:
            props["broker.id"] = str(node_id)
    else:
        props["node.id"] = str(node_id)
    if directory_id is not None:
        kafka_uuid.from_string(directory_id)  # ValueError for a bad id: the writer's input is ours
        props["directory.id"] = directory_id
    return props


def write_meta_properties(version: int, node_id: Optional[int], cluster_id: Optional[str] = None,
                          directory_id: Optional[str] = None, when: Optional[datetime] = None,
                          key_order: str = "jdk17") -> bytes:
    """The bytes Kafka's ``PropertiesUtils.writePropertiesFile`` writes for these values.

    Example::

        write_meta_properties(1, 101, "EKJ41Lv86vWjqGSh58Dg2w", "dY8vSxKUoccnQSccqw4OyQ",
                              datetime(2026, 11, 22, 8, 32, 56, tzinfo=timezone.utc))
        # b"#\\n#Sun Nov 22 08:32:56 UTC 2026\\nnode.id=101\\ndirectory.id=...\\nversion=1\\ncluster.id=...\\n"
    """
    props = meta_properties_dict(version, node_id, cluster_id, directory_id)
    return store_properties(props, when or datetime.now(timezone.utc), key_order)


# ----------------------------------------------------------------------------------------------------------
# checkpoint files


@dataclass(frozen=True)
class OffsetEntry:
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class EpochEntry:
    epoch: int
    start_offset: int


@dataclass(frozen=True)
class CheckpointResult:
    """A parsed checkpoint file. ``entries`` holds the lines read before any error (Kafka uses none of them
    then). ``exception`` is the Java exception Kafka's reader throws (IOException ones mark the log dir
    offline via ``CheckpointFileWithFailureHandler``; others propagate to the caller)."""

    version: Optional[int]
    expected_count: Optional[int]
    entries: Tuple[Any, ...]
    error: Optional[DecodeError] = None
    exception: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None


OFFSET_CHECKPOINT_VERSION = 0
LEADER_EPOCH_CHECKPOINT_VERSION = 0


def _parse_offset_entry(line: str):
    parts = java_split(r"\s+", line)
    if len(parts) != 3:
        return None
    partition, offset = parse_int(parts[1]), parse_long(parts[2])
    if partition is None:
        raise _NumberFormat(parts[1])
    if offset is None:
        raise _NumberFormat(parts[2])
    return OffsetEntry(parts[0], partition, offset)


def _parse_epoch_entry(line: str):
    parts = java_split(r"\s+", line)
    if len(parts) != 2:
        return None
    epoch, start = parse_int(parts[0]), parse_long(parts[1])
    if epoch is None:
        raise _NumberFormat(parts[0])
    if start is None:
        raise _NumberFormat(parts[1])
    return EpochEntry(epoch, start)


class _NumberFormat(ValueError):
    def __init__(self, text: str):
        super().__init__(number_format_message(text))


def _parse_checkpoint(data: bytes, path: str, version: int, parse_entry) -> CheckpointResult:
    text, decode_error = decode_utf8_like_java(bytes(data))
    if text is None:
        return CheckpointResult(None, None, (), DecodeError("invalid_utf8", decode_error), "MalformedInputException")
    lines = read_lines(text)
    if not lines:
        return CheckpointResult(None, None, ())  # Kafka creates the file empty; reads as no entries

    def malformed(line: str, number: int) -> DecodeError:
        return DecodeError("malformed_line", f"Malformed line in checkpoint file [{path}]: {line}", line=number)

    read_version = parse_int(lines[0])
    if read_version is None:
        return CheckpointResult(None, None, (), malformed(lines[0], 1), "IOException")
    if read_version != version:
        return CheckpointResult(read_version, None, (), DecodeError(
            "bad_version",
            f"Unrecognised version:{read_version}, expected version: {version} in checkpoint file at: {path}",
            line=1), "IOException")
    if len(lines) == 1:
        return CheckpointResult(read_version, None, ())
    expected = parse_int(lines[1])
    if expected is None:
        return CheckpointResult(read_version, None, (), malformed(lines[1], 2), "IOException")
    if expected < 0:  # new ArrayList<>(expectedSize)
        return CheckpointResult(read_version, expected, (), DecodeError(
            "malformed_line", f"Illegal Capacity: {expected}", line=2), "IllegalArgumentException")
    entries: List[Any] = []
    for number, line in enumerate(lines[2:], start=3):
        try:
            entry = parse_entry(line)
        except _NumberFormat as exc:  # thrown by the formatter, not wrapped as an IOException by Kafka
            return CheckpointResult(read_version, expected, tuple(entries),
                                    DecodeError("malformed_line", str(exc), line=number), "NumberFormatException")
        if entry is None:
            return CheckpointResult(read_version, expected, tuple(entries), malformed(line, number), "IOException")
        entries.append(entry)
    if len(entries) != expected:
        return CheckpointResult(read_version, expected, tuple(entries), DecodeError(
            "record_count_mismatch",
            f"Expected [{expected}] entries in checkpoint file [{path}], but found only [{len(entries)}]"),
            "IOException")
    return CheckpointResult(read_version, expected, tuple(entries))


def parse_offset_checkpoint(data: bytes, path: str = "checkpoint") -> CheckpointResult:
    """``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``, ``replication-offset-checkpoint``
    and ``cleaner-offset-checkpoint``: version 0, lines ``<topic> <partition> <offset>`` (split on ``\\s+``).
    ``path`` only fills Kafka's messages."""
    return _parse_checkpoint(data, path, OFFSET_CHECKPOINT_VERSION, _parse_offset_entry)


def parse_leader_epoch_checkpoint(data: bytes, path: str = "leader-epoch-checkpoint") -> CheckpointResult:
    """``leader-epoch-checkpoint``: version 0, lines ``<epoch> <startOffset>``."""
    return _parse_checkpoint(data, path, LEADER_EPOCH_CHECKPOINT_VERSION, _parse_epoch_entry)


def _write_checkpoint(version: int, lines: List[str]) -> bytes:
    return "".join(f"{line}\n" for line in [str(version), str(len(lines)), *lines]).encode("utf-8")


def write_offset_checkpoint(entries: Iterable[Tuple[str, int, int]]) -> bytes:
    """``CheckpointWriteBuffer`` output for offset checkpoints, entries in the order given."""
    return _write_checkpoint(OFFSET_CHECKPOINT_VERSION, [f"{t} {int(p)} {int(o)}" for t, p, o in entries])


def write_leader_epoch_checkpoint(entries: Iterable[Tuple[int, int]]) -> bytes:
    """``CheckpointWriteBuffer`` output for ``leader-epoch-checkpoint``."""
    return _write_checkpoint(LEADER_EPOCH_CHECKPOINT_VERSION, [f"{int(e)} {int(o)}" for e, o in entries])


# ----------------------------------------------------------------------------------------------------------
# quorum-state


@dataclass(frozen=True)
class QuorumState:
    """``quorum-state`` as ``FileQuorumStateStore`` reads it. Fields absent from the file's version keep
    QuorumStateData's defaults (-1, "", 0, ZERO uuid, None)."""

    data_version: Optional[int]
    leader_id: Optional[int] = None
    leader_epoch: Optional[int] = None
    voted_id: Optional[int] = None
    voted_directory_id: Optional[str] = None
    cluster_id: Optional[str] = None
    applied_offset: Optional[int] = None
    current_voters: Optional[Tuple[int, ...]] = None
    raw: Optional[Dict[str, Any]] = None
    error: Optional[DecodeError] = None
    exception: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None


class _QuorumError(ValueError):
    def __init__(self, kind: str, message: str, exception: str):
        super().__init__(message)
        self.kind, self.exception = kind, exception


def _no_constants(name: str):
    raise ValueError(f"Non-standard token '{name}'")


def _jackson_read_tree(line: str) -> Any:
    """``ObjectMapper.readTree(line)``: first JSON value, trailing text ignored; no NaN/Infinity."""
    stripped = line.lstrip(" \t\r\n")
    if stripped == "":
        return _MISSING
    value, _ = json.JSONDecoder(parse_constant=_no_constants).raw_decode(stripped)
    return value


_MISSING = object()


def _node_text(node: Any) -> str:
    """Jackson ``JsonNode.toString()`` / ``asText()`` of a scalar or container, close enough for messages."""
    if node is _MISSING:
        return ""
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


def _as_text(node: Any) -> str:
    """Jackson ``asText()``: numbers and booleans as text, containers as ""."""
    if node is None:
        return "null"
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, float):
        return repr(node)  # Java's Double.toString differs for very large/small values; only messages use it
    if isinstance(node, int):
        return str(node)
    return ""


def _short_value(node: Any) -> int:
    """``JsonNode.shortValue()``: numbers cast to a Java short, anything else 0."""
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    if isinstance(node, float):
        if math.isnan(node):
            return 0
        if math.isinf(node):  # Jackson reads 1e400 as Infinity; (int) saturates
            node = 2**31 - 1 if node > 0 else -(2**31)
        node = max(-(2**31), min(2**31 - 1, int(node)))
    return ((int(node) + 2**15) % 2**16) - 2**15


def _json_int(node: Any, about: str) -> int:
    """``MessageUtil.jsonNodeToInt``."""
    if isinstance(node, int) and not isinstance(node, bool) and -(2**31) <= node < 2**31:
        return node
    if isinstance(node, str):
        raise _QuorumError("bad_json", f"{about}: expected an integer or string type, but got STRING",
                           "NumberFormatException")
    text = _as_text(node)
    value = parse_int(text)
    if value is None:
        raise _QuorumError("bad_json", f"{about}: failed to parse number: {number_format_message(text)}",
                           "NumberFormatException")
    return value


def _json_long(node: Any, about: str) -> int:
    """``MessageUtil.jsonNodeToLong``."""
    if isinstance(node, str):
        raise _QuorumError("bad_json", f"{about}: expected an integer or string type, but got STRING",
                           "NumberFormatException")
    text = _as_text(node)
    value = parse_long(text)
    if value is None:
        raise _QuorumError("bad_json", f"{about}: failed to parse number: {number_format_message(text)}",
                           "NumberFormatException")
    return value


_ABOUT = "QuorumStateData"


def _quorum_field(obj: Dict[str, Any], name: str, mandatory: bool, version: int, default: Any) -> Tuple[bool, Any]:
    if name not in obj:
        if mandatory:
            raise _QuorumError("missing_key",
                               f"{_ABOUT}: unable to locate field '{name}', which is mandatory in version {version}",
                               "RuntimeException")
        return False, default
    return True, obj[name]


def _read_quorum_data(obj: Dict[str, Any], version: int) -> QuorumState:
    """The generated ``QuorumStateDataJsonConverter.read``: mandatory fields per version, Kafka's type checks."""
    v0 = version == 0
    present, node = _quorum_field(obj, "clusterId", v0, version, "")
    cluster_id = node
    if present and not isinstance(node, str):
        raise _QuorumError("bad_json", f"{_ABOUT} expected a string type, but got OBJECT", "RuntimeException")
    leader_id = _json_int(_quorum_field(obj, "leaderId", True, version, -1)[1], _ABOUT)
    leader_epoch = _json_int(_quorum_field(obj, "leaderEpoch", True, version, -1)[1], _ABOUT)
    voted_id = _json_int(_quorum_field(obj, "votedId", True, version, -1)[1], _ABOUT)
    present, node = _quorum_field(obj, "votedDirectoryId", not v0, version, kafka_uuid.ZERO_STR)
    voted_directory_id = node
    if present:
        if not isinstance(node, str):
            raise _QuorumError("bad_json", f"{_ABOUT} expected a JSON string type, but got OBJECT", "RuntimeException")
        parsed = kafka_uuid.parse(node)
        if not parsed.ok:
            raise _QuorumError("invalid_uuid", parsed.reason or "", "IllegalArgumentException")
        voted_directory_id = parsed.text
    present, node = _quorum_field(obj, "appliedOffset", v0, version, 0)
    applied_offset = _json_long(node, _ABOUT) if present else node
    present, node = _quorum_field(obj, "currentVoters", v0, version, None)
    voters: Optional[Tuple[int, ...]] = None
    if present and node is not None:
        if not isinstance(node, list):
            raise _QuorumError("bad_json", f"{_ABOUT} expected a JSON array, but got OBJECT", "RuntimeException")
        ids = []
        for element in node:
            if version != 0:
                raise _QuorumError("bad_version", f"Can't read version {version} of Voter", "UnsupportedVersionException")
            if not isinstance(element, dict) or "voterId" not in element:
                raise _QuorumError("missing_key", "Voter: unable to locate field 'voterId', which is mandatory in version 0",
                                   "RuntimeException")
            ids.append(_json_int(element["voterId"], "Voter"))
        voters = tuple(ids)
    return QuorumState(version, leader_id, leader_epoch, voted_id, voted_directory_id, cluster_id,
                       applied_offset, voters, dict(obj))


def parse_quorum_state(data: bytes, path: str = "quorum-state") -> QuorumState:
    """``FileQuorumStateStore.readStateFromFile``: only the first line is read. ``path`` fills messages.

    IOException-class failures (premature end, non-object, missing ``data_version``, bad JSON) are the
    ones Kafka wraps as ``Error while reading the Quorum status from the file <path>``; all stop the raft
    client from starting.
    """
    text, decode_error = decode_utf8_like_java(bytes(data), lines_needed=1)
    if text is None:
        return QuorumState(None, error=DecodeError("invalid_utf8", decode_error), exception="MalformedInputException")
    lines = read_lines(text)
    if not lines:
        return QuorumState(None, error=DecodeError("empty_file", "File ended prematurely."), exception="EOFException")
    try:
        node = _jackson_read_tree(lines[0])
    except (ValueError, RecursionError) as exc:
        return QuorumState(None, error=DecodeError("bad_json", f"{exc}", line=1), exception="JsonProcessingException")
    if not isinstance(node, dict):
        return QuorumState(None, error=DecodeError(
            "bad_json", f"Deserialized node {_node_text(node)} is not an object node", line=1), exception="IOException")
    if "data_version" not in node:
        return QuorumState(None, raw=node, error=DecodeError(
            "missing_key", f"Deserialized node {_node_text(node)} does not have data_version field", line=1),
            exception="IOException")
    version = _short_value(node["data_version"])
    if version < 0 or version > 1:
        return QuorumState(version, raw=node, error=DecodeError(
            "bad_version", f"data_version ({version}) is not within the min (0) and max (1) supported version",
            line=1), exception="IllegalStateException")
    try:
        return _read_quorum_data(node, version)
    except _QuorumError as exc:
        return QuorumState(version, raw=node, error=DecodeError(exc.kind, str(exc), line=1), exception=exc.exception)


def write_quorum_state(data_version: int, leader_id: int = -1, leader_epoch: int = -1, voted_id: int = -1,
                       voted_directory_id: Optional[str] = None, cluster_id: str = "", applied_offset: int = 0,
                       current_voters: Optional[Sequence[int]] = None) -> bytes:
    """``FileQuorumStateStore.writeElectionStateToFile``: one compact JSON line, no newline, fields in
    QuorumStateData order for the version, then ``data_version``."""
    if data_version == 0:
        doc: Dict[str, Any] = {
            "clusterId": cluster_id, "leaderId": leader_id, "leaderEpoch": leader_epoch, "votedId": voted_id,
            "appliedOffset": applied_offset,
            "currentVoters": None if current_voters is None else [{"voterId": v} for v in current_voters],
        }
    elif data_version == 1:
        directory = voted_directory_id if voted_directory_id is not None else kafka_uuid.ZERO_STR
        kafka_uuid.from_string(directory)
        doc = {"leaderId": leader_id, "leaderEpoch": leader_epoch, "votedId": voted_id, "votedDirectoryId": directory}
    else:
        raise ValueError(f"Quorum state data version ({data_version}) is greater than the supported version (1)")
    doc["data_version"] = data_version
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# ----------------------------------------------------------------------------------------------------------
# .kafka_cleanshutdown


@dataclass(frozen=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: ``broker_epoch`` is what ``CleanShutdownFileHandler.read()`` returns (None =
    ``OptionalLong.empty()``, which Kafka only logs at debug). The file's presence alone makes Kafka skip
    recovery."""

    version: Optional[int]
    broker_epoch: Optional[int]
    raw: Optional[Dict[str, Any]] = None
    error: Optional[DecodeError] = None


def _coerce_long(node: Any) -> Optional[int]:
    """Jackson's default scalar coercion into ``Long``: ints, floats (truncated), numeric strings."""
    if isinstance(node, bool) or node is None:
        return None
    if isinstance(node, int):
        return node if -(2**63) <= node < 2**63 else None
    if isinstance(node, float):
        return int(node) if math.isfinite(node) else None
    if isinstance(node, str):
        return parse_long(node.strip())
    return None


def parse_clean_shutdown(data: bytes) -> CleanShutdown:
    """Read ``.kafka_cleanshutdown`` like Kafka (JSON object, unknown keys ignored); never raises."""
    text = bytes(data).decode("utf-8", "replace")  # Utils.readFileAsString: lenient UTF-8
    try:
        node = _jackson_read_tree(text)
    except (ValueError, RecursionError) as exc:
        return CleanShutdown(None, None, None, DecodeError("bad_json", str(exc)))
    if not isinstance(node, dict):
        return CleanShutdown(None, None, None, DecodeError("bad_json", f"not a JSON object: {_node_text(node)}"))
    version = _coerce_long(node.get("version", 0))
    if "brokerEpoch" not in node or node["brokerEpoch"] is None:
        return CleanShutdown(version, None, node, DecodeError("missing_key", "brokerEpoch is missing or null"))
    epoch = _coerce_long(node["brokerEpoch"])
    if epoch is None:
        return CleanShutdown(version, None, node, DecodeError(
            "bad_json", f"brokerEpoch is not a long: {_node_text(node['brokerEpoch'])}"))
    return CleanShutdown(version, epoch, node)


def write_clean_shutdown(broker_epoch: int, version: int = 0) -> bytes:
    """``CleanShutdownFileHandler.write``: ``{"version":0,"brokerEpoch":N}``, no newline."""
    return json.dumps({"version": version, "brokerEpoch": broker_epoch}, separators=(",", ":")).encode("utf-8")


__all__ = [
    "CheckpointResult", "CleanShutdown", "EpochEntry", "MetaProperties", "OffsetEntry", "QuorumState",
    "jdk17_properties_order", "java_date_string", "load_properties", "meta_properties_dict",
    "parse_clean_shutdown", "parse_leader_epoch_checkpoint", "parse_meta_properties", "parse_offset_checkpoint",
    "parse_quorum_state", "store_properties", "write_clean_shutdown", "write_leader_epoch_checkpoint",
    "write_meta_properties", "write_offset_checkpoint", "write_quorum_state",
]
