"""Absence-based findings of a node whose input is damaged are undecided, never a problem about Kafka.

A check such as MISSING_REPLICA concludes from something *not found* on a node. When the node's pack was cut
short, its gzip stream broke, or a file of its log dirs could not be read (``jobs/ingest/input_damage.py``),
"not found" may only mean "not read": such findings are kept (their ids stay stable) but at info severity, with
a message that starts "Undecided: input damaged" and a remediation that says to collect the node again. The
checks concerned are the catalogue's ``absence_based`` ones (conf/checks.yaml).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from pyspark.sql import DataFrame

from jobs.ingest.input_damage import damaged_sql

from . import sql_functions as F
from .catalogue import Catalogue
from .sql_functions import sql_text

UNDECIDED_SEVERITY = "info"  # "info at most": an undecided check is never above info


def damaged_nodes_from_bronze(ingest_files: DataFrame, log_dirs: DataFrame) -> List[Dict[str, Any]]:
    """Damaged inputs with the node each belongs to, from bronze alone: a file of a log dir has its log dir's
    broker; a pack's log dirs are named ``<pack>!<log dir>``; a log dir the collector could not list whole
    carries its io_error in bronze_log_dirs. Two small queries (damage is rare)."""
    bad = ingest_files.where(damaged_sql()).select("path", "log_dir", "error_kind").collect()
    unlisted = (log_dirs.where(F.col("broker_id").isNotNull() & F.expr(damaged_sql("'log_dir'", "'quarantined'")))
                .select("log_dir", "broker_id", "error_kind").collect())
    out = [{"file": r["log_dir"], "node": int(r["broker_id"]), "error_kind": r["error_kind"]} for r in unlisted]
    if not bad:
        return out
    dirs = log_dirs.select("log_dir", "broker_id").where(F.col("broker_id").isNotNull()).collect()
    for row in bad:
        owners = {d["broker_id"] for d in dirs if d["log_dir"] == row["log_dir"]
                  or str(d["log_dir"]).startswith(f"{row['path']}!")}
        out += [{"file": row["path"], "node": int(b), "error_kind": row["error_kind"]} for b in sorted(owners)]
    return out


def _by_node(damaged: Sequence[Mapping[str, Any]]) -> Dict[int, str]:
    """node -> "file: kind" of its first damaged input (a node may have several; the gap lists them all)."""
    out: Dict[int, str] = {}
    for item in damaged:
        node = item.get("node")
        if node is not None and int(node) not in out:
            out[int(node)] = f"{item.get('file')}: {item.get('error_kind') or 'damaged'}"
    return out


def mark_undecided(findings: DataFrame, catalogue: Catalogue,
                   damaged: Optional[Sequence[Mapping[str, Any]]]) -> DataFrame:
    """``findings`` with each absence-based finding of a damaged node made undecided (see the module doc)."""
    nodes = _by_node(damaged or ())
    checks = catalogue.absence_based()
    if not nodes or not checks:
        return findings
    which = F.expr("CASE broker_id " + " ".join(f"WHEN {b} THEN {sql_text(text)}" for b, text in nodes.items())
                   + " END")
    hit = F.col("check_id").isin(*checks) & which.isNotNull()
    severity = F.when(hit, F.lit(UNDECIDED_SEVERITY)).otherwise(F.col("severity"))
    message = F.when(hit, F.concat(F.lit("Undecided: input damaged ("), which,
                                   F.lit("), so this is not known to be a problem in Kafka. Read as far as the "
                                         "input goes: "), F.col("message"))).otherwise(F.col("message"))
    remediation = F.when(hit, F.concat(F.lit("Collect broker "), F.col("broker_id").cast("string"),
                                       F.lit(" again (its input "), which,
                                       F.lit(" could not be read whole) and re-run the job; act on this check only "
                                             "if the new capture still shows it.")))\
        .otherwise(F.col("remediation"))
    return findings.withColumns({"severity": severity, "message": message, "remediation": remediation})
