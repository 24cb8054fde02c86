"""partition.metadata missing or corrupt: every corruption Kafka treats differently (the log dir goes offline, or
the broker fails to start) and the odd files it accepts, with their outcomes (:func:`corrupt_variants`,
:func:`accepted_variants`). Registered into the one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from typing import List, Tuple

from udfs import partition_metadata

from .image import uid
from .scenarios import everyday_topics, expect_replica, scenario
from .simulation import Layout, Simulation, days


@scenario("missing-partition-metadata", "a replica dir without partition.metadata on a running 3.9 broker")
def missing_partition_metadata(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("events", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 2]])
    sim.advance(days(5))
    _, replica = sim.replica_on(2, "events", 1)
    replica.pm_missing = True
    sim.advance(days(1))
    expect_replica(sim, "MISSING_PARTITION_METADATA", 2, "events", 1, None)
    sim.note("events-1 on broker 2 lost its partition.metadata; since KAFKA-16814 the next start renames it -stray.")


# (label, file bytes, Kafka's outcome) — the readers' outcomes are asserted in tests with udfs.partition_metadata
def corrupt_variants(topic_id: str) -> List[Tuple[str, bytes, str]]:
    return [
        ("truncated", b"version: 0\ntopic_id: ", partition_metadata.LOG_DIR_OFFLINE),
        ("negative-version", f"version: -1\ntopic_id: {topic_id}".encode(), partition_metadata.LOG_DIR_OFFLINE),
        ("zero-id", b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", partition_metadata.LOG_DIR_OFFLINE),
        ("version-trailing-space", f"version: 0 \ntopic_id: {topic_id}".encode(), partition_metadata.LOG_DIR_OFFLINE),
        ("not-utf8", b"version: 0\ntopic_id: \xff\xfe" + topic_id.encode()[2:], partition_metadata.LOG_DIR_OFFLINE),
        ("empty", b"", partition_metadata.BROKER_START_FAILS),
        ("one-line", b"version: 0\n", partition_metadata.BROKER_START_FAILS),
        ("bad-base64", b"version: 0\ntopic_id: not+a/valid=id!!", partition_metadata.BROKER_START_FAILS),
    ]


def accepted_variants(topic_id: str) -> List[Tuple[str, bytes, str]]:
    """Odd but valid to Kafka: must NOT be flagged."""
    return [
        ("trailing-newline", f"version: 0\ntopic_id: {topic_id}\n".encode(), partition_metadata.OK),
        ("future-version", f"version: 3\ntopic_id: {topic_id}".encode(), partition_metadata.OK),
        ("other-keys", f"v:  0\nid:\t{topic_id}".encode(), partition_metadata.OK),
    ]


@scenario("corrupt-partition-metadata",
          "every partition.metadata corruption Kafka treats differently (log dir offline vs start fails) + accepted odd ones",
          Layout(brokers=4, partitions_per_broker=4))
def corrupt_partition_metadata(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("metrics", 11, 1, replicas=[[1 + i % 4] for i in range(11)])
    sim.advance(days(3))
    topic_id = sim.topic_id("metrics")
    text_id = uid(topic_id)
    variants = corrupt_variants(text_id) + accepted_variants(text_id)
    for p, (label, data, outcome) in enumerate(variants):
        broker = 1 + p % 4
        log_dir, replica = sim.replica_on(broker, "metrics", p)
        replica.pm_content = data
        sim.decode_outcomes.append({"broker_id": broker, "log_dir": log_dir.name, "dir_name": replica.name,
                                    "variant": label, "outcome": outcome})
        if outcome != partition_metadata.OK:
            sim.expect("CORRUPT_PARTITION_METADATA", broker_id=broker, log_dir=log_dir.name, dir_name=replica.name,
                       topic_name="metrics", partition=p)
    sim.advance(days(1))
    sim.note("metrics-0..10 (RF 1) each carry one partition.metadata variant: IOExceptions take the log dir "
             "offline, a NullPointerException / IllegalArgumentException stops the broker; trailing newline, "
             "version 3 and unusual key text are accepted by Kafka and must not be flagged.")
