"""MetadataRecord -> bronze_metadata_records row, driven by one table of (record type -> {column: data key}).

The typed columns (topic_id, replicas, fenced, ...) are lifted out of each record's ``data`` dict (Kafka's
DumpLogSegments JSON names) so later stages never parse ``payload_json``. Adding a record type means adding
one line to :data:`COLUMN_SOURCES`, not a branch.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Dict, Mapping, Optional

from udfs.metadata_record import MetadataRecord

# A data key, or (data key, value used when the key is absent: a tagged field left at its default).
Source = Any

_PARTITION = {
    "topic_id": "topicId", "partition_id": "partitionId", "replicas": "replicas", "isr": "isr",
    "leader": "leader", "removing_replicas": "removingReplicas", "adding_replicas": "addingReplicas",
    "directories": "directories",
}

COLUMN_SOURCES: Dict[str, Dict[str, Source]] = {
    "TOPIC_RECORD": {"topic_name": "name", "topic_id": "topicId"},
    "PARTITION_RECORD": _PARTITION,
    # absent tagged fields mean "no change": they stay null (Leader's -2 sentinel is never written)
    "PARTITION_CHANGE_RECORD": _PARTITION,
    "REMOVE_TOPIC_RECORD": {"topic_id": "topicId"},
    "REGISTER_BROKER_RECORD": {"broker_id": "brokerId", "broker_epoch": "brokerEpoch", "fenced": "fenced",
                               "directories": "logDirs"},
    "UNREGISTER_BROKER_RECORD": {"broker_id": "brokerId", "broker_epoch": "brokerEpoch"},
    "FENCE_BROKER_RECORD": {"broker_id": "id", "broker_epoch": "epoch"},
    "UNFENCE_BROKER_RECORD": {"broker_id": "id", "broker_epoch": "epoch"},
    # Fenced is tagged with default 0 ("no change"): omitted in the record, 0 in the column
    "BROKER_REGISTRATION_CHANGE_RECORD": {"broker_id": "brokerId", "broker_epoch": "brokerEpoch",
                                          "fenced": ("fenced", 0), "directories": "logDirs"},
    "PRODUCER_IDS_RECORD": {"broker_id": "brokerId", "broker_epoch": "brokerEpoch",
                            "next_producer_id": "nextProducerId"},
    "FEATURE_LEVEL_RECORD": {"feature_name": "name", "feature_level": "featureLevel"},
    "ZK_MIGRATION_STATE_RECORD": {"zk_migration_state": "zkMigrationState"},
    "CONFIG_RECORD": {"config_resource_type": "resourceType", "config_resource_name": "resourceName",
                      "config_name": "name", "config_value": "value"},
}

# Target type of every typed column (mirrors jobs/tables/bronze.py METADATA_RECORDS).
COLUMN_TYPES: Dict[str, str] = {
    "topic_id": "string", "topic_name": "string", "partition_id": "int", "broker_id": "int",
    "broker_epoch": "long", "replicas": "array<int>", "isr": "array<int>", "leader": "int",
    "removing_replicas": "array<int>", "adding_replicas": "array<int>", "directories": "array<string>",
    "fenced": "int", "next_producer_id": "long", "feature_name": "string", "feature_level": "int",
    "zk_migration_state": "int", "config_resource_type": "int", "config_resource_name": "string",
    "config_name": "string", "config_value": "string",
}


def _coerce(value: Any, type_name: str) -> Any:
    """JSON value -> column value; a value of the wrong shape becomes null rather than failing the file."""
    if value is None:
        return None
    try:
        if type_name in ("int", "long"):
            if isinstance(value, bool):
                return int(value)
            return int(value) if isinstance(value, (int, float)) or str(value).lstrip("-").isdigit() else None
        if type_name == "string":
            return value if isinstance(value, str) else None
        if type_name == "array<int>":
            return [int(v) for v in value] if isinstance(value, list) else None
        if type_name == "array<string>":
            return [str(v) for v in value] if isinstance(value, list) else None
    except (TypeError, ValueError):
        return None
    return None


def _fast(type_name: str):
    """The coercion of one column type, with the common case (the decoder's own types) checked first."""
    if type_name in ("int", "long"):
        return lambda v: v if type(v) is int else _coerce(v, type_name)
    if type_name == "string":
        return lambda v: v if type(v) is str else None
    item = int if type_name == "array<int>" else str
    return lambda v: v if type(v) is list and all(type(x) is item for x in v) else _coerce(v, type_name)


# per record type: (column, data key, value when absent, coercion), built once from the table above
_PLANS: Dict[str, tuple] = {
    record_type: tuple((column, *(source if isinstance(source, tuple) else (source, None)),
                        _fast(COLUMN_TYPES[column])) for column, source in sources.items())
    for record_type, sources in COLUMN_SOURCES.items()
}
_NO_COLUMNS: Dict[str, Any] = dict.fromkeys(COLUMN_TYPES)


def typed_columns(record_type: Optional[str], data: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The typed columns of one record: every column of :data:`COLUMN_TYPES`, null when not applicable."""
    out = _NO_COLUMNS.copy()
    plan = _PLANS.get(record_type or "")
    if not plan or not (type(data) is dict or isinstance(data, Mapping)):
        return out
    get = data.get
    for column, key, default, coerce in plan:
        value = get(key, default)
        out[column] = None if value is None else coerce(value)
    return out


def record_hash(record: MetadataRecord, payload: Optional[str] = None) -> str:
    """Hash of what a record says (control flag, type, version, payload), equal across copies of one record.

    Control records other than transaction markers hash by type only: kafka-dump-log prints no payload for
    LEADER_CHANGE and no version for any control record, and their content is implied by offset and epoch.
    """
    if record.is_control:
        text = f"control|{record.type}"
    elif record.data is not None:
        text = f"{record.type}|{record.version}|{payload if payload is not None else record.payload_json()}"
    else:
        text = f"undecodable|{record.type}|{record.version}|{(record.raw_value or b'').hex()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@lru_cache(maxsize=4096)  # the records of one batch share its timestamp
def millis_to_datetime(millis: Optional[int]) -> Optional[datetime]:
    if millis is None or millis < 0:
        return None
    try:
        return datetime.fromtimestamp(millis / 1000.0, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def metadata_row(record: MetadataRecord, source: Mapping[str, Any]) -> Dict[str, Any]:
    """One bronze_metadata_records row (without capture_id/run_id).

    ``source`` gives copy_id, source_broker_id, source_file, source_kind, section and snapshot_end_offset.
    """
    payload = record.payload_json()
    row: Dict[str, Any] = {
        "copy_id": source.get("copy_id"),
        "source_broker_id": source.get("source_broker_id"),
        "source_file": source.get("source_file"),
        "source_kind": source.get("source_kind"),
        "section": source.get("section"),
        "snapshot_end_offset": source.get("snapshot_end_offset"),
        "offset": record.offset,
        "batch_base_offset": record.batch_base_offset,
        "leader_epoch": record.leader_epoch,
        "append_time": millis_to_datetime(record.timestamp),
        "is_control": bool(record.is_control),
        "record_type": record.type,
        "api_key": record.api_key,
        "version": record.version,
        "payload_json": payload,
        "record_hash": record_hash(record, payload),
        "error_kind": record.error.kind if record.error else None,
        "error_message": record.error.message if record.error else None,
    }
    row.update(typed_columns(record.type, record.data))
    return row



def batch_row(summary: Mapping[str, Any], source: Mapping[str, Any]) -> Dict[str, Any]:
    """One bronze_metadata_batches row (without capture_id/run_id) from a batch summary
    (``udfs.metadata_log.iter_metadata_batches`` or a dump-log batch line) and its ``source``."""
    error = summary.get("error")
    return {
        "copy_id": source.get("copy_id"), "source_broker_id": source.get("source_broker_id"),
        "source_file": source.get("source_file"), "source_kind": source.get("source_kind"),
        "section": source.get("section"), "snapshot_end_offset": source.get("snapshot_end_offset"),
        "base_offset": summary.get("base_offset"), "last_offset": summary.get("last_offset"),
        "records": summary.get("records"), "leader_epoch": summary.get("leader_epoch"), "crc": summary.get("crc"),
        "crc_valid": summary.get("crc_valid"), "is_control": summary.get("is_control"),
        "is_transactional": summary.get("is_transactional"), "position": summary.get("position"),
        "size_bytes": summary.get("size_bytes"), "max_timestamp": millis_to_datetime(summary.get("max_timestamp_ms")),
        "error_kind": error.kind if error is not None else None,
        "error_message": error.message if error is not None else None,
    }
