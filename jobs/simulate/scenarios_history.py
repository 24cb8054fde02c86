"""The controller's history and the brokers' copies of it: deletes whose create is retained or not, a ZooKeeper
delete halted and a topic id changed without a delete, replicas disagreeing on a topic id, a partition-count
increase, and metadata-log copies that diverge or lost a segment. Registered into the one catalogue
(:mod:`.scenarios`)."""
from __future__ import annotations

from udfs import kafka_uuid

from . import codec
from .clock import DAY, SECOND
from .image import uid
from .scenarios import everyday_topics, scenario
from .simulation import Layout, Simulation, days, hours

# ------------------------------------------------------------------------------------------- deletes and history

@scenario("delete-create-in-snapshot",
          "deletes whose create is only in the snapshot, or gone with deleted segments: none may be flagged")
def delete_create_in_snapshot(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("archive", 2, 3)
    sim.create_topic("staging", 2, 3)
    sim.advance(sim.capture_ms - sim.now - days(7) - hours(20))
    sim.delete_topic("staging")  # retained segment, but below the log start offset (its create is nowhere)
    sim.advance(days(5))
    sim.delete_topic("archive")  # retained log; its TopicRecord exists only in the snapshot
    sim.advance(days(1))
    sim.note("archive's TopicRecord is only in the snapshot, its RemoveTopicRecord in the log. staging's "
             "RemoveTopicRecord sits in a retained segment below the log start offset and its create is in no "
             "retained file: history is not fully retained, so neither is DELETE_WITHOUT_CREATE.")


@scenario("delete-without-create", "a RemoveTopicRecord for a topic id created nowhere in a fully retained log",
          age_days=5)
def delete_without_create(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(2))
    ghost = kafka_uuid.random_uuid(sim.rng)
    sim.kraft.remove_unknown_topic_id(ghost)
    sim.advance(days(1))
    sim.expect("DELETE_WITHOUT_CREATE", topic_id=uid(ghost))
    sim.note("The cluster is 5 days old: the metadata log is retained from offset 0, so every create is visible. "
             "A RemoveTopicRecord deletes an id no TopicRecord ever created.")


@scenario("zk-delete-stuck", "ZooKeeper delete halted: broker 3 down, /admin/delete_topics/orders stays (Z2 story)",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="zk")
def zk_delete_stuck(sim: Simulation) -> None:
    sim.start_zk_cluster(controller_id=2)
    for broker in (2, 1, 3):
        sim.allocate_producer_ids(broker)
        sim.advance(30 * SECOND)
    sim.create_topic("orders", 3, 3, replicas=[[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    sim.create_topic("payments", 2, 2, replicas=[[2, 3], [3, 1]])
    sim.create_topic("audit", 1, 2, replicas=[[1, 2]])
    sim.produce("orders", 0, 1, 50)
    sim.advance(days(3))
    sim.stop_broker(3)
    sim.advance(3 * SECOND)
    topic_id = sim.delete_topic("orders")
    sim.advance(hours(3))
    sim.expect("ZK_DELETE_STUCK", topic_name="orders", topic_id=uid(topic_id))
    sim.note("Broker 3 stopped, then orders was deleted: the controller halted the deletion (offline replicas); "
             "brokers 1 and 2 removed their -delete dirs a minute later; broker 3 keeps orders-0/1/2 and "
             "/admin/delete_topics/orders and /brokers/topics/orders remain.")


@scenario("topic-id-divergence-disks-only",
          "a capture of the brokers' data dirs only (no metadata log): replicas of clicks disagree on the topic id")
def topic_id_divergence_disks_only(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim, producers=False)
    sim.create_topic("clicks", 2, 3, replicas=[[1, 2, 4], [2, 3, 4]])
    old_id = sim.topic_id("clicks")
    sim.advance(days(2))
    sim.stop_broker(4)
    sim.advance(hours(1))
    sim.delete_topic("clicks")
    sim.advance(hours(1))
    sim.create_topic("clicks", 2, 3, replicas=[[1, 2, 4], [2, 3, 4]])
    sim.advance(days(1))
    sim.capture_metadata_log = False  # the copy excluded __cluster_metadata-0: no controller view at all
    for p in (0, 1):
        sim.replica_on(4, "clicks", p)  # still the old incarnation (broker 4 is down)
        sim.expect("TOPIC_ID_DIVERGENCE", topic_name="clicks", partition=p)
    sim.note(f"Broker 4 was down while clicks was deleted and re-created; it keeps id {uid(old_id)} for clicks-0/1, "
             "brokers 1-3 hold the new id. The capture has the data dirs only (no __cluster_metadata-0, no "
             "ZooKeeper), so nothing says which id is current: only the disagreement can be reported.")


@scenario("zk-topic-id-changed",
          "an old tool rewrote /brokers/topics/orders without topic_id; after failover the controller gave a new id",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="zk")
def zk_topic_id_changed(sim: Simulation) -> None:
    sim.start_zk_cluster(controller_id=1)
    sim.allocate_producer_ids(2)
    sim.create_topic("orders", 3, 3, replicas=[[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    sim.create_topic("payments", 2, 2, replicas=[[2, 3], [3, 1]])
    sim.advance(days(4))
    sim.zk.rewrite_without_topic_id("orders")
    sim.advance(hours(2))
    sim.zk.failover(2)
    new_id = sim.topic_id("orders")
    sim.advance(days(1))
    sim.expect("TOPIC_ID_CHANGED_WITHOUT_DELETE", topic_name="orders", topic_id=uid(new_id))
    sim.note("KAFKA-14190 / KAFKA-12835: the topic znode lost its topic_id (v2 format written by a pre-2.8 tool); "
             "the next controller generated a new id. Brokers keep the old id in partition.metadata and answer "
             "INCONSISTENT_TOPIC_ID (state-change.log ERROR). The replicas are live data, not stale.")


@scenario("partition-count-increase", "partitions added to a live keyed topic (KIP-253), in the retained log")
def partition_count_increase(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.create_topic("clicks", 4, 3)
    sim.advance_to_before_capture(days(2))
    sim.add_partitions("clicks", 8)
    sim.advance(days(1))
    sim.expect("PARTITION_COUNT_CHANGED", topic_name="clicks", topic_id=uid(sim.topic_id("clicks")))
    sim.note("clicks went from 4 to 8 partitions two days before the capture: keyed records now map elsewhere.")


# ------------------------------------------------------------------------------------------- metadata log copies

@scenario("metadata-log-divergence",
          "broker 5's metadata-log copy holds an uncommitted tail of an old epoch; broker 4's is a lagging prefix",
          Layout(brokers=5, min_brokers=5))
def metadata_log_divergence(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance_to_before_capture(days(4))
    sim.stop_broker(4)  # lagging copy: a prefix, not a divergence
    sim.advance(days(1))
    # The leader (epoch E) appends two records and loses leadership before they commit; broker 5 had fetched
    # them and dies before it learns of epoch E+1, whose leader starts its epoch at the same offset.
    cut = sim.log.next_offset
    topic = sim.live_topic("orders")
    stale = [("PartitionChangeRecord", sim.kraft.image.partition_record_version(),
              {"partitionId": p, "topicId": uid(topic.topic_id), "isr": [topic.partitions[p].leader]})
             for p in (0, 1)]
    sim.diverged[5] = [(cut + len(stale) - 1, codec.metadata_batch(stale, cut, sim.log.epoch, sim.now + 5))]
    others = [v for v in sim.voters if sim.fleet[v].running and v != sim.log.leader_id]
    sim.clock.tick(3000)
    sim.kraft.elect_leader(others[0])
    sim.stop_broker(5)
    sim.fleet[5].metadata_cut = cut
    sim.advance(days(1))
    sim.expect("METADATA_LOG_DIVERGENCE", broker_id=5)
    sim.note("Broker 5's copy has two PartitionChangeRecords of epoch E at offsets where the others have the new "
             "leader's LeaderChange (epoch E+1). Broker 4 stopped earlier: its copy is shorter, not different.")


@scenario("metadata-log-gap", "broker 4's metadata-log copy lost a middle segment (segments roll every 2 days)",
          Layout(brokers=4), metadata_segment_ms=2 * DAY)
def metadata_log_gap(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(20))
    sim.create_topic("alerts", 2, 3)
    sim.advance(days(5))
    sim.gap_segments[4] = "middle"
    sim.expect("METADATA_LOG_GAP", broker_id=4)
    sim.note("metadata.log.segment.ms is 2 days here; an operator removed one middle segment of broker 4's "
             "__cluster_metadata-0 (a disk clean-up gone wrong). The other copies are complete.")
