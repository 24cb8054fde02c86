"""Ingest of the real Kafka-written devsample capture (4 KRaft nodes + Kafka's own dump-log output).

One ingest for the whole module; every test reads its collected rows.
"""
from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from jobs.ingest import run_ingest
from jobs.ingest.metadata_rows import metadata_row
from tests.settings_from import settings_from
from udfs import metadata_log

pytestmark = pytest.mark.spark

SOURCE_COLUMNS = {"capture_id", "run_id", "copy_id", "source_broker_id", "source_file", "source_kind",
                  "in_authoritative_sequence"}


@pytest.fixture(scope="module")
def ingested(spark, devsample_dir: Path):
    s = settings_from()
    result = run_ingest(spark, s.ingest, None, [str(devsample_dir)], "devsample", "run-1", execution=s.spark)
    rows = {name: [r.asDict() for r in df.collect()] for name, df in result.tables.items()}
    summary = result.files_summary()
    result.release()
    return result, rows, summary


@pytest.fixture(scope="module")
def expected(devsample_dir: Path) -> dict:
    return json.loads((devsample_dir / "expected.json").read_text())


def test_every_file_is_accounted_for(ingested, devsample_dir: Path):
    result, rows, summary = ingested
    on_disk = {str(p.relative_to(devsample_dir)) for p in devsample_dir.rglob("*") if p.is_file()}
    files = rows["bronze_ingest_files"]
    assert Counter(r["path"] for r in files) == Counter(on_disk)  # each file exactly once
    assert summary["seen"] == len(on_disk) == summary["ok"] + summary["quarantined"]
    quarantined = [(r["path"], r["error_kind"]) for r in files if r["status"] == "quarantined"]
    assert quarantined == [("broker-104/kafka-logs/inventory-1/partition.metadata", "malformed_line")]
    sizes = {r["path"]: r["bytes"] for r in files}
    assert all(sizes[p] == os.path.getsize(devsample_dir / p) for p in on_disk)
    assert {r["capture_id"] for r in files} == {"devsample"} and {r["run_id"] for r in files} == {"run-1"}
    kinds = Counter(r["file_kind"] for r in files)
    assert kinds["meta_properties"] == 5 and kinds["metadata_segment"] == 8 and kinds["metadata_snapshot"] == 4
    assert result.capture_time_source == "newest_mtime" and result.capture_time is not None


def test_log_dirs_take_the_broker_from_meta_properties(ingested, expected):
    _, rows, _ = ingested
    log_dirs = {r["log_dir"]: r for r in rows["bronze_log_dirs"]}
    want = {d["logDir"]: (int(node), d["directoryId"]) for node, n in expected["nodes"].items() for d in n["logDirs"]}
    assert {k: (v["broker_id"], v["directory_id"]) for k, v in log_dirs.items()} == want
    assert {v["cluster_id"] for v in log_dirs.values()} == {expected["clusterId"]}
    assert not log_dirs["broker-102/kafka-logs-b"]["has_metadata_log"]
    assert all(v["error_kind"] is None and v["meta_version"] == 1 for v in log_dirs.values())


def test_replica_dirs_match_the_ground_truth(ingested, expected):
    _, rows, _ = ingested
    entries = {f"{r['log_dir']}/{r['entry_name']}": r for r in rows["bronze_dir_entries"]}
    for replica in expected["replicas"]:
        row = entries[replica["path"]]
        assert row["broker_id"] == replica["broker"] and row["directory_id"] == replica["logDirId"]
        assert (row["topic"], row["partition"]) == (replica["topic"], replica["partition"])
        pm = replica["partitionMetadata"]
        assert row["topic_id"] == pm["topicIdOnDisk"]
        if not pm["exists"]:
            assert row["pm_status"] == "missing"
        elif pm["kafkaRead"] == "ok":
            assert row["pm_status"] == "ok"
        else:
            assert row["pm_status"] == "log_dir_offline" and row["pm_message"] == pm["kafkaRead"]
    kinds = {k: r["entry_kind"] for k, r in entries.items()}
    assert kinds["broker-104/kafka-logs/inventory-2.89dae8f0999baf24f653d531c05f9ed6-stray"] == "stray"
    assert kinds["broker-102/kafka-logs-b/events-1.96cc2e120fcaecf473a7e5b7b7d57964-future"] == "future"
    assert kinds["broker-101/kafka-logs/meta.properties"] == "top_file"


def test_only_the_authoritative_copy_is_decoded_and_it_equals_the_decoders_output(ingested, devsample_dir: Path,
                                                                                   expected):
    _, rows, _ = ingested
    by_file = defaultdict(list)
    for r in rows["bronze_metadata_records"]:
        by_file[r["source_file"]].append(r)
    auth = next(c["copy_id"] for c in rows["bronze_metadata_copies"] if c["is_authoritative"])
    auth_segments = sorted(str(p.relative_to(devsample_dir)) for p in (devsample_dir / auth).glob("*.log"))
    bootstraps = sorted(str(p.relative_to(devsample_dir)) for p in devsample_dir.glob("broker-*/*/bootstrap.checkpoint"))
    binary = sorted(f for f in by_file if not f.startswith("tool-output/"))
    assert binary == sorted(auth_segments + bootstraps) and len(auth_segments) == 2 and len(bootstraps) == 5
    assert all(by_file[f][0]["section"] == "bootstrap" for f in by_file if f.startswith("tool-output/"))
    for rel in binary:
        want = [metadata_row(rec, {}) for rec in metadata_log.iter_metadata_records(str(devsample_dir / rel))]
        for w in want:  # Spark hands timestamps back as naive UTC
            w["append_time"] = w["append_time"].replace(tzinfo=None) if w["append_time"] else None
        got = sorted(by_file[rel], key=lambda r: r["offset"])
        assert len(got) == len(want) > 0
        for g, w in zip(got, want, strict=True):
            assert {k: g[k] for k in w if k not in SOURCE_COLUMNS | {"section", "snapshot_end_offset"}} == \
                   {k: v for k, v in w.items() if k not in SOURCE_COLUMNS | {"section", "snapshot_end_offset"}}
    log = sorted((r for r in rows["bronze_metadata_records"] if r["copy_id"] == auth and r["section"] == "log"),
                 key=lambda r: r["offset"])
    assert [(r["offset"], r["record_type"], r["version"], json.loads(r["payload_json"])) for r in log] == \
           [(e["offset"], e["type"], e.get("version", 0 if e["isControl"] else None), e["data"])
            for e in expected["metadataLog"]["records"]]


def test_every_copy_is_read_batch_by_batch(ingested, devsample_dir: Path, expected):
    _, rows, _ = ingested
    by_file = defaultdict(list)
    for r in rows["bronze_metadata_batches"]:
        by_file[r["source_file"]].append(r)
    files = [p for p in devsample_dir.glob("broker-*/*/__cluster_metadata-0/*")
             if p.name.endswith(".log") or p.name.endswith(".checkpoint")]
    assert len(files) == 12
    for path in files:
        want = [(b["base_offset"], b["last_offset"], b["leader_epoch"], b["crc"], b["crc_valid"])
                for b in metadata_log.iter_metadata_batches(str(path))]
        got = [(r["base_offset"], r["last_offset"], r["leader_epoch"], r["crc"], r["crc_valid"])
               for r in sorted(by_file[str(path.relative_to(devsample_dir))], key=lambda r: r["position"])]
        assert got == want and want
    snapshot = by_file["broker-101/kafka-logs/__cluster_metadata-0/00000000000000000044-0000000001.checkpoint"]
    assert {r["snapshot_end_offset"] for r in snapshot} == {expected["metadataSnapshot"]["endOffsetExclusive"]}
    text = [r for r in rows["bronze_metadata_batches"] if r["source_kind"] == "dump_log_text"
            and r["copy_id"] == "tool-output/broker-101/kafka-logs/__cluster_metadata-0" and r["section"] == "log"
            and "skip-record-metadata" not in r["source_file"]]
    binary = [r for r in rows["bronze_metadata_batches"] if r["copy_id"] == "broker-101/kafka-logs/__cluster_metadata-0"
              and r["section"] == "log"]
    assert sorted((r["base_offset"], r["leader_epoch"], r["crc"]) for r in text) == \
           sorted((r["base_offset"], r["leader_epoch"], r["crc"]) for r in binary)


@pytest.fixture(scope="module")
def text_and_binary(spark, devsample_dir: Path):
    """Per broker: records of its binary metadata files and of their dump-log text, each ingested alone (alone,
    each is the authoritative copy, so both are decoded)."""
    s = settings_from()

    def records(paths):
        result = run_ingest(spark, s.ingest, None, [str(p) for p in paths], "part", "run-1", execution=s.spark)
        out = [r.asDict() for r in result.tables["bronze_metadata_records"].collect()]
        result.release()
        return out

    out = {}
    for broker_dir in ("broker-101/kafka-logs", "broker-102/kafka-logs-a", "broker-103/kafka-logs",
                       "broker-104/kafka-logs"):
        folder = devsample_dir / broker_dir / "__cluster_metadata-0"
        text_folder = devsample_dir / "tool-output" / broker_dir / "__cluster_metadata-0"
        for part in ("*.log", "*.checkpoint"):
            binary = sorted(folder.glob(part))
            text = [text_folder / f"{p.name}.DumpLogSegments.txt" for p in binary]
            out[(broker_dir, part)] = (records(binary), records(text))
    return out


def test_dump_log_text_gives_the_same_records_as_the_binary_files(text_and_binary):
    for (broker_dir, part), (binary, text) in text_and_binary.items():
        assert {r["source_kind"] for r in text} == {"dump_log_text"}, broker_dir

        def key(r):
            return (r["section"], r["offset"])
        binary_by_key = {key(r): r for r in binary}
        assert len(binary_by_key) == len(binary) > 0 and {key(r) for r in text} == set(binary_by_key), (broker_dir, part)
        for t in text:
            b = binary_by_key[key(t)]
            diff = {k for k in b if k not in SOURCE_COLUMNS and b[k] != t[k]}
            if b["record_type"] == "LEADER_CHANGE":  # kafka-dump-log does not print LeaderChange's payload
                assert diff <= {"payload_json"} and t["payload_json"] is None
            else:
                assert diff == set(), (t["offset"], diff)


def test_one_authoritative_metadata_sequence(ingested, expected):
    _, rows, _ = ingested
    copies = {r["copy_id"]: r for r in rows["bronze_metadata_copies"]}
    assert len(copies) == 8  # 4 brokers' disks + 4 folders of kafka-dump-log text
    auth = [c for c in copies.values() if c["is_authoritative"]]
    assert len(auth) == 1 and auth[0]["source_kind"] == "segment" and auth[0]["last_offset"] == 59
    lagging = copies["broker-103/kafka-logs/__cluster_metadata-0"]
    assert lagging["last_offset"] == expected["metadataLog"]["logEndOffset_broker103"] - 1
    assert all(c["diverges_at_offset"] is None and c["gap_after_offset"] is None for c in copies.values())
    assert {c["source_broker_id"] for c in copies.values() if c["source_kind"] == "segment"} == {101, 102, 103, 104}
    assert auth[0]["sequence_snapshot_end_offset"] is None  # the log reaches back to offset 0
    sequence = [r for r in rows["bronze_metadata_records"] if r["in_authoritative_sequence"]]
    assert sorted(r["offset"] for r in sequence) == list(range(60))
    assert {r["copy_id"] for r in sequence} == {auth[0]["copy_id"]}


def test_producer_states_from_snapshots_and_batch_headers(ingested, expected):
    _, rows, _ = ingested
    states = [r for r in rows["bronze_producer_states"] if r["log_dir"] == "broker-101/kafka-logs"]
    for partition in ("inventory-0", "inventory-2", "events-0", "events-1"):
        from_headers = {r["producer_id"] for r in states if r["entry_name"] == partition
                        and r["source_kind"] == "batch_header"}
        assert from_headers == {b["producerId"] for b in expected["dataBatches"][partition] if b["producerId"] >= 0}
    snap = [r for r in states if r["source_kind"] == "producer_snapshot"]
    assert snap and all(r["broker_id"] == 101 and r["topic_id"] and r["snapshot_offset"] is not None for r in snap)


def test_segments_cut_into_parts_give_the_same_bronze_rows(spark, ingested, devsample_dir: Path):
    """The second pass cuts a large segment at batch starts (ingest.metadata_chunk_bytes) and decodes the
    parts in parallel: records, file rows and counts are exactly those of the uncut decode."""
    from jobs.ingest.metadata_copies import compute_copies
    from jobs.ingest.metadata_sequence import split_files

    _, rows, summary = ingested
    s = settings_from("ingest.metadata_chunk_bytes=600")
    result = run_ingest(spark, s.ingest, None, [str(devsample_dir)], "devsample", "run-1", execution=s.spark)
    cut = {name: [r.asDict() for r in df.collect()] for name, df in result.tables.items()}
    auth_files = sorted({r["source_file"] for r in cut["bronze_metadata_records"] if r["section"] == "log"})
    batches = result.tables["bronze_metadata_batches"]
    starts = compute_copies(batches, [], chunk_bytes=600).cuts
    assert result.files_summary() == summary
    result.release()
    assert all(len(starts[f]) >= 3 for f in auth_files)  # every segment of the copy was cut at least twice
    locs = [{"source_file": f, "kind": "file", "root": "/", "path": f} for f in auth_files]
    assert len(split_files(locs, starts)) == sum(len(set(starts[f]) - {0}) + 1 for f in auth_files)

    def key(r):
        return (r.get("source_file") or r.get("path"), r.get("offset"))

    for table in ("bronze_metadata_records", "bronze_ingest_files", "bronze_metadata_batches"):
        assert sorted(cut[table], key=key) == sorted(rows[table], key=key), table


def test_offset_checkpoints_are_the_files_entries(ingested, devsample_dir: Path):
    """bronze_offset_checkpoints holds every line of every offset checkpoint Kafka wrote (read here as text)."""
    _, rows, _ = ingested
    want = set()
    for path in devsample_dir.glob("broker-*/kafka-logs*/*-offset-checkpoint"):
        lines = path.read_text().splitlines()
        assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
        for line in lines[2:]:
            topic, partition, offset = line.split()
            want.add((str(path.parent.relative_to(devsample_dir)), path.name, topic, int(partition), int(offset)))
    got = {(r["log_dir"], r["checkpoint"], r["topic"], r["partition"], r["offset"])
           for r in rows["bronze_offset_checkpoints"]}
    assert want and got == want
    assert len(rows["bronze_offset_checkpoints"]) == len(want)


def test_log_end_offsets_are_where_kafkas_batches_end(ingested, expected):
    """Each replica dir's log end offset is the next offset after the last batch Kafka wrote to it (expected.json),
    or at most that for a replica that lagged; the leader's copy has all of them."""
    _, rows, _ = ingested
    ends = defaultdict(list)
    for r in rows["bronze_dir_entries"]:
        if r["entry_kind"] in ("partition", "future") and r["entry_name"] != "__cluster_metadata-0":
            ends[r["entry_name"].split(".")[0]].append(r)
    compared = 0
    for key, batches in expected["dataBatches"].items():
        partition, _, incarnation = key.partition(" (")  # "clicks-0 (first incarnation <topic id>)"
        dirs = [r for r in ends[partition] if not incarnation or r["topic_id"] == incarnation.split()[-1][:-1]]
        leo = batches[-1]["lastOffset"] + 1
        got = [r["log_end_offset"] for r in dirs]
        assert got and max(got) == leo and all(g is not None and g <= leo for g in got), (key, got)
        assert all(r["tail_scanned"] for r in dirs)
        compared += 1
    assert compared >= 4
def test_leader_epoch_rows_are_what_the_files_say_and_reconcile_finds_nothing_wrong(spark, ingested, devsample_dir):
    """The Kafka-written leader-epoch-checkpoints, read as plain text, are exactly the bronze rows (with each
    row's topic id from its dir's partition.metadata); reconciling this real ingest gives no leader-epoch finding."""
    from bronze_builders import to_frames
    from epoch_files import epoch_files_as_written, epoch_rows

    from jobs.reconcile import run_reconcile
    from jobs.reconcile.catalogue import default_catalogue

    result, rows, _ = ingested
    epochs = rows["bronze_leader_epochs"]
    assert epoch_rows(epochs) == epoch_files_as_written(devsample_dir) and len(epochs) == len(epoch_rows(epochs))
    ids = {(r["log_dir"], r["entry_name"]): r["topic_id"] for r in rows["bronze_dir_entries"]}
    assert all(r["topic_id"] == ids[(r["log_dir"], r["entry_name"])] for r in epochs)
    assert {r["topic_id"] for r in epochs if r["entry_name"] == "__cluster_metadata-0"} == {"AAAAAAAAAAAAAAAAAAAAAQ"}
    metadata = [(r["epoch"], r["start_offset"]) for r in epochs
                if r["log_dir"] == "broker-104/kafka-logs" and r["entry_name"] == "__cluster_metadata-0"]
    assert sorted(metadata) == [(1, 0), (2, 44)]
    recon = run_reconcile(spark, default_catalogue(), to_frames(spark, rows), "devsample", "run-1",
                          result.capture_time)
    assert [f.check_id for f in recon.findings.collect() if f.check_id.startswith("LEADER_EPOCH_")] == []
    asg = {(r["topic_name"], r["partition"]): r["leader_epoch"]
           for r in recon.silver["silver_partition_assignments"].collect()}
    assert asg and all(epoch is not None and epoch >= 0 for epoch in asg.values())
