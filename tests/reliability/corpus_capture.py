"""Place every corpus case where it belongs in a capture, next to a clean copy of the devsample.

Layout (under ``<capture>/malformed/``)::

    broker-900/kafka-logs/             one good log dir (node 900) holding every replica-level case, each in
                                       its own replica dir ``<case>-0/`` (with a good partition.metadata
                                       unless the case is the partition.metadata)
    logdirs/<case>/                    one log dir per case that must sit at a log dir's top or in its
                                       ``__cluster_metadata-0`` (meta.properties, checkpoints, quorum-state)
    segments/<case>/__cluster_metadata-0/00000000000000000000.log   metadata segments, handed over loose
    loose/<case>/<file>                dump-log text, znode dumps, log-dirs output, packed snapshots

Every placed case maps to the ``bronze_ingest_files.path`` it must show up under.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

from udfs.partition_metadata import encode_partition_metadata
from udfs.properties_files import write_meta_properties

from .corpus import CASES, Case
from .corpus_builders import CLUSTER_ID, TOPIC_ID, WHEN

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DEVSAMPLE = FIXTURES / "kafka-devsample"
SHARED_LOG_DIR = "malformed/broker-900/kafka-logs"
FIRST_SYNTHETIC_NODE = 900


@dataclass(frozen=True)
class Placed:
    case: Case
    path: str  # bronze_ingest_files.path, relative to the capture root
    log_dir: str  # bronze_ingest_files.log_dir ("" for loose files)


def _meta(log_dir: Path, node_id: int) -> None:
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "meta.properties").write_bytes(write_meta_properties(1, node_id, CLUSTER_ID, None, when=WHEN))


def copy_devsample(dest: Path) -> Path:
    """A writable copy of the real devsample capture (the clean part)."""
    shutil.copytree(DEVSAMPLE, dest, ignore=shutil.ignore_patterns("tool-output*", "expected.json"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dest


def place_corpus(capture: Path, cases=CASES) -> List[Placed]:
    """Write every case into ``capture/malformed``; returns where each one must be accounted."""
    placed: List[Placed] = []
    shared = capture / SHARED_LOG_DIR
    _meta(shared, FIRST_SYNTHETIC_NODE)
    for index, case in enumerate(cases, start=1):
        if case.place == "replica":
            replica = shared / f"{case.name}-0"
            replica.mkdir()
            if case.file_name != "partition.metadata":
                (replica / "partition.metadata").write_bytes(encode_partition_metadata(TOPIC_ID))
            case.write(replica / case.file_name)
            placed.append(Placed(case, f"{SHARED_LOG_DIR}/{case.name}-0/{case.file_name}", SHARED_LOG_DIR))
        elif case.place in ("log_dir", "metadata_dir"):
            rel_dir = f"malformed/logdirs/{case.name}"
            log_dir = capture / rel_dir
            if case.file_name != "meta.properties":
                _meta(log_dir, FIRST_SYNTHETIC_NODE + index)
            inner = "__cluster_metadata-0/" if case.place == "metadata_dir" else ""
            case.write(log_dir / f"{inner}{case.file_name}")
            placed.append(Placed(case, f"{rel_dir}/{inner}{case.file_name}", rel_dir))
        elif case.place == "metadata":
            rel = f"malformed/segments/{case.name}/__cluster_metadata-0/00000000000000000000.log"
            case.write(capture / rel)
            placed.append(Placed(case, rel, ""))
        elif case.place == "loose":
            rel = f"malformed/loose/{case.name}/{case.file_name}"
            case.write(capture / rel)
            placed.append(Placed(case, rel, ""))
        else:
            raise ValueError(f"{case.name}: unknown place {case.place!r}")
    return placed


def by_path(placed: List[Placed]) -> Dict[str, Placed]:
    return {p.path: p for p in placed}
