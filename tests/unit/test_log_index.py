"""Segment index files: real Kafka-written .timeindex files decode to what DumpLogSegments printed; our writer
round-trips; a pre-allocated zero tail ends the entries."""
import re
from pathlib import Path

from udfs import log_index

ENTRY = re.compile(r"^timestamp: (\d+) offset: (\d+)$")


def test_real_time_indexes_match_kafkas_dump(devsample_dir: Path):
    checked = 0
    for dump in sorted((devsample_dir / "tool-output").rglob("*.timeindex.DumpLogSegments.txt")):
        rel = dump.relative_to(devsample_dir / "tool-output")
        data_file = devsample_dir / str(rel).replace(".DumpLogSegments.txt", "")
        base = int(data_file.name.split(".")[0])
        want = [(int(m.group(1)), int(m.group(2))) for m in map(ENTRY.match, dump.read_text().splitlines()) if m]
        got = [(ts, base + rel_offset) for ts, rel_offset in log_index.read_time_index(data_file.read_bytes())]
        assert got == want, dump
        checked += 1
    assert checked >= 8


def test_round_trip_and_preallocated_tail():
    offsets = [(0, 0), (17, 4133), (40, 8301)]
    times = [(1795000000000, 0), (1795000000500, 17)]
    raw_offsets = log_index.encode_offset_index(offsets)
    raw_times = log_index.encode_time_index(times)
    assert len(raw_offsets) == 24 and len(raw_times) == 24
    assert log_index.read_offset_index(raw_offsets + bytes(8 * 100)) == offsets
    assert log_index.read_time_index(raw_times + bytes(12 * 100)) == times
    assert log_index.read_offset_index(raw_offsets + b"\x00\x01") == offsets  # partial entry ignored
    assert log_index.preallocated_size(12) == 10485756 and log_index.preallocated_size(8) == 10485760


def test_empty_index_is_empty():
    assert log_index.read_offset_index(b"") == [] and log_index.read_time_index(bytes(24)) == []
