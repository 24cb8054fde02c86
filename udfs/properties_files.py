"""Small line-oriented text files at the top of a log dir and in ``__cluster_metadata-0``: read and write them
as Kafka does. The JSON ones (``quorum-state``, ``.kafka_cleanshutdown``) are :mod:`udfs.json_state_files`.

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

Every reader returns a result with ``error`` (a :class:`~udfs.errors.DecodeError`) instead of raising;
``exception`` names the Java exception Kafka would throw, ``message`` is its text.
"""
from __future__ import annotations

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


__all__ = [
    "CheckpointResult", "EpochEntry", "MetaProperties", "OffsetEntry", "jdk17_properties_order",
    "java_date_string", "load_properties", "meta_properties_dict", "parse_leader_epoch_checkpoint",
    "parse_meta_properties", "parse_offset_checkpoint", "store_properties", "write_leader_epoch_checkpoint",
    "write_meta_properties", "write_offset_checkpoint",
]
