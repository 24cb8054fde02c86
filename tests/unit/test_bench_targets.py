"""The bench's verdict on "4M <= 10x the 400k time": runs pair by the metadata size their fleets were asked for."""
from __future__ import annotations

from bench.targets import evaluate


def _run(replica_dirs, records, asked, wall, copies=3):
    return {"ok": True, "quality": False, "replica_dirs": replica_dirs, "metadata_records": records,
            "metadata_log_copies": copies, "wall_s": wall, "cpu_s": wall * 2, "load_after": "1/1/1",
            "fleet": f"fleet-healthy-s42-b1-d2-p4000-m{asked}-c{copies}-v2-packed",
            "peak_mib": {"driver_python": 200, "jvm": 4000}}


def _huge_row(runs):
    return next(t for t in evaluate(runs, None, None) if t[0].startswith("4M"))


def test_a_4m_fleet_whose_log_outgrew_the_size_asked_pairs_with_the_400k_fleet_asked_the_same():
    """A 4M fleet's log holds a record per partition, more than the 1M asked: the pair is still made."""
    runs = [_run(400_038, 1_000_002, 1_000_000, 150.0), _run(4_000_038, 2_775_918, 1_000_000, 900.0)]
    name, measured, verdict = _huge_row(runs)
    assert verdict == "PASS" and measured.startswith("6.0x") and "2,775,918 vs 1,000,002" in measured
    runs[1]["wall_s"] = 1600.0
    assert _huge_row(runs)[2] == "MISS"


def test_fleets_asked_for_other_metadata_sizes_or_collected_otherwise_do_not_pair():
    assert _huge_row([_run(400_038, 100_002, 100_000, 150.0),
                      _run(4_000_038, 2_775_918, 1_000_000, 900.0)])[2] == "n/a"
    assert _huge_row([_run(400_038, 1_000_002, 1_000_000, 150.0, copies=None),
                      _run(4_000_038, 2_775_918, 1_000_000, 900.0)])[2] == "n/a"
