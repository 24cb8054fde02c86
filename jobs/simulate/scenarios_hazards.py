"""Restart hazards and hanging transactions: disks whose offsets a broker's next start acts on, and a transaction
the coordinator lost (#21). Registered into the one catalogue (:mod:`.scenarios`)."""
from __future__ import annotations

from .clock import MINUTE, SECOND
from .epoch_history import replica_offsets
from .image import uid
from .scenarios import everyday_topics, expect_replica, scenario
from .simulation import Simulation, days, hours
from .writer import LOG_START, RECOVERY_POINT


@scenario("restart-hazards",
          "Segments restored from an old backup under a newer log-start checkpoint, lost flushed data, a .log cut "
          "short of its index, a checkpoint naming a removed dir")
def restart_hazards(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("tmp-import", 1, 1, replicas=[[4]])
    sim.advance(days(5))
    sim.delete_topic("tmp-import")
    sim.advance(days(5))

    # broker 2: orders-1 restored from an older backup while its log-start checkpoint kept the newer start
    restored = expect_replica(sim, "LOG_START_BEYOND_LOG_END", 2, "orders", 1, sim.topic_id("orders"))
    restored.checkpoint_offsets[LOG_START] = 250
    # broker 3: payments-0 lost flushed batches (its recovery point is past the data)
    lost = expect_replica(sim, "RECOVERY_POINT_BEYOND_LOG_END", 3, "payments", 0, sim.topic_id("payments"))
    lost.checkpoint_offsets[RECOVERY_POINT] = 40
    # broker 1: inventory-2's newest segment cut short after Kafka indexed it
    held = [p for p in range(3) if sim.fleet[1].find("inventory", p)]
    cut = expect_replica(sim, "SEGMENT_SHORTER_THAN_INDEX", 1, "inventory", held[0], sim.topic_id("inventory"))
    cut.cut_short_bytes = 8192
    # broker 4: the deleted tmp-import-0's -delete dir was removed by hand before Kafka rewrote its checkpoints
    log_dir = sim.fleet[4].log_dirs[0]
    for name in list(log_dir.entries):
        if name.startswith("tmp-import-0."):
            del log_dir.entries[name]
    log_dir.extra_checkpoint_entries.append((RECOVERY_POINT, "tmp-import", 0, 1200))
    sim.expect("CHECKPOINT_WITHOUT_DIR", broker_id=4, log_dir=log_dir.name, topic_name="tmp-import", partition=0)
    sim.advance(days(2))
    sim.note("orders-1 on broker 2 would lose every segment at its next start (LogLoader deletes all segments "
             "when the log end is below the log-start checkpoint); payments-0 on broker 3 lost flushed data; "
             "inventory on broker 1 has a .log shorter than its index.")


@scenario("recreated-topic-stale-checkpoints",
          "clicks deleted and re-created while broker 3 was down; broker 3 restarted 40 s before the capture: its "
          "recovery-point-offset-checkpoint still holds the old incarnation's offsets (info, not a lost flush)")
def recreated_topic_stale_checkpoints(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    placement = [[1, 2, 3], [2, 3, 4], [3, 4, 1]]
    sim.create_topic("clicks", 3, 3, replicas=placement)
    sim.advance_to_before_capture(days(5))
    sim.stop_broker(3)  # a clean shutdown: LogManager.shutdown writes the offset checkpoints one last time
    down_ms = sim.now
    sim.advance(hours(1))
    sim.delete_topic("clicks")
    sim.advance(10 * MINUTE)
    sim.create_topic("clicks", 3, 3, replicas=placement)
    sim.advance_to_before_capture(40 * SECOND)
    sim.start_broker(3)  # LogManager renames the old clicks dirs -stray, ReplicaManager creates the new ones
    topic_id = uid(sim.topic_id("clicks"))
    for log_dir in sim.fleet[3].log_dirs:
        log_dir.checkpoints_written_ms = down_ms  # the next periodic write is 60 s after the start
    for log_dir, stray in sim.fleet[3].replicas(kinds=("stray",)):
        sim.expect("STRAY_DIR", broker_id=3, log_dir=log_dir.name, dir_name=stray.name, topic_name=stray.topic,
                   partition=stray.partition, topic_id=uid(stray.topic_id))
        new_dir, new = sim.replica_on(3, "clicks", stray.partition)
        old_end = replica_offsets(stray, sim.capture_ms)[2]
        # the file names "clicks <p>", not the topic id: it holds the old incarnation's recovery point (its log end
        # at the clean shutdown) until the next checkpointLogRecoveryOffsets
        new_dir.extra_checkpoint_entries.append((RECOVERY_POINT, "clicks", stray.partition, old_end))
        if old_end > replica_offsets(new, sim.capture_ms)[2]:
            sim.expect("CHECKPOINT_OF_PREVIOUS_INCARNATION", broker_id=3, log_dir=new_dir.name, dir_name=new.name,
                       topic_name="clicks", topic_id=topic_id, partition=stray.partition)
    sim.note("Broker 3 missed the delete and re-create of clicks; at its start (40 s before the capture) Kafka "
             "renamed the old replicas -stray and created the new ones. Its recovery-point-offset-checkpoint was "
             "last written at its shutdown, before the new dirs existed, and names 'clicks <p>' with the old "
             "incarnation's offsets: evidence about the -stray dirs, not about the new replicas (info).")


@scenario("hanging-transaction",
          "A transaction left open for days (no marker, coordinator lost it), beside a committed one and a young "
          "open one")
def hanging_transaction(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    block = sim.allocate_producer_ids(sim.broker_ids[0])
    sim.produce("payments", 0, block.first, 6, transactional=True, committed=True)
    sim.produce("payments", 2, block.first + 1, 4, transactional=True, committed=None)  # never committed
    sim.expect("HANGING_TRANSACTION", topic_name="payments", partition=2,
               topic_id=uid(sim.topic_id("payments")))
    sim.advance(days(3))
    sim.advance_to_before_capture(11 * MINUTE)
    sim.produce("orders", 4, block.first + 2, 3, transactional=True, committed=None)  # open, but young
    sim.note("payments-2 has an ongoing transaction of producer %d since 3 days before the capture and no "
             "marker: read_committed consumers are stuck; orders-4's open transaction is 11 minutes old "
             "(under transaction.max.timeout.ms) and payments-0's was committed." % (block.first + 1))
