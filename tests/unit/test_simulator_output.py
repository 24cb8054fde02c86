"""The fleet simulator's output as a whole: same seed, same tree (bytes and mtimes); scale flags stream background
replicas; packed captures (one pack per broker, written in passes or on scratch, metadata log embedded in the
voters' packs only); the CLI lists, validates and refuses foreign folders."""
from __future__ import annotations

import gzip
import hashlib
import os

from sim_replay import (
    METADATA_DIR,
    authoritative_copy,
    capture_doc,
    log_dirs,
    replay,
)
from simulator_helpers import _assert_disk_matches_metadata

from jobs.simulate import command
from jobs.simulate.simulation import SimParams
from udfs import (
    pack_reader,
    record_batch,
)


def tree_hash(root: str) -> str:
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        st = os.stat(dirpath)
        digest.update(f"D {os.path.relpath(dirpath, root)} {st.st_mtime_ns}\n".encode())
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            st = os.stat(path)
            digest.update(f"F {os.path.relpath(path, root)} {st.st_size} {st.st_mtime_ns}\n".encode())
            with open(path, "rb") as f:
                digest.update(f.read(1 << 16))
    return digest.hexdigest()


def test_same_seed_same_bytes_and_mtimes(tmp_path):
    hashes = []
    for run, seed in (("a", 11), ("b", 11), ("c", 12)):
        out = str(tmp_path / run)
        command.run("demo", out, SimParams(seed=seed, partitions_per_broker=1))
        hashes.append(tree_hash(out))
    assert hashes[0] == hashes[1] != hashes[2]


def test_scale_flags_stream_background_replicas(tmp_path):
    out = str(tmp_path / "scale")
    stats = command.run("healthy", out, SimParams(seed=3, brokers=3, log_dirs=2, partitions_per_broker=2000,
                                                  metadata_records=20_000))
    assert stats["background_replica_dirs"] == 6000
    assert stats["metadata_records"] >= 20_000
    per_dir = [len([n for n in os.listdir(v.path) if "." in n and n[-1].isdigit()]) for v in log_dirs(out)]
    assert sum(per_dir) == 6000 and min(per_dir) > 0  # spread over all 6 log dirs
    image, _, _ = replay(authoritative_copy(out))
    assert sum(len(t["partitions"]) for t in image.topics.values()) >= 2000
    _assert_disk_matches_metadata(out)  # JBOD directories of every background replica agree with the metadata
    sample = next(v for v in log_dirs(out))
    big = max((os.path.join(sample.path, n) for n in os.listdir(sample.path) if n.startswith(("billing", "catalog",
              "checkout", "fraud", "inventory.", "logistics", "marketing", "orders.", "payments.", "pricing",
              "search", "shipping", "users", "warehouse"))), key=lambda p: os.stat(os.path.join(p, sorted(
                  os.listdir(p))[0])).st_size)
    seg = os.path.join(big, "00000000000000000000.log")
    st = os.stat(seg)
    assert st.st_blocks * 512 < st.st_size  # sparse
    assert [b for b in record_batch.read_batches(seg)]


def test_packed_capture_is_one_pack_per_broker(tmp_path):
    out = str(tmp_path / "packed")
    stats = command.run("missing-partition-metadata", out, SimParams(seed=5, partitions_per_broker=1, packed=True))
    assert stats["packs"] == [f"broker-{b}.jsonl.gz" for b in range(1, 5)]
    assert not any(name.startswith("broker-") and os.path.isdir(os.path.join(out, name)) for name in os.listdir(out))
    with pack_reader.PackReader(os.path.join(out, "broker-2.jsonl.gz")) as pack:
        items = list(pack)
    assert pack.complete, pack.errors
    assert pack.header["broker_id"] == 2 and pack.header["capture_time"] == capture_doc(out)["capture_time"]
    by_path = {e["path"]: e for e in items}
    assert any(p.endswith("/partition.metadata") and e["content"] for p, e in by_path.items())
    assert any(p.startswith(METADATA_DIR + "/") and p.endswith(".log") and e["content"] for p, e in by_path.items())


def _pack_lines(path: str, trees: str = "") -> list:
    """The pack's lines with the wall-clock trailer dropped and the folder of the packed trees taken out."""
    folder = trees or os.path.dirname(path)
    with gzip.open(path, "rt") as f:
        return [line.replace(folder, "<trees>") for line in f if '"rec":"trailer"' not in line]


def test_packed_fleet_written_in_passes_or_on_scratch_equals_one_pass(tmp_path, monkeypatch):
    params = SimParams(seed=9, brokers=5, partitions_per_broker=40, metadata_records=2000, packed=True)
    command.run("healthy", str(tmp_path / "one"), params)
    monkeypatch.setattr(command, "PACK_PASS_REPLICA_DIRS", 80)  # two brokers' trees at a time: three passes
    stats = command.run("healthy", str(tmp_path / "passes"), params)
    assert stats["packs"] == [f"broker-{b}.jsonl.gz" for b in range(1, 6)]
    scratch = tmp_path / "scratch"
    assert command.run("healthy", str(tmp_path / "scratched"), params, scratch=str(scratch))["packs"] == stats["packs"]
    assert os.listdir(scratch) == []  # trees and work files removed
    for name in stats["packs"]:
        one, passes = str(tmp_path / "one" / name), str(tmp_path / "passes" / name)
        assert _pack_lines(passes) == _pack_lines(one), name
        assert _pack_lines(str(tmp_path / "scratched" / name), str(scratch / "scratched")) == _pack_lines(one)
        assert os.stat(passes).st_mtime_ns == os.stat(one).st_mtime_ns


def test_metadata_log_embedded_in_the_voters_packs_only(tmp_path):
    out = str(tmp_path / "copies")
    command.run("healthy", out, SimParams(seed=9, brokers=5, partitions_per_broker=10, metadata_records=2000,
                                          packed=True, metadata_log_copies=2))
    voters = capture_doc(out)["controller"]["kraft"]["voters"]
    embedded = set()
    for b in range(1, 6):
        with pack_reader.PackReader(os.path.join(out, f"broker-{b}.jsonl.gz")) as pack:
            segments = [e for e in pack if e["path"].startswith(METADATA_DIR + "/") and e["path"].endswith(".log")]
        assert segments, b  # every broker's copy is listed ...
        if all(e["content"] for e in segments):
            embedded.add(b)
        else:
            assert not any(e["content"] for e in segments), b  # ... and embedded whole or not at all
    assert embedded == set(sorted(voters)[:2])
    assert command.main(["--scenario", "healthy", "--out", str(tmp_path / "raw"), "--metadata-log-copies", "1"]) == 2
    assert command.main(["--scenario", "healthy", "--out", str(tmp_path / "raw"), "--scratch", str(tmp_path)]) == 2


def test_cli_lists_validates_and_refuses_foreign_folders(tmp_path, capsys):
    assert command.main(["--list"]) == 0
    assert "demo" in capsys.readouterr().out
    assert command.main(["--scenario", "nope", "--out", str(tmp_path / "x")]) == 2
    assert command.main(["--scenario", "healthy"]) == 2
    foreign = tmp_path / "not-a-capture"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    assert command.main(["--scenario", "healthy", "--out", str(foreign), "--force"]) == 2
    assert (foreign / "precious.txt").read_text() == "keep me"
    assert command.main(["--scenario", "healthy", "--out", str(tmp_path / "y"), "--brokers", "0"]) == 2
    ok = tmp_path / "z"
    assert command.main(["--scenario", "zk-healthy", "--out", str(ok), "--partitions-per-broker", "0"]) == 0
    assert command.main(["--scenario", "zk-healthy", "--out", str(ok)]) == 2
    assert command.main(["--scenario", "zk-healthy", "--out", str(ok), "--force"]) == 0
