"""Test helper: unpack the real ZooKeeper-mode captures (tests/fixtures/kafka-zk-sample/Z1.tar.gz, Z2.tar.gz).

The captures hold running brokers' pre-allocated 10 MiB ``.index``/``.timeindex`` files as sparse members;
tests here do not need them, so they are skipped (everything else is extracted with the safe ``data`` filter).
"""
from __future__ import annotations

import tarfile
from pathlib import Path

ARCHIVES = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-zk-sample"


def extract(name: str, dest: Path) -> Path:
    """Extract ``<name>.tar.gz`` under ``dest``; returns the capture root (``dest/<name>``)."""
    with tarfile.open(ARCHIVES / f"{name}.tar.gz") as tar:
        members = [m for m in tar.getmembers() if not m.name.endswith((".index", ".timeindex"))]
        tar.extractall(dest, members=members, filter="data")
    return dest / name
