"""One authoritative metadata sequence out of every copy of the metadata log.

Every KRaft broker (and every dump-log text folder) holds a copy of ``__cluster_metadata-0``. Raft's rule
decides which entry is right where copies disagree: at each offset the entry of the highest leader epoch
wins (a newer leader overwrote the older tail), then the one most copies hold. A copy is *consistent* when
it has no hole in its offsets and agrees with the winner at every offset it holds; the authoritative copy
is the consistent copy reaching furthest (ties: more records, newer snapshot, a broker's disk before dump
text, copy id). Each copy then gets where it starts and ends, its first hole, and the first offset where it
differs from the authoritative copy. The authoritative *sequence* is that copy's log records, plus — when
its log does not reach back to offset 0 — the oldest snapshot that its log continues (Kafka's own
"snapshot, then the log after it").

Record-level work stays in Spark (one job: group by offset to find each offset's winner, then by copy);
only one summary row per copy (hundreds) comes back to the driver.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

SOURCE_RANK = {"segment": 0, "dump_log_text": 2}
COPIES_DDL = ("copy_id string, source_broker_id int, snapshot_end_offset long, first_offset long, last_offset long, "
              "records long, is_authoritative boolean, diverges_at_offset long, gap_after_offset long, "
              "sequence_snapshot_end_offset long, source_kind string, log_dir string")


def _offset_flags(batches):
    """Per offset (all copies' entries at it): which copies hold something other than the winning entry."""
    import pyarrow as pa

    for batch in batches:
        out_copy, out_offset, out_bad, out_kind, out_broker = [], [], [], [], []
        for offset, entries in zip(batch.column("offset").to_pylist(), batch.column("e").to_pylist(), strict=True):
            holders: Dict[tuple, set] = {}
            for e in entries:
                if e["known"]:
                    holders.setdefault((e["leader_epoch"], e["record_hash"]), set()).add(e["copy_id"])
            winner = max(holders, key=lambda k: (k[0] if k[0] is not None else -1, len(holders[k]),
                                                 _invert(k[1]))) if holders else None
            bad: Dict[str, bool] = {}
            meta: Dict[str, tuple] = {}
            for e in entries:
                differs = bool(e["known"]) and (e["leader_epoch"], e["record_hash"]) != winner
                bad[e["copy_id"]] = bad.get(e["copy_id"], False) or differs
                meta.setdefault(e["copy_id"], (e["source_kind"], e["source_broker_id"]))
            for copy_id, is_bad in bad.items():
                out_copy.append(copy_id)
                out_offset.append(offset)
                out_bad.append(is_bad)
                out_kind.append(meta[copy_id][0])
                out_broker.append(meta[copy_id][1])
        yield pa.RecordBatch.from_pydict({
            "copy_id": pa.array(out_copy, pa.string()), "offset": pa.array(out_offset, pa.int64()),
            "bad": pa.array(out_bad, pa.bool_()), "snapshot_end_offset": pa.nulls(len(out_copy), pa.int64()),
            "source_kind": pa.array(out_kind, pa.string()), "source_broker_id": pa.array(out_broker, pa.int32())})


def _invert(text: Optional[str]) -> tuple:
    """Sort key that puts the smaller hash first under ``max`` (deterministic ties)."""
    return tuple(-ord(c) for c in (text or ""))


FLAGS_DDL = "copy_id string, offset long, bad boolean, snapshot_end_offset long, source_kind string, source_broker_id int"
SUMMARY_DDL = ("copy_id string, first_offset long, last_offset long, records long, mismatch_at long, "
               "gap_after_offset long, snapshot_end_offset long, snapshot_ends array<long>, record_source_kind string, "
               "record_broker_id int")


def _copy_summary(pdf):
    """One copy's rows (log offsets with their flag, plus snapshot rows) -> its summary row."""
    import pandas as pd

    log = pdf[pdf["offset"].notna()]
    offsets = sorted(set(int(o) for o in log["offset"]))
    gap = next((a for a, b in zip(offsets, offsets[1:], strict=False) if b > a + 1), None)
    bad = log[log["bad"].astype("boolean").fillna(False).astype(bool)]
    ends = sorted(set(int(v) for v in pdf["snapshot_end_offset"].dropna()))
    kinds = sorted(k for k in pdf["source_kind"].dropna().unique())
    brokers = [int(b) for b in pdf["source_broker_id"].dropna()]
    return pd.DataFrame([{
        "copy_id": pdf["copy_id"].iloc[0], "first_offset": offsets[0] if offsets else None,
        "last_offset": offsets[-1] if offsets else None, "records": len(offsets),
        "mismatch_at": int(bad["offset"].min()) if len(bad) else None, "gap_after_offset": gap,
        "snapshot_end_offset": ends[-1] if ends else None, "snapshot_ends": ends,
        "record_source_kind": kinds[0] if kinds else None, "record_broker_id": brokers[0] if brokers else None,
    }]).astype({"first_offset": "Int64", "last_offset": "Int64", "mismatch_at": "Int64", "gap_after_offset": "Int64",
                "snapshot_end_offset": "Int64", "record_broker_id": "Int32"})


def _summaries(records: DataFrame, copy_facts: Sequence[tuple], has_records: bool = True) -> List[dict]:
    """One Spark job: group by offset to find each offset's winner, then by copy to summarise each copy."""
    by_id: Dict[str, dict] = {}
    if has_records:
        log = records.where(F.col("section") == "log")
        entry = F.struct("copy_id", "leader_epoch", "record_hash", "source_kind", "source_broker_id",
                         (~(F.col("is_control") & F.col("record_type").isNull())).alias("known"))
        flags = log.groupBy("offset").agg(F.collect_list(entry).alias("e")).mapInArrow(_offset_flags, FLAGS_DDL)
        snapshots = records.where(F.col("section") == "snapshot").select(
            "copy_id", F.lit(None).cast("long").alias("offset"), F.lit(None).cast("boolean").alias("bad"),
            "snapshot_end_offset", "source_kind", "source_broker_id")
        summary = flags.unionByName(snapshots).groupBy("copy_id").applyInPandas(_copy_summary, SUMMARY_DDL)
        by_id = {r["copy_id"]: r.asDict() for r in summary.collect()}
    for copy_id, broker_id, log_dir in copy_facts:
        row = by_id.setdefault(copy_id, {"copy_id": copy_id, "records": 0, "snapshot_ends": []})
        row["log_dir"] = log_dir
        row["fact_broker_id"] = broker_id
    out = []
    for d in by_id.values():
        for key in ("first_offset", "last_offset", "mismatch_at", "gap_after_offset", "snapshot_end_offset",
                    "record_source_kind", "record_broker_id", "log_dir", "fact_broker_id"):
            d.setdefault(key, None)
        d["source_broker_id"] = d["fact_broker_id"] if d["fact_broker_id"] is not None else d["record_broker_id"]
        d["source_kind"] = "segment" if d["log_dir"] else (d["record_source_kind"] or "segment")
        d["records"] = int(d.get("records") or 0)
        d["snapshot_ends"] = list(d.get("snapshot_ends") or [])
        out.append(d)
    return out


def _pick_authoritative(copies: List[dict]) -> Optional[dict]:
    def key(c: dict):
        consistent = c["last_offset"] is not None and c["gap_after_offset"] is None and c["mismatch_at"] is None
        return (not consistent, -(c["last_offset"] if c["last_offset"] is not None else -1), -c["records"],
                -(c["snapshot_end_offset"] if c["snapshot_end_offset"] is not None else -1),
                SOURCE_RANK.get(c["source_kind"], 9), c["copy_id"])
    return min(copies, key=key) if copies else None


def _sequence_snapshot(auth: dict, snapshot_ends: List[int]) -> Optional[int]:
    """End offset of the snapshot the authoritative sequence starts from (None: the log starts at 0)."""
    first = auth["first_offset"]
    if first == 0 or not snapshot_ends:
        return None
    if first is None:
        return max(snapshot_ends)
    continued = [s for s in snapshot_ends if s >= first]
    return min(continued) if continued else max(snapshot_ends)


def compute_copies(records: DataFrame, copy_facts: Iterable[tuple], has_records: bool = True
                   ) -> Tuple[DataFrame, DataFrame]:
    """(copies rows of bronze_metadata_copies without run columns, records with ``in_authoritative_sequence``).

    ``diverges_at_offset`` is the first offset where a copy holds something other than the authoritative
    entry at that offset (highest epoch, then most copies): exactly where it differs from the authoritative
    copy whenever that copy is consistent, which is the normal case.

    :param records: bronze_metadata_records payload rows (persisted by the caller: it is scanned twice).
    :param copy_facts: ``(copy_id, source_broker_id, log_dir)`` per copy known to exist even without records
        (a broker's ``__cluster_metadata-0``); a small driver-side list.
    :param has_records: False when the caller knows there are no records: no Spark job is run.
    """
    spark = records.sparkSession
    copies = _summaries(records, [tuple(f) for f in copy_facts], has_records)
    auth = _pick_authoritative(copies)
    sequence_snapshot = _sequence_snapshot(auth, auth["snapshot_ends"]) if auth is not None else None
    rows = []
    for c in sorted(copies, key=lambda c: c["copy_id"]):
        is_auth = auth is not None and c["copy_id"] == auth["copy_id"]
        rows.append((c["copy_id"], c["source_broker_id"], c["snapshot_end_offset"], c["first_offset"], c["last_offset"],
                     c["records"], is_auth, c["mismatch_at"], c["gap_after_offset"],
                     sequence_snapshot if is_auth else None, c["source_kind"], c["log_dir"]))
    copies_df = spark.createDataFrame(rows, COPIES_DDL)
    return copies_df, _flag_sequence(records, auth["copy_id"] if auth else None, sequence_snapshot)


def _flag_sequence(records: DataFrame, auth_id: Optional[str], sequence_snapshot: Optional[int]) -> DataFrame:
    columns = records.columns
    if auth_id is None:
        return records.withColumn("in_authoritative_sequence", F.lit(False)).select(columns)
    others = records.where(F.col("copy_id") != auth_id).withColumn("in_authoritative_sequence", F.lit(False))
    in_log = (F.col("section") == "log") & ((F.lit(sequence_snapshot).isNull()) | (F.col("offset") >= F.lit(sequence_snapshot)))
    in_snap = (F.col("section") == "snapshot") & (F.col("snapshot_end_offset") == F.lit(sequence_snapshot))
    once = Window.partitionBy("section", "snapshot_end_offset", "offset").orderBy("source_file")
    auth = (records.where(F.col("copy_id") == auth_id)
            .withColumn("in_authoritative_sequence",
                        F.coalesce((in_log | in_snap) & (F.row_number().over(once) == 1), F.lit(False))))
    return others.select(columns).unionByName(auth.select(columns))
