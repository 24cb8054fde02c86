"""Schemas as data: version grammar, the vendored schema files, and one broken spec per load-time invariant."""
from __future__ import annotations

import copy
import json

import pytest

from udfs.message_spec import (
    MAX_VERSION,
    NONE,
    SCHEMA_DIR,
    SCHEMA_FORMAT,
    SpecError,
    Versions,
    field_from_dict,
    load_schema,
    message_from_dict,
    schema_from_dict,
    upper_snake,
)

UPSTREAM = "1eb7644349cb07139d6a3c1ad1986979647cac99"
RELEASE = "4.3"  # the newest Kafka release the schemas describe (docs/kafka-versions.md)

# Record types and version ranges of kafka-formats.md §4.3 and the control/producer schemas.
METADATA = {
    0: ("REGISTER_BROKER_RECORD", "0-4"), 1: ("UNREGISTER_BROKER_RECORD", "0"), 2: ("TOPIC_RECORD", "0"),
    3: ("PARTITION_RECORD", "0-2"), 4: ("CONFIG_RECORD", "0"), 5: ("PARTITION_CHANGE_RECORD", "0-2"),
    7: ("FENCE_BROKER_RECORD", "0"), 8: ("UNFENCE_BROKER_RECORD", "0"), 9: ("REMOVE_TOPIC_RECORD", "0"),
    10: ("DELEGATION_TOKEN_RECORD", "0"), 11: ("USER_SCRAM_CREDENTIAL_RECORD", "0"),
    12: ("FEATURE_LEVEL_RECORD", "0"), 14: ("CLIENT_QUOTA_RECORD", "0"), 15: ("PRODUCER_IDS_RECORD", "0"),
    17: ("BROKER_REGISTRATION_CHANGE_RECORD", "0-3"), 18: ("ACCESS_CONTROL_ENTRY_RECORD", "0"),
    19: ("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", "0"), 20: ("NO_OP_RECORD", "0"),
    21: ("ZK_MIGRATION_STATE_RECORD", "0"), 22: ("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", "0"),
    23: ("BEGIN_TRANSACTION_RECORD", "0"), 24: ("END_TRANSACTION_RECORD", "0"),
    25: ("ABORT_TRANSACTION_RECORD", "0"), 26: ("REMOVE_DELEGATION_TOKEN_RECORD", "0"),
    27: ("REGISTER_CONTROLLER_RECORD", "0"), 28: ("CLEAR_ELR_RECORD", "0"),
}


@pytest.mark.parametrize("text,low,high,shown", [("3", 3, 3, "3"), ("0-2", 0, 2, "0-2"), ("3+", 3, MAX_VERSION, "3+"),
                                                 ("none", MAX_VERSION + 1, -1, "none")])
def test_versions_grammar(text, low, high, shown):
    v = Versions.parse(text)
    assert (v.lowest, v.highest, str(v)) == (low, high, shown)


def test_versions_operations():
    assert Versions.parse("0-2").intersect(Versions.parse("1+")) == Versions.parse("1-2")
    assert Versions.parse("0-2").intersect(Versions.parse("3+")) == NONE
    assert Versions.parse("2+").contains(7) and not Versions.parse("2+").contains(1)
    assert NONE.empty and not NONE.contains(0)
    assert Versions.parse("0+").contains_range(Versions.parse("3+"))
    assert not Versions.parse("1-2").contains_range(Versions.parse("0-2"))
    assert Versions.parse(None, NONE) == NONE
    for bad in ("x", "2-1", "-1", "1-x+"):
        with pytest.raises(SpecError):
            Versions.parse(bad)


def test_upper_snake_is_kafkas_to_snake_case():
    assert upper_snake("PartitionChangeRecord") == "PARTITION_CHANGE_RECORD"
    assert upper_snake("ZkMigrationStateRecord") == "ZK_MIGRATION_STATE_RECORD"
    assert upper_snake("KRaftVersionRecord") == "KRAFT_VERSION_RECORD"  # no "_" between consecutive capitals


def test_every_metadata_record_type_is_described():
    schema = load_schema("metadata_records")
    assert (schema.upstream_commit, schema.upstream_release) == (UPSTREAM, RELEASE)
    found = {m.api_key: (m.type_name, str(m.valid_versions)) for m in schema.messages}
    assert found == METADATA
    assert all(str(m.flexible_versions) == "0+" for m in schema.messages)
    assert all(m.source.startswith("metadata/src/main/resources/common/metadata/") for m in schema.messages)


def test_control_and_producer_schemas():
    control = load_schema("control_records")
    assert (control.upstream_commit, control.upstream_release) == (UPSTREAM, RELEASE)
    assert [(m.name, str(m.valid_versions)) for m in control.messages] == [
        ("LeaderChangeMessage", "0-1"), ("SnapshotHeaderRecord", "0"), ("SnapshotFooterRecord", "0"),
        ("KRaftVersionRecord", "0"), ("VotersRecord", "0")]
    producer = load_schema("producer_snapshot").by_name("ProducerSnapshot")
    assert str(producer.flexible_versions) == "none" and str(producer.valid_versions) == "1"
    assert [f.name for f in producer.fields[1].fields] == [
        "ProducerId", "Epoch", "LastSequence", "LastOffset", "OffsetDelta", "Timestamp", "CoordinatorEpoch",
        "CurrentTxnFirstOffset"]


def test_schema_facts_match_the_reference_tables():
    schema = load_schema("metadata_records")
    pc = {f.name: f for f in schema.by_name("PartitionChangeRecord").fields}
    assert (pc["Leader"].tag, pc["Leader"].default) == (1, -2)
    assert (pc["LeaderRecoveryState"].tag, pc["LeaderRecoveryState"].default) == (5, -1)
    assert (pc["Directories"].tag, str(pc["Directories"].versions)) == (8, "1+")
    assert pc["Isr"].default is None and pc["Isr"].has_default
    rb = {f.name: f for f in schema.by_name("RegisterBrokerRecord").fields}
    assert rb["Fenced"].default is True and str(rb["IsMigratingZkBroker"].versions) == "2+"
    assert (rb["LogDirs"].tag, str(rb["LogDirs"].tagged_versions)) == (0, "3+")
    # KIP-1066 (Kafka 4.3): a nullable tagged list of directory ids, null by default, so a v4 registration of a
    # broker with no cordoned dir is the v3 body under version 4
    cordoned = rb["CordonedLogDirs"]
    assert (cordoned.tag, str(cordoned.tagged_versions), str(cordoned.nullable_versions)) == (1, "4+", "4+")
    assert cordoned.has_default and cordoned.default is None and cordoned.type == "[]uuid"
    brc = {f.name: f for f in schema.by_name("BrokerRegistrationChangeRecord").fields}
    assert (str(brc["CordonedLogDirs"].tagged_versions), brc["CordonedLogDirs"].default) == ("3+", None)
    assert [f.name for f in schema.by_name("ClearElrRecord").fields] == ["TopicName"]
    assert [f.json_name for f in schema.by_name("PartitionRecord").fields][6:9] == [
        "leader", "leaderRecoveryState", "leaderEpoch"]


def test_schema_files_are_our_format_not_kafkas():
    for path in (p for p in SCHEMA_DIR.iterdir() if p.name.endswith(".json")):
        doc = json.loads(path.read_text())
        assert doc["format"] == SCHEMA_FORMAT
        text = path.read_text()
        assert '"validVersions"' not in text and '"taggedVersions"' not in text


# ---- one broken spec per invariant --------------------------------------------------------------------------

GOOD_FIELD = {"name": "Leader", "type": "int32", "versions": "0+"}


def broken(**changes) -> dict:
    out = copy.deepcopy(GOOD_FIELD)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


FIELD_INVARIANTS = [
    ("bad name", broken(name="1Leader"), "Invalid field name"),
    ("bad name chars", broken(name="Lea_der"), "Invalid field name"),
    ("nullable int", broken(nullable_versions="0+"), "cannot be nullable"),
    ("tag without tagged versions", broken(tag=0), "no tagged versions"),
    ("tagged versions without tag", broken(tagged_versions="0+"), "no tag"),
    ("negative tag", broken(tag=-1, tagged_versions="0+"), "cannot be negative"),
    ("tagged versions not open-ended", broken(tag=0, tagged_versions="0-2"), "not open-ended"),
    ("tagged versions not subset", broken(versions="1+", tag=0, tagged_versions="0+"), "subset of versions"),
    ("partly nullable tagged", {"name": "Isr", "type": "[]int32", "versions": "0+", "tag": 0,
                                "tagged_versions": "0+", "nullable_versions": "1+"}, "all tagged versions"),
    ("tagged map key", {"name": "Name", "type": "string", "versions": "0+", "tag": 0, "tagged_versions": "0+",
                        "map_key": True}, "cannot be used as keys"),
    ("int8 default out of range", broken(type="int8", default=200), "out of range"),
    ("int16 default out of range", broken(type="int16", default=-40000), "out of range"),
    ("uint16 default negative", broken(type="uint16", default=-1), "out of range"),
    ("int32 default not a number", broken(default="x"), "invalid default"),
    ("bool default not bool", broken(type="bool", default=1), "invalid default"),
    ("uuid default not a uuid", broken(type="uuid", default="nope"), "invalid default"),
    ("string default not text", broken(type="string", default=3), "invalid default"),
    ("null default, not nullable", {"name": "Rack", "type": "string", "versions": "0+", "default": None},
     "null cannot be the default"),
    ("null default, partly nullable", {"name": "Isr", "type": "[]int32", "versions": "0+",
                                       "nullable_versions": "1+", "default": None}, "null cannot be the default"),
    ("array default not empty", {"name": "Isr", "type": "[]int32", "versions": "0+", "default": [1]},
     "empty or null"),
    ("bytes default not empty", {"name": "Salt", "type": "bytes", "versions": "0+", "default": "AA=="},
     "empty or null"),
    ("flexible override on int", broken(flexible_versions="0+"), "only string and bytes"),
    ("fields on a primitive", broken(fields=[GOOD_FIELD]), "cannot have fields"),
    ("struct without fields", {"name": "EndPoints", "type": "[]BrokerEndpoint", "versions": "0+"}, "no fields"),
    ("nested array", {"name": "Isr", "type": "[][]int32", "versions": "0+"}, "nested arrays"),
    ("unknown primitive", broken(type="int128"), "unknown type"),
    ("missing versions", broken(versions=None), "version range is required"),
    ("unknown key", broken(nullableVersions="0+"), "unknown keys"),
    ("duplicate tag in struct", {"name": "S", "type": "[]S", "versions": "0+", "fields": [
        {"name": "A", "type": "int8", "versions": "0+", "tag": 1, "tagged_versions": "0+"},
        {"name": "B", "type": "int8", "versions": "0+", "tag": 1, "tagged_versions": "0+"}]}, "already used"),
    ("duplicate names in struct", {"name": "S", "type": "[]S", "versions": "0+", "fields": [GOOD_FIELD, GOOD_FIELD]},
     "duplicate field names"),
]


@pytest.mark.parametrize("case,raw,message", FIELD_INVARIANTS, ids=[c[0] for c in FIELD_INVARIANTS])
def test_field_invariants_fail_at_load(case, raw, message):
    with pytest.raises(SpecError, match=message):
        field_from_dict(raw)


def test_the_good_field_loads():
    f = field_from_dict(GOOD_FIELD)
    assert (f.json_name, f.default_value()) == ("leader", 0)


def message(**changes) -> dict:
    out = {"name": "TestRecord", "api_key": 99, "valid_versions": "0-1", "flexible_versions": "0+",
           "fields": [dict(GOOD_FIELD)]}
    out.update(changes)
    return out


MESSAGE_INVARIANTS = [
    ("no versions", message(valid_versions="none"), "must not be empty"),
    ("open-ended versions", message(valid_versions="0+"), "maximum version"),
    ("api key out of range", message(api_key=70000), "out of range"),
    ("duplicate field names", message(fields=[GOOD_FIELD, GOOD_FIELD]), "duplicate field names"),
    ("duplicate tags", message(fields=[
        {"name": "A", "type": "int8", "versions": "0+", "tag": 0, "tagged_versions": "0+"},
        {"name": "B", "type": "int8", "versions": "0+", "tag": 0, "tagged_versions": "0+"}]), "already used"),
    ("tags outside flexible versions", message(flexible_versions="1+", fields=[
        {"name": "A", "type": "int8", "versions": "0+", "tag": 0, "tagged_versions": "0+"}]),
     "not a subset of the flexible versions"),
    ("unknown message key", message(apiKey=3), "unknown keys"),
]


@pytest.mark.parametrize("case,raw,message_text", MESSAGE_INVARIANTS, ids=[c[0] for c in MESSAGE_INVARIANTS])
def test_message_invariants_fail_at_load(case, raw, message_text):
    with pytest.raises(SpecError, match=message_text):
        message_from_dict(raw)


def test_schema_file_invariants():
    with pytest.raises(SpecError, match="format"):
        schema_from_dict({"format": "kafka-json", "messages": []})
    with pytest.raises(SpecError, match="duplicate api_key"):
        schema_from_dict({"format": SCHEMA_FORMAT, "messages": [message(), message(name="Other")]})
    ok = schema_from_dict({"format": SCHEMA_FORMAT, "upstream": {"commit": "abc"}, "messages": [message()]})
    assert ok.by_api_key[99].name == "TestRecord" and ok.by_name("TEST_RECORD").name == "TestRecord"
