"""ZooKeeper -> KRaft migration (KIP-866) of a running ZooKeeper-mode simulation.

What the 3.6 code does (3.6/3.9 branch, core/src/main/scala/kafka/zk/ZkMigrationClient.scala and
metadata/.../migration/KRaftMigrationDriver.java): KRaft controllers (ids 3000+, not captured) form a quorum,
ZooKeeper brokers restarted with migration enabled register as ``isMigratingZkBroker`` and replicate the
metadata log as observers, the active controller copies ZooKeeper's state into the log in one transaction
(topics with their ZooKeeper topic ids, configs, and the producer-id block), claims ``/controller`` and then
dual-writes changes back to ZooKeeper. Before KAFKA-15552 (fixed in 3.5.2 / 3.6.1) the migrated
``ProducerIdsRecord`` carried the *first* id of the last ZooKeeper block instead of the next block.
"""
from __future__ import annotations

import json
import os

from .clock import MINUTE
from .controller import KraftController, ProducerIdBlock
from .image import PartitionState, TopicState
from .metalog import MetadataLog
from .simulation import SNAPSHOT_INTERVAL_MS, Simulation

KRAFT_CONTROLLERS = (3000, 3001, 3002)
PRE_MIGRATION, MIGRATION = 2, 1  # ZkMigrationState (3.5+ numbering)


def migrate(sim: Simulation, buggy: bool, allocate_to: int) -> ProducerIdBlock:
    """Run the migration now; returns the first block the KRaft controller hands out (to ``allocate_to``)."""
    sim.advance(5 * MINUTE)
    sim.log = MetadataLog(os.path.join(sim.work_dir, "metadata-master"))
    sim.voters = list(KRAFT_CONTROLLERS)
    kraft = KraftController(sim.log, sim.clock, sim.rng, sim.version, sim.voters, None,
                            migration_state=PRE_MIGRATION)
    sim.kraft = kraft
    sim.dump_controller_log = KRAFT_CONTROLLERS[0]  # not captured: an operator ran kafka-dump-log on it
    kraft.elect_leader(KRAFT_CONTROLLERS[0])
    kraft.bootstrap()
    for broker_id in sim.broker_ids:  # rolling restart of the ZooKeeper brokers with migration enabled
        broker = sim.fleet[broker_id]
        broker.mode = "migration"
        broker.log_dirs[0].holds_metadata_log = True
        sim.clock.tick(20_000)
        broker.epoch = kraft.register(broker_id, [], broker.rack, broker.host, migrating_zk=True)
        broker.registered_ms = sim.now
    sim.zk.start_migration(KRAFT_CONTROLLERS[0], sim.log.epoch)
    records = [("BeginTransactionRecord", 0, {"name": "Migrating ZK data"})]
    image = kraft.image
    for name, zk_topic in sorted(sim.zk.topics.items()):
        topic = TopicState(name, zk_topic.topic_id, created_ms=zk_topic.created_ms)
        for pid, zp in sorted(zk_topic.partitions.items()):
            topic.partitions[pid] = PartitionState(list(zp.replicas), list(zp.isr), zp.leader, zp.leader_epoch,
                                                   zp.leader_epoch)
        image.topics[topic.topic_id] = topic
        image.ids_by_name[name] = topic.topic_id
        records.extend(image.topic_records(topic))
        kraft.created[topic.topic_id] = (name, sim.log.next_offset, sim.now)
    node = sim.zk_tree.nodes["/latest_producer_id_block"]
    last = json.loads(node.data)
    first, end = int(last["block_start"]), int(last["block_end"])
    next_id = first if buggy else end + 1
    records.append(("ProducerIdsRecord", 0, {"brokerId": int(last["broker"]), "brokerEpoch": -1,
                                             "nextProducerId": next_id}))
    records.append(("EndTransactionRecord", 0, {}))
    sim.clock.tick(2000)
    sim.log.append(records, sim.now)
    image.next_producer_id = next_id
    image.zk_migration_state = MIGRATION
    sim.log.append([("ZkMigrationStateRecord", 0, {"zkMigrationState": MIGRATION})], sim.clock.tick(100))
    sim.tree_migration = {"kraft_metadata_offset": sim.log.next_offset - 1, "kraft_metadata_epoch": sim.log.epoch}
    sim.zk_tree.create("/migration", json.dumps({"version": 0, "kraft_metadata_offset": sim.log.next_offset - 1,
                                                  "kraft_metadata_epoch": sim.log.epoch,
                                                  "last_updated_time_ms": sim.now}, separators=(",", ":")))
    for broker_id in sim.broker_ids:
        kraft.unfence(broker_id)
    sim.next_snapshot_ms = sim.now + SNAPSHOT_INTERVAL_MS
    sim.advance(10 * MINUTE)
    block = kraft.allocate_producer_ids(allocate_to)
    sim.zk.dual_write_producer_ids(kraft.image.next_producer_id)
    sim.note(f"Migrated to KRaft (controllers {', '.join(map(str, KRAFT_CONTROLLERS))}, not captured); the ZooKeeper "
             "brokers replicate the metadata log as observers.")
    return block
