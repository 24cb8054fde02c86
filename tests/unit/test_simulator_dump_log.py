"""The simulator's kafka-dump-log text: byte for byte what Kafka's DumpLogSegments printed for real files, and the
migration capture's controller dump reads back (udfs.dump_log_text) as the same records as the binary log."""
from pathlib import Path

import pytest

from jobs.simulate import command
from jobs.simulate.dump_log import dump_lines
from jobs.simulate.simulation import SimParams
from udfs import dump_log_text, metadata_log

FILES = [
    "broker-101/kafka-logs/__cluster_metadata-0/00000000000000000000.log",
    "broker-101/kafka-logs/__cluster_metadata-0/00000000000000000026.log",
    "broker-101/kafka-logs/__cluster_metadata-0/00000000000000000044-0000000001.checkpoint",
]


@pytest.mark.parametrize("rel", FILES)
def test_dump_matches_kafkas_own_output(devsample_dir: Path, rel: str):
    want = [line for line in (devsample_dir / "tool-output" / f"{rel}.DumpLogSegments.txt").read_text().splitlines()
            if not line.startswith("#")]  # the fixture's own comment lines (command, exit code)
    assert list(dump_lines(str(devsample_dir / rel), rel)) == want


def test_migration_capture_dump_reads_back_as_the_binary_records(tmp_path):
    out = tmp_path / "capture"
    command.run("pid-migration-reuse", str(out), SimParams(seed=3))
    (dump,) = (out / "dump-log").iterdir()
    with dump.open(encoding="utf-8") as f:
        files = dump_log_text.parse_dump_log(f)
    assert {d.file_kind for d in files} == {"segment", "snapshot"} and not any(d.errors for d in files)
    text_records = [(r.offset, r.type, r.payload_json()) for d in files if d.file_kind == "segment" for r in d.records]
    segments = sorted((out / "broker-1" / "kafka-logs" / "__cluster_metadata-0").glob("*.log"))
    binary = {r.offset: (r.offset, r.type, r.payload_json()) for s in segments
              for r in metadata_log.iter_metadata_records(str(s))}
    shared = [t for t in text_records if t[0] in binary]
    assert shared and all(binary[t[0]][:2] == t[:2] for t in shared)
    # kafka-dump-log does not print LeaderChange contents (controlType only); everything else is identical
    assert all(binary[t[0]] == t for t in shared if t[1] != "LEADER_CHANGE")
    assert any(t[1] == "PRODUCER_IDS_RECORD" for t in text_records)
