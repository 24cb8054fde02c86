"""Which quarantined inputs are damage to the capture itself (a file the job could not read whole), as
opposed to a Kafka file Kafka itself would find corrupt (a bad ``partition.metadata`` is a finding about
Kafka; a pack cut short is not).

Damage to the capture makes the run incomplete (``inputs.gaps`` reason ``damaged_input``,
:func:`jobs.run_outcome.gaps_from_damaged_inputs`) and makes reconcile's absence-based checks undecided for
the damaged node (:mod:`jobs.reconcile.undecided`): what the job did not read is not missing from the broker.
One predicate, in Python (the executors tag the rows) and as SQL (reconcile reads bronze_ingest_files).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

FACT = "damaged_input"  # the _ingest_facts row a damaged input leaves, so the driver knows without a Spark job

# a pack (udfs/pack_reader.py PACK_ERROR_KINDS) whose entries were not all read: cut short, gzip errors, not a
# pack at all, lines lost or unreadable. Refused hostile members (unsafe_path, unsafe_member) and lines after
# the trailer (garbage_after_frame) leave every real entry read: quarantined, but no entry is missing.
PACK_DAMAGE_KINDS = ("truncated_pack", "corrupt_pack", "count_mismatch", "too_many_errors", "bad_header",
                     "bad_version", "bad_json", "bad_entry", "io_error", "decompression_bomb")
# an entry the walk or the reader could not read at all (permissions, I/O errors, a loose file's gzip cut
# short). Entries that vanished or changed while a running broker was captured are Kafka's own churn
# (retention, roll), reported as the file's quarantine only.
CHURN_PREFIXES = ("vanished", "changed_during_read")


def is_damaged(row: Mapping[str, Any]) -> bool:
    """A bronze_ingest_files row (as the executors build it) for an input the job could not read whole."""
    if row.get("status") != "quarantined":
        return False
    kind = row.get("error_kind")
    if row.get("file_kind") == "packed_snapshot":
        return kind in PACK_DAMAGE_KINDS
    return kind == "io_error" and not str(row.get("error_message") or "").startswith(CHURN_PREFIXES)


def damaged_sql(file_kind: str = "file_kind", status: str = "status") -> str:
    """:func:`is_damaged` as a SQL condition over bronze_ingest_files' columns; for bronze_log_dirs (a log dir
    the collector could not list whole): ``damaged_sql("'log_dir'", "'quarantined'")``."""
    packs = ", ".join(f"'{k}'" for k in PACK_DAMAGE_KINDS)
    churn = " AND ".join(f"NOT startswith(coalesce(error_message, ''), '{p}')" for p in CHURN_PREFIXES)
    return (f"{status} = 'quarantined' AND (({file_kind} = 'packed_snapshot' AND error_kind IN ({packs})) OR "
            f"(coalesce({file_kind}, '') <> 'packed_snapshot' AND error_kind = 'io_error' AND {churn}))")


def damage_fact(row: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The _ingest_facts row for a damaged input's bronze_ingest_files row, else None."""
    if not is_damaged(row):
        return None
    return {"fact": FACT, "source": row.get("path"), "broker_id": row.get("broker_id"),
            "text_value": row.get("error_kind"), "long_value": row.get("rows_produced"),
            "detail": "|".join(str(row.get(k) if row.get(k) is not None else "")
                               for k in ("file_kind", "bytes", "error_message"))}


def from_fact(fact: Mapping[str, Any]) -> Dict[str, Any]:
    """A damaged input as the driver hands it on (:func:`jobs.run_outcome.gaps_from_damaged_inputs`)."""
    file_kind, size, message = (str(fact.get("detail") or "").split("|", 2) + ["", "", ""])[:3]
    return {"file": fact.get("source"), "node": fact.get("broker_id"), "file_kind": file_kind or None,
            "error_kind": fact.get("text_value"), "error": message or None,
            "rows_read": fact.get("long_value"), "bytes": int(size) if size.isdigit() else None}
