"""DirectRows' split of a first-pass task's rows: which it writes itself (finished with its log dir's
meta.properties columns) and which it hands back to the DataFrame route, whose join over every task's log
dirs decides them (a log dir this task has no row for, or two rows for; metadata-log files the second pass
folds its outcome into)."""
from __future__ import annotations

import glob

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.ingest.rows_direct import DIRECT_TABLES, STAGED_FACT, DirectRows
from jobs.ingest.tagged_rows import FACTS, to_batch
from jobs.tables import bronze
from jobs.tables.backend_embedded import staging_for

FILES, DIRS, ENTRIES, CHECKPOINTS = (bronze.INGEST_FILES.name, bronze.LOG_DIRS.name, bronze.DIR_ENTRIES.name,
                                     bronze.OFFSET_CHECKPOINTS.name)


def _direct(tmp_path):
    specs = {spec.name: spec for spec in bronze.TABLES}
    staged = {t: staging_for(specs[t], str(tmp_path / t), "capture_id=c") for t in DIRECT_TABLES}
    return DirectRows(staged, "run-9")


def _written(direct, table):
    _, folder = direct.staged[table].folder()
    files = sorted(glob.glob(f"{folder}/*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def test_rows_of_known_log_dirs_are_written_the_rest_handed_back(tmp_path):
    direct = _direct(tmp_path)
    tagged = [
        to_batch(FILES, [{"path": "a/x", "log_dir": "a", "file_kind": "index", "status": "ok", "broker_id": 99},
                         {"path": "a/y.log", "log_dir": "a", "file_kind": "metadata_segment", "status": "ok"},
                         {"path": "b/z", "log_dir": "b", "file_kind": "index", "status": "ok"},
                         {"path": "dup/w", "log_dir": "dup", "file_kind": "index", "status": "ok"},
                         {"path": "loose.txt", "log_dir": None, "file_kind": "other", "status": "ok"}]),
        to_batch(ENTRIES, [{"log_dir": "a", "entry_name": "t-0"}, {"log_dir": "b", "entry_name": "t-1"}]),
        to_batch(CHECKPOINTS, [{"log_dir": "b", "checkpoint_file": "replication-offset-checkpoint"}]),
        to_batch(DIRS, [{"log_dir": "a", "broker_id": 1, "cluster_id": "k", "directory_id": "d-a"},
                        {"log_dir": "dup", "broker_id": 2}, {"log_dir": "dup", "broker_id": 3}]),
    ]
    out = list(direct.divert([tagged]))
    back = {}
    for batch in out:
        table = batch.column("table")[0].as_py()
        back.setdefault(table, []).extend(r for r in batch.column(table).to_pylist())
    # handed back: the metadata segment (folded by the second pass), log dir b (no row here), dup (two rows)
    assert sorted(r["path"] for r in back[FILES]) == ["a/y.log", "b/z", "dup/w"]
    assert [r["entry_name"] for r in back[ENTRIES]] == ["t-1"]
    assert len(back[DIRS]) == 3  # log dirs always take the DataFrame route
    # written: broker from the log dir's row (never the decoded value), null outside a log dir; run id filled
    files = sorted(_written(direct, FILES), key=lambda r: r["path"])
    assert [(r["path"], r["broker_id"], r["run_id"]) for r in files] == [("a/x", 1, "run-9"), ("loose.txt", None, "run-9")]
    entries = _written(direct, ENTRIES)
    assert [(r["entry_name"], r["broker_id"], r["cluster_id"], r["directory_id"]) for r in entries] == [
        ("t-0", 1, "k", "d-a")]
    assert [r["log_dir"] for r in _written(direct, CHECKPOINTS)] == ["b"]  # no meta.properties column: written
    facts = {r["source"]: r["long_value"] for r in back[FACTS.name] if r["fact"] == STAGED_FACT}
    assert facts == {FILES: 2, ENTRIES: 1, CHECKPOINTS: 1}


def test_a_task_without_rows_of_a_table_writes_no_file(tmp_path):
    direct = _direct(tmp_path)
    out = list(direct.divert([[to_batch(DIRS, [{"log_dir": "a", "broker_id": 1}])]]))
    assert [b.column("table")[0].as_py() for b in out] == [DIRS]
    for table in DIRECT_TABLES:
        assert _written(direct, table) == []


def test_a_batch_of_several_tables_is_split(tmp_path):
    direct = _direct(tmp_path)
    mixed = pa.concat_batches([to_batch(CHECKPOINTS, [{"log_dir": "a"}]), to_batch(DIRS, [{"log_dir": "a"}])])
    out = list(direct.divert([[mixed]]))
    assert sorted(b.column("table")[0].as_py() for b in out) == [FACTS.name, DIRS]
    assert len(_written(direct, CHECKPOINTS)) == 1


def test_each_input_resolves_its_own_log_dirs_into_one_file_per_table(tmp_path):
    """Two packs in one task: each pack's rows take its own log dirs' columns; a row whose log dir only another
    input of the task decoded is handed back (the driver's join gives it the same value)."""
    direct = _direct(tmp_path)
    first = [to_batch(ENTRIES, [{"log_dir": "p1!a", "entry_name": "t-0"}, {"log_dir": "p2!a", "entry_name": "x"}]),
             to_batch(DIRS, [{"log_dir": "p1!a", "broker_id": 1}])]
    second = [to_batch(ENTRIES, [{"log_dir": "p2!a", "entry_name": "t-1"}]),
              to_batch(DIRS, [{"log_dir": "p2!a", "broker_id": 2}])]
    out = list(direct.divert([first, second]))
    back = [r for b in out if b.column("table")[0].as_py() == ENTRIES for r in b.column(ENTRIES).to_pylist()]
    assert [r["entry_name"] for r in back] == ["x"]
    assert sorted((r["entry_name"], r["broker_id"]) for r in _written(direct, ENTRIES)) == [("t-0", 1), ("t-1", 2)]
    assert len(glob.glob(f"{direct.staged[ENTRIES].folder()[1]}/*.parquet")) == 1
