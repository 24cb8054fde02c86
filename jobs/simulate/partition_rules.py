"""How the KRaft controller changes one partition when a broker goes away or comes back.

Shared by scenario topics (kept in memory) and scale background topics (recomputed on demand), so both
follow the same rules. Facts (apache/kafka@1eb7644, metadata/.../PartitionRegistration.java ``merge``):
every PartitionChangeRecord bumps partitionEpoch; one that sets Leader (anything but -2) bumps leaderEpoch.
A broker that goes away leaves the ISR; if it led, the first live ISR member leads; the last ISR member
stays in the ISR with leader -1 (no ELR). When it is back it rejoins the ISR, and the preferred leader
(first replica) is restored by the automatic preferred-leader election.
"""
from __future__ import annotations

from typing import List, Optional, Set

from .image import PartitionState

NO_LEADER = -1


def _apply(part: PartitionState, change: dict) -> dict:
    if "isr" in change:
        part.isr = list(change["isr"])
    if "leader" in change:
        part.leader = change["leader"]
        part.leader_epoch += 1
    part.partition_epoch += 1
    return change


def broker_down(part: PartitionState, broker: int, down: Set[int]) -> Optional[dict]:
    """The change (isr/leader keys only) when ``broker`` is fenced; None when the partition is unaffected."""
    if broker not in part.isr:
        if part.leader == broker:  # pragma: no cover - a leader is always in the ISR
            return _apply(part, {"leader": NO_LEADER})
        return None
    remaining = [r for r in part.isr if r != broker]
    if not remaining:
        if part.leader == broker:
            return _apply(part, {"leader": NO_LEADER})
        return None
    change: dict = {"isr": remaining}
    if part.leader == broker:
        change["leader"] = next((r for r in part.replicas if r in remaining and r not in down), remaining[0])
    return _apply(part, change)


def broker_up(part: PartitionState, broker: int) -> List[dict]:
    """ISR expansion when ``broker`` caught up, then the preferred-leader election if it is the first replica."""
    if broker not in part.replicas:
        return []
    changes = []
    if broker not in part.isr:
        new_isr = [r for r in part.replicas if r in part.isr or r == broker]
        change: dict = {"isr": new_isr}
        if part.leader == NO_LEADER:
            change["leader"] = broker
        changes.append(_apply(part, change))
    elif part.leader == NO_LEADER:
        changes.append(_apply(part, {"leader": broker}))
    if part.replicas[0] == broker and part.leader != broker:
        changes.append(_apply(part, {"leader": broker}))
    return changes


def isr_flap(part: PartitionState) -> List[dict]:
    """A follower drops out of the ISR and rejoins (a slow fetch): two changes, the leader stays."""
    followers = [r for r in part.isr if r != part.leader]
    if not followers:
        return []
    follower = followers[-1]
    shrink = _apply(part, {"isr": [r for r in part.isr if r != follower]})
    grow = _apply(part, {"isr": [r for r in part.replicas if r in part.isr or r == follower]})
    return [shrink, grow]
