"""bronze_metadata_records' typed columns take their types from Kafka's message specs: checked here against the
schema file read as plain JSON (not through the code that derives them), and a source that disagrees fails."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.tables import bronze
from jobs.tables.record_columns import (
    COLUMN_SOURCES,
    KAFKA_TO_COLUMN,
    ColumnSpecError,
    derive_column_types,
    source_key,
)

SCHEMA = Path(__file__).resolve().parents[2] / "udfs" / "schemas" / "metadata_records.json"


def _snake_upper(name: str) -> str:
    return "".join(("_" + c if c.isupper() and i else c) for i, c in enumerate(name)).upper()


def _spec_fields() -> dict:
    """record type (TOPIC_RECORD ...) -> {json field name: Kafka type}, straight from the schema file."""
    raw = json.loads(SCHEMA.read_text())
    return {_snake_upper(m["name"]): {f["name"][0].lower() + f["name"][1:]: f["type"] for f in m["fields"]}
            for m in raw["messages"]}


def test_every_typed_column_has_the_type_of_the_fields_that_feed_it():
    spec, table = _spec_fields(), {c.name: c.type for c in bronze.METADATA_RECORDS.columns}
    fed = set()
    for record_type, columns in COLUMN_SOURCES.items():
        for column, source in columns.items():
            kafka_type = spec[record_type][source_key(source)]
            assert table[column] == KAFKA_TO_COLUMN[kafka_type], (record_type, column, kafka_type)
            fed.add(column)
    assert fed == set(derive_column_types())
    # the known cases, spelled out: a uuid is text, int64 is long, int8/bool fenced share an int column
    assert (spec["TOPIC_RECORD"]["topicId"], table["topic_id"]) == ("uuid", "string")
    assert (spec["PRODUCER_IDS_RECORD"]["nextProducerId"], table["next_producer_id"]) == ("int64", "long")
    assert {spec["REGISTER_BROKER_RECORD"]["fenced"], spec["BROKER_REGISTRATION_CHANGE_RECORD"]["fenced"]} == \
        {"bool", "int8"} and table["fenced"] == "int"


def test_a_source_naming_a_field_kafka_does_not_have_fails():
    with pytest.raises(ColumnSpecError, match="TOPIC_RECORD has no field 'topicName'"):
        derive_column_types({**COLUMN_SOURCES, "TOPIC_RECORD": {"topic_name": "topicName"}})


def test_a_column_fed_by_fields_of_different_kinds_fails():
    bad = {**COLUMN_SOURCES, "FEATURE_LEVEL_RECORD": {"feature_name": "name", "broker_epoch": "featureLevel"}}
    with pytest.raises(ColumnSpecError, match="column broker_epoch is long from .* but int from FEATURE_LEVEL"):
        derive_column_types(bad)
