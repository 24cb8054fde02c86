"""The check catalogue (conf/checks.yaml): exactly the contract's ids, valid severities and templates, and
docs/checks.md generated from it. No Spark needed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobs.config import ConfigError, load_config
from jobs.reconcile.catalogue import CHECK_IDS, REPLICA_PRECEDENCE, CatalogueError, default_catalogue
from jobs.reconcile.docs import render
from jobs.reconcile.expected import compare
from jobs.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDERS = {"broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition", "bytes", "bytes_h",
                "since", "cluster_id"}


def test_catalogue_defines_exactly_the_contract_checks():
    contract = (ROOT / "docs" / "CONTRACTS.md").read_text()
    for check_id in CHECK_IDS:
        assert check_id in contract
    cat = default_catalogue()
    assert list(cat.checks) == list(CHECK_IDS)
    assert cat.thresholds.file_delete_delay_ms == 60000 and cat.thresholds.delete_limit_ms > 60000
    assert cat["PARTITION_COUNT_CHANGED"].severity == "info"
    assert set(REPLICA_PRECEDENCE) <= set(CHECK_IDS)


def test_templates_use_known_placeholders_only():
    cat = default_catalogue()
    for spec in cat.checks.values():
        for text in (spec.message, spec.remediation):
            for name in re.findall(r"\{([a-z_.]+)\}", text):
                assert name in PLACEHOLDERS or name.startswith("details."), (spec.check_id, name)


def test_overrides_and_bad_entries():
    cfg = load_config(env={}, overrides=["checks.ORPHAN_REPLICA.severity=critical", "reconcile.delete_grace_ms=0"])
    cat = Settings.from_config(cfg).catalogue
    assert cat["ORPHAN_REPLICA"].severity == "critical" and cat.thresholds.delete_limit_ms == 60000
    bad = load_config(env={})
    bad["checks"]["STALE_TOPIC_ID"]["severity"] = "fatal"
    with pytest.raises(CatalogueError, match="STALE_TOPIC_ID.severity"):
        Settings.from_config(bad)
    del bad["checks"]["STALE_TOPIC_ID"]
    with pytest.raises(ConfigError, match="missing checks \\['STALE_TOPIC_ID'\\]"):  # a configuration error: exit 2
        Settings.from_config(bad)


def test_docs_checks_md_is_generated_from_the_catalogue():
    text = (ROOT / "docs" / "checks.md").read_text()
    assert text == render(default_catalogue()), \
        "docs/checks.md is stale: run `python -m jobs.reconcile.docs > docs/checks.md`"
    for check_id in CHECK_IDS:
        assert f"### `{check_id}`" in text


def test_expected_findings_matching_is_a_bijection():
    expected = [{"check_id": "STALE_TOPIC_ID", "broker_id": 3},
                {"check_id": "STALE_TOPIC_ID", "broker_id": 3, "dir_name": "clicks-0"}]
    actual = [{"check_id": "STALE_TOPIC_ID", "broker_id": 3, "dir_name": "clicks-0"},
              {"check_id": "STALE_TOPIC_ID", "broker_id": 3, "dir_name": "clicks-1"}]
    result = compare(expected, actual)
    assert result.ok and len(result.matched) == 2   # the general expectation takes clicks-1
    result = compare(expected[:1], actual)
    assert not result.ok and len(result.unexpected) == 1
    assert result.per_check()["STALE_TOPIC_ID"] == {"precision": 0.5, "recall": 1.0}


def test_reconcile_modules_build_columns_as_sql_text():
    """Every reconcile module takes its functions from jobs.reconcile.sql_functions, whose Columns cost one JVM
    call when a DataFrame reads them instead of about four per function (docs/benchmarks.md, session 13); a
    check that imports PySpark's functions directly would quietly bring the per-call cost back."""
    direct = [p.name for p in sorted((ROOT / "jobs" / "reconcile").glob("*.py"))
              if p.name != "sql_functions.py" and "from pyspark.sql import functions" in p.read_text()]
    assert direct == []
