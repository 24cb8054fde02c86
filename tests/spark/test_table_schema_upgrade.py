"""Schema upgrades of existing tables: a newer kafka-recon adds its nullable columns itself (Delta schema
evolution: files written before read the column as null, as the Delta protocol's column-addition rule says);
any other difference stops the run before it commits anything, naming table, column, types and the fix;
``kafka-recon migrate --rewrite`` is that fix."""
from __future__ import annotations

import dataclasses
import json

import pytest
from delta_store_helpers import make_store, ts
from deltalake import DeltaTable, Field

from jobs.tables import gold, migrate
from jobs.tables.delta_store import SchemaMismatchError
from jobs.tables.spec import SCHEMA_VERSION_PROPERTY

NEW = dataclasses.replace(gold.FINDINGS, version=2)
OLD = dataclasses.replace(gold.FINDINGS, version=1,
                          columns=tuple(c for c in gold.FINDINGS.columns if c.name != "remediation"))


def rows(spark, spec, ids, run_id):
    values = {"check_id": "ORPHAN_REPLICA", "severity": "warning", "status": "open", "bytes": 10,
              "message": "m", "first_seen": ts(2026, 11, 27), "last_seen": ts(2026, 11, 27), "run_id": run_id,
              "remediation": "rm -r the dir"}
    schema = spec.spark_schema()
    data = [tuple(fid if f.name == "finding_id" else values.get(f.name) for f in schema.fields) for fid in ids]
    return spark.createDataFrame(data, schema)


def versions(store):
    return {name: store.version(name) for name in store.tables if store.exists(name)}


@pytest.mark.spark
def test_a_newer_release_adds_its_nullable_column_and_records_the_version(spark, tmp_path):
    old = make_store(spark, tmp_path, specs=(OLD,))
    old.append("gold_findings", rows(spark, OLD, ["f1", "f2"], "r1"), run_id="r1")
    assert DeltaTable(old.location("gold_findings")).metadata().configuration[SCHEMA_VERSION_PROPERTY] == "1"

    new = make_store(spark, tmp_path, specs=(NEW,))
    assert new.prepare_tables() == {"gold_findings": ["remediation"]}
    table = DeltaTable(new.location("gold_findings"))
    assert table.metadata().configuration[SCHEMA_VERSION_PROPERTY] == "2"
    assert "remediation" in [f.name for f in table.schema().fields]
    assert table.history(2)[-1]["operation"] == "ADD COLUMN"
    assert {r["finding_id"]: r["remediation"] for r in new.read("gold_findings").collect()} == \
        {"f1": None, "f2": None}  # written before the column existed: null
    new.merge("gold_findings", rows(spark, NEW, ["f2", "f3"], "r2")).when_matched_update_all() \
        .when_not_matched_insert_all().execute()
    assert {r["finding_id"]: r["remediation"] for r in new.read("gold_findings").collect()} == \
        {"f1": None, "f2": "rm -r the dir", "f3": "rm -r the dir"}
    assert new.prepare_tables() == {}  # up to date: nothing more to do


@pytest.mark.spark
def test_a_table_the_job_cannot_fix_stops_before_anything_is_committed(spark, tmp_path):
    store = make_store(spark, tmp_path, specs=(gold.FINDINGS, gold.RUN_SUMMARY))
    store.append("gold_findings", rows(spark, gold.FINDINGS, ["f1"], "r1"), run_id="r1")
    store.create("gold_run_summary")
    DeltaTable(store.location("gold_findings")).alter.add_columns([Field("note", "string", nullable=True)])
    before = versions(store)
    with pytest.raises(SchemaMismatchError) as caught:
        store.prepare_tables()
    first_line = str(caught.value).splitlines()[0]
    assert "gold_findings" in first_line and "unexpected column 'note': found string" in first_line
    assert "kafka-recon migrate --rewrite gold_findings" in first_line
    assert versions(store) == before  # nothing committed, not even the run summary's evolution

    retyped = make_store(spark, tmp_path / "retyped", specs=(dataclasses.replace(gold.FINDINGS, columns=tuple(
        dataclasses.replace(c, type="string") if c.name == "bytes" else c for c in gold.FINDINGS.columns)),))
    retyped.create("gold_findings")
    with pytest.raises(SchemaMismatchError, match=r"column 'bytes': expected long nullable=True, found string"):
        make_store(spark, tmp_path / "retyped", specs=(gold.FINDINGS,)).prepare_tables()


@pytest.mark.spark
def test_migrate_checks_then_rewrites_the_table(spark, tmp_path, capsys):
    store = make_store(spark, tmp_path, specs=(gold.FINDINGS,))
    store.append("gold_findings", rows(spark, gold.FINDINGS, ["f1", "f2"], "r1"), run_id="r1")
    DeltaTable(store.location("gold_findings")).alter.add_columns([Field("note", "string", nullable=True)])
    args = ["--set", f"storage.root={tmp_path}", "--set", "storage.backend=embedded"]
    before = store.version("gold_findings")
    assert migrate.main([*args, "--check"]) == 1
    out = capsys.readouterr().out
    assert "gold_findings: cannot be fixed without a rewrite: unexpected column 'note'" in out
    assert "bronze_ingest_files: absent" in out and store.version("gold_findings") == before
    assert migrate.main([*args, "--rewrite", "gold_findings"]) == 0
    table = DeltaTable(store.location("gold_findings"))
    assert "note" not in [f.name for f in table.schema().fields]
    assert json.loads(table.history(2)[-1]["userMetadata"])["operation"] == "MIGRATE"
    assert sorted(r["finding_id"] for r in store.read("gold_findings").collect()) == ["f1", "f2"]
    assert make_store(spark, tmp_path, specs=(gold.FINDINGS,)).prepare_tables() == {}
