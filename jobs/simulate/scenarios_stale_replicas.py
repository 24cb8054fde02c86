"""Stale replicas: what a broker keeps after the controller moved on while it was down (a topic deleted and
re-created, partitions reassigned away, -stray renames on restart), a deleted topic restored from a backup, and
deletes left incomplete or -delete dirs left behind. Registered into the one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from typing import List, Tuple

from .clock import MINUTE, SECOND
from .fleet import Replica
from .image import uid
from .scenarios import everyday_topics, expect_replica, scenario
from .simulation import Simulation, days, hours


def _recreate_while_down(sim: Simulation, down: int = 3, also_reassign: bool = False) -> Tuple[bytes, List[int]]:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("clicks", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 1]])
    if also_reassign:
        sim.create_topic("ledger", 2, 3, replicas=[[1, 2, 3], [2, 4, 1]])
    sim.advance_to_before_capture(days(5))  # incidents inside the retained metadata log
    sim.stop_broker(down)
    sim.advance(hours(1))
    if also_reassign:
        sim.reassign("ledger", 0, [1, 2, 4])
    old_id = sim.delete_topic("clicks")
    sim.advance(10 * MINUTE)
    sim.create_topic("clicks", 3, 3)  # placed on unfenced brokers only: never on the down broker
    sim.advance(days(3))
    return old_id, [0, 1, 2]


@scenario("topic-recreated-while-down",
          "topic deleted and re-created while broker 3 was down; broker 3 (still down) keeps the old incarnation")
def topic_recreated_while_down(sim: Simulation) -> None:
    old_id, partitions = _recreate_while_down(sim)
    for p in partitions:
        expect_replica(sim, "STALE_TOPIC_ID", 3, "clicks", p, old_id)
    sim.note("Broker 3 went down before 'clicks' was deleted and re-created with a new topic id; it never saw the "
             "RemoveTopicRecord, so clicks-0/1/2 on its disk hold the old id. Its metadata-log copy stops where it "
             "went down (a valid prefix, not a divergence).")


@scenario("reassigned-while-down",
          "partitions reassigned away from broker 3 while it was down; broker 3 keeps replicas it no longer hosts")
def reassigned_while_down(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("ledger", 3, 3, replicas=[[1, 2, 3], [2, 3, 4], [3, 4, 1]])
    sim.advance_to_before_capture(days(5))
    sim.stop_broker(3)
    sim.advance(hours(2))
    sim.reassign("ledger", 0, [1, 2, 4])
    sim.reassign("ledger", 2, [4, 1, 2])
    sim.advance(days(2))
    topic_id = sim.topic_id("ledger")
    for p in (0, 2):
        expect_replica(sim, "STRAY_NOT_ASSIGNED", 3, "ledger", p, topic_id)
    sim.note("ledger-0 and ledger-2 were reassigned off broker 3 while it was down; its copies carry the live id "
             "but broker 3 is no longer a replica. ledger-1 still lists broker 3: a lagging, valid replica.")


@scenario("stray-dirs",
          "broker 3 restarted on 3.9 after a re-create and a reassignment it missed: Kafka renamed 4 dirs -stray")
def stray_dirs(sim: Simulation) -> None:
    _recreate_while_down(sim, also_reassign=True)
    sim.start_broker(3)
    sim.advance(days(1))
    for log_dir, replica in sim.fleet[3].replicas(kinds=("stray",)):
        sim.expect("STRAY_DIR", broker_id=3, log_dir=log_dir.name, dir_name=replica.name, topic_name=replica.topic,
                   partition=replica.partition, topic_id=uid(replica.topic_id))
    sim.note("On restart (3.9) broker 3 found clicks-0/1/2 whose topic id no longer exists and ledger-0 that was "
             "reassigned off it, and renamed them <topic>-<p>.<32hex>-stray (LogManager.isStrayKraftReplica); "
             "Kafka never deletes -stray dirs. The re-created clicks is not assigned to broker 3.")


@scenario("deleted-topic-leftovers",
          "a replica of a topic deleted long ago (beyond metadata retention) restored from a backup: id unknown")
def deleted_topic_leftovers(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("legacy-events", 2, 3, replicas=[[1, 2, 3], [2, 3, 4]])
    sim.advance(days(2))
    _, backup = sim.replica_on(2, "legacy-events", 0)
    old_id = sim.delete_topic("legacy-events")
    sim.advance(days(20))
    # An operator restores broker 2's log dir from a day-3 backup: legacy-events-0 comes back.
    log_dir = sim.fleet[2].log_dirs[0]
    restored = Replica("legacy-events-0", "legacy-events", 0, old_id, "partition", backup.created_ms,
                       backup.bytes_per_day, stopped_ms=backup.created_ms + days(2))
    log_dir.entries[restored.name] = restored
    sim.advance(days(3))
    sim.expect("ORPHAN_REPLICA", broker_id=2, log_dir=log_dir.name, dir_name="legacy-events-0",
               topic_name="legacy-events", partition=0, topic_id=uid(old_id))
    sim.note("legacy-events was created and deleted 3 weeks before the capture; both records fell out of the "
             "retained metadata log and no snapshot holds the topic, so its id is unknown to the controller.")


@scenario("delete-incomplete",
          "topic deleted while broker 4 was down (delete in the retained log); broker 4 still holds its replicas")
def delete_incomplete(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("sessions", 3, 3, replicas=[[1, 2, 4], [2, 4, 3], [4, 3, 1]])
    sim.advance_to_before_capture(days(3))
    sim.stop_broker(4)
    sim.advance(hours(3))
    topic_id = sim.delete_topic("sessions")
    sim.advance(days(2))
    sim.expect("DELETE_INCOMPLETE", broker_id=4, topic_name="sessions", topic_id=uid(topic_id))
    sim.note("RemoveTopicRecord for sessions is in the retained log (2 days before capture); brokers 1-3 renamed "
             "their replicas -delete and removed them 60 s later; broker 4 (down) keeps sessions-0/1/2.")


@scenario("delete-dirs-past-delay",
          "-delete dirs: lingering 3 days on broker 2 (flagged), re-armed by a restart on 3, and fresh ones (not)")
def delete_dirs_past_delay(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("tmp-exports", 2, 3, replicas=[[1, 2, 3], [2, 3, 4]])
    sim.create_topic("tmp-imports", 2, 3, replicas=[[3, 1, 4], [4, 3, 1]])
    sim.create_topic("scratch", 1, 3, replicas=[[1, 2, 4]])
    sim.advance_to_before_capture(days(3))
    sim.fleet.broken_delete |= {2, 3}  # their delete tasks fail (a permission problem): -delete dirs stay
    sim.delete_topic("tmp-exports")
    sim.delete_topic("tmp-imports")
    sim.advance(sim.capture_ms - 5 * MINUTE - sim.now)
    sim.stop_broker(3)
    sim.advance(sim.capture_ms - 30 * SECOND - sim.now)
    sim.start_broker(3)  # fixed by the restart, which re-arms file.delete.delay.ms; the capture is 30 s later
    sim.advance(sim.capture_ms - 20 * SECOND - sim.now)
    sim.delete_topic("scratch")  # 20 s before the capture: within file.delete.delay.ms everywhere
    for log_dir, replica in sim.fleet[2].replicas(kinds=("delete",)):
        if replica.topic == "tmp-exports":
            sim.expect("LINGERING_DELETE_DIR", broker_id=2, log_dir=log_dir.name, dir_name=replica.name,
                       topic_name=replica.topic, partition=replica.partition)
    sim.note("tmp-exports was deleted 3 days before the capture and broker 2 never removed its -delete dirs "
             "(flagged). Broker 3 still has tmp-exports/tmp-imports -delete dirs but restarted 30 s before the "
             "capture, which re-arms file.delete.delay.ms (not flagged). 'scratch' was deleted 20 s before it.")
