"""udfs.partition_metadata: Kafka's PartitionMetadataReadBuffer rules, on the real devsample files and every variant."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs.partition_metadata import (
    BROKER_START_FAILS,
    LOG_DIR_OFFLINE,
    OK,
    encode_partition_metadata,
    read_partition_metadata,
)

TID = "xWt6cg-LDx4r6BAz2rYsCg"
P = "/var/lib/kafka/t-0/partition.metadata"


def _expected_replicas(devsample_dir):
    return json.loads((devsample_dir / "expected.json").read_text())["replicas"]


def test_every_devsample_file_reads_as_kafka_read_it(devsample_dir):
    checked = 0
    for replica in _expected_replicas(devsample_dir):
        pm = replica["partitionMetadata"]
        path = devsample_dir / replica["path"] / "partition.metadata"
        assert path.exists() == pm["exists"]
        if not pm["exists"]:
            continue
        result = read_partition_metadata(path.read_bytes(), f"{replica['path']}/partition.metadata")
        assert result.kafka_read() == pm["kafkaRead"]
        assert result.topic_id == pm["topicIdOnDisk"]
        assert path.read_bytes().decode() == pm["fileContentJsonEscaped"]
        checked += 1
    assert checked == 19


def test_truncated_devsample_file_is_malformed_and_takes_the_log_dir_offline(devsample_dir):
    rel = "broker-104/kafka-logs/inventory-1/partition.metadata"
    result = read_partition_metadata((devsample_dir / rel).read_bytes(), rel)
    assert result.outcome == LOG_DIR_OFFLINE
    assert result.message == f"Malformed line in checkpoint file [{rel}]: topic_id: "
    assert result.error.kind == "malformed_line" and result.error.line == 2
    assert result.version == 0 and result.topic_id is None


@pytest.mark.parametrize("data,version", [
    (f"version: 0\ntopic_id: {TID}", 0),
    (f"version: 0\ntopic_id: {TID}\n", 0),                 # trailing newline (KRaftClusterTest writes one)
    (f"version: 0\r\ntopic_id: {TID}\r\n", 0),             # CRLF
    (f"version: 0\rtopic_id: {TID}", 0),                   # lone CR is a line break for readLine
    (f"version: 1\ntopic_id: {TID}", 1),                   # any non-negative version: downgrade compatibility
    (f"version: 2147483647\ntopic_id: {TID}", 2147483647),
    (f"version: +0\ntopic_id: {TID}", 0),                  # Integer.parseInt accepts a sign
    (f"version: -0\ntopic_id: {TID}", 0),
    (f"version: \u0661\ntopic_id: {TID}", 1),              # ...and Unicode digits
    (f"version:\t0\ntopic_id:  {TID}", 0),                 # ':\s+' - any ASCII whitespace run
    (f"vErSiOn: 0\nfoo: {TID}", 0),                        # keys are not checked
    (f": 0\n: {TID}", 0),                                  # empty key: split keeps the leading ""
    (f"version: 0\ntopic_id: {TID}\ngarbage: x: y\n", 0),  # only two lines are read
    (f"version: 0\ntopic_id: {TID}==", 0),                 # padded 24-char id
    (f"version: 0\ntopic_id: {TID[:-1]}h", 0),             # unused low bits of the 22nd char
])
def test_accepted_variants(data, version):
    result = read_partition_metadata(data.encode(), P)
    assert (result.outcome, result.version, result.topic_id, result.error) == (OK, version, TID, None)
    assert result.kafka_read() == "ok"


@pytest.mark.parametrize("data,line,message_line,version", [
    ("version: 0 \ntopic_id: " + TID, 1, "version: 0 ", None),       # "0 " fails Integer.parseInt
    ("version:0\ntopic_id: " + TID, 1, "version:0", None),           # no whitespace after ':'
    ("version: \ntopic_id: " + TID, 1, "version: ", None),           # trailing "" dropped by split -> 1 part
    ("version: 0: 1\ntopic_id: " + TID, 1, "version: 0: 1", None),   # 3 parts
    ("version: x\ntopic_id: " + TID, 1, "version: x", None),
    ("version: 2147483648\ntopic_id: " + TID, 1, "version: 2147483648", None),
    ("\ntopic_id: " + TID, 1, "", None),
    ("version: 0\ntopic_id: ", 2, "topic_id: ", 0),
    ("version: 0\ntopic_id:" + TID, 2, "topic_id:" + TID, 0),
    ("version: 0\ntopic_id: a: b", 2, "topic_id: a: b", 0),
    ("version: 0\n\n", 2, "", 0),
])
def test_malformed_lines_take_the_log_dir_offline(data, line, message_line, version):
    result = read_partition_metadata(data.encode(), P)
    assert result.outcome == LOG_DIR_OFFLINE and result.exception == "IOException"
    assert result.message == f"Malformed line in checkpoint file [{P}]: {message_line}"
    assert (result.error.kind, result.error.line, result.version) == ("malformed_line", line, version)
    assert result.kafka_read() == (f"KafkaStorageException: Error while reading partition metadata file {P} "
                                   f"(cause IOException: {result.message})")


def test_negative_version_message_keeps_kafkas_stray_plus():
    result = read_partition_metadata(f"version: -1\ntopic_id: {TID}".encode(), P)
    assert result.outcome == LOG_DIR_OFFLINE
    assert result.message == f"Unrecognized version of partition metadata file + ({P}): -1"
    assert result.error.kind == "bad_version" and result.version == -1


def test_zero_topic_id_is_an_io_error():
    for zero in ("AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAB"):
        result = read_partition_metadata(f"version: 0\ntopic_id: {zero}".encode(), P)
        assert result.outcome == LOG_DIR_OFFLINE
        assert result.message == f"Invalid topic ID in partition metadata file ({P})"
        assert result.error.kind == "zero_uuid"


@pytest.mark.parametrize("data,kind,message", [
    (b"", "empty_file", None),
    (b"version: 0", "malformed_line", None),
    (b"version: 0\n", "malformed_line", None),
])
def test_missing_lines_are_a_null_pointer_that_stops_the_broker(data, kind, message):
    result = read_partition_metadata(data, P)
    assert result.outcome == BROKER_START_FAILS and result.exception == "NullPointerException"
    assert result.error.kind == kind
    assert result.kafka_read().startswith("NullPointerException: ")


@pytest.mark.parametrize("bad_id,reason", [
    ("xWt6cg+LDx4r6BAz2rYsCg", "Illegal base64 character 2b"),
    (TID + " ", "Illegal base64 character 20"),
    ("xWt6cg", "Input string `xWt6cg` decoded as 4 bytes, which is not equal to the expected 16 bytes of a "
               "base64-encoded UUID"),
    (TID + "AAA", f"Input string with prefix `{TID}AA` is too long to be decoded as a base64 UUID"),
])
def test_bad_base64_is_an_illegal_argument_that_stops_the_broker(bad_id, reason):
    result = read_partition_metadata(f"version: 0\ntopic_id: {bad_id}".encode(), P)
    assert (result.outcome, result.exception, result.message) == (BROKER_START_FAILS, "IllegalArgumentException", reason)
    assert result.error.kind == "invalid_uuid" and result.error.line == 2
    assert result.kafka_read() == f"IllegalArgumentException: {reason}"


def test_undecodable_utf8_is_an_io_error():
    result = read_partition_metadata(b"version: 0\ntopic_id: \xff", P)
    assert result.outcome == LOG_DIR_OFFLINE and result.exception == "MalformedInputException"
    assert result.message == "Input length = 1" and result.error.kind == "invalid_utf8"


def test_writer_is_kafkas_encode():
    assert encode_partition_metadata(TID) == b"version: 0\ntopic_id: xWt6cg-LDx4r6BAz2rYsCg"
    assert read_partition_metadata(encode_partition_metadata(TID)).topic_id == TID
    with pytest.raises(ValueError):
        encode_partition_metadata("AAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(ValueError):
        encode_partition_metadata("not-an-id")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_random_bytes_never_raise(data):
    result = read_partition_metadata(data, P)
    assert result.outcome in (OK, LOG_DIR_OFFLINE, BROKER_START_FAILS)
    assert (result.error is None) == (result.outcome == OK)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("version: 0\ntopic_id:AQx-_= \r\t+1"), max_size=60))
def test_random_near_miss_text_never_raises(text):
    result = read_partition_metadata(text.encode(), P)
    assert (result.topic_id is not None) == (result.outcome == OK)
