"""Producer-id blocks: a block overlapping the previous one, NextProducerId going backwards, an id in use outside
every block, and the ZooKeeper->KRaft migration handing a block out twice (KAFKA-15552). Registered into the
one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from .scenarios import everyday_topics, scenario
from .simulation import Layout, Simulation, days, hours


@scenario("pid-block-overlap", "a ProducerIdsRecord whose block overlaps the previous one (NextProducerId +400)")
def pid_block_overlap(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(4))
    second = sim.allocate_producer_ids(2)
    sim.produce("orders", 1, second.first + 5, 10)
    sim.advance(days(1))
    reg = sim.kraft.image.brokers[3]
    overlapping = sim.kraft.write_producer_ids_record(3, reg.epoch, second.first + 1000 + 400)
    sim.produce("payments", 2, overlapping.first + 605, 10)  # same id as broker 2's block range
    sim.advance(hours(6))
    sim.allocate_producer_ids(1)
    sim.advance(days(1))
    sim.expect("PID_BLOCK_OVERLAP")
    sim.note(f"NextProducerId went {second.first + 1000} -> {overlapping.first + 1000}: still increasing (Kafka's "
             f"replay accepts it) but the implied block {overlapping.first}-{overlapping.last} overlaps broker 2's "
             f"{second.first}-{second.last}. Rule: a record whose NextProducerId rises by less than 1000 overlaps.")


@scenario("pid-regression", "NextProducerId goes backwards (5000 -> 3000)")
def pid_regression(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(4))
    for broker in (2, 3, 4, 1):
        sim.allocate_producer_ids(broker)
        sim.advance(hours(5))
    high = sim.kraft.image.next_producer_id
    reg = sim.kraft.image.brokers[2]
    sim.kraft.write_producer_ids_record(2, reg.epoch, high - 2000)
    sim.advance(days(1))
    sim.expect("PID_BLOCK_REGRESSION")
    sim.expect("PID_BLOCK_OVERLAP", broker_id=2)  # the regressed block is one another broker already holds
    sim.note(f"NextProducerId {high} -> {high - 2000}: the controller would re-issue ids already handed out "
             "(Kafka's replay rejects it; it got into the log through a corrupted/diverged history). The block "
             "it implies is one broker 3 was given before, so it is also an overlap with another owner.")


@scenario("pid-outside-blocks", "a producer id in use (batches + producer snapshot) above every allocated block",
          Layout(brokers=4))
def pid_outside_blocks(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)  # the first block (0..999) is later only visible through the snapshot's NextProducerId
    sim.create_topic("imports", 1, 1, replicas=[[2]])
    sim.advance(days(12))
    block = sim.allocate_producer_ids(3)
    sim.produce("orders", 4, block.first + 3, 6)
    sim.produce("imports", 0, 987654, 25)
    sim.advance(days(10))
    sim.expect("PID_OUTSIDE_BLOCKS", topic_name="imports", partition=0)
    sim.note("imports-0 (RF 1, broker 2) holds batches and producer state of producer id 987654, far above the "
             "allocator's high-water: data copied in from another cluster. Producer ids 0-2 on orders come from a "
             "block whose ProducerIdsRecord is only in the snapshot: not a finding.")


@scenario("pid-migration-reuse",
          "ZooKeeper->KRaft migration on 3.6.0 hands out the last ZooKeeper producer-id block again (KAFKA-15552)",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="migration", version=(3, 6))
def pid_migration_reuse(sim: Simulation) -> None:
    from .migration import migrate

    sim.start_zk_cluster(controller_id=1)
    sim.create_topic("orders", 3, 3)
    sim.create_topic("payments", 2, 2)
    blocks = []
    for broker in (1, 2, 3, 1, 2, 3, 2):
        blocks.append(sim.allocate_producer_ids(broker))
        sim.advance(hours(7))
    last_zk = blocks[-1]
    sim.produce("orders", 0, last_zk.first + 1, 15)
    sim.advance_to_before_capture(days(3))  # the migration's records stay in the retained log
    kraft_block = migrate(sim, buggy=True, allocate_to=1)
    sim.produce("payments", 0, kraft_block.first + 1, 8)
    sim.advance(days(1))
    sim.expect("PID_MIGRATION_REUSE", broker_id=1)
    sim.note(f"The migration wrote NextProducerId = {last_zk.first} (the first id of the last ZooKeeper block, "
             f"{last_zk.first}-{last_zk.last} of broker {last_zk.broker_id}) instead of {last_zk.last + 1}; the KRaft "
             f"controller then gave broker 1 the same block. Producer id {last_zk.first + 1} is in use under both.")
