"""The malformed corpus through the ingest stage: every bad file is quarantined with its specific reason, the
rest of the capture is unaffected, and the accounting is exact (every file seen once, seen = ok + quarantined,
rows_produced = the rows the file put in the bronze tables)."""
from __future__ import annotations

import os
import shutil
from collections import Counter

import pytest

import collector
from jobs.ingest import decode_tasks
from udfs.partition_metadata import encode_partition_metadata

from .conftest import ingest_rows
from .corpus_builders import META_NODE, TOPIC_ID, data_batch
from .corpus_capture import FIRST_SYNTHETIC_NODE, _meta, copy_devsample
from .readers import READERS

FILES = "bronze_ingest_files"
CONTENT_TABLES = ("bronze_log_dirs", "bronze_dir_entries", "bronze_metadata_records", "bronze_producer_states",
                  "bronze_zk_events", "bronze_reported_replicas")


def _from_corpus(value) -> bool:
    return isinstance(value, str) and value.startswith("malformed/")


def _clean_part(rows: dict) -> dict:
    """Rows that do not come from the corpus (by path, log dir, copy or source file), comparable as sets."""
    out = {}
    for table in (FILES, *CONTENT_TABLES):
        kept = [r for r in rows.get(table, []) if not any(_from_corpus(r.get(k)) for k in
                                                           ("path", "log_dir", "copy_id", "source_file"))]
        out[table] = Counter(repr(sorted(r.items())) for r in kept)
    return out


@pytest.fixture(scope="module")
def corpus_rows(corpus_capture):
    return ingest_rows(corpus_capture[0])


def test_every_corpus_file_is_quarantined_with_its_specific_reason(corpus_capture, corpus_rows):
    _, placed = corpus_capture
    files = {r["path"]: r for r in corpus_rows[FILES]}
    wrong = []
    for p in placed:
        row = files.get(p.path)
        want = p.case.ingest_kind
        got = None if row is None else (row["status"], row["error_kind"], row["file_kind"], row["log_dir"] or "")
        if got != ("quarantined" if want else "ok", want, p.case.file_kind, p.log_dir):
            wrong.append((p.case.name, got))
            continue
        if want is not None:
            built = p.case.build()
            assert row["error_message"], p.case.name
            if built.offset is not None and p.case.reader == "metadata_log":
                assert row["error_offset"] == built.offset, p.case.name
            if built.line is not None and p.case.reader != "pack":
                assert row["error_line"] == built.line, p.case.name
    assert wrong == []


def test_rows_produced_match_what_each_corpus_file_put_in_the_tables(corpus_capture, corpus_rows):
    """A quarantined metadata segment still contributes its good records (and one error row per bad spot),
    plus one bronze_metadata_batches row per batch it frames."""
    _, placed = corpus_capture
    files = {r["path"]: r for r in corpus_rows[FILES]}
    by_source = Counter(r["source_file"] for r in corpus_rows["bronze_metadata_records"])
    batches = Counter(r["source_file"] for r in corpus_rows["bronze_metadata_batches"])
    errors_by_source = Counter(r["source_file"] for r in corpus_rows["bronze_metadata_records"] if r["error_kind"])
    for p in placed:
        if p.case.reader != "metadata_log":
            continue
        outcome = READERS[p.case.reader](p.case.build().data)
        expected = outcome.good_before + outcome.good_after + len(outcome.errors)
        assert by_source[p.path] == expected and (batches[p.path] > 0 or p.case.name == "segment_empty"), p.case.name
        assert files[p.path]["rows_produced"] == by_source[p.path] + batches[p.path], p.case.name
        assert errors_by_source[p.path] == len(outcome.errors), p.case.name


def test_accounting_is_exact_every_file_on_disk_is_seen_once(corpus_capture, corpus_rows):
    capture, _ = corpus_capture
    rows = corpus_rows[FILES]
    paths = [r["path"] for r in rows if "!" not in r["path"]]  # pack members are accounted inside their pack
    assert len(paths) == len(set(paths))
    on_disk = {str(p.relative_to(capture)) for p in capture.rglob("*") if p.is_file() or p.is_symlink()}
    assert set(paths) == on_disk
    statuses = Counter(r["status"] for r in rows)
    assert set(statuses) <= {"ok", "quarantined"} and sum(statuses.values()) == len(rows)
    assert all((r["status"] == "quarantined") == (r["error_kind"] is not None) for r in rows)


def test_the_clean_part_is_unaffected_by_the_corpus(corpus_rows, clean_capture):
    clean = ingest_rows(clean_capture)
    assert _clean_part(corpus_rows) == _clean_part(clean)
    assert sum(_clean_part(clean)[FILES].values()) == len(clean[FILES]) > 100


def test_bad_meta_properties_leaves_the_log_dir_row_with_the_reason(corpus_capture, corpus_rows):
    _, placed = corpus_capture
    log_dirs = {r["log_dir"]: r for r in corpus_rows["bronze_log_dirs"]}
    for p in placed:
        if p.case.file_name == "meta.properties":
            row = log_dirs[p.log_dir]
            assert row["error_kind"] == p.case.kind and row["error_message"], p.case.name
            assert row["broker_id"] in (None, META_NODE), p.case.name  # never a real broker's id


def test_bad_partition_metadata_is_recorded_on_its_replica_dir(corpus_capture, corpus_rows):
    _, placed = corpus_capture
    entries = {(r["log_dir"], r["entry_name"]): r for r in corpus_rows["bronze_dir_entries"]}
    for p in placed:
        if p.case.file_name == "partition.metadata":
            row = entries[(p.log_dir, f"{p.case.name}-0")]
            assert row["pm_status"] in ("log_dir_offline", "broker_start_fails") and row["topic_id"] is None
            assert row["pm_message"], p.case.name


def test_symlink_inside_a_pack_is_listed_with_its_target_and_never_read(corpus_capture, corpus_rows):
    _, placed = corpus_capture
    [pack] = [p for p in placed if p.case.name == "pack_symlink_outside"]
    [member] = [r for r in corpus_rows[FILES] if r["path"].startswith(pack.path + "!")
                and r["path"].endswith("leader-epoch-checkpoint")]
    assert (member["status"], member["file_kind"], member["rows_produced"]) == ("ok", "other", 0)
    assert member["error_message"] == "symlink -> /etc/shadow"


def test_a_symlink_in_a_raw_log_dir_pointing_outside_is_recorded_not_followed(tmp_path):
    secret = tmp_path / "secret.properties"
    secret.write_bytes(b"node.id=666\nversion=1\ncluster.id=stolen\n")
    log_dir = tmp_path / "capture" / "kafka-logs"
    _meta(log_dir, FIRST_SYNTHETIC_NODE)
    (log_dir / "orders-0").mkdir()
    os.symlink(secret, log_dir / "orders-0" / "partition.metadata")
    os.symlink(tmp_path, log_dir / "escape-0")
    rows = ingest_rows(tmp_path / "capture")
    files = {r["path"]: r for r in rows[FILES]}
    link = files["kafka-logs/orders-0/partition.metadata"]
    assert (link["status"], link["file_kind"], link["error_message"]) == ("ok", "other", f"symlink -> {secret}")
    entries = {r["entry_name"]: r for r in rows["bronze_dir_entries"]}
    assert entries["orders-0"]["pm_status"] == "missing"  # the link's target was not read as partition.metadata
    assert "escape-0" in entries and not any("secret" in p for p in files)
    assert [r["broker_id"] for r in rows["bronze_log_dirs"]] == [FIRST_SYNTHETIC_NODE]


def test_dirs_and_files_vanishing_during_collection(tmp_path, monkeypatch):
    """A replica dir removed between listing and descending, a file removed between listing and reading: the
    run goes on, the vanished file is quarantined as io_error, everything else is read."""
    log_dir = tmp_path / "capture" / "kafka-logs"
    _meta(log_dir, FIRST_SYNTHETIC_NODE)
    for name in ("gone-0", "kept-0", "thin-0"):
        (log_dir / name).mkdir()
        (log_dir / name / "partition.metadata").write_bytes(encode_partition_metadata(TOPIC_ID))
        (log_dir / name / "00000000000000000000.log").write_bytes(data_batch())

    class VanishingFS(collector.LocalFileSystem):
        def open_dir(self, handle, name):
            if name == "gone-0":
                shutil.rmtree(log_dir / name)
            return super().open_dir(handle, name)

        def read(self, handle, name, cap):
            if name == "partition.metadata" and (log_dir / "thin-0" / name).exists():
                os.unlink(log_dir / "thin-0" / name)
            return super().read(handle, name, cap)

    monkeypatch.setattr(collector, "default_fs", VanishingFS)
    assert decode_tasks.collector.default_fs is VanishingFS
    rows = ingest_rows(tmp_path / "capture")
    entries = {r["entry_name"]: r for r in rows["bronze_dir_entries"]}
    assert entries["gone-0"]["name_error"].startswith("listing failed: io_error") or \
        "vanished" in (entries["gone-0"]["name_error"] or "")
    assert entries["kept-0"]["pm_status"] == "ok" and entries["kept-0"]["topic_id"] == TOPIC_ID
    files = {r["path"]: r for r in rows[FILES]}
    thin = files["kafka-logs/thin-0/partition.metadata"]
    assert (thin["status"], thin["error_kind"]) == ("quarantined", "io_error") and "vanished" in thin["error_message"]
    assert entries["thin-0"]["pm_status"] == "log_dir_offline"
    assert not [p for p in files if p.startswith("kafka-logs/gone-0/")]
    assert files["kafka-logs/kept-0/00000000000000000000.log"]["status"] == "ok"


def test_non_utf8_names_do_not_stop_the_run_and_are_kept_escaped(tmp_path):
    capture = tmp_path / "capture"
    log_dir = capture / "kafka-logs"
    _meta(log_dir, FIRST_SYNTHETIC_NODE)
    raw = os.fsencode(log_dir)
    odd_dir = os.path.join(raw, b"caf\xe9-0")
    os.mkdir(odd_dir)
    with open(os.path.join(odd_dir, b"partition.metadata"), "wb") as out:
        out.write(encode_partition_metadata(TOPIC_ID))
    with open(os.path.join(raw, b"stray-\xff"), "wb") as out:
        out.write(b"x")
    (log_dir / "orders-0").mkdir()
    (log_dir / "orders-0" / "partition.metadata").write_bytes(encode_partition_metadata(TOPIC_ID))

    rows = ingest_rows(capture)
    entries = {r["entry_name"]: r for r in rows["bronze_dir_entries"]}
    assert entries["caf\\xe9-0"]["topic_id"] == TOPIC_ID  # its small files are embedded by the walk: read
    assert entries["stray-\\xff"]["entry_kind"] == "non_kafka"
    assert entries["orders-0"]["pm_status"] == "ok"
    paths = {r["path"] for r in rows[FILES]}
    assert {"kafka-logs/stray-\\xff", "kafka-logs/caf\\xe9-0/partition.metadata"} <= paths
    for row in rows[FILES]:
        row["path"].encode("utf-8")  # every path in the tables is valid UTF-8


@pytest.mark.spark
@pytest.mark.slow
def test_spark_ingest_of_the_corpus_capture_succeeds_and_accounts_for_every_file(spark, corpus_capture,
                                                                                   corpus_rows, tmp_path):
    """One real run of the ingest stage (Spark, Delta write) over the whole corpus capture: it succeeds, the
    written tables hold exactly the executors' rows (the in-process tests above check those against a clean
    capture), and no corpus copy of the metadata log becomes the authoritative one."""
    from deltalake import DeltaTable

    from jobs.ingest.stage import run_ingest
    from jobs.tables.delta_store import DeltaStore
    from tests.settings_from import settings_from

    capture, placed = corpus_capture
    root = tmp_path / "tables"
    s = settings_from(storage={"backend": "embedded", "root": str(root), "catalog": "", "schema": "",
                               "commit_retries": 3}, ingest={"files_per_task": 64})
    result = run_ingest(spark, s.ingest, DeltaStore.from_settings(spark, s.storage), [str(capture)], "cap-corpus",
                        "run-1", execution=s.spark)
    summary = result.files_summary()
    result.release()

    def table(name):
        return [_norm(r) for r in DeltaTable(str(root / name)).to_pyarrow_table().to_pylist()]

    files = table(FILES)
    assert summary == {"seen": len(files), "ok": sum(r["status"] == "ok" for r in files),
                       "quarantined": sum(r["status"] == "quarantined" for r in files)}
    by_path = {r["path"]: r for r in files}
    assert len(by_path) == len(files)
    for p in placed:
        row = by_path[p.path]
        assert (row["status"], row["error_kind"]) == ("quarantined" if p.case.ingest_kind else "ok",
                                                      p.case.ingest_kind), p.case.name
    for name in (FILES, "bronze_dir_entries", "bronze_metadata_records", "bronze_metadata_batches", "bronze_producer_states",
                 "bronze_zk_events", "bronze_reported_replicas"):
        emitted = corpus_rows.get(name, [])
        columns = [c for c in (emitted[0] if emitted else {}) if c not in ("broker_id", "cluster_id",
                                                                             "directory_id", "source_broker_id",
                                                                             "in_authoritative_sequence")]
        written = Counter(repr([r[c] for c in columns]) for r in table(name))
        want = Counter(repr([_norm(r)[c] for c in columns]) for r in emitted)
        if name == "bronze_metadata_records":  # decoded here: the authoritative copy, and files the others lack
            assert written and written <= want, name
            continue
        if name == FILES:  # the second pass adds each decoded file's records to the first pass's batch rows
            columns.remove("rows_produced")
            written = Counter(repr([r[c] for c in columns]) for r in table(name))
            want = Counter(repr([_norm(r)[c] for c in columns]) for r in emitted)
        assert written == want, name
    decoded = {r["source_file"] for r in table("bronze_metadata_records")}
    sound = {r["source_file"] for r in table("bronze_metadata_batches") if r["error_kind"] is None}
    for p in placed:  # every corpus segment with a sound batch is one no other copy holds: decoded
        if p.case.reader == "metadata_log" and p.path in sound:
            assert p.path in decoded, p.case.name

    copies = table("bronze_metadata_copies")
    authoritative = [c["copy_id"] for c in copies if c["is_authoritative"]]
    assert len(authoritative) == 1 and not _from_corpus(authoritative[0])
    records = table("bronze_metadata_records")
    assert any(r["in_authoritative_sequence"] for r in records)
    assert not any(r["in_authoritative_sequence"] for r in records if _from_corpus(r["source_file"]))


def _norm(row: dict) -> dict:
    """Comparable values: timestamps as naive UTC (Spark collects naive, deltalake gives aware)."""
    import datetime as dt

    out = {}
    for key, value in row.items():
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        out[key] = value
    return out


def test_ingest_reads_a_few_kib_of_a_10_gib_sparse_segment(tmp_path, monkeypatch):
    """Only the header scan touches a data segment: one 61-byte header per batch and one probe of the tail."""
    from .corpus import BY_NAME, SPARSE_SIZE

    log_dir = tmp_path / "capture" / "kafka-logs"
    _meta(log_dir, FIRST_SYNTHETIC_NODE)
    (log_dir / "orders-0").mkdir()
    (log_dir / "orders-0" / "partition.metadata").write_bytes(encode_partition_metadata(TOPIC_ID))
    BY_NAME["data_segment_sparse_10gib"].write(log_dir / "orders-0" / "00000000000000000000.log")
    read = []
    real_pread = os.pread

    def counting_pread(fd, n, offset):
        data = real_pread(fd, n, offset)
        read.append(len(data))
        return data

    ingest_rows(tmp_path / "capture")  # warm-up: first-call imports and caches read files of their own
    before = _bytes_read_by_this_process()
    monkeypatch.setattr(os, "pread", counting_pread)
    rows = ingest_rows(tmp_path / "capture")
    monkeypatch.undo()
    assert _bytes_read_by_this_process() - before < (1 << 20)  # every read syscall of the process counted
    files = {r["path"]: r for r in rows[FILES]}
    segment = files["kafka-logs/orders-0/00000000000000000000.log"]
    assert (segment["status"], segment["bytes"], segment["rows_produced"]) == ("ok", SPARSE_SIZE, 1)
    assert [r["producer_id"] for r in rows["bronze_producer_states"]] == [4000]
    assert sum(read) < (1 << 20)


def _bytes_read_by_this_process() -> int:
    """``rchar`` of /proc/self/io: bytes of every read/pread/readv syscall so far."""
    with open("/proc/self/io") as stats:
        return next(int(line.split()[1]) for line in stats if line.startswith("rchar:"))


def test_a_symlink_inside_the_capture_is_reported_and_never_followed(tmp_path):
    outside = tmp_path / "outside"
    copy_devsample(outside / "cluster")  # a whole readable capture, but outside the capture root
    capture = tmp_path / "capture"
    capture.mkdir()
    (capture / "notes.txt").write_text("hello\n")
    (capture / "elsewhere").symlink_to(outside / "cluster")
    (capture / "secret.log").symlink_to(outside / "cluster" / "broker-101" / "kafka-logs" / "meta.properties")
    rows = ingest_rows(capture)
    files = {r["path"]: r for r in rows[FILES]}
    assert set(files) == {"notes.txt", "elsewhere", "secret.log"}
    for link in ("elsewhere", "secret.log"):
        assert (files[link]["status"], files[link]["error_kind"]) == ("quarantined", "unsafe_path")
        assert str(outside) in files[link]["error_message"] and "not followed" in files[link]["error_message"]
    assert not rows.get("bronze_log_dirs") and not rows.get("bronze_dir_entries")


def test_a_loose_file_with_a_non_utf8_name_is_reported_not_lost(tmp_path):
    capture = tmp_path / "capture"
    (capture / "dumps").mkdir(parents=True)
    (capture / "dumps" / "ok.txt").write_text("hello\n")
    with open(os.path.join(os.fsencode(capture / "dumps"), b"caf\xe9.log"), "wb") as f:
        f.write(b"\0" * 100)
    rows = ingest_rows(capture)
    files = {r["path"]: r for r in rows[FILES]}
    assert set(files) == {"dumps/ok.txt", "dumps/caf\\xe9.log"}
    bad = files["dumps/caf\\xe9.log"]
    assert (bad["status"], bad["error_kind"]) == ("quarantined", "unsafe_path") and "UTF-8" in bad["error_message"]
    for row in rows[FILES]:
        row["path"].encode("utf-8")
