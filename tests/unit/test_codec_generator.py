"""Generated decoders and JSON writers (udfs.message_codegen) against the closure reference (message_reader):
same dicts (key order, value types, unknown tags), same JSON text, same errors; on Kafka's own files, on
encoded random data, and on random and mutated bytes. Also the raft-shaped record loop of metadata_log against
the general record parser, and the ``--show`` command."""
from __future__ import annotations

import base64
import copy
import json
import pickle
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from udfs import message_codec as mc
from udfs import message_codegen_runtime as rt
from udfs import message_reader as mr
from udfs import message_values as mv
from udfs import message_writer as mw
from udfs import metadata_log as ml
from udfs import record_batch as rb
from udfs.errors import CorruptInput, DecodeError
from udfs.message_spec import INTEGER_RANGES, load_schema, message_from_dict
from udfs.metadata_record import payload_json_text
from udfs.record_encode import NewRecord, encode_batch
from udfs.record_parse import parse_records

DEVSAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "kafka-devsample"
METADATA_FILES = sorted(
    list(DEVSAMPLE.glob("broker-*/*/__cluster_metadata-0/*.log"))
    + list(DEVSAMPLE.glob("broker-*/*/__cluster_metadata-0/*.checkpoint"))
    + list(DEVSAMPLE.glob("broker-*/*/bootstrap.checkpoint")))
META = load_schema("metadata_records")
CONTROL = load_schema("control_records")
PRODUCER = load_schema("producer_snapshot")
# Tagged struct, tagged string with a non-null default, per-field flexible override, non-flexible v0.
SHAPES = message_from_dict({
    "name": "ShapesRecord", "api_key": 500, "valid_versions": "0-1", "flexible_versions": "1+", "fields": [
        {"name": "Label", "type": "string", "versions": "0+", "flexible_versions": "0+"},
        {"name": "Point", "type": "Point", "versions": "0+", "nullable_versions": "0+", "fields": [
            {"name": "X", "type": "int32", "versions": "0+"}]},
        {"name": "Extra", "type": "Extra", "versions": "1+", "nullable_versions": "1+", "tagged_versions": "1+",
         "tag": 0, "default": None, "fields": [{"name": "Y", "type": "int64", "versions": "0+"}]},
        {"name": "Note", "type": "string", "versions": "1+", "nullable_versions": "1+", "tagged_versions": "1+",
         "tag": 1, "default": "n/a"},
        {"name": "Flags", "type": "[]bool", "versions": "0+"},
        {"name": "Ratio", "type": "float64", "versions": "0+"},
        {"name": "Blob", "type": "bytes", "versions": "0+", "nullable_versions": "0+"},
        {"name": "Names", "type": "[]string", "versions": "1+", "tagged_versions": "1+", "tag": 2}]})
# More tagged fields than the mask table takes (the decoder hands out the dispatcher), a struct array whose
# elements start with a tagged field, tags declared out of tag order.
MANY_TAGS = message_from_dict({
    "name": "ManyTagsRecord", "api_key": 501, "valid_versions": "0", "flexible_versions": "0+", "fields": [
        {"name": "Items", "type": "[]Item", "versions": "0+", "fields": [
            {"name": "A", "type": "int32", "versions": "0+", "tagged_versions": "0+", "tag": 0, "default": -1},
            {"name": "B", "type": "string", "versions": "0+"}]},
        *[{"name": f"T{i}", "type": "int64", "versions": "0+", "tagged_versions": "0+", "tag": (i * 7) % 12}
          for i in range(12)]]})
SPECS = [m for schema in (META, CONTROL, PRODUCER) for m in schema.messages] + [SHAPES, MANY_TAGS]
SPEC_VERSIONS = [(m, v) for m in SPECS for v in range(m.valid_versions.lowest, m.valid_versions.highest + 1)]
IDS = [f"{s.name}-v{v}" for s, v in SPEC_VERSIONS]


def canonical(value):
    """Equality that dict == misses: key order, bool vs int, float NaN, MessageData and its unknown tags."""
    if isinstance(value, dict):
        return (type(value).__name__, [(k, canonical(v)) for k, v in value.items()],
                getattr(value, "unknown_tagged_fields", None))
    if isinstance(value, list):
        return ["list", [canonical(v) for v in value]]
    return (type(value).__name__, repr(value))


def outcome(read, buf, pos=0):
    try:
        data, end = read(buf, pos)
    except CorruptInput as exc:
        return ("error", exc.error)
    return ("ok", canonical(data), end)


def fast_outcome(spec, version, buf, pos=0):
    """The raw generated decoder: ``None`` when it leaves the input to the reference."""
    try:
        data, end, writer = mc.generated(spec, version).fast_decoder(buf, pos)
    except rt.MISSES:
        return None
    if end > len(buf):
        return None
    return ("ok", canonical(data), end), data, writer


def assert_same_as_reference(spec, version, body, expect_fast=False):
    reference = outcome(mr.reference_decoder(spec, version), body)
    assert outcome(mc.decoder(spec, version), body) == reference
    fast = fast_outcome(spec, version, body)
    if expect_fast:
        assert fast is not None, f"{spec.name} v{version} left the fast path on {body.hex()}"
    if fast is not None:
        result, data, writer = fast
        assert result == reference
        if type(data) is dict:
            text = payload_json_text(data)
            assert writer(data) == text
            assert mc.json_writer(spec, version)(data) == text
    assert_row_function_agrees(spec, version, body, fast)
    return reference


def every_field(spec):
    """A row function's extract of every field the message has in any version, absent as a marker value."""
    return tuple((f.json_name, "absent") for f in spec.fields)


def assert_row_function_agrees(spec, version, body, fast):
    """The fused row function (udfs.message_codegen_rows) of a flexible version leaves the fast path exactly
    where the generated decoder does; where both decode, its JSON text is the decoder's dict as ``json.dumps``
    writes it and its values are the dict's (``absent`` where the dict has no key)."""
    if not spec.is_flexible(version):
        return
    try:
        text, end, values = mc.row_decoder(spec, version, every_field(spec))(body, 0)
    except rt.MISSES:
        row = None
    else:
        row = None if end > len(body) else (text, end, values)
    assert (row is None) == (fast is None), f"{spec.name} v{version}: row {row}, decoder {fast} on {body.hex()}"
    if row is None:
        return
    (_, _, fast_end), data, _ = fast
    assert row[1] == fast_end
    assert row[0] == payload_json_text(data)
    assert canonical(list(row[2])) == canonical([data.get(key, "absent") for key, _ in every_field(spec)])


# ---- Kafka's own files -------------------------------------------------------------------------------------

def frames_of(path):
    """``(spec, version, body)`` of every metadata and control value in a metadata file."""
    for batch in rb.read_batches(path):
        buf, _ = rb.records_section(batch)
        for _, key, value, *_ in parse_records(buf, batch.header.records_count, None, 0):
            if batch.header.is_control:
                type_id = struct.unpack(">hh", key)[1]
                if type_id in ml.CONTROL_SCHEMAS:
                    yield CONTROL.by_name(ml.CONTROL_SCHEMAS[type_id]), 0, value
            else:
                assert value[0] == 1 and value[1] < 0x80 and value[2] < 0x80
                yield META.by_api_key[value[1]], value[2], value[3:]


def test_every_fixture_record_takes_the_fast_path_and_equals_the_reference():
    seen = set()
    for path in METADATA_FILES:
        for spec, version, body in frames_of(path):
            reference = assert_same_as_reference(spec, version, body, expect_fast=True)
            assert reference[0] == "ok" and reference[2] == len(body)
            seen.add((spec.name, version))
    # the devsample covers these (README of the fixtures); each must have gone through the generated code
    assert {("PartitionRecord", 0), ("PartitionRecord", 1), ("PartitionChangeRecord", 1),
            ("RegisterBrokerRecord", 2), ("RegisterBrokerRecord", 3), ("TopicRecord", 0), ("ConfigRecord", 0),
            ("LeaderChangeMessage", 0), ("SnapshotHeaderRecord", 0)} <= seen


def reference_records(source):
    """What records_of_batch yielded before the raft loop: every record through parse_records, values through
    the reference decoders."""
    out = []
    for item in rb.read_batches(source):
        if not isinstance(item, rb.Batch):
            return out  # framing problems are outside the loop under test
        h = item.header
        try:
            buf, where = rb.records_section(item)
            for delta, key, value, *_ in parse_records(buf, h.records_count, where, h.position):
                offset = h.base_offset + delta
                if h.is_control:
                    t, api, v, data, error = ml.decode_control_record(key, value)
                else:
                    t, api, v, data, error = reference_metadata_value(value)
                if error is not None:
                    error = DecodeError(error.kind, f"Error at {offset}, skipping. {error.message}", h.position)
                out.append((offset, h.base_offset, h.last_offset, h.partition_leader_epoch, h.max_timestamp,
                            h.is_control, t, api, v, canonical(data), error, value if error else None, h.position))
        except CorruptInput as exc:
            out.append(("batch error", h.base_offset, exc.error))
    return out


def reference_metadata_value(value):
    if value is not None and len(value) >= 3 and value[0] == 1 and value[1] < 0x80 and value[2] < 0x80:
        spec = META.by_api_key.get(value[1])
        if spec is not None and spec.valid_versions.contains(value[2]):
            try:
                data, end = mr.reference_decoder(spec, value[2])(value, 3)
            except CorruptInput:
                pass
            else:
                if end == len(value):
                    return spec.type_name, value[1], value[2], data, None
    return ml.decode_metadata_value(value)  # every error: the checked path (same decoder on bad input)


def decoded_records(source):
    out = []
    for r in ml.iter_metadata_records(source):
        if r.error is not None and not r.error.message.startswith("Error at "):
            out.append(("batch error", r.batch_base_offset, r.error))  # value errors say "Error at <offset>"
            continue
        out.append((r.offset, r.batch_base_offset, r.batch_last_offset, r.leader_epoch, r.timestamp, r.is_control,
                    r.type, r.api_key, r.version, canonical(r.data), r.error, r.raw_value, r.position))
    return out


@pytest.mark.parametrize("path", METADATA_FILES, ids=lambda p: str(p.relative_to(DEVSAMPLE)))
def test_iter_metadata_records_equals_the_general_path_and_writes_the_same_json(path):
    records = list(ml.iter_metadata_records(path))
    assert decoded_records(path) == reference_records(path)
    for r in records:
        if r.data is not None:
            assert r.payload_json() == payload_json_text(r.data)
            assert r.payload_json() == json.dumps(r.data, separators=(",", ":"), ensure_ascii=False)
    fast = [r for r in records if r._json_writer is not None]
    assert len(fast) == sum(1 for r in records if not r.is_control)  # every metadata record: the raft loop


# ---- the raft-shaped loop hands over to the general parser --------------------------------------------------

def frame(type_name, version, data):
    return ml.encode_metadata_frame(type_name, version, data)


TOPIC = frame("TOPIC_RECORD", 0, {"name": "t", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})
CHANGE = frame("PARTITION_CHANGE_RECORD", 1, {"partitionId": 1, "topicId": "MKXx1fIkQy2J9jXHhK8m1w", "isr": [1, 2],
                                              "leader": 2})
ODD_RECORDS = {
    "key": NewRecord(value=TOPIC, key=b"k"),
    "header": NewRecord(value=TOPIC, headers=(("h", b"v"),)),
    "timestamp_delta": NewRecord(value=TOPIC, timestamp=1_700_000_000_123),
    "offset_gap": NewRecord(value=TOPIC, offset_delta=40),
    "null_value": NewRecord(value=None),
    "unknown_api_key": NewRecord(value=bytes([1, 0x7E, 0, 0])),
    "garbage_after_body": NewRecord(value=TOPIC + b"\x00"),
    "short_value": NewRecord(value=bytes([1, 2])),
    "empty_value": NewRecord(value=b""),
    "unknown_tag": NewRecord(value=TOPIC[:-1] + bytes([1, 9, 1, 0xAB])),
    "long_value": NewRecord(value=frame("TOPIC_RECORD", 0, {"name": "x" * 300,
                                                            "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})),
}


@pytest.mark.parametrize("odd", sorted(ODD_RECORDS))
@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_records_of_other_shapes_hand_over_to_the_general_parser(odd, codec):
    records = [NewRecord(value=CHANGE, timestamp=1_700_000_000_000)] * 3 + [ODD_RECORDS[odd]] + \
              [NewRecord(value=CHANGE, timestamp=1_700_000_000_000)] * 2
    batch = encode_batch(records, 100, partition_leader_epoch=3, compression_codec=codec)
    got = decoded_records(batch)
    assert got == reference_records(batch)
    assert len(got) == 6 and all(r[0] != "batch error" for r in got)


def test_many_records_use_two_byte_varints():
    values = [NewRecord(value=CHANGE)] * 300 + [NewRecord(value=ODD_RECORDS["long_value"].value)]
    batch = encode_batch(values, 7, base_timestamp=5, max_timestamp=5)
    got = list(ml.iter_metadata_records(batch))
    assert decoded_records(batch) == reference_records(batch)
    assert [r.offset for r in got] == list(range(7, 308))
    assert all(r._json_writer is not None for r in got)  # offset deltas over 63 and a 300-byte value: raft loop


@pytest.mark.parametrize("cut", [62, 64, 70, 90, 120])
def test_cut_or_corrupt_record_sections_report_the_same_errors(cut):
    batch = bytearray(encode_batch([NewRecord(value=CHANGE)] * 3, 0, base_timestamp=1, max_timestamp=1))
    # rewrite the batch length so the cut batch frames, then the record section ends early
    body = batch[:cut]
    struct.pack_into(">i", body, 8, len(body) - 12)
    struct.pack_into(">I", body, rb.CRC_OFFSET, rb.crc32c(bytes(body[rb.ATTRIBUTES_OFFSET:])))
    assert decoded_records(bytes(body)) == reference_records(bytes(body))
    flipped = bytearray(batch)
    flipped[cut] ^= 0xFF
    got = [r for r in ml.iter_metadata_records(bytes(flipped), trust_bad_crc=True)]
    want = reference_records_trusting_crc(bytes(flipped))
    assert [(r.offset, r.type, canonical(r.data), r.error) for r in got] == want


def reference_records_trusting_crc(source):
    out = []
    for item in rb.read_batches(source, verify_crc=False):
        h = item.header
        try:
            buf, where = rb.records_section(item)
            for delta, _key, value, *_ in parse_records(buf, h.records_count, where, h.position):
                offset = h.base_offset + delta
                t, api, v, data, error = reference_metadata_value(value)
                if error is not None:
                    error = DecodeError(error.kind, f"Error at {offset}, skipping. {error.message}", h.position)
                out.append((offset, t, canonical(data), error))
        except CorruptInput as exc:
            out.append((h.base_offset, None, canonical(None), exc.error))
    return out


# ---- random data, random bytes ----------------------------------------------------------------------------

def primitive(type_name):
    if type_name in INTEGER_RANGES:
        low, high = INTEGER_RANGES[type_name]
        return st.integers(low, high)
    return {
        "bool": st.booleans(),
        "float64": st.floats(),
        "uuid": st.binary(min_size=16, max_size=16).map(mv.uuid_text),
        # mostly short; sometimes over 126 bytes, where the length takes two uvarint bytes
        "string": st.one_of(st.text(max_size=8), st.text(min_size=64, max_size=80).map(lambda s: s * 2)),
        "bytes": st.binary(max_size=140).map(lambda b: base64.b64encode(b).decode()),
    }[type_name]


def value_of(field, version):
    if field.is_array:
        if field.is_struct_array:
            strategy = st.lists(struct_of(field.fields, version), max_size=3)
        else:
            element = primitive(field.element_type)
            strategy = st.one_of(st.lists(element, max_size=4), st.lists(element, min_size=127, max_size=130))
    elif field.is_struct:
        strategy = struct_of(field.fields, version)
    else:
        strategy = primitive(field.type)
    return st.one_of(st.none(), strategy) if field.nullable_versions.contains(version) else strategy


def struct_of(fields, version):
    present = [f for f in fields if f.versions.contains(version)]
    return st.fixed_dictionaries({}, optional={f.json_name: value_of(f, version) for f in present})


@pytest.mark.parametrize("spec,version", SPEC_VERSIONS, ids=IDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_round_trips_equal_the_reference(spec, version, data):
    value = data.draw(struct_of(spec.fields, version))
    try:
        body = mw.encode(spec, version, value)
    except ValueError:
        return  # a value the field cannot hold (null where not allowed): nothing to decode
    # under 128 bytes every tag size is one byte: the generated code must not hand over
    assert assert_same_as_reference(spec, version, body, expect_fast=len(body) < 0x80)[0] == "ok"
    if spec.is_flexible(version) and body[-1] == 0:
        # maybe an unknown tag after the body (when that last 0 was the message's tag count): the reference
        # keeps it in a MessageData, the generated code hands over
        assert_same_as_reference(spec, version, body[:-1] + bytes([1, 77, 2, 0xAB, 0xCD]))


def test_unknown_tags_are_left_to_the_reference():
    spec = META.by_name("TopicRecord")
    body = mw.encode(spec, 0, {"name": "foo", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})[:-1] + bytes([1, 3, 1, 0xAB])
    assert fast_outcome(spec, 0, body) is None
    data, end = mc.decode(spec, 0, body)
    assert isinstance(data, mv.MessageData) and data.unknown_tagged_fields == [(3, b"\xab")]
    assert mw.encode(spec, 0, data) == body


@pytest.mark.parametrize("spec,version", SPEC_VERSIONS, ids=IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_and_mutated_bytes_give_the_reference_result_or_error(spec, version, data):
    value = data.draw(struct_of(spec.fields, version))
    try:
        body = bytearray(mw.encode(spec, version, value))
    except ValueError:
        body = bytearray()
    for pos, byte in data.draw(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=4)):
        if body:
            body[pos % len(body)] = byte
    body += data.draw(st.binary(max_size=4))
    cut = data.draw(st.integers(0, len(body)))
    for candidate in (bytes(body), bytes(body[:cut]), data.draw(st.binary(max_size=48))):
        assert_same_as_reference(spec, version, candidate)


def test_long_strings_and_arrays_stay_on_the_generated_path_via_field_readers():
    spec = META.by_name("PartitionRecord")
    data = {"partitionId": 1, "topicId": "MKXx1fIkQy2J9jXHhK8m1w", "replicas": list(range(200)), "isr": [1],
            "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0, "partitionEpoch": 0,
            "directories": ["AAAAAAAAAAAAAAAAAAAAAA"] * 130}
    assert assert_same_as_reference(spec, 1, mw.encode(spec, 1, data), expect_fast=True)[1] == canonical(data)
    topic = META.by_name("TopicRecord")
    body = mw.encode(topic, 0, {"name": "é" * 100, "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})
    assert assert_same_as_reference(topic, 0, body, expect_fast=True)[0] == "ok"


def test_tags_in_a_version_where_they_are_not_valid_get_the_reference_error():
    spec = META.by_name("PartitionChangeRecord")
    v0 = mw.encode(spec, 0, {"partitionId": 0, "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})
    bad = v0[:-1] + bytes([1, 8, 2, 1, 0])  # Directories (v1+) at v0
    assert fast_outcome(spec, 0, bad) is None
    assert outcome(mc.decoder(spec, 0), bad)[1].kind == "invalid_tag"


# ---- JSON writers -------------------------------------------------------------------------------------------

def test_every_tag_combination_gets_a_writer_equal_to_json_dumps():
    spec = META.by_name("PartitionChangeRecord")
    full = {"partitionId": 1, "topicId": "MKXx1fIkQy2J9jXHhK8m1w", "isr": [1, 2], "leader": 3, "replicas": [1, 2, 3],
            "removingReplicas": [3], "addingReplicas": [], "leaderRecoveryState": 1,
            "directories": ["AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAA"], "eligibleLeaderReplicas": [2],
            "lastKnownElr": None}
    tagged = [k for k in full if k not in ("partitionId", "topicId")]
    for mask in range(1 << len(tagged)):
        data = {k: v for k, v in full.items() if k not in tagged or mask >> tagged.index(k) & 1}
        body = mw.encode(spec, 2, data)
        result = fast_outcome(spec, 2, body)
        assert result is not None
        _, decoded, writer = result
        assert writer(decoded) == payload_json_text(decoded) == mc.json_writer(spec, 2)(decoded)
        assert canonical(decoded) == outcome(mr.reference_decoder(spec, 2), body)[1]


def test_writers_refuse_dicts_of_another_shape():
    spec = META.by_name("PartitionChangeRecord")
    write = mc.json_writer(spec, 1)
    ok = {"partitionId": 1, "topicId": "MKXx1fIkQy2J9jXHhK8m1w", "isr": [1]}
    assert write(ok) == payload_json_text(ok)
    for other in ({"isr": [1], "partitionId": 1, "topicId": "MKXx1fIkQy2J9jXHhK8m1w"},  # order
                  dict(ok, surprise=1), {"partitionId": 1}, {1: 2}, {"partitionId\"": 1}):
        with pytest.raises(rt.JSON_MISSES):
            write(other)
    topic = mc.json_writer(META.by_name("TopicRecord"), 0)
    with pytest.raises(rt.JSON_MISSES):
        topic({"name": "x", "topicId": "MKXx1fIkQy2J9jXHhK8m1w", "more": 1})
    assert topic({"name": "quote\" and \u00e9\n", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}) == payload_json_text(
        {"name": "quote\" and \u00e9\n", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})


def test_payload_json_follows_changes_to_data_and_survives_pickle():
    batch = ml.encode_metadata_batch([("PARTITION_CHANGE_RECORD", 1, {"partitionId": 1, "isr": [1, 2],
                                                                      "topicId": "MKXx1fIkQy2J9jXHhK8m1w"})], 0, 1, 5)
    (record,) = ml.iter_metadata_records(batch)
    assert record._json_writer is not None
    again = pickle.loads(pickle.dumps(record))
    assert again == record and again.payload_json() == record.payload_json()
    assert copy.copy(record).payload_json() == record.payload_json()
    record.data["leader"] = 4  # a key: the writer of the decoded shape no longer fits, the generic one is used
    assert record.payload_json() == payload_json_text(record.data)
    del record.data["isr"]
    assert record.payload_json() == payload_json_text(record.data)
    record.data = {"other": True}
    assert record.payload_json() == '{"other":true}'


def test_json_float_matches_json_dumps():
    for value in (0.0, -0.0, 1e300, 1.5, float("nan"), float("inf"), float("-inf"), 1048576.0, 1e-7):
        assert rt.json_float(value) == json.dumps(value)


# ---- source ---------------------------------------------------------------------------------------------------

def test_show_prints_the_generated_source(capsys):
    assert mc.main(["--show", "PartitionChangeRecord", "1"]) == 0
    source = capsys.readouterr().out
    assert "def decode_PartitionChangeRecord_v1(buf, pos):" in source
    assert "def json_PartitionChangeRecord_v1(d):" in source
    compile(source, "<shown>", "exec")
    assert mc.main(["--show", "PARTITION_RECORD", "1"]) == 0
    assert "_unpack_int32_array" in capsys.readouterr().out
    assert mc.main(["--show", "NoSuchRecord", "0"]) == 2
    assert mc.main(["--show", "TopicRecord", "9"]) == 2


@pytest.mark.parametrize("spec,version", SPEC_VERSIONS, ids=IDS)
def test_every_schema_version_generates_and_is_cached(spec, version):
    generated = mc.generated(spec, version)
    assert generated is mc.generated(spec, version)
    assert f"def decode_{spec.name}_v{version}(buf, pos):" in generated.source
    assert mc.decoder(spec, version) is mc.decoder(spec, version)


def test_more_tagged_fields_than_the_mask_table_and_tagged_struct_elements():
    data = {"items": [{"a": 5, "b": "x"}, {"b": "y"}], "t0": 1, "t3": 0, "t11": -4}
    body = mw.encode(MANY_TAGS, 0, data)
    result = fast_outcome(MANY_TAGS, 0, body)
    assert result is not None
    _, decoded, writer = result
    assert list(decoded) == ["items", "t0", "t11"]  # t3 at its default is left out; spec order, not tag order
    assert writer is mc.json_writer(MANY_TAGS, 0)  # the dispatcher
    assert writer(decoded) == payload_json_text(decoded)


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_buffers_other_than_bytes(kind):
    spec = META.by_name("PartitionRecord")
    data = {"partitionId": 1, "topicId": "MKXx1fIkQy2J9jXHhK8m1w", "replicas": [1], "isr": [1], "removingReplicas": [],
            "addingReplicas": [], "leader": 1, "leaderEpoch": 0, "partitionEpoch": 0,
            "directories": ["AAAAAAAAAAAAAAAAAAAAAQ"]}
    body = b"\x00\x00" + mw.encode(spec, 1, data)
    assert outcome(mc.decoder(spec, 1), kind(body), 2) == outcome(mr.reference_decoder(spec, 1), body, 2)
    assert mc.decode(spec, 1, kind(body), 2)[0] == data
