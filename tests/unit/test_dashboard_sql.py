"""Dashboard SQL reads the catalogue's one definition of reclaimable bytes (no second list anywhere).

The queries' numbers are compared with summary.json on a real run in tests/integration/test_databricks.py."""
import re

import pytest

from jobs.config import ConfigError, load_config
from jobs.dashboards import DASHBOARD_QUERIES, tables_used
from jobs.reconcile.catalogue import default_catalogue
from jobs.settings import Settings
from jobs.tables.registry import TABLES


def _in_list(sql: str):
    match = re.search(r"check_id\s+IN\s*\(([^)]*)\)", sql, re.S)
    assert match, "no check_id IN (...) list"
    return re.findall(r"'([A-Z_]+)'", match.group(1))


def test_reclaimable_sql_lists_exactly_the_catalogue_reclaimable_checks():
    sql = DASHBOARD_QUERIES["bytes_reclaimable_by_broker"].read_text()
    assert _in_list(sql) == list(default_catalogue().reclaimable())


def test_report_settings_take_reclaimable_checks_from_the_catalogue():
    reclaimable = default_catalogue().reclaimable()
    assert "STALE_TOPIC_ID" in reclaimable and "MISSING_REPLICA" not in reclaimable  # a missing replica frees nothing
    assert Settings.shipped().report.reclaimable_checks == reclaimable
    assert Settings.from_config(load_config(env={})).report.reclaimable_checks == reclaimable


def test_a_second_reclaimable_list_in_configuration_is_rejected():
    with pytest.raises(ConfigError, match="report.reclaimable_checks"):
        load_config(env={}, overrides=["report.reclaimable_checks=[MISSING_REPLICA]"])


def test_queries_read_only_known_tables_and_group_by_cluster():
    for name, path in DASHBOARD_QUERIES.items():
        sql = path.read_text()
        assert tables_used(sql) <= set(TABLES), name
        if name != "data_quality_results":  # dq results are per run, runs are per cluster
            assert "cluster_id" in sql, name


def test_family_sql_is_the_catalogue_families():
    """open_findings_by_family.sql maps every check id to its catalogue family and nothing else (regenerate it with
    `python -m jobs.dashboards` after editing conf/checks.yaml)."""
    from jobs.dashboards import family_query
    from jobs.reconcile.catalogue import CHECK_IDS

    catalogue = default_catalogue()
    sql = DASHBOARD_QUERIES["open_findings_by_family"].read_text()
    assert sql == family_query([catalogue[c] for c in CHECK_IDS])
    mapped = {}
    for ids, family in re.findall(r"WHEN check_id IN \(([^)]*)\) THEN '([a-z_0-9]+)'", sql):
        for check_id in re.findall(r"'([A-Z_]+)'", ids):
            mapped[check_id] = family
    assert mapped == {c: catalogue[c].family for c in CHECK_IDS}
