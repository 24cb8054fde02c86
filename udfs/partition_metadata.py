"""``partition.metadata``: what Kafka's reader makes of a replica directory's topic-id file, and the writer.

Reader rules (storage/src/main/java/org/apache/kafka/storage/internals/checkpoint/PartitionMetadataReadBuffer.java
and PartitionMetadataFile.java, apache/kafka@1eb7644), in the order Kafka applies them:

1. The file is read with ``BufferedReader.readLine`` (strict UTF-8; only two lines are ever read, any line
   break ``\\n``/``\\r``/``\\r\\n``, a trailing newline is fine).
2. Line 1 is split on ``:\\s+`` (Java split: trailing empty parts dropped) and must give exactly 2 parts; the
   key text is not checked. ``Integer.parseInt(part 2)`` (so ``"0 "`` fails) -> else
   ``Malformed line in checkpoint file [<path>]: <line>``.
3. Version must be >= 0 (any higher version is accepted) -> else
   ``Unrecognized version of partition metadata file + (<path>): <v>`` (the ``+ (`` is Kafka's).
4. Line 2 is split the same way (2 parts or "Malformed line"), then ``Uuid.fromString(part 2)``; ZERO ->
   ``Invalid topic ID in partition metadata file (<path>)``.

Outcomes: every IOException above (and undecodable UTF-8) is wrapped by ``PartitionMetadataFile.read`` in
``KafkaStorageException: Error while reading partition metadata file <path>`` and takes the **log dir
offline**. An empty file or a missing line 2 (``readLine()`` returns null -> ``NullPointerException``) and a
bad base64 id (``IllegalArgumentException``) are not IOExceptions: they escape ``LogManager.loadLogs`` and
**stop the broker from starting**.

Writer: ``"version: 0\\ntopic_id: " + id`` - two lines, no trailing newline (``PartitionMetadata.encode``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import kafka_uuid
from .errors import DecodeError
from .java_text import decode_utf8_like_java, java_split, parse_int, read_lines

FILE_NAME = "partition.metadata"
CURRENT_VERSION = 0

OK = "ok"
LOG_DIR_OFFLINE = "log_dir_offline"
BROKER_START_FAILS = "broker_start_fails"
OUTCOMES = (OK, LOG_DIR_OFFLINE, BROKER_START_FAILS)

_SEPARATOR = r":\s+"


@dataclass(frozen=True)
class PartitionMetadataResult:
    """What Kafka's ``PartitionMetadataFile.read()`` does with one file.

    ``outcome``: ``ok`` | ``log_dir_offline`` | ``broker_start_fails``. ``topic_id`` is the canonical
    22-char form of the id Kafka holds in memory (``AAAAAAAAAAAAA7SrBWaJ7h`` reads as ``...7g``). ``message`` is
    the text of the exception Kafka throws (the cause, for a ``KafkaStorageException``), ``exception`` its
    class, ``path`` the location used in the messages.
    """

    outcome: str
    version: Optional[int]
    topic_id: Optional[str]
    message: Optional[str]
    error: Optional[DecodeError]
    exception: Optional[str] = None
    path: str = FILE_NAME

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    def kafka_read(self) -> str:
        """One line in the form the fixtures' ``expected.json`` uses for "what Kafka's read() returned"."""
        if self.outcome == OK:
            return "ok"
        if self.outcome == LOG_DIR_OFFLINE:
            return (f"KafkaStorageException: Error while reading partition metadata file {self.path} "
                    f"(cause {self.exception}: {self.message})")
        return f"{self.exception}: {self.message}"


def _fail(outcome: str, kind: str, message: str, exception: str, path: str, version: Optional[int] = None,
          line: Optional[int] = None) -> PartitionMetadataResult:
    return PartitionMetadataResult(outcome, version, None, message, DecodeError(kind, message, line=line), exception, path)


def read_partition_metadata(data: bytes, path: str = FILE_NAME) -> PartitionMetadataResult:
    """Apply Kafka's ``partition.metadata`` reader to the file's bytes; never raises.

    ``path`` is used verbatim in Kafka's messages (Kafka prints the absolute path).

    Example::

        read_partition_metadata(b"version: 0\\ntopic_id: xWt6cg-LDx4r6BAz2rYsCg").topic_id
        # 'xWt6cg-LDx4r6BAz2rYsCg'
    """
    text, decode_error = decode_utf8_like_java(bytes(data), lines_needed=2)
    if text is None:
        return _fail(LOG_DIR_OFFLINE, "invalid_utf8", decode_error or "", "MalformedInputException", path)
    lines = read_lines(text)

    def malformed(line: str, number: int, version: Optional[int] = None) -> PartitionMetadataResult:
        return _fail(LOG_DIR_OFFLINE, "malformed_line", f"Malformed line in checkpoint file [{path}]: {line}",
                     "IOException", path, version, number)

    if not lines:
        return _fail(BROKER_START_FAILS, "empty_file",
                     "partition.metadata is empty: readLine() returned null and Pattern.split(null) threw",
                     "NullPointerException", path, line=1)
    version_parts = java_split(_SEPARATOR, lines[0])
    if len(version_parts) != 2:
        return malformed(lines[0], 1)
    version = parse_int(version_parts[1])
    if version is None:
        return malformed(lines[0], 1)  # Kafka turns the NumberFormatException into "Malformed line"
    if version < CURRENT_VERSION:
        return _fail(LOG_DIR_OFFLINE, "bad_version",
                     f"Unrecognized version of partition metadata file + ({path}): {version}",
                     "IOException", path, version, 1)
    if len(lines) < 2:
        return _fail(BROKER_START_FAILS, "malformed_line",
                     "partition.metadata has no line 2: readLine() returned null and Pattern.split(null) threw",
                     "NullPointerException", path, version, 2)
    id_parts = java_split(_SEPARATOR, lines[1])
    if len(id_parts) != 2:
        return malformed(lines[1], 2, version)
    parsed = kafka_uuid.parse(id_parts[1])
    if not parsed.ok:
        return _fail(BROKER_START_FAILS, "invalid_uuid", parsed.reason or "", "IllegalArgumentException", path,
                     version, 2)
    if parsed.raw == kafka_uuid.ZERO:
        return _fail(LOG_DIR_OFFLINE, "zero_uuid", f"Invalid topic ID in partition metadata file ({path})",
                     "IOException", path, version, 2)
    return PartitionMetadataResult(OK, version, parsed.text, None, None, None, path)


def encode_partition_metadata(topic_id_str: str) -> bytes:
    """``PartitionMetadata(0, id).encode()`` as UTF-8: ``b"version: 0\\ntopic_id: <id>"``, no trailing newline.

    ``ValueError`` if ``topic_id_str`` is not a Kafka Uuid string or is ZERO (Kafka never writes either).
    """
    raw = kafka_uuid.from_string(topic_id_str)
    if raw == kafka_uuid.ZERO:
        raise ValueError("Kafka never writes the ZERO topic id to partition.metadata")
    return f"version: {CURRENT_VERSION}\ntopic_id: {kafka_uuid.to_string(raw)}".encode("utf-8")


__all__ = ["BROKER_START_FAILS", "LOG_DIR_OFFLINE", "OK", "OUTCOMES", "PartitionMetadataResult",
           "encode_partition_metadata", "read_partition_metadata"]
