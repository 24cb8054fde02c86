"""Production topologies, modelled on real Kafka captures (tests/fixtures/kafka-real-prod, Kafka trunk): dedicated
KRaft controllers, a JBOD disk that fails and comes back, a decommissioned broker, intra-broker moves, and a
delete that a fenced broker cannot complete. Registered into the one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from typing import List, Tuple

from . import codec
from .clock import HOUR, MINUTE
from .fleet import LogDir, Replica
from .image import uid
from .scenarios import everyday_topics, scenario
from .scenarios_log_dirs import _future_move
from .simulation import Layout, Simulation, days, hours

# dedicated controllers' node ids: far above any broker id the scale flags create
CONTROLLERS = (9001, 9002, 9003)
JBOD = Layout(brokers=4, log_dirs=2, min_log_dirs=2)
SCENARIO_TOPICS = ("orders", "payments", "inventory")


def _scenario_replicas(log_dir: LogDir) -> List[Replica]:
    return sorted((e for e in log_dir.entries.values()
                   if isinstance(e, Replica) and e.kind == "partition" and e.topic in SCENARIO_TOPICS),
                  key=lambda r: (r.topic, r.partition))


@scenario("dedicated-controllers",
          "3 dedicated KRaft controllers (process.roles=controller) and 4 JBOD brokers, everyday load: no findings",
          JBOD)
def dedicated_controllers(sim: Simulation) -> None:
    sim.start_kraft_cluster(dedicated_controllers=CONTROLLERS)
    everyday_topics(sim)
    sim.advance(days(10))
    block = sim.allocate_producer_ids(sim.broker_ids[1])
    sim.produce("orders", 2, block.first, 20)
    sim.advance(days(12))
    sim.note("Controllers 9001-9003 each capture one metadata dir (meta.properties, bootstrap.checkpoint, "
             "__cluster_metadata-0) and register with RegisterControllerRecord, never as brokers; like the real "
             "capture P1, nothing is wrong and a controller's dir is never a foreign log dir.")


@scenario("jbod-dir-failure", "broker 2's second log dir dies while it runs: Kafka marks it offline (real capture P2a)",
          JBOD)
def jbod_dir_failure(sim: Simulation) -> None:
    sim.start_kraft_cluster(dedicated_controllers=CONTROLLERS)
    everyday_topics(sim)
    sim.advance_to_before_capture(days(2))
    dead = sim.fleet[2].log_dirs[1]
    sim.fail_log_dir(2, dead.name)
    sim.advance(days(1))
    sim.expect("OFFLINE_LOG_DIR", broker_id=2)
    sim.note(f"{dead.name} of broker 2 failed a day before the capture: the controller wrote "
             "BrokerRegistrationChangeRecord v2 with the remaining LogDirs and moved leadership and ISR off the "
             "dead dir's partitions, whose Directories still name it; the capture holds a 0-byte file where the "
             "dir was. One OFFLINE_LOG_DIR lists those partitions; none of them is a MISSING_REPLICA.")


@scenario("jbod-dir-returns",
          "broker 2's dead dir: restart without it, two partitions re-created in its other dir, then the disk comes "
          "back while broker 2 is stopped: duplicates (real captures P2b, P2c)", JBOD)
def jbod_dir_returns(sim: Simulation) -> None:
    sim.start_kraft_cluster(dedicated_controllers=CONTROLLERS)
    everyday_topics(sim)
    sim.advance_to_before_capture(days(3))
    broker = sim.fleet[2]
    dead = broker.log_dirs[1]
    moved: List[Tuple[str, int]] = [(r.topic, r.partition) for r in _scenario_replicas(dead)][:2]
    if not moved:
        raise RuntimeError("broker 2's second dir holds no scenario replica")  # pragma: no cover
    sim.fail_log_dir(2, dead.name)
    sim.advance(hours(2))
    sim.stop_broker(2)
    sim.advance(5 * MINUTE)
    sim.start_broker(2)  # registers with the remaining dir only; replicas of the dead dir are not re-created
    sim.advance(hours(2))
    for topic, p in moved:  # the operator re-replicates them: off broker 2 and back
        replicas = list(sim.live_topic(topic).partitions[p].replicas)
        spare = next(b for b in sim.broker_ids if b not in replicas)
        sim.reassign(topic, p, [spare if b == 2 else b for b in replicas])
        sim.advance(10 * MINUTE)
        sim.reassign(topic, p, replicas)
        sim.advance(10 * MINUTE)
    sim.advance(hours(3))
    sim.stop_broker(2)
    sim.advance(5 * MINUTE)
    sim.restore_log_dir(2, dead.name)
    sim.advance(hours(1))
    for topic, p in moved:
        sim.expect("DUPLICATE_REPLICA", broker_id=2, dir_name=codec.partition_dir_name(topic, p), topic_name=topic,
                   partition=p, topic_id=uid(sim.topic_id(topic)))
    sim.expect("UNREGISTERED_LOG_DIR", broker_id=2, log_dir=dead.name)
    sim.note(f"{dead.name} of broker 2 died, broker 2 restarted without it (RegisterBrokerRecord LogDirs lists only "
             f"the other dir) and {', '.join(f'{t}-{p}' for t, p in moved)} were moved off broker 2 and back, so "
             "Kafka created new copies in the remaining dir. Then broker 2 stopped and the disk came back with its "
             "old contents: those partitions are in both dirs (Kafka would refuse to start: 'Duplicate log "
             "directories'), and the returned dir is not in broker 2's registration until it starts.")


@scenario("decommissioned-broker",
          "broker 4 stopped, its partitions moved away, then unregistered; its disk still holds the old replicas",
          Layout(brokers=4, partitions_per_broker=0))
def decommissioned_broker(sim: Simulation) -> None:
    sim.start_kraft_cluster(dedicated_controllers=CONTROLLERS)
    everyday_topics(sim)
    sim.advance_to_before_capture(days(3))
    sim.stop_broker(4)
    sim.advance(hours(1))
    for topic in SCENARIO_TOPICS:
        state = sim.live_topic(topic)
        for p in sorted(state.partitions):
            replicas = list(state.partitions[p].replicas)
            if 4 in replicas:
                spare = next(b for b in sim.broker_ids if b != 4 and b not in replicas)
                sim.reassign(topic, p, [spare if b == 4 else b for b in replicas])
    sim.advance(hours(1))
    sim.unregister_broker(4)
    sim.advance(days(1))
    for log_dir in sim.fleet[4].log_dirs:
        if _scenario_replicas(log_dir):
            sim.expect("DECOMMISSIONED_BROKER_DATA", broker_id=4, log_dir=log_dir.name)
    sim.note("Broker 4 was stopped, every partition reassigned off it, and then removed (UnregisterBrokerRecord); "
             "its disk was captured with the replicas it had. One finding per log dir, none per replica, and no "
             "missing replicas for a broker that is gone.")


@scenario("move-in-progress",
          "alter-log-dirs moves: one in progress on broker 3 (no finding), one stuck for 3 days on broker 4", JBOD)
def move_in_progress(sim: Simulation) -> None:
    sim.start_kraft_cluster(dedicated_controllers=CONTROLLERS)
    everyday_topics(sim)
    sim.advance_to_before_capture(days(4))
    broker = sim.fleet[4]
    source, replica = next((d, r) for d in broker.log_dirs for r in _scenario_replicas(d))
    dest = next(d for d in broker.log_dirs if d is not source)
    future = Replica(codec.future_dir_name(replica.topic, replica.partition, sim.fleet.unique_hex()), replica.topic,
                     replica.partition, replica.topic_id, "future", sim.now, replica.bytes_per_day,
                     stopped_ms=sim.now + HOUR)
    dest.entries[future.name] = future
    sim.kraft.assign_directories([(replica.topic_id, replica.partition, 4, dest.directory_id)])
    sim.advance(days(3))
    _future_move(sim, 3)
    sim.advance(hours(6))
    sim.expect("FUTURE_MOVE_STUCK", broker_id=4, log_dir=dest.name, dir_name=future.name, topic_name=replica.topic,
               partition=replica.partition)
    sim.note(f"Broker 4's move of {replica.name} into {dest.name} stopped copying an hour after it began, 3 days "
             "before the capture, while the source kept receiving data; broker 3's move is in progress (its -future "
             "copy is as fresh as its source) and is not a finding.")


@scenario("fenced-broker-deleted-topic",
          "a topic deleted 2 minutes before the capture while broker 4 is down and fenced: reported at once")
def fenced_broker_deleted_topic(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("sessions", 3, 3, replicas=[[1, 2, 4], [2, 4, 3], [4, 3, 1]])
    sim.advance_to_before_capture(hours(6))
    sim.stop_broker(4)
    sim.advance_to_before_capture(2 * MINUTE)
    topic_id = sim.delete_topic("sessions")
    sim.expect("DELETE_INCOMPLETE", broker_id=4, topic_name="sessions", topic_id=uid(topic_id))
    sim.note("sessions was deleted 2 minutes before the capture, inside file.delete.delay.ms + grace, but broker 4 "
             "is fenced (down for 6 hours): it cannot progress the delete, and at its next start a KRaft broker "
             "renames the dirs -stray and keeps them. Brokers 1-3 removed their copies within 60 s.")


@scenario("cordoned-log-dir",
          "Kafka 4.3, KIP-1066: broker 2 cordoned a dir 10 days ago and never drained it (finding); broker 3 "
          "cordoned one yesterday (a drain in its first day: no finding); a cordon configured for a node that "
          "never registered", JBOD, version=(4, 3),
          metadata_segment_ms=days(30))  # the cordon's record stays in the retained log
def cordoned_log_dir(sim: Simulation) -> None:
    sim.start_kraft_cluster(dedicated_controllers=CONTROLLERS)
    everyday_topics(sim)
    sim.advance_to_before_capture(days(10))
    forgotten = sim.fleet[2].log_dirs[1]
    if not _scenario_replicas(forgotten):
        raise RuntimeError("broker 2's second dir holds no scenario replica")  # pragma: no cover
    sim.cordon_log_dirs(2, [forgotten.name])
    sim.advance_to_before_capture(days(1))
    sim.cordon_log_dirs(3, [sim.fleet[3].log_dirs[1].name])
    # a cordon configured for node 7, which never joined (a host that was planned, then not built)
    sim.kraft.set_broker_config("7", "cordoned.log.dirs", "kafka-logs-b")
    sim.advance(hours(2))
    sim.expect("CORDONED_LOG_DIR_HOLDS_REPLICAS", broker_id=2, log_dir=forgotten.name)
    sim.expect("CORDON_ON_UNREGISTERED_BROKER", broker_id=7)
    sim.note(f"Broker 2 cordoned {forgotten.name} (cordoned.log.dirs; BrokerRegistrationChangeRecord v3 "
             "CordonedLogDirs) 10 days before the capture and its replicas were never moved: past "
             "reconcile.cordoned_dir_max_ms (7 days). Broker 3's cordon is a day old: a drain under way. "
             "cordoned.log.dirs is also set for node 7, which never registered.")
