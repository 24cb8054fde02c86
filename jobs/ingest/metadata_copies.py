"""Which copy of the metadata log is authoritative, decided from batch summaries alone.

Every KRaft broker (and every dump-log text folder) holds a copy of ``__cluster_metadata-0``. Raft followers
append the leader's batches byte for byte, so a batch is identified across copies by (base offset, last
offset, leader epoch, CRC) and copies are compared without decoding a record (100 brokers x 1M records would
otherwise mean 100M decoded rows). Raft's rule decides which batch is right where copies disagree: at each
base offset the batch of the highest leader epoch wins (a newer leader overwrote the older tail), then the
one most brokers' own files hold, then the one most copies hold: a dump-log text is an export made from some
files at some time, so it never outvotes the bytes on the brokers' disks (a text dumped before the files were
rewritten, or from other files, would otherwise make every disk copy a false divergence). A copy is *consistent* when it has no hole in its offsets, no corrupt batch and agrees
with the winner at every base offset it holds; the authoritative copy is the consistent copy reaching
furthest (ties: more records, newer snapshot, a broker's disk before dump text, copy id). Each copy then gets
where it starts and ends, its first hole, and the first offset where it differs from the winners. The
authoritative *sequence* is that copy's log, plus, when its log does not reach back to offset 0, the oldest
snapshot its log continues (Kafka's own "snapshot, then the log after it"); only those files are decoded.

Work stays in Spark (group by base offset, then by copy); one summary row per copy comes back to the driver,
carrying what the second pass needs of that copy's files too: whether it holds an offset twice, and where each
file is cut into parts. One query answers all but one of the second pass's questions (four ran before: 0.5-0.8 s
of a warm 1M-log ingest, docs/benchmarks.md, session 40); which other copies' files hold batches the
authoritative copy lacks is a second query, run only when another copy holds log batches.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from jobs.engine.local_frames import local_frame
from jobs.engine.versions import apply_in_arrow
from jobs.tables.spec import ddl_arrow_schema, ddl_fields

SOURCE_RANK = {"segment": 0, "dump_log_text": 2}
COPIES_DDL = ("copy_id string, source_broker_id int, snapshot_end_offset long, first_offset long, last_offset long, "
              "records long, is_authoritative boolean, diverges_at_offset long, gap_after_offset long, "
              "sequence_snapshot_end_offset long, source_kind string, log_dir string")
# what the summary job's per-copy step reads: log batches flagged against the winners ("batch"), snapshot batches
# ("snapshot") and, when the second pass cuts files, where each 1/CUT_GRAIN of a file starts and ends ("grain")
PARTS_DDL = ("copy_id string, part string, base_offset long, last_offset long, bad boolean, repeated boolean, "
             "snapshot_end_offset long, source_kind string, source_broker_id int, source_file string, "
             "grain_start long, grain_end long")
SUMMARY_DDL = ("copy_id string, first_offset long, last_offset long, records long, mismatch_at long, "
               "gap_after_offset long, snapshot_end_offset long, snapshot_ends array<long>, record_source_kind string, "
               "record_broker_id int, repeats_offsets boolean, cut_files array<string>, cut_starts array<array<long>>")


@dataclass(frozen=True)
class Authoritative:
    """The copy whose files the second pass decodes, and the snapshot its sequence starts from (None: log from 0)."""

    copy_id: str
    sequence_snapshot: Optional[int]


@dataclass(frozen=True)
class Comparison:
    """What the comparison's one query found: bronze_metadata_copies' rows, the authoritative copy, and what the second
    pass needs to know of the copies' files, so that it asks Spark nothing more about them."""

    table: DataFrame  # bronze_metadata_copies rows without run columns
    auth: Optional[Authoritative]
    repeats_offsets: bool  # the authoritative copy holds some offset twice (two files, or one file twice)
    cuts: Dict[str, List[int]]  # per file of any copy: where the second pass cuts it (``chunk_bytes`` given)
    other_log_copies: int  # copies other than the authoritative one holding log batches (0: none to match)


def _batch_flags(batches):
    """Per base offset (all copies' batches starting there): which copies hold something other than the winner,
    and which hold that offset twice."""
    import pyarrow as pa

    names = ("copy_id", "base_offset", "last_offset", "bad", "repeated", "source_kind", "source_broker_id")
    schema = ddl_arrow_schema(PARTS_DDL)
    for batch in batches:
        out: Dict[str, list] = {k: [] for k in names}
        for base, entries in zip(batch.column("base_offset").to_pylist(), batch.column("e").to_pylist(), strict=True):
            holders: Dict[tuple, set] = {}
            on_disk: Dict[tuple, set] = {}  # the holders that are a broker's own files (not dump-log text)
            for e in entries:
                if e["crc"] is not None and e["crc_valid"] is not False:
                    batch_key = (e["leader_epoch"], e["last_offset"], e["crc"])
                    holders.setdefault(batch_key, set()).add(e["copy_id"])
                    if e["source_kind"] != "dump_log_text":
                        on_disk.setdefault(batch_key, set()).add(e["copy_id"])
            winner = max(holders, key=lambda k: (k[0] if k[0] is not None else -1, len(on_disk.get(k, ())),
                                                 len(holders[k]), -(k[1] or 0), -k[2])) if holders else None
            seen: Dict[str, int] = {}
            for e in entries:
                known = e["crc"] is not None
                differs = e["crc_valid"] is False or (known and (e["leader_epoch"], e["last_offset"], e["crc"]) != winner)
                if e["copy_id"] in seen:  # the same batch in two files of one copy (or twice in one): one row
                    i = seen[e["copy_id"]]
                    out["bad"][i] = out["bad"][i] or differs
                    out["repeated"][i] = True
                    continue
                seen[e["copy_id"]] = len(out["copy_id"])
                for key, value in (("copy_id", e["copy_id"]), ("base_offset", base), ("last_offset", e["last_offset"]),
                                   ("bad", differs), ("repeated", False), ("source_kind", e["source_kind"]),
                                   ("source_broker_id", e["source_broker_id"])):
                    out[key].append(value)
        n = len(out["copy_id"])
        out["part"] = ["batch"] * n
        yield pa.RecordBatch.from_arrays([pa.array(out[f.name], f.type) if f.name in out else pa.nulls(n, f.type)
                                          for f in schema], schema=schema)


def _copy_summary(chunk_bytes: int, table):
    """One copy's rows (:data:`PARTS_DDL`) -> its summary row (:data:`SUMMARY_DDL`).

    Arrow in and out (``applyInArrow``): offsets stay 64-bit integers, where the pandas frame of
    ``applyInPandas`` held a column with nulls as floats (exact only below 2**53). Same speed (the job's one task
    is ~0.25-0.5 s either way, mostly two Python evaluations' fixed cost: docs/benchmarks.md, session 38)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .metadata_sequence import balanced_cuts

    def part(name: str) -> Dict[str, list]:
        return table.filter(pc.equal(table.column("part"), name)).to_pydict()

    batch, snapshot, grain = part("batch"), part("snapshot"), part("grain")
    log = sorted(((base, last if last is not None else base, bad is True)
                  for base, last, bad in zip(batch["base_offset"], batch["last_offset"], batch["bad"], strict=True)
                  if base is not None), key=lambda span: span[0])
    gap, reach, records = None, None, 0
    for base, last, _bad in log:
        if reach is not None and base > reach + 1 and gap is None:
            gap = reach
        records += max(0, last - max(base, (reach + 1) if reach is not None else base) + 1)
        reach = last if reach is None else max(reach, last)
    bad = [base for base, _last, flagged in log if flagged]
    ends = sorted({v for v in snapshot["snapshot_end_offset"] if v is not None})
    kinds = sorted({k for k in batch["source_kind"] + snapshot["source_kind"] if k is not None})
    brokers = [b for b in batch["source_broker_id"] + snapshot["source_broker_id"] if b is not None]
    grains: Dict[str, List[Tuple[int, int]]] = {}
    for path, start, end in zip(grain["source_file"], grain["grain_start"], grain["grain_end"], strict=True):
        grains.setdefault(path, []).append((start, end))
    files = sorted(grains) if chunk_bytes > 0 else []
    return pa.Table.from_pylist([{
        "copy_id": table.column("copy_id")[0].as_py(), "first_offset": log[0][0] if log else None, "last_offset": reach,
        "records": records, "mismatch_at": min(bad) if bad else None, "gap_after_offset": gap,
        "snapshot_end_offset": ends[-1] if ends else None, "snapshot_ends": ends,
        "record_source_kind": kinds[0] if kinds else None, "record_broker_id": brokers[0] if brokers else None,
        "repeats_offsets": True in batch["repeated"] or True in snapshot["repeated"],
        "cut_files": files, "cut_starts": [balanced_cuts(sorted(grains[f]), chunk_bytes) for f in files],
    }], schema=ddl_arrow_schema(SUMMARY_DDL))


def _parts(batches: DataFrame, chunk_bytes: int) -> DataFrame:
    """The summary's input (:data:`PARTS_DDL`): log batches grouped by base offset to find each winner, snapshot
    batches per offset of each snapshot, and (``chunk_bytes`` > 0) each file's grains for the second pass's cuts."""
    from .metadata_sequence import CUT_GRAIN

    log = batches.where((F.col("section") == "log") & F.col("base_offset").isNotNull())
    entry = F.struct("copy_id", "last_offset", "leader_epoch", "crc", "crc_valid", "source_kind", "source_broker_id")
    parts = [log.groupBy("base_offset").agg(F.collect_list(entry).alias("e")).mapInArrow(_batch_flags, PARTS_DDL)]
    parts.append(batches.where(F.col("section") == "snapshot")
                 .groupBy("copy_id", "snapshot_end_offset", "base_offset")
                 .agg(F.min("source_kind").alias("source_kind"), F.min("source_broker_id").alias("source_broker_id"),
                      (F.col("base_offset").isNotNull() & (F.count(F.lit(1)) > 1)).alias("repeated"))
                 .withColumn("part", F.lit("snapshot")))
    if chunk_bytes > 0:
        grain = max(1, chunk_bytes // CUT_GRAIN)
        parts.append(batches.where(F.col("base_offset").isNotNull() & F.col("position").isNotNull())
                     .groupBy("copy_id", "source_file", F.floor(F.col("position") / F.lit(grain)).alias("grain"))
                     .agg(F.min("position").alias("grain_start"),
                          F.max(F.col("position") + F.coalesce(F.col("size_bytes"), F.lit(0))).alias("grain_end"))
                     .withColumn("part", F.lit("grain")))
    fields = ddl_fields(PARTS_DDL)

    def aligned(part: DataFrame) -> DataFrame:
        present = set(part.columns)
        return part.selectExpr(*[f"`{n}`" if n in present else f"CAST(NULL AS {t}) AS `{n}`" for n, t in fields])

    return functools.reduce(DataFrame.unionByName, [aligned(part) for part in parts])


def _summaries(batches: DataFrame, copy_facts: Sequence[tuple], has_batches: bool = True,
               chunk_bytes: int = 0) -> List[dict]:
    """One Spark query: each copy's summary row from :func:`_parts`, grouped by copy."""
    by_id: Dict[str, dict] = {}
    if has_batches:
        summary = apply_in_arrow(_parts(batches, chunk_bytes), "copy_id",
                                 functools.partial(_copy_summary, chunk_bytes), SUMMARY_DDL)
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
        d["repeats_offsets"] = bool(d.get("repeats_offsets"))
        d["cuts"] = dict(zip(d.get("cut_files") or [], [list(c) for c in d.get("cut_starts") or []], strict=True))
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


def compute_copies(batches: DataFrame, copy_facts: Iterable[tuple], has_batches: bool = True,
                   chunk_bytes: int = 0) -> Comparison:
    """The copies compared in one Spark query (:class:`Comparison`).

    ``diverges_at_offset`` is the base offset of the first batch where a copy holds something other than the
    winning batch (highest epoch, then most copies on brokers' disks, then most copies): exactly where it differs from the authoritative copy
    whenever that copy is consistent, which is the normal case.

    :param batches: bronze_metadata_batches payload rows (the caller persists them: they are scanned twice).
    :param copy_facts: ``(copy_id, source_broker_id, log_dir)`` per copy known to exist even without batches
        (a broker's ``__cluster_metadata-0``); a small driver-side list.
    :param has_batches: False when the caller knows there are none: no Spark job is run.
    :param chunk_bytes: ``ingest.metadata_chunk_bytes``: also where to cut each file (``batches`` then needs
        ``source_file``, ``position`` and ``size_bytes``); 0: no cuts.
    """
    spark = batches.sparkSession
    copies = _summaries(batches, [tuple(f) for f in copy_facts], has_batches, chunk_bytes)
    auth = _pick_authoritative(copies)
    sequence_snapshot = _sequence_snapshot(auth, auth["snapshot_ends"]) if auth is not None else None
    rows = []
    for c in sorted(copies, key=lambda c: c["copy_id"]):
        is_auth = auth is not None and c["copy_id"] == auth["copy_id"]
        rows.append((c["copy_id"], c["source_broker_id"], c["snapshot_end_offset"], c["first_offset"], c["last_offset"],
                     c["records"], is_auth, c["mismatch_at"], c["gap_after_offset"],
                     sequence_snapshot if is_auth else None, c["source_kind"], c["log_dir"]))
    return Comparison(local_frame(spark, rows, COPIES_DDL),
                      Authoritative(auth["copy_id"], sequence_snapshot) if auth is not None else None,
                      auth is not None and auth["repeats_offsets"],
                      {path: cuts for c in copies for path, cuts in c["cuts"].items()},
                      sum(1 for c in copies if c["first_offset"] is not None
                          and (auth is None or c["copy_id"] != auth["copy_id"])))


def flag_sequence(records: DataFrame, auth: Optional[Authoritative], overlapping: bool = True) -> DataFrame:
    """``in_authoritative_sequence`` on decoded records: the authoritative copy's log from the sequence snapshot
    on, plus that snapshot; each offset once when a copy holds the same batch in two files.

    :param overlapping: False when the caller knows no two files of the authoritative copy hold the same
        offset (:attr:`Comparison.repeats_offsets`; Kafka's own segments never do): no window, no shuffle."""
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
    """(batch rows of the copy, whether it holds some offset of its log or of one snapshot twice: two files, e.g. a
    segment dumped twice as text, or one file repeating it; what :attr:`Comparison.repeats_offsets` says of the
    authoritative copy), from one small job over that copy's batch rows."""
    per_offset = (batches.where(F.col("copy_id") == copy_id)
                  .groupBy("section", "snapshot_end_offset", "base_offset").agg(F.count(F.lit(1)).alias("rows")))
    row = per_offset.agg(F.sum("rows").alias("rows"),
                         F.max(F.when(F.col("base_offset").isNotNull(), F.col("rows"))).alias("held")).collect()[0]
    return int(row["rows"] or 0), (row["held"] or 0) > 1


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
