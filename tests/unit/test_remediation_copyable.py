"""Remediation texts are copyable as shown (issue #65): no escape sequence a person would have to interpret.
The one place a ``\\n`` stands is inside a ``printf '...'`` command, which turns it into the line break itself;
run as shown, that command writes exactly the partition.metadata Kafka wrote (a real devsample file:
Kafka's PartitionMetadataFile, ``version: 0`` then ``topic_id: <id>``)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from jobs.reconcile.catalogue import default_catalogue

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-devsample" / "broker-101" / "kafka-logs"
PRINTF = re.compile(r"printf '([^']*)' > partition\.metadata")


def test_no_text_carries_an_escape_sequence_outside_a_printf_command():
    for check_id, spec in default_catalogue().checks.items():
        for name in ("message", "remediation", "title", "description", "why"):
            text = PRINTF.sub("", getattr(spec, name))
            assert "\\" not in text, (check_id, name, text)


@pytest.mark.parametrize("check_id", ["MISSING_PARTITION_METADATA", "CORRUPT_PARTITION_METADATA"])
def test_the_printf_command_writes_the_file_kafka_writes(tmp_path, check_id):
    real = REAL / "events-0" / "partition.metadata"
    topic_id = real.read_text().split("topic_id: ", 1)[1].strip()
    text = default_catalogue()[check_id].remediation.replace("{details.live_topic_id}", topic_id)
    (command,) = [m.group(0) for m in PRINTF.finditer(text)]
    subprocess.run(["sh", "-c", command], cwd=tmp_path, check=True, timeout=30)
    assert (tmp_path / "partition.metadata").read_bytes() == real.read_bytes()
