"""Names in a Kafka log dir: classify each entry the way Kafka would, and build names the way Kafka does.

Facts from core/src/main/scala/kafka/log/LocalLog.scala, LogManager.scala,
storage/.../log/LogFileUtils.java and raft/.../snapshot/Snapshots.java (apache/kafka@1eb7644):

- Replica dirs are ``<topic>-<partition>``; with a suffix ``<topic>-<partition>.<uniqueId><suffix>`` where the
  suffix is ``-delete``, ``-future`` or ``-stray`` and uniqueId is a random UUID's 32 hex chars. Delete and
  stray names are capped at 255 chars by cutting the *topic* short; future names are not capped.
- ``LocalLog.parseTopicPartitionName``: a name that is empty or has no ``-`` fails; a name ending in a suffix
  must fully match ``^(\\S+)-(\\S+)\\.(\\S+)<suffix>`` (Java ``\\S``: ASCII whitespace only) and loses the text
  from its last ``.``; the rest is split at the last ``-``; topic must be non-empty and the partition an
  ``Integer.parseInt`` number (``+3`` and Unicode digits pass). Any failure is a ``KafkaException``
  ``Found directory <canonical path>, '<name>' is not in the form of topic-partition or
  topic-partition.uniqueId-delete (if marked for deletion).\\nKafka's log directories (and children) should
  only contain Kafka topic data.`` - thrown by ``LogManager.loadLogs`` for every *subdirectory* except
  ``remote-log-index-cache``, so one stray folder stops the log dir from loading. Files are never parsed.
- ``__cluster_metadata`` partitions are skipped by ``loadLogs`` (the raft layer owns them).
- Segment files are ``<20-digit base offset><suffix>``; snapshots are ``<20-digit end offset>-<10-digit
  epoch>.checkpoint``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple, Union

from . import kafka_uuid
from .errors import DecodeError
from .java_text import java_regex, parse_int, parse_long

DELETE_SUFFIX = "-delete"
FUTURE_SUFFIX = "-future"
STRAY_SUFFIX = "-stray"
SUFFIX_KINDS = {DELETE_SUFFIX: "delete", FUTURE_SUFFIX: "future", STRAY_SUFFIX: "stray"}
_SUFFIX_PATTERNS = {suffix: java_regex(r"^(\S+)-(\S+)\.(\S+)" + re.escape(suffix)) for suffix in SUFFIX_KINDS}

METADATA_TOPIC = "__cluster_metadata"
METADATA_DIR = METADATA_TOPIC + "-0"
REMOTE_LOG_INDEX_CACHE = "remote-log-index-cache"
MAX_NAME_LENGTH = 255

KINDS = ("partition", "delete", "future", "stray", "metadata", "top_file", "non_kafka")

# Files Kafka itself keeps at the top of a log dir (LogManager, ReplicaManager, LogCleanerManager,
# CleanShutdownFileHandler, MetaProperties, BootstrapDirectory); each may also appear as <name>.tmp mid-write.
TOP_FILES = frozenset({
    "meta.properties", ".lock", ".kafka_cleanshutdown", "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint", "replication-offset-checkpoint", "cleaner-offset-checkpoint",
    "bootstrap.checkpoint",
})
TOP_TMP_FILES = frozenset(name + ".tmp" for name in TOP_FILES if name != ".lock")
TOP_DIRS = frozenset({REMOTE_LOG_INDEX_CACHE})

_UNIQUE_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)


@dataclass(frozen=True)
class EntryName:
    """One entry at the top of a log dir, classified.

    ``kind``: partition | delete | future | stray | metadata | top_file | non_kafka. ``topic``/``partition``
    are what Kafka parses from the name (a -delete/-stray topic may be cut short: ``topic_maybe_truncated``
    is set when such a name is exactly 255 chars). ``suffix_id`` is the text between the last ``.`` and the
    suffix (32 hex when Kafka wrote it). ``error`` says why an entry is not Kafka's (Kafka's own text for
    directories Kafka would refuse to load).
    """

    name: str
    kind: str
    topic: Optional[str] = None
    partition: Optional[int] = None
    suffix_id: Optional[str] = None
    topic_maybe_truncated: bool = False
    error: Optional[DecodeError] = None

    @property
    def is_replica(self) -> bool:
        return self.kind in ("partition", "delete", "future", "stray", "metadata")


def kafka_name_error(name: str, log_dir: Optional[str] = None) -> str:
    """The ``KafkaException`` text of ``LocalLog.parseTopicPartitionName`` for a bad directory name.

    Kafka prints ``dir.getCanonicalPath``; we print ``<log_dir>/<name>`` (no symlink resolution).
    """
    path = f"{log_dir.rstrip('/')}/{name}" if log_dir else name
    return (f"Found directory {path}, '{name}' is not in the form of topic-partition or "
            "topic-partition.uniqueId-delete (if marked for deletion).\n"
            "Kafka's log directories (and children) should only contain Kafka topic data.")


def parse_topic_partition_name(name: str, log_dir: Optional[str] = None) -> Union[Tuple[str, int], DecodeError]:
    """``LocalLog.parseTopicPartitionName`` on a directory name: ``(topic, partition)`` or the error."""
    def failure() -> DecodeError:
        return DecodeError("unrecognised_file", kafka_name_error(name, log_dir))

    if not name or "-" not in name:
        return failure()
    suffix = next((s for s in SUFFIX_KINDS if name.endswith(s)), None)
    if suffix is not None:
        if not _SUFFIX_PATTERNS[suffix].fullmatch(name):
            return failure()
        name_part = name[: name.rindex(".")]
    else:
        name_part = name
    index = name_part.rfind("-")
    if index < 0:
        return failure()
    topic, partition_text = name_part[:index], name_part[index + 1:]
    if not topic or not partition_text:
        return failure()
    partition = parse_int(partition_text)
    if partition is None:
        return failure()
    return topic, partition


def classify_entry(name: str, is_dir: Optional[bool] = None, log_dir: Optional[str] = None) -> EntryName:
    """Classify one top-level log-dir entry; never raises.

    ``is_dir`` matters because Kafka parses only directories: a *file* named ``foo-0`` is ignored by Kafka
    (``non_kafka`` here, with our own message), a *directory* named ``meta.properties`` stops log loading.
    With ``is_dir=None`` known file names are taken as files and everything else as a directory.

    Example::

        classify_entry("orders-0.b0adbe214c0843f99d086465639b4414-delete", is_dir=True)
        # EntryName(kind='delete', topic='orders', partition=0, suffix_id='b0adbe21...', ...)
    """
    if not isinstance(name, str):
        return EntryName(str(name), "non_kafka", error=DecodeError("unrecognised_file", "entry name is not text"))
    if name in TOP_DIRS and is_dir is not False:
        return EntryName(name, "top_file")
    if name in TOP_FILES or name in TOP_TMP_FILES:
        if is_dir is not True:
            return EntryName(name, "top_file")
    elif is_dir is False:
        return EntryName(name, "non_kafka", error=DecodeError(
            "unrecognised_file", f"'{name}' is not a file Kafka keeps at the top of a log dir (Kafka ignores files)"))

    parsed = parse_topic_partition_name(name, log_dir)
    if isinstance(parsed, DecodeError):
        return EntryName(name, "non_kafka", error=parsed)
    topic, partition = parsed
    suffix = next((s for s in SUFFIX_KINDS if name.endswith(s)), None)
    if suffix is None:
        kind = "metadata" if topic == METADATA_TOPIC else "partition"
        return EntryName(name, kind, topic, partition)
    suffix_id = name[name.rindex(".") + 1: -len(suffix)]
    truncated = suffix in (DELETE_SUFFIX, STRAY_SUFFIX) and len(name) == MAX_NAME_LENGTH
    return EntryName(name, SUFFIX_KINDS[suffix], topic, partition, suffix_id, truncated)


# ------------------------------------------------------------------------------------------------ writer side


def _check_unique_id(unique_id: str) -> str:
    if not isinstance(unique_id, str) or not _UNIQUE_ID.fullmatch(unique_id):
        raise ValueError(f"unique_id must be 32 lowercase hex chars (a UUID without dashes), got {unique_id!r}")
    return unique_id


def new_unique_id(rng) -> str:
    """``UUID.randomUUID.toString.replaceAll("-", "")`` from a seeded ``random.Random``."""
    raw = bytearray(rng.getrandbits(128).to_bytes(16, "big"))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return bytes(raw).hex()


def log_dir_name(topic: str, partition: int) -> str:
    """``LocalLog.logDirName``: ``<topic>-<partition>``."""
    return f"{topic}-{int(partition)}"


def _capped(topic: str, partition: int, unique_id: str, suffix: str) -> str:
    full_suffix = f"-{int(partition)}.{_check_unique_id(unique_id)}{suffix}"
    prefix_length = min(len(topic), MAX_NAME_LENGTH - len(full_suffix))
    return topic[:prefix_length] + full_suffix


def delete_dir_name(topic: str, partition: int, unique_id: str) -> str:
    """``LocalLog.logDeleteDirName``: ``<topic>-<p>.<uniqueId>-delete``, topic cut so the name is <= 255."""
    return _capped(topic, partition, unique_id, DELETE_SUFFIX)


def stray_dir_name(topic: str, partition: int, unique_id: str) -> str:
    """``LocalLog.logStrayDirName``: ``<topic>-<p>.<uniqueId>-stray``, capped like delete names."""
    return _capped(topic, partition, unique_id, STRAY_SUFFIX)


def future_dir_name(topic: str, partition: int, unique_id: str) -> str:
    """``LocalLog.logFutureDirName``: ``<topic>-<p>.<uniqueId>-future`` (not capped)."""
    return f"{log_dir_name(topic, partition)}.{_check_unique_id(unique_id)}{FUTURE_SUFFIX}"


# ------------------------------------------------------------------------------------- files in a replica dir

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_SUFFIX = ".checkpoint"
SEGMENT_SUFFIXES = {LOG_SUFFIX: "log", INDEX_SUFFIX: "index", TIME_INDEX_SUFFIX: "timeindex",
                    TXN_INDEX_SUFFIX: "txnindex", PRODUCER_SNAPSHOT_SUFFIX: "producer_snapshot"}
STATE_SUFFIXES = {".deleted": "deleted", ".cleaned": "cleaned", ".swap": "swap"}
PARTITION_FILES = {"leader-epoch-checkpoint": "leader_epoch_checkpoint", "partition.metadata": "partition_metadata",
                   "quorum-state": "quorum_state"}
OFFSET_WIDTH = 20
EPOCH_WIDTH = 10

# <end>-<epoch>.checkpoint, <end>-<epoch>.checkpoint.deleted, <end>-<epoch>-<random>.checkpoint.part
_SNAPSHOT_NAME = re.compile(r"(\d{20})-(\d{10})(?:\.checkpoint(\.deleted)?|-[^/]+\.checkpoint\.part)", re.ASCII)


@dataclass(frozen=True)
class PartitionFileName:
    """One file inside a replica dir. ``kind``: log, index, timeindex, txnindex, producer_snapshot,
    metadata_snapshot, leader_epoch_checkpoint, partition_metadata, quorum_state, other. ``offset`` is the
    base offset (segments), end offset (producer and metadata snapshots; exclusive). ``state``: None, or
    deleted / cleaned / swap (segment mid-operation), partial (snapshot being written), tmp."""

    name: str
    kind: str
    offset: Optional[int] = None
    epoch: Optional[int] = None
    state: Optional[str] = None
    error: Optional[DecodeError] = None


def offset_prefix(offset: int) -> str:
    """``LogFileUtils.filenamePrefixFromOffset``: at least 20 digits, zero-padded, no grouping."""
    offset = int(offset)
    return ("-" if offset < 0 else "") + str(abs(offset)).zfill(OFFSET_WIDTH)


def segment_file_name(base_offset: int, suffix: str = LOG_SUFFIX) -> str:
    """``00000000000000000042.log`` etc.; ``suffix`` is any of the segment/index/snapshot suffixes (plus a
    state suffix such as ``.log.deleted``)."""
    return offset_prefix(base_offset) + suffix


def snapshot_file_name(end_offset: int, epoch: int, suffix: str = SNAPSHOT_SUFFIX) -> str:
    """``Snapshots.filenameFromSnapshotId`` + suffix: ``<20d>-<10d>.checkpoint``."""
    return f"{offset_prefix(end_offset)}-{str(int(epoch)).zfill(EPOCH_WIDTH)}{suffix}"


def classify_partition_file(name: str) -> PartitionFileName:
    """Classify a file inside a replica (or ``__cluster_metadata-0``) dir; never raises."""
    if name in PARTITION_FILES:
        return PartitionFileName(name, PARTITION_FILES[name])
    if name.endswith(".tmp") and name[:-4] in PARTITION_FILES:
        return PartitionFileName(name, PARTITION_FILES[name[:-4]], state="tmp")
    if ".checkpoint" in name:
        m = _SNAPSHOT_NAME.fullmatch(name)
        if m:
            state = "deleted" if m.group(3) else ("partial" if name.endswith(".part") else None)
            return PartitionFileName(name, "metadata_snapshot", int(m.group(1)), int(m.group(2)), state)
        return PartitionFileName(name, "other", error=DecodeError(
            "unrecognised_file", f"'{name}' is not <20-digit offset>-<10-digit epoch>.checkpoint"))
    state = None
    base = name
    for suffix, state_name in STATE_SUFFIXES.items():
        if name.endswith(suffix):
            base, state = name[: -len(suffix)], state_name
            break
    dot = base.find(".")
    suffix = base[dot:] if dot >= 0 else ""
    if suffix not in SEGMENT_SUFFIXES:
        return PartitionFileName(name, "other", error=DecodeError(
            "unrecognised_file", f"'{name}' is not a file Kafka keeps in a partition directory"))
    offset = parse_long(base[:dot])  # LogFileUtils.offsetFromFileName: Long.parseLong of the text before '.'
    if offset is None:
        return PartitionFileName(name, SEGMENT_SUFFIXES[suffix], state=state, error=DecodeError(
            "unrecognised_file", f'For input string: "{base[:dot]}"'))
    return PartitionFileName(name, SEGMENT_SUFFIXES[suffix], offset, None, state)


def is_metadata_topic_id(topic_id: Optional[str]) -> bool:
    """True for ``AAAAAAAAAAAAAAAAAAAAAQ``, the fixed topic id of ``__cluster_metadata``."""
    return topic_id == kafka_uuid.METADATA_TOPIC_ID_STR


__all__ = [
    "EntryName", "KINDS", "PartitionFileName", "classify_entry", "classify_partition_file", "delete_dir_name",
    "future_dir_name", "is_metadata_topic_id", "kafka_name_error", "log_dir_name", "new_unique_id",
    "offset_prefix", "parse_topic_partition_name", "segment_file_name", "snapshot_file_name", "stray_dir_name",
]
