"""``kafka-log-dirs --describe`` output -> one row per (broker, log dir, replica).

Shape from tools/src/main/java/org/apache/kafka/tools/LogDirsCommand.java (apache/kafka@1eb7644): the tool
prints ``Querying brokers for log directories information``, then ``Received log directory information from
brokers 1,2,3``, then one compact JSON line
``{"version":1,"brokers":[{"broker":N,"logDirs":[{"logDir":..,"error":null|"<exception class>",
"partitions":[{"partition":"<topic>-<p>","size":..,"offsetLag":..,"isFuture":false}]}]}]}``
(keys come from Java HashMaps, so their order is arbitrary). ``partition`` is ``TopicPartition.toString()``;
topics may contain ``-``, so it is split at the *last* ``-``.

Rows carry exactly the non-run columns of ``bronze_reported_replicas``; a log dir with no partitions (e.g.
an offline one with ``error`` set) still gets one row with ``topic``/``partition`` None.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Union

from .errors import DecodeError
from .java_text import parse_int

ROW_COLUMNS = ("source_file", "broker_id", "log_dir", "log_dir_error", "topic", "partition", "size", "offset_lag",
               "is_future")


@dataclass
class LogDirsDescribe:
    """Parsed output: ``rows`` (dicts with :data:`ROW_COLUMNS`), ``errors`` and the broker list the tool
    announced (``Received log directory information from brokers ...``)."""

    rows: List[Dict[str, Any]] = field(default_factory=list)
    errors: List[DecodeError] = field(default_factory=list)
    brokers_announced: Optional[List[int]] = None
    version: Optional[int] = None


def split_topic_partition(text: Any) -> Optional[tuple]:
    """``"my-topic-3"`` -> ``("my-topic", 3)``; None if it is not ``<topic>-<int>``."""
    if not isinstance(text, str) or "-" not in text:
        return None
    topic, _, part = text.rpartition("-")
    partition = parse_int(part)
    if not topic or partition is None:
        return None
    return topic, partition


def _int_or_none(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_log_dirs_output(text_or_lines: Union[str, Iterable[str]], source_file: Optional[str] = None) -> LogDirsDescribe:
    """Parse the tool's stdout (a string or lines); never raises.

    Example::

        out = parse_log_dirs_output(open("log-dirs.txt").read(), "log-dirs.txt")
        out.rows[0]  # {'broker_id': 1, 'log_dir': '/var/lib/kafka', 'topic': 'orders', 'partition': 0, ...}
    """
    lines = text_or_lines.splitlines() if isinstance(text_or_lines, str) else [line.rstrip("\r\n") for line in text_or_lines]
    result = LogDirsDescribe()
    doc = None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("Received log directory information from brokers"):
            ids = stripped[len("Received log directory information from brokers"):].strip()
            result.brokers_announced = [v for v in (parse_int(x) for x in ids.split(",") if x) if v is not None]
            continue
        if not stripped.startswith("{"):
            continue
        try:
            doc = json.loads(stripped)
        except (ValueError, RecursionError) as exc:
            result.errors.append(DecodeError("bad_json", f"log-dirs JSON does not parse: {exc}", line=number))
            return result
        json_line = number
        break
    if doc is None:
        if not result.errors:
            result.errors.append(DecodeError("empty_file", "no JSON line in kafka-log-dirs output"))
        return result
    if not isinstance(doc, dict) or not isinstance(doc.get("brokers"), list):
        result.errors.append(DecodeError("bad_json", 'expected {"version":1,"brokers":[...]}', line=json_line))
        return result
    result.version = _int_or_none(doc.get("version"))
    if result.version != 1:
        result.errors.append(DecodeError("bad_version", f"log-dirs JSON version {doc.get('version')!r}, expected 1",
                                         line=json_line))
    for broker in doc["brokers"]:
        if not isinstance(broker, dict) or _int_or_none(broker.get("broker")) is None:
            result.errors.append(DecodeError("bad_json", f"broker entry without an int 'broker': {broker!r:.200}",
                                             line=json_line))
            continue
        log_dirs = broker.get("logDirs")
        if not isinstance(log_dirs, list):
            result.errors.append(DecodeError("bad_json", f"broker {broker['broker']}: 'logDirs' is not a list",
                                             line=json_line))
            continue
        for log_dir in log_dirs:
            if not isinstance(log_dir, dict) or not isinstance(log_dir.get("logDir"), str):
                result.errors.append(DecodeError("bad_json", f"logDirs entry without 'logDir': {log_dir!r:.200}",
                                                 line=json_line))
                continue
            base = {"source_file": source_file, "broker_id": broker["broker"], "log_dir": log_dir["logDir"],
                    "log_dir_error": log_dir.get("error") if isinstance(log_dir.get("error"), str) else None}
            partitions = log_dir.get("partitions")
            if partitions is None:
                partitions = []
            if not isinstance(partitions, list):
                result.errors.append(DecodeError("bad_json", f"{log_dir['logDir']}: 'partitions' is not a list",
                                                 line=json_line))
                continue
            if not partitions:
                result.rows.append({**base, "topic": None, "partition": None, "size": None, "offset_lag": None,
                                    "is_future": None})
            for replica in partitions:
                tp = split_topic_partition(replica.get("partition") if isinstance(replica, dict) else None)
                if tp is None:
                    result.errors.append(DecodeError("bad_json", f"not a <topic>-<partition> replica: {replica!r:.200}",
                                                     line=json_line))
                    continue
                is_future = replica.get("isFuture")
                result.rows.append({**base, "topic": tp[0], "partition": tp[1],
                                    "size": _int_or_none(replica.get("size")),
                                    "offset_lag": _int_or_none(replica.get("offsetLag")),
                                    "is_future": is_future if isinstance(is_future, bool) else None})
    return result


__all__ = ["LogDirsDescribe", "ROW_COLUMNS", "parse_log_dirs_output", "split_topic_partition"]
