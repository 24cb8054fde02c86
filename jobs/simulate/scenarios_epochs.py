"""Leader-epoch histories (leader_epochs family): healthy histories with leader changes, retention and a lagging
follower; replicas that disagree on where an epoch starts; checkpoints Kafka cannot load or loads with
entries dropped; epochs ahead of the controller. Every replica's file comes from its partition's history
(:mod:`.epoch_history`); a scenario overrides one replica's file with ``Replica.epoch_content``. Registered
into the one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from typing import List, Tuple

from . import codec
from .clock import MINUTE
from .epoch_history import EpochHistories, replica_offsets
from .image import uid
from .scenarios import everyday_topics, scenario
from .simulation import Layout, Simulation, days, hours


def _rolling_restart(sim: Simulation, brokers: List[int]) -> None:
    """Each broker in turn: stop (its partitions elect other leaders), start (preferred leaders come back)."""
    for broker in brokers:
        sim.stop_broker(broker)
        sim.advance(10 * MINUTE)
        sim.start_broker(broker)
        sim.advance(hours(1))


def _history(sim: Simulation, broker: int, topic: str, partition: int) -> List[Tuple[int, int]]:
    _, replica = sim.replica_on(broker, topic, partition)
    return EpochHistories(sim).of(replica)


def _override(sim: Simulation, broker: int, topic: str, partition: int, data: bytes) -> Tuple[str, str]:
    log_dir, replica = sim.replica_on(broker, topic, partition)
    replica.epoch_content = data
    return log_dir.name, replica.name


@scenario("leader-epochs-healthy",
          "rolling restarts (leaders change, epochs grow), retention moved every log start, a lagging follower: "
          "realistic leader-epoch-checkpoints and no findings")
def leader_epochs_healthy(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(12))
    _rolling_restart(sim, sim.broker_ids)
    sim.advance(days(5))
    _, lagging = sim.replica_on(sim.broker_ids[-1], "orders", 1)
    lagging.lag_ms = days(7)  # out of the ISR for a week (a slow disk): it has not seen the newest epochs
    sim.advance(hours(3))
    sim.note("Every broker restarted once: each restart moved leadership away and back, so orders/payments/"
             "inventory have epochs 0..N, recorded by leaders and followers alike at the same offsets. Retention "
             "moved every log start past its first epochs (truncateFromStart rewrote the first entry to the log "
             "start); one orders follower lags and lacks the newest epochs. None of that is a finding.")


@scenario("leader-epoch-divergence",
          "replicas of ledger-0 disagree on where leader epoch 2 starts (the logs differ after an unclean election)",
          Layout(brokers=4))
def leader_epoch_divergence(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.advance_to_before_capture(days(3))  # young enough that retention has not moved its log start
    sim.create_topic("ledger", 1, 3, replicas=[[1, 2, 3]])
    sim.advance(hours(12))
    sim.stop_broker(1)  # epoch 1: broker 2 leads
    sim.advance(hours(4))
    sim.start_broker(1)  # epoch 2: broker 1 leads again
    sim.advance(hours(6))
    history = _history(sim, 3, "ledger", 0)
    epoch, start = history[-1]
    previous = history[-2][1]
    diverged = history[:-1] + [(epoch, previous + (start - previous) // 2)]
    log_dir, name = _override(sim, 3, "ledger", 0, codec.leader_epoch_checkpoint(diverged))
    sim.expect("LEADER_EPOCH_DIVERGENCE", topic_name="ledger", topic_id=uid(sim.topic_id("ledger")), partition=0)
    sim.note(f"Brokers 1 and 2 start ledger-0's epoch {epoch} at offset {start}, broker 3 ({log_dir}/{name}) at "
             f"{diverged[-1][1]}: the records between those offsets differ between the replicas, as after an unclean "
             "election whose follower truncation never happened. One finding for the partition.")


@scenario("unclean-election-truncation",
          "ledger-0's leader was elected without the epoch its old leader wrote last (an unclean election): the "
          "old leader, down, will truncate acknowledged records when it returns as a follower", Layout(brokers=4))
def unclean_election_truncation(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.advance_to_before_capture(days(3))  # young: retention has not moved ledger-0's log start
    sim.create_topic("ledger", 1, 2, replicas=[[1, 2]])
    sim.advance(hours(12))
    sim.stop_broker(1)  # epoch 1: broker 2 leads
    sim.advance(hours(2))
    sim.start_broker(1)  # epoch 2: the preferred leader, broker 1, leads again
    sim.advance(hours(4))
    sim.stop_broker(1)  # epoch 3: broker 2 leads, elected without epoch 2's records
    sim.advance(hours(6))
    part = sim.live_topic("ledger").partitions[0]
    if (part.leader, part.leader_epoch) != (2, 3):
        raise RuntimeError(f"ledger-0: leader {part.leader} at epoch {part.leader_epoch}")  # pragma: no cover
    follower_dir, follower = sim.replica_on(1, "ledger", 0)
    _, leader = sim.replica_on(2, "ledger", 0)
    _, follower_start, follower_leo = replica_offsets(follower, sim.capture_ms)
    _, leader_start, leader_leo = replica_offsets(leader, sim.capture_ms)
    b = min(follower_leo, leader_leo) // 2  # where broker 2's epoch 3 starts: its log end when it was elected
    a = b // 2
    if a <= max(follower_start, leader_start):
        raise RuntimeError(f"ledger-0 is too short for the scenario: {follower_leo}, {leader_leo}")  # pragma: no cover
    follower.epoch_content = codec.leader_epoch_checkpoint([(0, 0), (1, a), (2, b)])
    leader.epoch_content = codec.leader_epoch_checkpoint([(0, 0), (1, a), (3, b)])
    # Kafka's truth (apache/kafka@1eb7644): broker 1 fetches with lastFetchedEpoch 2 from its log end
    # (ReplicaManager.initialFetchOffset); broker 2's LeaderEpochFileCache.endOffsetFor(2) has no epoch 2: the
    # largest epoch below it is 1 and the next one (3) starts at b, so it answers (1, b); 1 < 2 is a diverging
    # epoch (Partition.readRecords). AbstractFetcherThread.getOffsetTruncationState: broker 1's own endOffsetFor(1)
    # is (1, b), the same epoch, so it truncates to min(b, b, its log end) = b (UnifiedLog.truncateTo). Its
    # replication-offset-checkpoint holds its log end as high watermark: every cut record was acknowledged.
    sim.expect("REPLICA_TRUNCATION_ACKNOWLEDGED", broker_id=1, log_dir=follower_dir.name, dir_name=follower.name,
               topic_name="ledger", topic_id=uid(sim.topic_id("ledger")), partition=0)
    sim.note(f"Broker 1 (down) led ledger-0's epoch 2 from offset {b} to {follower_leo}; broker 2 was elected for "
             f"epoch 3 at offset {b} without those records. When broker 1 returns it truncates to {b}: "
             f"{follower_leo - b} acknowledged records of epoch 2 exist only on broker 1's disk until then.")


def _unreadable_variants() -> List[Tuple[str, bytes]]:
    return [
        ("epoch not a number (NumberFormatException: the log does not load)", b"0\n2\n0 0\nseven 120\n"),
        ("version 1 (IOException: the log dir goes offline)", b"1\n1\n0 0\n"),
        ("negative start offset (IllegalArgumentException on load)", b"0\n2\n0 0\n1 -5\n"),
    ]


@scenario("leader-epoch-checkpoint-damage",
          "leader-epoch-checkpoints Kafka cannot load, one it loads with an entry dropped, one ahead of the "
          "controller's epoch", Layout(brokers=4))
def leader_epoch_checkpoint_damage(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.advance_to_before_capture(days(3))
    sim.create_topic("audit", 5, 2, replicas=[[1, 2], [2, 3], [3, 4], [4, 1], [1, 3]])
    sim.advance(hours(6))
    for broker in (1, 2, 3, 4):  # every audit partition changes leader twice: epochs 0, 1, 2
        sim.stop_broker(broker)
        sim.advance(hours(2))
        sim.start_broker(broker)
        sim.advance(hours(2))
    topic_id = uid(sim.topic_id("audit"))
    for partition, (label, data) in enumerate(_unreadable_variants()):
        broker = sim.live_topic("audit").partitions[partition].replicas[1]
        log_dir, name = _override(sim, broker, "audit", partition, data)
        sim.expect("LEADER_EPOCH_CHECKPOINT_UNREADABLE", broker_id=broker, log_dir=log_dir, dir_name=name,
                   topic_name="audit", topic_id=topic_id, partition=partition)
        sim.note(f"audit-{partition} on broker {broker}: {label}.")
    history = _history(sim, 4, "audit", 3)
    if len(history) < 3:
        raise RuntimeError(f"audit-3 has too short a history: {history}")  # pragma: no cover
    swapped = history[:-2] + [history[-1], history[-2]]
    log_dir, name = _override(sim, 4, "audit", 3, codec.leader_epoch_checkpoint(swapped))
    sim.expect("LEADER_EPOCH_NOT_MONOTONIC", broker_id=4, log_dir=log_dir, dir_name=name, topic_name="audit",
               topic_id=topic_id, partition=3)
    current = sim.live_topic("audit").partitions[4].leader_epoch
    ahead = _history(sim, 3, "audit", 4)
    ahead.append((current + 3, ahead[-1][1] + 1))
    log_dir, name = _override(sim, 3, "audit", 4, codec.leader_epoch_checkpoint(ahead))
    sim.expect("LEADER_EPOCH_AHEAD_OF_METADATA", broker_id=3, log_dir=log_dir, dir_name=name, topic_name="audit",
               topic_id=topic_id, partition=4)
    sim.note(f"audit-3 on broker 4 lists its last two epochs in the wrong order: Kafka keeps the older one and "
             f"drops the newer. audit-4 on broker 3 records epoch {current + 3}, the controller is at {current}.")


@scenario("zk-leader-epoch-ahead",
          "ZooKeeper mode: a replica records a leader epoch above its partition's state znode leader_epoch",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="zk")
def zk_leader_epoch_ahead(sim: Simulation) -> None:
    sim.start_zk_cluster(controller_id=1)
    sim.advance_to_before_capture(days(2))
    sim.create_topic("orders", 3, 3)
    sim.advance(hours(6))
    sim.stop_broker(3)  # every partition's leader_epoch grows (broker 3 leaves the ISR)
    sim.advance(hours(1))
    sim.start_broker(3)
    sim.advance(hours(5))
    current = sim.zk.topics["orders"].partitions[1].leader_epoch
    ahead = _history(sim, 2, "orders", 1)
    ahead.append((current + 1, ahead[-1][1] + 1))
    log_dir, name = _override(sim, 2, "orders", 1, codec.leader_epoch_checkpoint(ahead))
    sim.expect("LEADER_EPOCH_AHEAD_OF_METADATA", broker_id=2, log_dir=log_dir, dir_name=name, topic_name="orders",
               partition=1)
    sim.note(f"orders-1 on broker 2 records epoch {current + 1}; /brokers/topics/orders/partitions/1/state says "
             f"leader_epoch {current}.")
