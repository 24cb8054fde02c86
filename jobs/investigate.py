"""Investigation views for notebooks and SREs: everything known about one topic or one broker.

Each function returns named Spark DataFrames read from the Delta tables (latest capture unless one is
given), so a notebook only displays them and the same code is tested locally.
"""
from __future__ import annotations

from typing import Dict, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def _latest_capture(store, table: str = "silver_replicas") -> Optional[str]:
    """The capture_id of the newest capture in ``table`` (a one-row aggregate)."""
    df = store.read(table)
    time_col = "capture_time" if "capture_time" in df.columns else None
    if time_col:
        row = df.orderBy(F.col(time_col).desc()).select("capture_id").first()
    else:
        runs = store.read("gold_run_summary").orderBy(F.col("capture_time").desc()).select("capture_id").first()
        row = runs
    return row["capture_id"] if row else None


def _topic_ids(store, topic: str, capture_id: str) -> DataFrame:
    inc = store.read("silver_topic_incarnations").where(F.col("capture_id") == capture_id)
    return inc.where((F.col("topic_name") == topic) | (F.col("topic_id") == topic)).select("topic_id").distinct()


def topic_view(store, topic: str, capture_id: Optional[str] = None) -> Dict[str, DataFrame]:
    """Incarnations, assignments, every replica dir on every broker, findings and the metadata records of a
    topic given by name or by topic id (all incarnations of that name)."""
    capture_id = capture_id or _latest_capture(store)
    ids = _topic_ids(store, topic, capture_id)

    def by_capture(name: str) -> DataFrame:
        return store.read(name).where(F.col("capture_id") == capture_id)

    all_replicas = by_capture("silver_replicas")
    replicas = all_replicas.join(ids, "topic_id", "left_semi").unionByName(
        all_replicas.where(F.col("topic_from_name") == topic)).distinct()
    all_findings = store.read("gold_findings")
    findings = all_findings.join(ids, "topic_id", "left_semi").unionByName(
        all_findings.where((F.col("topic_name") == topic) | (F.col("topic_id") == topic))).distinct()
    return {
        "incarnations": by_capture("silver_topic_incarnations").join(ids, "topic_id").orderBy("created_offset"),
        "assignments": by_capture("silver_partition_assignments").join(ids, "topic_id").orderBy("partition"),
        "replica_dirs": replicas.orderBy("broker_id", "log_dir", "dir_name"),
        "findings": findings.orderBy(F.col("status"), F.col("severity"), F.col("check_id")),
        "metadata_history": by_capture("bronze_metadata_records").join(ids, "topic_id")
        .select("offset", "append_time", "record_type", "version", "partition_id", "replicas", "isr", "leader",
                "payload_json", "copy_id")
        .orderBy("offset"),
    }


def broker_view(store, broker_id: int, capture_id: Optional[str] = None) -> Dict[str, DataFrame]:
    """A broker's registration and state, its log dirs, every replica dir it holds and its open findings."""
    capture_id = capture_id or _latest_capture(store)

    def by_capture(name: str) -> DataFrame:
        return store.read(name).where((F.col("capture_id") == capture_id) & (F.col("broker_id") == broker_id))

    return {
        "broker": by_capture("silver_brokers"),
        "log_dirs": by_capture("bronze_log_dirs"),
        "replica_dirs": by_capture("silver_replicas").orderBy("log_dir", "dir_name"),
        "findings": store.read("gold_findings").where((F.col("broker_id") == broker_id) & (F.col("status") == "open"))
        .orderBy("severity", "check_id"),
        "bytes_by_check": store.read("gold_findings")
        .where((F.col("broker_id") == broker_id) & (F.col("status") == "open"))
        .groupBy("check_id").agg(F.count("*").alias("findings"), F.sum("bytes").alias("bytes")),
    }
