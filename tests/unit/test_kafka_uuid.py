"""udfs.kafka_uuid against Kafka's Uuid.java rules and the JDK 17 decoder (vectors from tests/fixtures/jdk-oracle)."""
from __future__ import annotations

import json
import random
import uuid as std_uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import kafka_uuid

ORACLE = json.loads((__import__("pathlib").Path(__file__).parents[1] / "fixtures/jdk-oracle/jdk17-vectors.json").read_text())


@pytest.mark.parametrize("text,expected", ORACLE["uuid_from_string"], ids=range(len(ORACLE["uuid_from_string"])))
def test_parse_matches_jdk17_uuid_from_string(text, expected):
    result = kafka_uuid.parse(text)
    if "ok" in expected:
        assert result.ok and result.raw.hex() == expected["ok"]
    else:
        assert not result.ok and result.reason == expected["error"]


def test_reserved_values_and_their_strings():
    assert kafka_uuid.to_string(kafka_uuid.ZERO) == kafka_uuid.ZERO_STR == "AAAAAAAAAAAAAAAAAAAAAA"
    assert kafka_uuid.to_string(kafka_uuid.ONE) == kafka_uuid.ONE_STR == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert kafka_uuid.METADATA_TOPIC_ID is kafka_uuid.ONE
    assert kafka_uuid.is_reserved(kafka_uuid.ZERO) and kafka_uuid.is_reserved(kafka_uuid.ONE)
    assert not kafka_uuid.is_reserved(kafka_uuid.from_string("xWt6cg-LDx4r6BAz2rYsCg"))


def test_kafka_worked_example_bytes():
    # reference §4.2: TopicRecord topicId MKXx1fIkQy2J9jXHhK8m1w is 30a5f1d5f224432d89f635c784af26d7
    raw = bytes.fromhex("30a5f1d5f224432d89f635c784af26d7")
    assert kafka_uuid.to_string(raw) == "MKXx1fIkQy2J9jXHhK8m1w"
    assert kafka_uuid.from_string("MKXx1fIkQy2J9jXHhK8m1w") == raw


def test_base64_to_bytes_to_uuid_text_round_trip():
    raw = kafka_uuid.from_string("3Adc4FjfTeypRWROmQDNIQ")
    text = kafka_uuid.to_uuid_text(raw)
    assert text == "dc075ce0-58df-4dec-a945-644e9900cd21"
    assert kafka_uuid.from_uuid_text(text) == raw
    assert kafka_uuid.to_string(kafka_uuid.from_uuid_text(text)) == "3Adc4FjfTeypRWROmQDNIQ"


@pytest.mark.parametrize("text", ["dc075ce058df4deca945644e9900cd21", "{dc075ce0-58df-4dec-a945-644e9900cd21}",
                                  "urn:uuid:dc075ce0-58df-4dec-a945-644e9900cd21", "dc075ce0-58df-4dec-a945-644e9900cd2",
                                  "dc075ce0-58df-4dec-a945-644e9900cd2g", ""])
def test_uuid_text_is_strict_36_chars(text):
    assert not kafka_uuid.parse_uuid_text(text).ok
    with pytest.raises(ValueError):
        kafka_uuid.from_uuid_text(text)


def test_unused_low_bits_of_22nd_char_are_ignored_like_the_jdk():
    assert kafka_uuid.from_string("AAAAAAAAAAAAAAAAAAAAAB") == kafka_uuid.ZERO
    assert kafka_uuid.from_string("AAAAAAAAAAAAAAAAAAAAAP") == kafka_uuid.ZERO
    assert kafka_uuid.parse("xWt6cg-LDx4r6BAz2rYsCh").text == "xWt6cg-LDx4r6BAz2rYsCg"


def test_padded_24_char_input_is_accepted_and_canonicalised():
    result = kafka_uuid.parse("xWt6cg-LDx4r6BAz2rYsCg==")
    assert result.ok and result.text == "xWt6cg-LDx4r6BAz2rYsCg"


@pytest.mark.parametrize("text,reason", [
    ("AAAAAAAAAAAAAAAAAAAAAAAAA",
     "Input string with prefix `AAAAAAAAAAAAAAAAAAAAAAAA` is too long to be decoded as a base64 UUID"),
    ("AAAAAAAAAAAAAAAAAAAA+/", "Illegal base64 character 2b"),
    ("AAAAAAAAAAAAAAAAAAAA\u00c3A", "Illegal base64 character -3d"),
    ("AAAAAAAAAAAAAAAAAAAA\u20acA", "Illegal base64 character 3f"),
    ("AAAAAAAAAAAAAAAAAAAAA", "Last unit does not have enough valid bits"),
    ("AAAAAAAAAAAAAAAAAAAAAA=", "Input byte array has wrong 4-byte ending unit"),
    ("AA==AA", "Input byte array has incorrect ending byte at 4"),
    ("A", "Input byte[] should at least have 2 bytes for base64 bytes"),
    ("AAAAAAAAAAAAAAAAAAAAAAAA", "Input string `AAAAAAAAAAAAAAAAAAAAAAAA` decoded as 18 bytes, which is not equal "
                                 "to the expected 16 bytes of a base64-encoded UUID"),
])
def test_each_rejection_reason(text, reason):
    assert kafka_uuid.parse(text) == kafka_uuid.UuidParse(None, reason)
    with pytest.raises(ValueError, match="^" + __import__("re").escape(reason) + "$"):
        kafka_uuid.from_string(text)


def test_too_long_counts_utf16_units_and_cuts_a_surrogate_pair_like_java():
    text = "A" * 23 + "\U0001F600"  # 25 UTF-16 units, 24 code points
    assert kafka_uuid.parse(text).reason == (
        "Input string with prefix `" + "A" * 23 + "\ud83d` is too long to be decoded as a base64 UUID")


def test_parse_never_raises_on_non_strings():
    assert not kafka_uuid.parse(None).ok  # type: ignore[arg-type]
    assert not kafka_uuid.parse(b"AAAAAAAAAAAAAAAAAAAAAA").ok  # type: ignore[arg-type]


def test_to_string_rejects_wrong_length():
    with pytest.raises(ValueError):
        kafka_uuid.to_string(b"\x00" * 15)


def test_random_uuid_is_type4_deterministic_and_never_reserved_or_dash():
    a = [kafka_uuid.random_uuid(random.Random(7)) for _ in range(3)]
    assert a[0] == a[1] == a[2]
    rng = random.Random(1)
    for _ in range(2000):
        raw = kafka_uuid.random_uuid(rng)
        u = std_uuid.UUID(bytes=raw)
        assert u.version == 4 and u.variant == std_uuid.RFC_4122
        assert not kafka_uuid.is_reserved(raw)
        assert not kafka_uuid.to_string(raw).startswith("-")


def test_reserved_directory_ids_use_a_signed_lsb():
    assert kafka_uuid.is_reserved_directory_id(kafka_uuid.ZERO)            # MIGRATING
    assert kafka_uuid.is_reserved_directory_id(bytes(15) + b"\x02")        # LOST
    assert kafka_uuid.is_reserved_directory_id(bytes(15) + b"\x63")        # 99
    assert not kafka_uuid.is_reserved_directory_id(bytes(15) + b"\x64")    # 100
    assert kafka_uuid.is_reserved_directory_id(bytes(8) + b"\xff" * 8)     # lsb = -1 < 100
    assert not kafka_uuid.is_reserved_directory_id(b"\x00" * 7 + b"\x01" + bytes(8))


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=16, max_size=16))
def test_round_trip_any_16_bytes(raw):
    text = kafka_uuid.to_string(raw)
    assert len(text) == 22
    assert kafka_uuid.from_string(text) == raw


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_parse_never_raises_on_random_text(text):
    result = kafka_uuid.parse(text)
    assert (result.raw is None) != (result.reason is None)
    if result.ok:
        assert len(result.raw) == 16
