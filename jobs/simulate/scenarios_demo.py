"""The demo fleet (what `make demo` runs): six brokers, two of them JBOD, and a handful of findings of every
severity in one story. Registered into the one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from .image import uid
from .scenarios import everyday_topics, expect_replica, scenario
from .simulation import Layout, Simulation, add_entry, days, hours


@scenario("demo", "6 brokers (2 JBOD), ~10 topics, a handful of findings of every severity: what `make demo` runs",
          Layout(brokers=6, log_dirs=2, partitions_per_broker=8, min_brokers=6, jbod_brokers=(5, 6)))
def demo(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("clicks", 4, 3, replicas=[[1, 4, 5], [2, 4, 6], [3, 4, 1], [4, 5, 6]])
    sim.create_topic("shipments", 3, 3)
    sim.create_topic("ledger", 3, 3, replicas=[[5, 1, 2], [6, 2, 3], [5, 3, 1]])
    sim.create_topic("tmp-exports", 2, 3, replicas=[[1, 2, 3], [2, 3, 6]])
    sim.create_topic("notifications", 6, 2)
    sim.create_topic("user-profiles", 3, 3, replicas=[[1, 2, 3], [2, 3, 6], [3, 1, 5]],
                     configs={"cleanup.policy": "compact"})
    sim.advance_to_before_capture(days(5))  # the incidents stay inside the retained metadata log
    block = sim.allocate_producer_ids(2)
    sim.produce("shipments", 0, block.first + 1, 10)
    # broker 4 goes down; clicks is deleted and re-created meanwhile -> STALE_TOPIC_ID x4 on broker 4
    sim.stop_broker(4)
    sim.advance(hours(1))
    old_clicks = sim.delete_topic("clicks")
    sim.create_topic("clicks", 4, 3)
    # broker 5 goes down; ledger-0 is moved off it; it restarts on 3.9 -> STRAY_DIR
    sim.advance(hours(3))
    sim.stop_broker(5)
    sim.reassign("ledger", 0, [1, 2, 6])
    sim.advance(hours(2))
    sim.start_broker(5)
    sim.advance(hours(20))
    # tmp-exports deleted; broker 2's delete task fails -> LINGERING_DELETE_DIR
    sim.fleet.broken_delete.add(2)  # broker 2's delete task fails: its -delete dirs stay
    sim.delete_topic("tmp-exports")
    sim.advance(hours(16))
    # an overlapping producer-id block
    reg = sim.kraft.image.brokers[3]
    sim.kraft.write_producer_ids_record(3, reg.epoch, sim.kraft.image.next_producer_id + 500)
    sim.advance(hours(16))
    sim.add_partitions("notifications", 8)  # PARTITION_COUNT_CHANGED (info)
    _, replica = sim.replica_on(1, "user-profiles", next(p for p, part in
                                                         sim.live_topic("user-profiles").partitions.items()
                                                         if 1 in part.replicas))
    replica.pm_missing = True
    lost = add_entry(sim, 3, "lost+found", True)
    sim.advance(hours(16))
    for p in range(4):
        if sim.fleet[4].find("clicks", p):
            expect_replica(sim, "STALE_TOPIC_ID", 4, "clicks", p, old_clicks)
    for log_dir, stray in sim.fleet[5].replicas(kinds=("stray",)):
        sim.expect("STRAY_DIR", broker_id=5, log_dir=log_dir.name, dir_name=stray.name, topic_name=stray.topic,
                   partition=stray.partition, topic_id=uid(stray.topic_id))
    for log_dir, gone in sim.fleet[2].replicas(kinds=("delete",)):
        if gone.topic == "tmp-exports":
            sim.expect("LINGERING_DELETE_DIR", broker_id=2, log_dir=log_dir.name, dir_name=gone.name,
                       topic_name="tmp-exports", partition=gone.partition)
    sim.expect("PID_BLOCK_OVERLAP")
    sim.expect("PARTITION_COUNT_CHANGED", topic_name="notifications", topic_id=uid(sim.topic_id("notifications")))
    for log_dir, r in sim.fleet[1].replicas():
        if r is replica:
            sim.expect("MISSING_PARTITION_METADATA", broker_id=1, log_dir=log_dir.name, dir_name=r.name,
                       topic_name=r.topic, partition=r.partition)
    sim.expect("UNKNOWN_LOG_DIR_ENTRY", broker_id=3, log_dir=lost.name, dir_name="lost+found")
    sim.note("Broker 4 is down since clicks was re-created (stale replicas); broker 5 restarted after ledger-0 "
             "moved off it (-stray); broker 2 failed to remove tmp-exports' -delete dirs; a producer-id block "
             "overlaps; notifications grew from 6 to 8 partitions; a user-profiles replica lost partition.metadata; "
             "broker 3 has lost+found in its log dir.")
