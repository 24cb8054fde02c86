"""The record versions Kafka 4.x added, checked against bytes built by hand from Kafka's wire rules.

The oracle is the protocol itself, not our writer: a flexible message is its untagged fields in schema order
(compact arrays and strings as uvarint length + 1, null as 0), then a uvarint count of tagged fields, each
``tag, size, value`` in ascending tag order, a tagged field equal to its default not written at all
(apache/kafka generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java, generateClassWriter).
KIP-1066's ``CordonedLogDirs`` is a nullable tagged field whose default is null, so Kafka 4.3 writing a
registration with no cordoned dir produces the v3 body under version 4 (the issue's renumbered capture).
"""
from __future__ import annotations

import base64
import struct

from udfs import message_codec as mc
from udfs import message_writer as mw
from udfs.message_spec import load_schema

META = load_schema("metadata_records")
DIR_A = "AAAAAAAAAAAAAAAAAAAAAQ"  # uuid 0...01
DIR_B = "AAAAAAAAAAAAAAAAAAAAAg"
INCARNATION = "MKXx1fIkQy2J9jXHhK8m1w"


def _uuid(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "==")


def _uuid_list(ids) -> bytes:
    return bytes([len(ids) + 1]) + b"".join(_uuid(i) for i in ids)


def _tagged(*fields) -> bytes:
    out = bytes([len(fields)])
    for tag, value in fields:
        out += bytes([tag, len(value)]) + value
    return out


def _registration_untagged() -> bytes:
    """BrokerId 7, IsMigratingZkBroker false, IncarnationId, BrokerEpoch 42, one endpoint, no feature, rack null,
    Fenced true, InControlledShutdown false."""
    # every struct of a flexible version ends with its own (here empty) tagged-field section
    endpoint = b"\x06PLAIN" + b"\x0bhost.local" + struct.pack(">H", 9092) + struct.pack(">h", 0) + b"\x00"
    return (struct.pack(">i", 7) + b"\x00" + _uuid(INCARNATION) + struct.pack(">q", 42) + b"\x02" + endpoint
            + b"\x01" + b"\x00" + b"\x01" + b"\x00")


REGISTRATION = {"brokerId": 7, "isMigratingZkBroker": False, "incarnationId": INCARNATION, "brokerEpoch": 42,
                "endPoints": [{"name": "PLAIN", "host": "host.local", "port": 9092, "securityProtocol": 0}],
                "features": [], "rack": None, "fenced": True, "inControlledShutdown": False, "logDirs": [DIR_A, DIR_B]}


def test_register_broker_v4_without_cordons_is_the_v3_body():
    spec = META.by_name("RegisterBrokerRecord")
    expected = _registration_untagged() + _tagged((0, _uuid_list([DIR_A, DIR_B])))
    assert mw.encode(spec, 3, REGISTRATION) == expected
    assert mw.encode(spec, 4, REGISTRATION) == expected
    decoded, end = mc.decode(spec, 4, expected)
    assert end == len(expected) and decoded == REGISTRATION  # cordonedLogDirs null: the default, not in the JSON


def test_register_broker_v4_cordoned_log_dirs_is_tag_1():
    spec = META.by_name("RegisterBrokerRecord")
    data = dict(REGISTRATION, cordonedLogDirs=[DIR_B])
    expected = _registration_untagged() + _tagged((0, _uuid_list([DIR_A, DIR_B])), (1, _uuid_list([DIR_B])))
    assert mw.encode(spec, 4, data) == expected
    assert mc.decode(spec, 4, expected) == (data, len(expected))
    # an empty list (every dir uncordoned) differs from null and is written
    empty = _registration_untagged() + _tagged((0, _uuid_list([DIR_A, DIR_B])), (1, b"\x01"))
    assert mc.decode(spec, 4, empty)[0]["cordonedLogDirs"] == []


def test_broker_registration_change_v3_cordoned_log_dirs():
    spec = META.by_name("BrokerRegistrationChangeRecord")
    untagged = struct.pack(">i", 7) + struct.pack(">q", 42)
    body = untagged + _tagged((3, _uuid_list([DIR_A])))
    assert mc.decode(spec, 3, body) == ({"brokerId": 7, "brokerEpoch": 42, "cordonedLogDirs": [DIR_A]}, len(body))
    assert mw.encode(spec, 3, {"brokerId": 7, "brokerEpoch": 42, "cordonedLogDirs": [DIR_A]}) == body


def test_clear_elr_record_v0():
    spec = META.by_name("ClearElrRecord")
    assert spec.api_key == 28
    body = b"\x04foo" + b"\x00"  # TopicName "foo", no tagged fields
    assert mc.decode(spec, 0, body) == ({"topicName": "foo"}, len(body))
    assert mc.decode(spec, 0, b"\x01\x00") == ({"topicName": ""}, 2)  # empty: clear every topic's ELR
