"""The scenario catalogue: each one a short story of a cluster's life with the findings it must produce.

A scenario scripts a :class:`~jobs.simulate.simulation.Simulation` (Kafka's rules do the rest) and declares
``expect(...)`` entries: the ground truth written to ``expected_findings.json`` (docs/CONTRACTS.md). Keys
named in an expectation are the ones that are unambiguous for that check; the reconcile stage matches on
exactly those. Scenarios never depend on the scale flags: background topics only add healthy load.

This module holds the catalogue itself (:class:`Scenario`, the :func:`scenario` decorator), the pieces every
family shares and the healthy baselines; the other families live in ``scenarios_*`` modules, imported at the
end in catalogue order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from .clock import DAY, SECOND
from .fleet import Replica
from .image import uid
from .simulation import Layout, Simulation, days, hours


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str  # one line for the README / --list
    build: Callable[[Simulation], None]
    layout: Layout = field(default_factory=Layout)
    mode: str = "kraft"
    version: Tuple[int, int] = (3, 9)
    age_days: int = 30
    metadata_segment_ms: int = 7 * DAY


CATALOGUE: Dict[str, Scenario] = {}

# The families in catalogue order (--list, docs/scenarios.md's table, the tests' parametrisation); within a family,
# the order its module defines them in. Kept apart from the import order: a module that imports one family first
# (a test taking a helper from it) would otherwise move that family to the end.
FAMILIES = ("scenarios", "scenarios_stale_replicas", "scenarios_partition_metadata", "scenarios_log_dirs",
            "scenarios_producer_ids", "scenarios_history", "scenarios_demo", "scenarios_ensemble", "scenarios_epochs",
            "scenarios_hazards", "scenarios_topologies")


def _catalogue_place(entry: Scenario) -> Tuple[int, int]:
    family = entry.build.__module__.rsplit(".", 1)[-1]
    return FAMILIES.index(family), entry.build.__code__.co_firstlineno


def scenario(name: str, summary: str, layout: Optional[Layout] = None, mode: str = "kraft",
             version: Tuple[int, int] = (3, 9), age_days: int = 30, metadata_segment_ms: int = 7 * DAY):
    def register(build: Callable[[Simulation], None]) -> Callable[[Simulation], None]:
        CATALOGUE[name] = Scenario(name, summary, build, layout or Layout(), mode, version, age_days,
                                   metadata_segment_ms)
        ordered = sorted(CATALOGUE.values(), key=_catalogue_place)
        CATALOGUE.clear()
        CATALOGUE.update((entry.name, entry) for entry in ordered)
        return build
    return register


# ------------------------------------------------------------------------------------------- shared pieces

def everyday_topics(sim: Simulation, producers: bool = True) -> None:
    """A normal cluster's first days: a few topics, producer-id blocks, idempotent producers writing."""
    sim.create_topic("orders", 6, 3)
    sim.create_topic("payments", 3, 3, configs={"min.insync.replicas": "2"})
    sim.create_topic("inventory", 3, 2, configs={"cleanup.policy": "compact"})
    sim.advance(hours(2))
    if producers:
        block = sim.allocate_producer_ids(sim.broker_ids[0])
        sim.produce("orders", 0, block.first, 12)
        sim.produce("orders", 3, block.first + 1, 7)
        sim.produce("payments", 1, block.first + 2, 5, transactional=True, committed=True)
    sim.advance(days(1))


def expect_replica(sim: Simulation, check: str, broker: int, topic: str, partition: int, topic_id: Optional[bytes],
                   kinds=("partition",), with_topic_id: bool = True) -> Replica:
    log_dir, replica = sim.replica_on(broker, topic, partition, kinds)
    sim.expect(check, broker_id=broker, log_dir=log_dir.name, dir_name=replica.name, topic_name=topic,
               partition=partition, topic_id=uid(topic_id) if (topic_id is not None and with_topic_id) else None)
    return replica


# ------------------------------------------------------------------------------------------- healthy

@scenario("healthy", "4 KRaft brokers, everyday topics, producers, snapshots with retention: no findings")
def healthy(sim: Simulation) -> None:
    sim.start_kraft_cluster()
    everyday_topics(sim)
    sim.advance(days(10))
    block = sim.allocate_producer_ids(sim.broker_ids[1])
    sim.produce("orders", 2, block.first, 20)
    sim.advance(days(12))
    sim.create_topic("audit", 1, 3)
    sim.advance(hours(6))
    sim.note("Healthy cluster: topics created on day 0 exist only in the metadata snapshot (older segments "
             "were deleted by retention); every replica is where the controller says.")


@scenario("zk-healthy", "3 ZooKeeper-mode brokers (3.9), topics and producer-id blocks: no findings",
          Layout(brokers=3, min_brokers=3, partitions_per_broker=0), mode="zk")
def zk_healthy(sim: Simulation) -> None:
    sim.start_zk_cluster(controller_id=2)
    for broker in (2, 1, 3):
        sim.allocate_producer_ids(broker)
        sim.advance(30 * SECOND)
    sim.create_topic("orders", 3, 3)
    sim.create_topic("payments", 2, 2)
    sim.create_topic("audit", 1, 2)
    sim.produce("orders", 0, 1, 10)
    sim.advance(days(2))


def names() -> List[str]:
    return list(CATALOGUE)


# Registers the other families (their order in the catalogue is FAMILIES', whatever the import order).
from . import (  # noqa: E402,F401
    scenarios_demo,
    scenarios_ensemble,
    scenarios_epochs,
    scenarios_hazards,
    scenarios_history,
    scenarios_log_dirs,
    scenarios_partition_metadata,
    scenarios_producer_ids,
    scenarios_stale_replicas,
    scenarios_topologies,
)
