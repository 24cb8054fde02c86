"""bronze_metadata_records' typed columns, derived from Kafka's message specs (udfs/schemas/metadata_records.json).

Which record field feeds which column is the one hand-written fact (:data:`COLUMN_SOURCES`); each column's type
follows from the spec'd type of the fields that feed it (:data:`KAFKA_TO_COLUMN`), and a column fed by fields of
different kinds, or a source naming a field the spec does not have, fails at import. Ingest lifts the values
(jobs/ingest/metadata_rows.py); the table spec (jobs/tables/bronze.py) takes its columns from here.
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

from udfs.message_spec import load_schema

# A data key (Kafka's JSON name of the field), or (data key, value used when a tagged field is absent).
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
                               "directories": "logDirs", "cordoned_log_dirs": "cordonedLogDirs"},
    "UNREGISTER_BROKER_RECORD": {"broker_id": "brokerId", "broker_epoch": "brokerEpoch"},
    # a controller's node id shares the broker_id column: node ids are one namespace in KRaft
    "REGISTER_CONTROLLER_RECORD": {"broker_id": "controllerId"},
    "FENCE_BROKER_RECORD": {"broker_id": "id", "broker_epoch": "epoch"},
    "UNFENCE_BROKER_RECORD": {"broker_id": "id", "broker_epoch": "epoch"},
    # Fenced is tagged with default 0 ("no change"): omitted in the record, 0 in the column
    "BROKER_REGISTRATION_CHANGE_RECORD": {"broker_id": "brokerId", "broker_epoch": "brokerEpoch",
                                          "fenced": ("fenced", 0), "directories": "logDirs",
                                          "cordoned_log_dirs": "cordonedLogDirs"},
    "PRODUCER_IDS_RECORD": {"broker_id": "brokerId", "broker_epoch": "brokerEpoch",
                            "next_producer_id": "nextProducerId"},
    "FEATURE_LEVEL_RECORD": {"feature_name": "name", "feature_level": "featureLevel"},
    "ZK_MIGRATION_STATE_RECORD": {"zk_migration_state": "zkMigrationState"},
    "CONFIG_RECORD": {"config_resource_type": "resourceType", "config_resource_name": "resourceName",
                      "config_name": "name", "config_value": "value"},
}

# Kafka field type -> column type. Booleans are 0/1 integers: `fenced` also holds BrokerRegistrationChange's
# int8 (-1 fenced, 0 no change, 1 unfenced), so RegisterBroker's bool and it share one int column.
KAFKA_TO_COLUMN: Dict[str, str] = {
    "bool": "int", "int8": "int", "int16": "int", "int32": "int", "uint16": "int", "int64": "long",
    "string": "string", "uuid": "string",
    "[]int32": "array<int>", "[]string": "array<string>", "[]uuid": "array<string>",
}

# the table's column order and descriptions (types come from the spec)
COLUMN_ORDER: Tuple[Tuple[str, str], ...] = (
    ("topic_id", ""), ("topic_name", ""), ("partition_id", ""),
    ("broker_id", "BrokerId / Id of broker records and ProducerIdsRecord; ControllerId of RegisterControllerRecord"),
    ("broker_epoch", ""), ("replicas", ""), ("isr", ""), ("leader", ""), ("removing_replicas", ""),
    ("adding_replicas", ""), ("directories", ""),
    ("fenced", "RegisterBroker fenced (1/0) or BrokerRegistrationChange fenced (-1/0/1)"),
    ("next_producer_id", "ProducerIdsRecord NextProducerId"), ("feature_name", ""), ("feature_level", ""),
    ("zk_migration_state", ""), ("config_resource_type", ""), ("config_resource_name", ""), ("config_name", ""),
    ("config_value", ""),
    ("cordoned_log_dirs", "CordonedLogDirs of RegisterBrokerRecord v4+ / BrokerRegistrationChangeRecord v3+ (KIP-1066, "
     "Kafka 4.3); null: the record does not say (older version, or no change)"),
)


class ColumnSpecError(ValueError):
    """COLUMN_SOURCES disagrees with Kafka's message specs."""


def source_parts(source: Source) -> Tuple[str, Any]:
    """(data key, value when the field is absent) of one source."""
    return source if isinstance(source, tuple) else (source, None)


def source_key(source: Source) -> str:
    return source_parts(source)[0]


def derive_column_types(sources: Dict[str, Dict[str, Source]] = COLUMN_SOURCES) -> Dict[str, str]:
    """Each typed column's type, from the spec'd type of every field that feeds it (in COLUMN_ORDER's order)."""
    schema = load_schema("metadata_records")
    found: Dict[str, Tuple[str, str]] = {}  # column -> (type, where it came from)
    for record_type, columns in sources.items():
        message = schema.by_name(record_type)
        fields = {f.json_name: f for f in message.fields}
        for column, source in columns.items():
            key = source_key(source)
            if key not in fields:
                raise ColumnSpecError(f"{record_type} has no field {key!r} (column {column}); its fields: "
                                      f"{sorted(fields)}")
            kafka_type = fields[key].type
            if kafka_type not in KAFKA_TO_COLUMN:
                raise ColumnSpecError(f"{record_type}.{key} is {kafka_type}: no column type for it")
            kind, where = KAFKA_TO_COLUMN[kafka_type], f"{record_type}.{key} ({kafka_type})"
            if found.setdefault(column, (kind, where))[0] != kind:
                raise ColumnSpecError(f"column {column} is {found[column][0]} from {found[column][1]} but {kind} "
                                      f"from {where}")
    ordered = [name for name, _ in COLUMN_ORDER]
    if sorted(ordered) != sorted(found):
        raise ColumnSpecError(f"COLUMN_ORDER lists {sorted(ordered)}, the sources feed {sorted(found)}")
    return {name: found[name][0] for name in ordered}


COLUMN_TYPES: Dict[str, str] = derive_column_types()


def table_columns() -> Tuple[Tuple[str, str, str], ...]:
    """(name, type, description) of every typed column, for the table spec."""
    return tuple((name, COLUMN_TYPES[name], about) for name, about in COLUMN_ORDER)
