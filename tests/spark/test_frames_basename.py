"""frames.basename: the last component of a log dir path or URI, as the regular expression it replaced gave it."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as PF

from jobs.reconcile.frames import basename

pytestmark = pytest.mark.spark

PATHS = ["/var/lib/kafka/data-1", "/var/lib/kafka/data-1/", "/var/lib/kafka/data-1//", "data", "", "/", "//",
         "C:\\kafka\\logs", "C:\\kafka\\logs\\", "mixed/sep\\last", "s3://bucket/captures/kafka-logs",
         "s3://bucket", "abfss://c@acct.dfs.core.windows.net/x y/ünï", "/a/b/../c", "/trailing\\/", None]


def test_basename_gives_what_the_old_regular_expression_gave(spark):
    df = spark.createDataFrame([(p,) for p in PATHS], "p string")
    rows = df.select("p", basename(PF.col("p")).alias("new"),
                     PF.regexp_extract("p", r"([^/\\]+)[/\\]*$", 1).alias("old")).collect()
    assert [(r["p"], r["new"]) for r in rows] == [(r["p"], r["old"]) for r in rows]
    assert dict((r["p"], r["new"]) for r in rows)["/var/lib/kafka/data-1//"] == "data-1"
