"""Findings assembly: union every check's rows, keep one finding per replica dir (precedence), then add
severity, message and remediation (from the catalogue's templates), the stable finding_id and run columns.

finding_id = sha256(check_id | cluster_id | broker_id | log_dir | dir_name | topic_id | topic_name |
partition | key_extra) with nulls as empty strings (docs/CONTRACTS.md), so it is stable across runs.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Iterable, Optional

from pyspark.sql import Column, DataFrame, Window

from jobs.tables.gold import FINDINGS

from . import sql_functions as F
from .catalogue import REPLICA_PRECEDENCE, Catalogue
from .frames import conform, human_bytes, iso, union_all
from .sql_functions import sql_text

_PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[a-z_]+)?)\}")
KEY_COLUMNS = ("cluster_id", "broker_id", "log_dir", "dir_name", "topic_id", "topic_name", "partition", "key_extra")


def _placeholder(name: str) -> str:
    """SQL for one ``{placeholder}``; ``_bytes_h`` and ``_since_text`` are added by :func:`_texts`."""
    if name.startswith("details."):
        return f"try_element_at(details, {sql_text(name.split('.', 1)[1])})"
    if name == "bytes_h":
        return "_bytes_h"
    if name == "since":
        return "_since_text"
    if name in ("broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition", "bytes", "cluster_id"):
        return f"CAST({name} AS STRING)"
    raise ValueError(f"unknown placeholder {{{name}}} in a conf/checks.yaml template")


def render(template: str) -> str:
    """A template with ``{placeholders}`` as a SQL string expression (unknown values print as '?')."""
    pieces = []
    pos = 0
    for m in _PLACEHOLDER.finditer(template):
        if m.start() > pos:
            pieces.append(sql_text(template[pos:m.start()]))
        pieces.append(f"coalesce({_placeholder(m.group(1))}, '?')")
        pos = m.end()
    if pos < len(template):
        pieces.append(sql_text(template[pos:]))
    return f"concat({', '.join(pieces)})" if pieces else "''"


def _per_check(catalogue: Catalogue, attr: str) -> Column:
    """One CASE over check_id for a text attribute: a single SQL expression, so building the plan costs one
    JVM call instead of hundreds of Column calls."""
    cases = " ".join(f"WHEN {sql_text(check_id)} THEN {render(getattr(spec, attr))}"
                     for check_id, spec in catalogue.checks.items())
    return F.expr(f"CASE check_id {cases} END")


def _texts(df: DataFrame) -> DataFrame:
    """The two placeholders that need Column helpers, computed once for every template."""
    return df.withColumns({"_bytes_h": human_bytes(F.col("bytes")),
                           "_since_text": F.coalesce(iso(F.col("since")), F.lit("an unknown time"))})


def apply_precedence(findings: DataFrame) -> DataFrame:
    """One finding per replica dir: the check earliest in REPLICA_PRECEDENCE wins."""
    rank = F.lit(len(REPLICA_PRECEDENCE))
    for i, check_id in enumerate(reversed(REPLICA_PRECEDENCE)):
        rank = F.when(F.col("check_id") == check_id, F.lit(len(REPLICA_PRECEDENCE) - 1 - i)).otherwise(rank)
    w = Window.partitionBy("replica_key").orderBy("_rank", "check_id")
    ranked = findings.withColumn("_rank", rank).withColumn("_rn", F.row_number().over(w))
    return ranked.filter(F.col("replica_key").isNull() | (F.col("_rn") == 1)).drop("_rank", "_rn")


def finding_id(cols: Iterable[str] = KEY_COLUMNS) -> Column:
    parts = [F.col("check_id")] + [F.coalesce(F.col(c).cast("string"), F.lit("")) for c in cols]
    return F.sha2(F.concat_ws("|", *parts), 256)


def assemble(parts: Iterable[DataFrame], catalogue: Catalogue, brokers: DataFrame, cluster_id: Optional[str],
             capture_id: str, run_id: str, capture_time: datetime) -> DataFrame:
    """The gold_findings rows of one run (status open, first_seen = last_seen = this capture)."""
    kept = apply_precedence(union_all(list(parts))).withColumn("cluster_id", F.lit(cluster_id).cast("string"))
    states = brokers.select(F.col("broker_id").alias("_b"), F.col("state").alias("broker_state"),
                            F.col("captured").alias("_captured"))
    kept = kept.join(states, F.col("broker_id") == F.col("_b"), "left").drop("_b")
    severity = F.expr("CASE check_id " + " ".join(f"WHEN {sql_text(c)} THEN {sql_text(sev)}"
                                                  for c, sev in catalogue.severities().items()) + " END")
    state_text = (F.when(F.col("broker_state") == "fenced", F.lit("fenced"))
                  .when(F.col("broker_state") == "unregistered", F.lit("unregistered (decommissioned)"))
                  .otherwise(F.lit("absent (not registered)")))
    note = (F.when(F.col("broker_state").isin("fenced", "absent", "unregistered"),
                   F.concat(F.lit(" Broker "), F.col("broker_id").cast("string"), F.lit(" is "), state_text,
                            F.lit(" at capture time.")))
            .otherwise(F.lit("")))
    ts = F.lit(capture_time).cast("timestamp")
    out = _texts(kept).withColumns({
        "severity": F.coalesce(F.col("severity_override"), severity),
        "message": F.concat(_per_check(catalogue, "message"), note),
        "remediation": _per_check(catalogue, "remediation"),
        "finding_id": finding_id(),
        "first_seen_capture": F.lit(capture_id), "first_seen": ts,
        "last_seen_capture": F.lit(capture_id), "last_seen": ts,
        "status": F.lit("open"), "resolved_at": F.lit(None).cast("timestamp"),
        "run_id": F.lit(run_id)})
    # two rows with the same natural keys (e.g. one pid seen twice) are one finding
    one = Window.partitionBy("finding_id").orderBy(F.col("bytes").desc_nulls_last())
    out = out.withColumn("_rn", F.row_number().over(one)).filter("_rn = 1").drop("_rn")
    return conform(out, FINDINGS)
