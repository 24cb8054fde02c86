"""``kafka-recon maintain`` on real Delta tables (written by delta-rs, the embedded backend's committer):
OPTIMIZE leaves the same rows in fewer files, VACUUM deletes only files no version within
``storage.vacuum_retention_hours`` needs (Delta's rule: a removed file is kept for the retention period)."""
from __future__ import annotations

import glob
import os

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from jobs.tables import maintain


def nightly_table(root):
    uri = os.path.join(root, "gold_dq_results")
    for night in range(4):  # four appends: four small files, like four nightly runs
        write_deltalake(uri, pa.table({"run_id": [f"r{night}"], "success": [True]}), mode="append")
    return uri


def parquet_files(uri):
    return sorted(glob.glob(os.path.join(uri, "*.parquet")))


def test_optimize_compacts_and_the_default_retention_keeps_time_travel(tmp_path, capsys):
    uri = nightly_table(str(tmp_path))
    assert len(parquet_files(uri)) == 4
    assert maintain.main(["--set", f"storage.root={tmp_path}", "--table", "gold_dq_results"]) == 0
    table = DeltaTable(uri)
    assert len(table.file_uris()) == 1 and sorted(table.to_pyarrow_table()["run_id"].to_pylist()) == \
        ["r0", "r1", "r2", "r3"]
    assert table.history(1)[0]["operation"] == "OPTIMIZE"
    assert len(parquet_files(uri)) == 5  # 168 h retention: the compacted files stay for time travel
    assert DeltaTable(uri, version=0).to_pyarrow_table().num_rows == 1  # the first night, before OPTIMIZE
    assert "gold_dq_results: version_before=3 files_added=1 files_removed=4 vacuum_deleted=0" in capsys.readouterr().out


def test_vacuum_with_no_retention_deletes_what_no_version_needs(tmp_path, capsys):
    uri = nightly_table(str(tmp_path))
    args = ["--set", f"storage.root={tmp_path}", "--set", "storage.vacuum_retention_hours=0"]
    assert maintain.main([*args, "--dry-run"]) == 0
    assert "vacuum_files=0" in capsys.readouterr().out and len(parquet_files(uri)) == 4  # nothing removed yet
    assert maintain.main(args) == 0
    assert len(parquet_files(uri)) == 1
    assert sorted(DeltaTable(uri).to_pyarrow_table()["run_id"].to_pylist()) == ["r0", "r1", "r2", "r3"]


def test_maintain_refuses_a_catalog_and_unknown_tables(tmp_path, capsys):
    assert maintain.main(["--set", "storage.catalog=main"]) == 2
    assert maintain.main(["--set", f"storage.root={tmp_path}", "--table", "nope"]) == 2
    assert "not tables of the registry" in capsys.readouterr().err
