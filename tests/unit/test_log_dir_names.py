"""udfs.log_dir_names: LocalLog.parseTopicPartitionName rules (LocalLogTest cases), the writer-side names, and
every entry of the real devsample / ZK log dirs."""
from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import log_dir_names as n

HEX = "b0adbe214c0843f99d086465639b4414"


def kafka_message(path, name):
    return (f"Found directory {path}, '{name}' is not in the form of topic-partition or topic-partition.uniqueId-delete "
            "(if marked for deletion).\nKafka's log directories (and children) should only contain Kafka topic data.")


# ---- LocalLogTest (core/src/test/scala/unit/kafka/log/LocalLogTest.scala)

def test_local_log_parse_topic_partition_name():
    assert n.parse_topic_partition_name("test_topic-143") == ("test_topic", 143)


def test_local_log_period_in_deleted_topic_name():
    name = n.delete_dir_name("foo.bar-testtopic", 42, HEX)
    assert n.parse_topic_partition_name(name) == ("foo.bar-testtopic", 42)
    entry = n.classify_entry(name, is_dir=True)
    assert (entry.kind, entry.topic, entry.partition, entry.suffix_id) == ("delete", "foo.bar-testtopic", 42, HEX)


@pytest.mark.parametrize("name", [
    "",                                   # empty name
    "test_topic1999",                     # missing separator
    "test_topic1999.-delete",             # ... and its -delete marker
    "-1999",                              # missing topic
    n.delete_dir_name("", 1999, HEX),     # ... -delete marker of it
    "test_topic-",                        # missing partition
    "test_topic-.-delete",
    "test_topic-1999a",                   # invalid partition
    "test_topic1999a.-delete",
    "non_kafka_dir",
    "non_kafka_dir-delete",
])
def test_local_log_rejected_names(name):
    result = n.parse_topic_partition_name(name, "/data/kafka")
    assert result.kind == "unrecognised_file"
    assert result.message == kafka_message(f"/data/kafka/{name}", name)
    entry = n.classify_entry(name, is_dir=True, log_dir="/data/kafka")
    assert entry.kind == "non_kafka" and entry.error == result


def test_local_log_delete_dir_name_shape_and_cap():
    name1 = n.delete_dir_name("foo", 3, HEX)
    assert re.fullmatch(r"foo-3\.[0-9a-z]{32}-delete", name1)
    name2 = n.delete_dir_name("n" + "o" * 248, 5, HEX)
    assert len(name2) == 255 and re.fullmatch(r"no{212}-5\.[0-9a-z]{32}-delete", name2)
    entry = n.classify_entry(name2, is_dir=True)
    assert entry.kind == "delete" and entry.topic == "n" + "o" * 212 and entry.topic_maybe_truncated


# ---- more parse rules

@pytest.mark.parametrize("name,expected", [
    ("orders-0", ("partition", "orders", 0, None)),
    ("my-topic-with-dashes-12", ("partition", "my-topic-with-dashes", 12, None)),
    ("foo--1", ("partition", "foo-", 1, None)),          # last '-' splits
    ("foo-+3", ("partition", "foo", 3, None)),           # Integer.parseInt accepts '+'
    ("foo-\u0663", ("partition", "foo", 3, None)),       # ...and Unicode digits
    ("__cluster_metadata-0", ("metadata", "__cluster_metadata", 0, None)),
    (f"events-1.{HEX}-future", ("future", "events", 1, HEX)),
    (f"inventory-2.{HEX}-stray", ("stray", "inventory", 2, HEX)),
    (f"orders-0.{HEX}-delete", ("delete", "orders", 0, HEX)),
])
def test_accepted_names(name, expected):
    entry = n.classify_entry(name, is_dir=True)
    assert (entry.kind, entry.topic, entry.partition, entry.suffix_id) == expected
    assert entry.error is None and entry.is_replica


@pytest.mark.parametrize("name", [
    f"orders-0 .{HEX}-delete",            # whitespace is not \S
    f"orders-0.{HEX} -stray",
    "orders 0-future",
    "orders-2147483648",                  # partition out of int range
    "orders-0x1",
    "a.b-0.x.y-delete",                   # cut at the LAST '.': "a.b-0.x" -> partition "0.x" is not an int
])
def test_more_rejected_names(name):
    assert n.classify_entry(name, is_dir=True).kind == "non_kafka"


def test_stray_names_are_capped_future_names_are_not():
    topic = "t" * 249
    stray = n.stray_dir_name(topic, 7, HEX)
    future = n.future_dir_name(topic, 7, HEX)
    assert len(stray) == 255 and stray.endswith(f"-7.{HEX}-stray")
    assert n.classify_entry(stray, is_dir=True).topic_maybe_truncated
    assert future == f"{topic}-7.{HEX}-future" and len(future) > 255
    assert not n.classify_entry(future, is_dir=True).topic_maybe_truncated
    short = n.classify_entry(n.delete_dir_name("short", 1, HEX), is_dir=True)
    assert not short.topic_maybe_truncated and short.topic == "short"


def test_writer_names_round_trip():
    rng = random.Random(3)
    uid = n.new_unique_id(rng)
    assert re.fullmatch(r"[0-9a-f]{32}", uid) and uid[12] == "4"
    assert n.log_dir_name("orders", 2) == "orders-2"
    for build, kind in ((n.delete_dir_name, "delete"), (n.stray_dir_name, "stray"), (n.future_dir_name, "future")):
        entry = n.classify_entry(build("orders.v2", 2, uid), is_dir=True)
        assert (entry.kind, entry.topic, entry.partition, entry.suffix_id) == (kind, "orders.v2", 2, uid)
    with pytest.raises(ValueError):
        n.delete_dir_name("orders", 0, "not-hex")


@pytest.mark.parametrize("name", sorted(n.TOP_FILES | n.TOP_TMP_FILES))
def test_known_top_level_files(name):
    assert n.classify_entry(name, is_dir=False).kind == "top_file"
    assert n.classify_entry(name).kind == "top_file"


def test_files_and_directories_are_treated_as_kafka_treats_them():
    assert n.classify_entry("remote-log-index-cache", is_dir=True).kind == "top_file"
    # Kafka parses every sub-directory: a directory named like a file stops log loading
    entry = n.classify_entry("meta.properties", is_dir=True, log_dir="/d")
    assert entry.kind == "non_kafka" and entry.error.message == kafka_message("/d/meta.properties", "meta.properties")
    # ...while files are never parsed: an unknown file, even one named like a partition, is just not Kafka's
    for name in ("orders-0", "notes.txt", "kafka.log"):
        entry = n.classify_entry(name, is_dir=False)
        assert entry.kind == "non_kafka" and "Kafka ignores files" in entry.error.message


def _walk(root):
    for log_dir in sorted(p for p in root.glob("broker-*/*") if (p / "meta.properties").exists()):
        for entry in sorted(log_dir.iterdir()):
            yield log_dir, entry


def test_every_devsample_entry(devsample_dir):
    kinds = {}
    for log_dir, entry in _walk(devsample_dir):
        result = n.classify_entry(entry.name, is_dir=entry.is_dir(), log_dir=str(log_dir))
        assert result.error is None, entry
        kinds.setdefault(result.kind, set()).add(entry.name)
    assert kinds["stray"] == {"inventory-2.89dae8f0999baf24f653d531c05f9ed6-stray"}
    assert kinds["future"] == {"events-1.96cc2e120fcaecf473a7e5b7b7d57964-future"}
    assert kinds["metadata"] == {"__cluster_metadata-0"}
    assert kinds["partition"] == {"clicks-0", "events-0", "events-1", "inventory-0", "inventory-1", "inventory-2"}
    assert kinds["top_file"] == {"bootstrap.checkpoint", "log-start-offset-checkpoint", "meta.properties",
                                 "recovery-point-offset-checkpoint", "replication-offset-checkpoint"}


def test_every_devsample_partition_file(devsample_dir):
    seen = set()
    for _log_dir, entry in _walk(devsample_dir):
        if not entry.is_dir():
            continue
        for f in entry.iterdir():
            result = n.classify_partition_file(f.name)
            assert result.error is None and result.kind != "other", f
            seen.add(result.kind)
    assert seen == {"log", "index", "timeindex", "txnindex", "producer_snapshot", "metadata_snapshot",
                    "leader_epoch_checkpoint", "partition_metadata", "quorum_state"}


@pytest.mark.parametrize("name,kind,offset,epoch,state", [
    ("00000000000000000026.log", "log", 26, None, None),
    ("00000000000000000026.index", "index", 26, None, None),
    ("00000000000000000026.timeindex", "timeindex", 26, None, None),
    ("00000000000000000006.txnindex", "txnindex", 6, None, None),
    ("00000000000000000060.snapshot", "producer_snapshot", 60, None, None),
    ("00000000000000000026.log.deleted", "log", 26, None, "deleted"),
    ("00000000000000000026.log.cleaned", "log", 26, None, "cleaned"),
    ("00000000000000000026.index.swap", "index", 26, None, "swap"),
    ("00000000000000000044-0000000001.checkpoint", "metadata_snapshot", 44, 1, None),
    ("00000000000000000044-0000000001.checkpoint.deleted", "metadata_snapshot", 44, 1, "deleted"),
    ("00000000000000000044-0000000001-4471992823377163925.checkpoint.part", "metadata_snapshot", 44, 1, "partial"),
    ("partition.metadata.tmp", "partition_metadata", None, None, "tmp"),
    ("leader-epoch-checkpoint", "leader_epoch_checkpoint", None, None, None),
])
def test_partition_file_names(name, kind, offset, epoch, state):
    result = n.classify_partition_file(name)
    assert (result.kind, result.offset, result.epoch, result.state, result.error) == (kind, offset, epoch, state, None)


@pytest.mark.parametrize("name", ["0000000000000000002x.log", "44-1.checkpoint", "notes.txt", "00000000000000000001"])
def test_bad_partition_file_names(name):
    result = n.classify_partition_file(name)
    assert result.error is not None and result.error.kind == "unrecognised_file"


def test_segment_and_snapshot_name_writers():
    assert n.segment_file_name(0) == "00000000000000000000.log"
    assert n.segment_file_name(23423423, ".timeindex") == "00000000000023423423.timeindex"
    assert n.segment_file_name(2**63 - 1, ".index") == "09223372036854775807.index"
    assert n.snapshot_file_name(100, 1) == "00000000000000000100-0000000001.checkpoint"
    assert n.classify_partition_file(n.snapshot_file_name(44, 1)).offset == 44


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60), st.sampled_from([True, False, None]))
def test_classify_never_raises(name, is_dir):
    entry = n.classify_entry(name, is_dir=is_dir, log_dir="/x")
    assert entry.kind in n.KINDS
    assert (entry.error is None) == (entry.kind != "non_kafka")
    n.classify_partition_file(name)


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"[a-zA-Z0-9._-]{1,249}", fullmatch=True), st.integers(0, 2**31 - 1))
def test_any_legal_topic_round_trips(topic, partition):
    uid = "0" * 32
    plain = n.classify_entry(n.log_dir_name(topic, partition), is_dir=True)
    assert (plain.topic, plain.partition) == (topic, partition)
    entry = n.classify_entry(n.delete_dir_name(topic, partition, uid), is_dir=True)
    assert entry.kind == "delete" and entry.partition == partition
    assert topic.startswith(entry.topic)
    assert entry.topic == topic or entry.topic_maybe_truncated
