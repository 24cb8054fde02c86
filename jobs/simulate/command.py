"""``kafka-recon simulate``: write a simulated fleet capture with known problems and its ground truth.

Run::

    kafka-recon simulate --scenario demo --out /tmp/demo-capture
    kafka-recon simulate --scenario healthy --out /tmp/big --brokers 50 --log-dirs 2 \\
        --partitions-per-broker 8000 --metadata-records 1000000
    kafka-recon simulate --list

The same ``--seed`` gives the same bytes and mtimes (except the wall-clock ``finish_time``/``elapsed_ms`` in
the trailer of ``--packed`` snapshots, which the collector records).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import List, Optional, Set, Tuple

from .clock import iso_utc
from .fleet import Broker
from .scenarios import CATALOGUE, Scenario
from .simulation import SimParams, Simulation
from .writer import CaptureWriter

WORK_DIR_NAME = ".kafka-recon-sim-work"
PACK_PASS_REPLICA_DIRS = 200_000  # --packed writes and packs the trees of about this many replica dirs at a time


class SimulateError(ValueError):
    """Bad arguments (exit code 2)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafka-recon simulate", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", help="scenario name (see --list)")
    parser.add_argument("--out", help="capture folder to create (must be new or empty)")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42); same seed, same bytes")
    parser.add_argument("--brokers", type=int, help="number of brokers (at least the scenario's minimum)")
    parser.add_argument("--log-dirs", type=int, help="log dirs per broker (JBOD when > 1)")
    parser.add_argument("--partitions-per-broker", type=int,
                        help="healthy background replicas per broker (scale); 0 for none")
    parser.add_argument("--metadata-records", type=int,
                        help="pad the metadata log with NoOp records and ISR flaps to about this many records")
    parser.add_argument("--packed", action="store_true",
                        help="write one collector pack per broker (*.jsonl.gz) instead of the raw log-dir trees")
    parser.add_argument("--metadata-log-copies", type=int,
                        help="with --packed: embed the metadata log in this many packs only (the controller "
                             "quorum's voters first, then the lowest broker ids); the others list its files. "
                             "Default: every broker's pack")
    parser.add_argument("--scratch",
                        help="with --packed: write each broker's raw tree here before packing it (e.g. a tmpfs "
                             "such as /dev/shm: several times faster at millions of replica dirs); the packs then "
                             "name their log dirs under this folder")
    parser.add_argument("--force", action="store_true", help="replace an existing simulator capture in --out")
    parser.add_argument("--kafka-version", type=_kafka_version,
                        help="the Kafka release the cluster runs, e.g. 3.9 or 4.3 (default: the scenario's): "
                             "its metadata.version decides which record versions are written")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    return parser


def _kafka_version(text: str) -> Tuple[int, int]:
    """``--kafka-version``: "4.3" -> (4, 3), one of the releases the simulator models."""
    from jobs.simulate.image import KAFKA_VERSIONS

    try:
        major, minor = (int(p) for p in text.strip().split("."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Kafka release like 3.9 or 4.3") from None
    if (major, minor) not in KAFKA_VERSIONS:
        known = ", ".join("%d.%d" % v for v in KAFKA_VERSIONS)
        raise argparse.ArgumentTypeError(f"{text} is not a release the simulator models ({known})")
    return major, minor


def _check_out(out: str, force: bool) -> None:
    if not os.path.exists(out):
        return
    if not os.path.isdir(out):
        raise SimulateError(f"--out {out!r} exists and is not a directory")
    entries = os.listdir(out)
    if not entries:
        return
    marker = os.path.join(out, "capture.json")
    ours = False
    if os.path.isfile(marker):
        try:
            with open(marker, encoding="utf-8") as f:
                ours = json.load(f).get("format") == "kafka-recon-capture"
        except (OSError, ValueError):
            ours = False
    if not (force and ours):
        raise SimulateError(f"--out {out!r} is not empty" + ("" if ours else " (and holds no simulator capture)")
                            + ("; use --force to replace a previous simulator capture" if ours else ""))
    shutil.rmtree(out)


def _check_params(params: SimParams) -> None:
    for name in ("brokers", "log_dirs"):
        value = getattr(params, name)
        if value is not None and value < 1:
            raise SimulateError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if params.metadata_log_copies is not None and not params.packed:
        raise SimulateError("--metadata-log-copies needs --packed (a raw tree always holds every copy)")
    for name in ("partitions_per_broker", "metadata_records", "metadata_log_copies"):
        value = getattr(params, name)
        if value is not None and value < 0:
            raise SimulateError(f"--{name.replace('_', '-')} must be >= 0, got {value}")
    if params.brokers is not None and params.brokers > 10_000:
        raise SimulateError(f"--brokers {params.brokers} is more than this simulator supports (10000)")


def run(scenario_name: str, out: str, params: SimParams, force: bool = False, scratch: Optional[str] = None) -> dict:
    """Simulate ``scenario_name`` and write the capture to ``out``; returns a summary dict.

    ``scratch`` (packed captures only): where the raw trees and the simulator's work files live until packed."""
    if scenario_name not in CATALOGUE:
        raise SimulateError(f"unknown scenario {scenario_name!r}; known: {', '.join(CATALOGUE)}")
    _check_params(params)
    _check_out(out, force)
    spec: Scenario = CATALOGUE[scenario_name]
    started = time.monotonic()
    if scratch is not None and not params.packed:
        raise SimulateError("--scratch needs --packed (without it the raw trees are the capture)")
    trees = out if scratch is None else os.path.join(os.path.abspath(scratch), os.path.basename(os.path.abspath(out)))
    if trees != out and os.path.lexists(trees):
        raise SimulateError(f"--scratch: {trees!r} already exists; remove it or choose another scratch folder")
    os.makedirs(out, exist_ok=True)
    work = os.path.join(trees, WORK_DIR_NAME)
    packs: List[str] = []
    try:
        sim = Simulation(spec.name, params, spec.layout, work, spec.mode, scenario_version(spec, params),
                         spec.age_days)
        sim.metadata_segment_ms = spec.metadata_segment_ms
        spec.build(sim)
        sim.finish()
        writer = CaptureWriter(sim, out, trees)
        if params.packed:
            embed = metadata_log_packs(sim, params.metadata_log_copies)
            per_pass = max(1, PACK_PASS_REPLICA_DIRS // max(1, sim.replicas_per_broker))
            stats = writer.write(per_pass,
                                 lambda brokers: packs.extend(pack_brokers(sim, out, brokers, embed, trees)))
            stats["packs"] = packs
        else:
            stats = writer.write()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if trees != out:
            shutil.rmtree(trees, ignore_errors=True)
    os.utime(out, ns=(sim.capture_ms * 1_000_000,) * 2)  # the work dir's removal touched it
    stats.update({"scenario": spec.name, "out": out, "seed": params.seed, "brokers": len(sim.broker_ids),
                  "metadata_records": sim.log.record_count if sim.log else 0,
                  "expected_findings": len(sim.expected), "seconds": round(time.monotonic() - started, 2)})
    return stats


def scenario_version(spec: Scenario, params: SimParams) -> Tuple[int, int]:
    """The Kafka release a scenario runs: ``--kafka-version`` when given, else the scenario's own. A scenario
    with ZooKeeper (migration, zookeeper mode) needs a release that still has it (3.9 at most: Kafka 4.0 is
    KRaft only), and one that pins an older release keeps what that release writes only if not overridden."""
    version = params.kafka_version or spec.version
    if params.kafka_version is not None and spec.mode != "kraft" and version >= (4, 0):
        raise SimulateError(f"scenario {spec.name} runs {spec.mode} mode, which Kafka {version[0]}.{version[1]} "
                            "no longer has (4.0 is KRaft only); choose 3.9 or earlier")
    return version


def metadata_log_packs(sim: Simulation, copies: Optional[int]) -> Set[int]:
    """The brokers whose packs embed the metadata log: all, or ``copies`` of them (voters first)."""
    ids = sorted(sim.fleet.brokers)
    if copies is None:
        return set(ids)
    ordered = [b for b in sim.voters if b in sim.fleet.brokers] + [b for b in ids if b not in sim.voters]
    return set(ordered[:copies])


def pack_brokers(sim: Simulation, out: str, brokers: List[Broker], embed_metadata_log: Set[int],
                 trees: str) -> List[str]:
    """Replace each broker's raw tree (under ``trees``) by one collector pack in ``out``, then drop the tree."""
    import collector

    written = []
    for broker in brokers:
        tree = os.path.join(trees, broker.folder)
        if not os.path.isdir(tree):
            continue
        options = collector.CollectOptions(include_metadata_log=broker.broker_id in embed_metadata_log)
        log_dirs = [os.path.join(tree, d.name) for d in broker.readable_dirs()]
        path = os.path.join(out, f"{broker.folder}.jsonl.gz")
        collector.collect(log_dirs, path, options, capture_time=iso_utc(sim.capture_ms), host=broker.host)
        os.utime(path, ns=(sim.capture_ms * 1_000_000,) * 2)
        shutil.rmtree(tree)
        written.append(os.path.basename(path))
    return written


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list:
        width = max(len(n) for n in CATALOGUE)
        for name, spec in CATALOGUE.items():
            print(f"{name:<{width}}  {spec.summary}")
        return 0
    if not args.scenario or not args.out:
        print("kafka-recon simulate: --scenario and --out are required (or --list)", file=sys.stderr)
        return 2
    params = SimParams(args.seed, args.brokers, args.log_dirs, args.partitions_per_broker, args.metadata_records,
                       args.packed, args.metadata_log_copies, args.kafka_version)
    try:
        summary = run(args.scenario, args.out, params, args.force, args.scratch)
    except SimulateError as exc:
        print(f"kafka-recon simulate: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
