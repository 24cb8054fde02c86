"""Which copy of the metadata log is authoritative, decided from batch summaries alone.

Every KRaft broker (and every dump-log text folder) holds a copy of ``__cluster_metadata-0``. Raft followers
append the leader's batches byte for byte, so a batch is identified across copies by (base offset, last
offset, leader epoch, CRC) and copies are compared without decoding a record (100 brokers x 1M records would
otherwise mean 100M decoded rows). Raft's rule decides which batch is right where copies disagree: at each
base offset the batch of the highest leader epoch wins (a newer leader overwrote the older tail), then the
one most copies hold. A copy is *consistent* when it has no hole in its offsets, no corrupt batch and agrees
with the winner at every base offset it holds; the authoritative copy is the consistent copy reaching
furthest (ties: more records, newer snapshot, a broker's disk before dump text, copy id). Each copy then gets
where it starts and ends, its first hole, and the first offset where it differs from the winners. The
authoritative *sequence* is that copy's log, plus, when its log does not reach back to offset 0, the oldest
snapshot its log continues (Kafka's own "snapshot, then the log after it"); only those files are decoded.

Work stays in Spark (group by base offset, then by copy); one summary row per copy comes back to the driver.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from jobs.local_frames import local_frame

SOURCE_RANK = {"segment": 0, "dump_log_text": 2}
COPIES_DDL = ("copy_id string, source_broker_id int, snapshot_end_offset long, first_offset long, last_offset long, "
              "records long, is_authoritative boolean, diverges_at_offset long, gap_after_offset long, "
              "sequence_snapshot_end_offset long, source_kind string, log_dir string")
FLAGS_DDL = ("copy_id string, base_offset long, last_offset long, bad boolean, snapshot_end_offset long, "
             "source_kind string, source_broker_id int")
SUMMARY_DDL = ("copy_id string, first_offset long, last_offset long, records long, mismatch_at long, "
               "gap_after_offset long, snapshot_end_offset long, snapshot_ends array<long>, record_source_kind string, "
               "record_broker_id int")


@dataclass(frozen=True)
class Authoritative:
    """The copy whose files the second pass decodes, and the snapshot its sequence starts from (None: log from 0)."""

    copy_id: str
    sequence_snapshot: Optional[int]


def _batch_flags(batches):
    """Per base offset (all copies' batches starting there): which copies hold something other than the winner."""
    import pyarrow as pa

    for batch in batches:
        out: Dict[str, list] = {k: [] for k in ("copy_id", "base_offset", "last_offset", "bad", "source_kind",
                                                 "source_broker_id")}
        for base, entries in zip(batch.column("base_offset").to_pylist(), batch.column("e").to_pylist(), strict=True):
            holders: Dict[tuple, set] = {}
            for e in entries:
                if e["crc"] is not None and e["crc_valid"] is not False:
                    holders.setdefault((e["leader_epoch"], e["last_offset"], e["crc"]), set()).add(e["copy_id"])
            winner = max(holders, key=lambda k: (k[0] if k[0] is not None else -1, len(holders[k]),
                                                 -(k[1] or 0), -k[2])) if holders else None
            seen: Dict[str, int] = {}
            for e in entries:
                known = e["crc"] is not None
                differs = e["crc_valid"] is False or (known and (e["leader_epoch"], e["last_offset"], e["crc"]) != winner)
                if e["copy_id"] in seen:  # the same batch in two files of one copy: flag the offset once
                    i = seen[e["copy_id"]]
                    out["bad"][i] = out["bad"][i] or differs
                    continue
                seen[e["copy_id"]] = len(out["copy_id"])
                for key, value in (("copy_id", e["copy_id"]), ("base_offset", base), ("last_offset", e["last_offset"]),
                                   ("bad", differs), ("source_kind", e["source_kind"]),
                                   ("source_broker_id", e["source_broker_id"])):
                    out[key].append(value)
        n = len(out["copy_id"])
        yield pa.RecordBatch.from_pydict({
            "copy_id": pa.array(out["copy_id"], pa.string()), "base_offset": pa.array(out["base_offset"], pa.int64()),
            "last_offset": pa.array(out["last_offset"], pa.int64()), "bad": pa.array(out["bad"], pa.bool_()),
            "snapshot_end_offset": pa.nulls(n, pa.int64()), "source_kind": pa.array(out["source_kind"], pa.string()),
            "source_broker_id": pa.array(out["source_broker_id"], pa.int32())})


def _copy_summary(table):
    """One copy's rows (its log batches with their flag, plus snapshot rows) -> its summary row.

    Arrow in and out (``applyInArrow``): offsets stay 64-bit integers, where the pandas frame of
    ``applyInPandas`` held a column with nulls as floats (exact only below 2**53). Same speed (the job's one task
    is ~0.25-0.5 s either way, mostly two Python evaluations' fixed cost: docs/benchmarks.md, session 38)."""
    import pyarrow as pa

    cols = table.to_pydict()
    log = sorted(((base, last if last is not None else base, bad is True)
                  for base, last, bad in zip(cols["base_offset"], cols["last_offset"], cols["bad"], strict=True)
                  if base is not None), key=lambda span: span[0])
    gap, reach, records = None, None, 0
    for base, last, _bad in log:
        if reach is not None and base > reach + 1 and gap is None:
            gap = reach
        records += max(0, last - max(base, (reach + 1) if reach is not None else base) + 1)
        reach = last if reach is None else max(reach, last)
    bad = [base for base, _last, flagged in log if flagged]
    ends = sorted({v for v in cols["snapshot_end_offset"] if v is not None})
    kinds = sorted({k for k in cols["source_kind"] if k is not None})
    brokers = [b for b in cols["source_broker_id"] if b is not None]
    return pa.Table.from_pylist([{
        "copy_id": cols["copy_id"][0], "first_offset": log[0][0] if log else None, "last_offset": reach,
        "records": records, "mismatch_at": min(bad) if bad else None, "gap_after_offset": gap,
        "snapshot_end_offset": ends[-1] if ends else None, "snapshot_ends": ends,
        "record_source_kind": kinds[0] if kinds else None, "record_broker_id": brokers[0] if brokers else None,
    }], schema=_summary_schema())


def _summary_schema():
    """:data:`SUMMARY_DDL` as an Arrow schema (what ``applyInArrow`` expects back), read off the DDL text."""
    from jobs.tables.spec import ddl_arrow_schema

    return ddl_arrow_schema(SUMMARY_DDL)


def _summaries(batches: DataFrame, copy_facts: Sequence[tuple], has_batches: bool = True) -> List[dict]:
    """One Spark job: group log batches by base offset to find each winner, then by copy to summarise it."""
    by_id: Dict[str, dict] = {}
    if has_batches:
        log = batches.where((F.col("section") == "log") & F.col("base_offset").isNotNull())
        entry = F.struct("copy_id", "last_offset", "leader_epoch", "crc", "crc_valid", "source_kind",
                         "source_broker_id")
        flags = log.groupBy("base_offset").agg(F.collect_list(entry).alias("e")).mapInArrow(_batch_flags, FLAGS_DDL)
        snapshots = batches.where(F.col("section") == "snapshot").select(
            "copy_id", F.lit(None).cast("long").alias("base_offset"), F.lit(None).cast("long").alias("last_offset"),
            F.lit(None).cast("boolean").alias("bad"), "snapshot_end_offset", "source_kind", "source_broker_id")
        summary = flags.unionByName(snapshots).groupBy("copy_id").applyInArrow(_copy_summary, SUMMARY_DDL)
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
    candidates = [c for c in copies if c["last_offset"] is not None or c["snapshot_ends"]]
    return min(candidates, key=key) if candidates else None


def _sequence_snapshot(auth: dict, snapshot_ends: List[int]) -> Optional[int]:
    """End offset of the snapshot the authoritative sequence starts from (None: the log starts at 0)."""
    first = auth["first_offset"]
    if first == 0 or not snapshot_ends:
        return None
    if first is None:
        return max(snapshot_ends)
    continued = [s for s in snapshot_ends if s >= first]
    return min(continued) if continued else max(snapshot_ends)


def compute_copies(batches: DataFrame, copy_facts: Iterable[tuple], has_batches: bool = True
                   ) -> Tuple[DataFrame, Optional[Authoritative]]:
    """(rows of bronze_metadata_copies without run columns, the authoritative copy or None).

    ``diverges_at_offset`` is the base offset of the first batch where a copy holds something other than the
    winning batch (highest epoch, then most copies): exactly where it differs from the authoritative copy
    whenever that copy is consistent, which is the normal case.

    :param batches: bronze_metadata_batches payload rows (the caller persists them: they are scanned twice).
    :param copy_facts: ``(copy_id, source_broker_id, log_dir)`` per copy known to exist even without batches
        (a broker's ``__cluster_metadata-0``); a small driver-side list.
    :param has_batches: False when the caller knows there are none: no Spark job is run.
    """
    spark = batches.sparkSession
    copies = _summaries(batches, [tuple(f) for f in copy_facts], has_batches)
    auth = _pick_authoritative(copies)
    sequence_snapshot = _sequence_snapshot(auth, auth["snapshot_ends"]) if auth is not None else None
    rows = []
    for c in sorted(copies, key=lambda c: c["copy_id"]):
        is_auth = auth is not None and c["copy_id"] == auth["copy_id"]
        rows.append((c["copy_id"], c["source_broker_id"], c["snapshot_end_offset"], c["first_offset"], c["last_offset"],
                     c["records"], is_auth, c["mismatch_at"], c["gap_after_offset"],
                     sequence_snapshot if is_auth else None, c["source_kind"], c["log_dir"]))
    copies_df = local_frame(spark, rows, COPIES_DDL)
    return copies_df, (Authoritative(auth["copy_id"], sequence_snapshot) if auth is not None else None)


def flag_sequence(records: DataFrame, auth: Optional[Authoritative], overlapping: bool = True) -> DataFrame:
    """``in_authoritative_sequence`` on decoded records: the authoritative copy's log from the sequence snapshot
    on, plus that snapshot; each offset once when a copy holds the same batch in two files.

    :param overlapping: False when the caller knows no two files of the authoritative copy hold the same
        offset (:func:`copy_files_overlap`; Kafka's own segments never do): no window, no shuffle."""
    records = records.drop("in_authoritative_sequence")
    columns = records.columns + ["in_authoritative_sequence"]
    if auth is None:
        return records.withColumn("in_authoritative_sequence", F.lit(False)).select(columns)
    snap = auth.sequence_snapshot
    ours_only = F.col("copy_id").eqNullSafe(auth.copy_id)
    in_log = (F.col("section") == "log") & (F.lit(snap).isNull() | (F.col("offset") >= F.lit(snap)))
    in_snap = (F.col("section") == "snapshot") & (F.col("snapshot_end_offset") == F.lit(snap))
    if not overlapping:
        return records.withColumn("in_authoritative_sequence",
                                  F.coalesce(ours_only & (in_log | in_snap), F.lit(False))).select(columns)
    others = records.where(~ours_only).withColumn("in_authoritative_sequence", F.lit(False))
    once = Window.partitionBy("section", "snapshot_end_offset", "offset").orderBy("source_file")
    ours = (records.where(ours_only)
            .withColumn("in_authoritative_sequence",
                        F.coalesce((in_log | in_snap) & (F.row_number().over(once) == 1), F.lit(False))))
    return others.select(columns).unionByName(ours.select(columns))


def batch_overlap(batches: DataFrame, copy_id: str) -> Tuple[int, bool]:
    """(batch rows of the copy, whether two of its files hold the same offset of its log or of one snapshot, e.g. a
    segment dumped twice as text), from one small job over that copy's batch rows."""
    ours = batches.where(F.col("copy_id") == copy_id)
    per_offset = ours.groupBy("section", "snapshot_end_offset", "base_offset").agg(
        F.count(F.lit(1)).alias("rows"),
        F.when(F.col("base_offset").isNotNull(), F.countDistinct("source_file")).alias("files"))
    row = per_offset.agg(F.sum("rows").alias("rows"), F.max("files").alias("files")).collect()[0]
    return int(row["rows"] or 0), (row["files"] or 0) > 1


def copy_files_overlap(batches: DataFrame, auth: Optional[Authoritative]) -> bool:
    """Whether two files of the authoritative copy hold the same offset (:func:`batch_overlap`)."""
    return auth is not None and batch_overlap(batches, auth.copy_id)[1]


def files_with_unmatched_batches(batches: DataFrame, auth: Optional[Authoritative]) -> List[str]:
    """Log files of the other copies that hold a sound batch the authoritative copy does not hold (a diverged
    tail, a copy from elsewhere). They are decoded too: what they say is evidence, and a malformed record in
    them must be reported. A batch the authoritative copy holds is the same bytes (same offsets, epoch and
    CRC-32C) and is decoded once. In a healthy fleet the list is empty; it is at most the file count."""
    if auth is None:
        return []
    key = ["base_offset", "last_offset", "leader_epoch", "crc"]
    sound = batches.where((F.col("section") == "log") & F.col("base_offset").isNotNull() & F.col("crc").isNotNull()
                          & F.coalesce(F.col("crc_valid"), F.lit(True)))
    ours = sound.where(F.col("copy_id") == auth.copy_id).select(*key).distinct()
    theirs = sound.where(~F.col("copy_id").eqNullSafe(auth.copy_id))
    return sorted(r[0] for r in theirs.join(ours, key, "left_anti").select("source_file").distinct().collect())
