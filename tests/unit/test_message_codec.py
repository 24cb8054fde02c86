"""The generic codec: golden bytes, tagged-field rules, JSON order, and round trips for every schema/version."""
from __future__ import annotations

import base64

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from udfs import message_codec as mc
from udfs import message_values as mv
from udfs import message_writer as mw
from udfs import wire
from udfs.errors import CorruptInput
from udfs.message_spec import INTEGER_RANGES, load_schema, message_from_dict

META = load_schema("metadata_records")
CONTROL = load_schema("control_records")
PRODUCER = load_schema("producer_snapshot")
TOPIC_ID = "MKXx1fIkQy2J9jXHhK8m1w"
ALL_SPECS = [(schema, m) for schema in (META, CONTROL, PRODUCER) for m in schema.messages]
SPEC_VERSIONS = [(m, v) for _, m in ALL_SPECS for v in range(m.valid_versions.lowest, m.valid_versions.highest + 1)]


def test_topic_record_golden_bytes_from_the_reference():
    # kafka-formats.md §4.2: TopicRecord v0 {name="foo", topicId=MKXx1fIkQy2J9jXHhK8m1w}, after the 3-byte frame
    body = bytes.fromhex("04666f6f30a5f1d5f224432d89f635c784af26d700")
    spec = META.by_name("TopicRecord")
    assert mw.encode(spec, 0, {"name": "foo", "topicId": TOPIC_ID}) == body
    assert mc.decode(spec, 0, body) == ({"name": "foo", "topicId": TOPIC_ID}, len(body))


def test_uuid_accepts_raw_bytes_on_encode():
    spec = META.by_name("TopicRecord")
    raw = base64.urlsafe_b64decode(TOPIC_ID + "==")
    assert mw.encode(spec, 0, {"name": "foo", "topicId": raw}) == mw.encode(spec, 0, {"name": "foo", "topicId": TOPIC_ID})


def tag_numbers(body: bytes, untagged_len: int) -> list:
    count, pos = wire.read_uvarint(body, untagged_len)
    tags = []
    for _ in range(count):
        tag, pos = wire.read_uvarint(body, pos)
        size, pos = wire.read_uvarint(body, pos)
        tags.append(tag)
        pos += size
    return tags


def test_tags_are_written_in_ascending_order_and_json_keeps_spec_order():
    spec = META.by_name("PartitionChangeRecord")
    data = {"partitionId": 3, "topicId": TOPIC_ID, "directories": [TOPIC_ID], "eligibleLeaderReplicas": [2],
            "leader": 1}
    body = mw.encode(spec, 2, data)
    assert tag_numbers(body, 4 + 16) == [1, 6, 8]  # Directories is tag 8 although declared before tag 6
    decoded, _ = mc.decode(spec, 2, body)
    assert list(decoded) == ["partitionId", "topicId", "leader", "directories", "eligibleLeaderReplicas"]


def test_default_tagged_fields_are_omitted_on_write_and_from_json():
    spec = META.by_name("PartitionChangeRecord")
    body = mw.encode(spec, 0, {"partitionId": 0, "topicId": TOPIC_ID, "leader": -2, "isr": None,
                               "leaderRecoveryState": -1})
    assert body[-1] == 0  # zero tagged fields
    # A writer that puts a default value on the wire anyway: Kafka's JSON still omits it.
    explicit = body[:-1] + bytes([1, 1, 4]) + wire.INT32.pack(-2)
    assert mc.decode(spec, 0, explicit)[0] == {"partitionId": 0, "topicId": TOPIC_ID}


def test_interleaved_tagged_field_appears_at_its_spec_position():
    spec = META.by_name("PartitionRecord")
    data = {"partitionId": 0, "topicId": TOPIC_ID, "replicas": [1], "isr": [1], "removingReplicas": [],
            "addingReplicas": [], "leader": 1, "leaderRecoveryState": 1, "leaderEpoch": 3, "partitionEpoch": 4,
            "directories": [TOPIC_ID]}
    decoded, _ = mc.decode(spec, 1, mw.encode(spec, 1, data))
    assert list(decoded) == list(data)
    data["leaderRecoveryState"] = 0
    decoded, _ = mc.decode(spec, 1, mw.encode(spec, 1, data))
    assert "leaderRecoveryState" not in decoded


def test_unknown_tags_are_kept_out_of_json_and_written_back():
    spec = META.by_name("TopicRecord")
    body = bytes.fromhex("04666f6f30a5f1d5f224432d89f635c784af26d7") + bytes([2, 3, 2, 0xAB, 0xCD, 9, 1, 0x01])
    decoded, end = mc.decode(spec, 0, body)
    assert end == len(body)
    assert decoded == {"name": "foo", "topicId": TOPIC_ID}
    assert isinstance(decoded, mv.MessageData)
    assert decoded.unknown_tagged_fields == [(3, b"\xab\xcd"), (9, b"\x01")]
    assert mw.encode(spec, 0, decoded) == body


def test_known_tag_in_a_version_where_it_is_not_valid():
    spec = META.by_name("PartitionChangeRecord")
    v0 = mw.encode(spec, 0, {"partitionId": 0, "topicId": TOPIC_ID})
    with_directories = v0[:-1] + bytes([1, 8, 2, 1, 0])  # tag 8 (Directories, v1+) at version 0
    with pytest.raises(CorruptInput) as info:
        mc.decode(spec, 0, with_directories)
    assert info.value.error.kind == "invalid_tag"
    assert "Tag 8 is not valid for version 0" in info.value.error.message


def test_non_default_field_missing_from_version_is_refused():
    spec = META.by_name("RegisterBrokerRecord")
    with pytest.raises(ValueError, match="non-default isMigratingZkBroker at version 1"):
        mw.encode(spec, 1, {"brokerId": 1, "isMigratingZkBroker": True})
    # default values of absent fields are fine (one data object for all versions)
    assert mw.encode(spec, 1, {"brokerId": 1, "isMigratingZkBroker": False})


def test_versions_outside_the_spec():
    spec = META.by_name("TopicRecord")
    with pytest.raises(CorruptInput) as info:
        mc.decode(spec, 1, b"\x00")
    assert info.value.error.kind == "unknown_version"
    with pytest.raises(ValueError):
        mw.encode(spec, 1, {})


def test_non_flexible_producer_snapshot_layout():
    spec = PRODUCER.by_name("ProducerSnapshot")
    entry = {"producerId": 7, "epoch": 1, "lastSequence": 2, "lastOffset": 3, "offsetDelta": 1, "timestamp": 5,
             "coordinatorEpoch": -1, "currentTxnFirstOffset": -1}
    body = mw.encode(spec, 1, {"crc": 0xFFFFFFFF, "producerEntries": [entry]})
    assert body[:8] == bytes.fromhex("ffffffff00000001")  # uint32 crc, int32 array count
    assert len(body) == 4 + 4 + (8 + 2 + 4 + 8 + 4 + 8 + 4 + 8)
    assert mc.decode(spec, 1, body) == ({"crc": 0xFFFFFFFF, "producerEntries": [entry]}, len(body))


def test_bytes_are_base64_and_float64_round_trips():
    scram = META.by_name("UserScramCredentialRecord")
    data = {"name": "alice", "mechanism": 1, "salt": base64.b64encode(b"\x00\x01salt").decode(), "storedKey": "",
            "serverKey": base64.b64encode(b"k").decode(), "iterations": 4096}
    assert mc.decode(scram, 0, mw.encode(scram, 0, data))[0] == data
    assert mw.encode(scram, 0, dict(data, salt=b"\x00\x01salt")) == mw.encode(scram, 0, data)
    quota = META.by_name("ClientQuotaRecord")
    q = {"entity": [{"entityType": "user", "entityName": None}], "key": "producer_byte_rate", "value": 1048576.0,
         "remove": False}
    assert mc.decode(quota, 0, mw.encode(quota, 0, q))[0] == q


def test_value_errors_name_the_field():
    spec = META.by_name("TopicRecord")
    with pytest.raises(ValueError, match="topicId"):
        mw.encode(spec, 0, {"name": "x", "topicId": "not-a-uuid"})
    with pytest.raises(ValueError, match="name"):
        mw.encode(spec, 0, {"name": None})
    with pytest.raises(ValueError, match="partitionId"):
        mw.encode(META.by_name("PartitionRecord"), 0, {"partitionId": 2**31})


def test_truncated_bodies_raise_corrupt_input_with_offsets():
    spec = META.by_name("PartitionRecord")
    body = mw.encode(spec, 1, {"partitionId": 1, "topicId": TOPIC_ID, "replicas": [1, 2], "directories": []})
    for cut in range(len(body)):
        with pytest.raises(CorruptInput) as info:
            mc.decode(spec, 1, body[:cut])
        assert info.value.error.offset is not None and info.value.error.offset <= cut


STRUCTS_SPEC = message_from_dict({
    "name": "ShapesRecord", "api_key": 500, "valid_versions": "0-1", "flexible_versions": "1+", "fields": [
        {"name": "Label", "type": "string", "versions": "0+", "flexible_versions": "0+"},
        {"name": "Point", "type": "Point", "versions": "0+", "nullable_versions": "0+", "fields": [
            {"name": "X", "type": "int32", "versions": "0+"}]},
        {"name": "Extra", "type": "Extra", "versions": "1+", "nullable_versions": "1+", "tagged_versions": "1+",
         "tag": 0, "default": None, "fields": [{"name": "Y", "type": "int64", "versions": "0+"}]},
        {"name": "Note", "type": "string", "versions": "1+", "nullable_versions": "1+", "tagged_versions": "1+",
         "tag": 1, "default": "n/a"}]})


def test_structs_per_field_flexible_override_and_nullable_tags():
    v0 = mw.encode(STRUCTS_SPEC, 0, {"label": "a", "point": None})
    assert v0 == bytes([2]) + b"a" + b"\xff"  # compact label (field override) + null struct marker, no tags
    assert mc.decode(STRUCTS_SPEC, 0, v0)[0] == {"label": "a", "point": None}
    data = {"label": "b", "point": {"x": 5}, "extra": {"y": 9}, "note": None}
    v1 = mw.encode(STRUCTS_SPEC, 1, data)
    assert mc.decode(STRUCTS_SPEC, 1, v1)[0] == data
    # null for a tagged field whose default is not null is written as tag, size 1, compact null
    assert v1.endswith(bytes([1, 1, 0]))
    assert mc.decode(STRUCTS_SPEC, 1, mw.encode(STRUCTS_SPEC, 1, {"label": "c", "point": {"x": 1}}))[0] == {
        "label": "c", "point": {"x": 1}}


# ---- property tests: every schema and version ---------------------------------------------------------------

def _value_strategy(field, version, flexible):
    nullable = field.nullable_versions.contains(version)
    if field.is_array:
        if field.is_struct_array:
            element = _struct_strategy(field.fields, version, flexible)
        else:
            element = _primitive_strategy(field.element_type)
        strategy = st.lists(element, max_size=3)
    elif field.is_struct:
        strategy = _struct_strategy(field.fields, version, flexible)
    else:
        strategy = _primitive_strategy(field.type)
    return st.one_of(st.none(), strategy) if nullable else strategy


def _primitive_strategy(type_name):
    if type_name in INTEGER_RANGES:
        low, high = INTEGER_RANGES[type_name]
        return st.integers(low, high)
    return {
        "bool": st.booleans(),
        "float64": st.floats(allow_nan=False),
        "uuid": st.binary(min_size=16, max_size=16).map(mv.uuid_text),
        "string": st.text(max_size=8),
        "bytes": st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode()),
    }[type_name]


def _struct_strategy(fields, version, flexible):
    present = [f for f in fields if f.versions.contains(version)]
    return st.fixed_dictionaries({f.json_name: _value_strategy(f, version, flexible) for f in present})


def _expected(fields, version, flexible, data):
    """What decoding gives back: tagged fields equal to their default disappear, recursively."""
    out = {}
    for f in fields:
        if f.json_name not in data:
            continue
        value = data[f.json_name]
        if flexible and f.tagged_versions.contains(version) and not mw._differs_from_default(f, value):
            continue
        if f.is_struct_array and value is not None:
            value = [_expected(f.fields, version, flexible, v) for v in value]
        elif f.is_struct and value is not None:
            value = _expected(f.fields, version, flexible, value)
        out[f.json_name] = value
    return out


@pytest.mark.parametrize("spec,version", SPEC_VERSIONS, ids=[f"{s.name}-v{v}" for s, v in SPEC_VERSIONS])
@settings(max_examples=25, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encode_decode_round_trip_for_every_schema_and_version(spec, version, data):
    flexible = spec.is_flexible(version)
    value = data.draw(_struct_strategy(spec.fields, version, flexible))
    body = mw.encode(spec, version, value)
    decoded, end = mc.decode(spec, version, body)
    assert end == len(body)
    assert decoded == _expected(spec.fields, version, flexible, value)
    assert mw.encode(spec, version, decoded) == body


@settings(max_examples=200, deadline=2000)
@given(st.sampled_from(SPEC_VERSIONS), st.binary(max_size=64))
def test_random_bodies_only_raise_corrupt_input(spec_version, body):
    spec, version = spec_version
    try:
        mc.decode(spec, version, body)
    except CorruptInput:
        pass
