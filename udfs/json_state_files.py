"""The JSON files of a log dir, ``quorum-state`` and ``.kafka_cleanshutdown``: read and write them as Kafka.

Separate from :mod:`udfs.properties_files` (Java ``Properties`` and checkpoint line files) because what these
two share is the emulation of Kafka's Jackson reading: ``readTree`` of the first JSON value, Jackson's
scalar coercions, the generated converter's type checks and messages.

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
from typing import Any, Dict, Optional, Sequence, Tuple

from . import kafka_uuid
from .errors import DecodeError
from .java_text import decode_utf8_like_java, number_format_message, parse_int, parse_long, read_lines

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
    "CleanShutdown", "QuorumState", "parse_clean_shutdown", "parse_quorum_state", "write_clean_shutdown",
    "write_quorum_state",
]
