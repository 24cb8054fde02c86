"""Catalogue templates become finding texts through one SQL CASE: quotes, backslashes and placeholders
survive exactly, unknown values print as '?', and every check's message renders (a catalogue edit that
breaks the SQL fails here, not in a nightly run)."""
from __future__ import annotations

import pytest

from jobs.reconcile.catalogue import default_catalogue
from jobs.reconcile.findings import _per_check, _texts, render

pytestmark = pytest.mark.spark

ROW = "check_id string, broker_id int, log_dir string, dir_name string, topic_name string, topic_id string, " \
      "partition int, bytes long, since timestamp, cluster_id string, details map<string,string>"


def test_a_template_with_quotes_backslashes_and_placeholders_renders_exactly(spark):
    from pyspark.sql import functions as F

    df = spark.createDataFrame([("X", 7, None, "t-0", "t", None, 0, 1536, None, None, {"where": "a'b\\c"})], ROW)
    template = "It's broker {broker_id}'s dir {dir_name} ({bytes_h}) in {log_dir}, at {details.where}; \\n {since}"
    (row,) = _texts(df).select(F.expr(render(template)).alias("text")).collect()
    assert row["text"] == "It's broker 7's dir t-0 (1.5 KiB) in ?, at a'b\\c; \\n an unknown time"


def test_every_checks_message_and_remediation_render(spark):

    catalogue = default_catalogue()
    rows = [(check_id, 1, "d", "t-0", "t", "AAAAAAAAAAAAAAAAAAAAAQ", 0, 10, None, "c", {}) for check_id in catalogue.checks]
    df = _texts(spark.createDataFrame(rows, ROW))
    out = {r["check_id"]: r for r in df.select("check_id", _per_check(catalogue, "message").alias("message"),
                                               _per_check(catalogue, "remediation").alias("fix")).collect()}
    assert set(out) == set(catalogue.checks)
    for check_id, r in out.items():
        assert r["message"] and r["fix"] and "{" not in r["message"] + r["fix"], check_id
