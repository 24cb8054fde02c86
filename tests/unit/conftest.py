"""Fixtures shared by the unit tests: writable copies of the devsample brokers (the collector tests)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def make_writable(top: Path) -> None:
    for root, _dirs, files in os.walk(top):
        os.chmod(root, 0o755)
        for name in files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                os.chmod(p, 0o644)


def copy_broker(devsample: Path, dest: Path, broker: str) -> list[str]:
    shutil.copytree(devsample / broker, dest / broker, symlinks=True)
    make_writable(dest / broker)
    return sorted(str(p) for p in (dest / broker).iterdir())


@pytest.fixture
def b102(devsample_dir: Path, tmp_path: Path) -> list[str]:
    """Broker 102: JBOD with kafka-logs-a and kafka-logs-b (a -future dir, a replica without partition.metadata)."""
    return copy_broker(devsample_dir, tmp_path, "broker-102")


@pytest.fixture
def b101(devsample_dir: Path, tmp_path: Path) -> list[str]:
    return copy_broker(devsample_dir, tmp_path, "broker-101")
