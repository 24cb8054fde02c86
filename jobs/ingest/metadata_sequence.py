"""The second pass: decode the records of the authoritative copy of the metadata log, and nothing else.

The first pass left one locator fact per metadata file (:mod:`jobs.ingest.metadata_files`). Once
:mod:`jobs.ingest.metadata_copies` has picked the authoritative copy, the driver keeps that copy's log files
and the snapshot its sequence starts from, and executors reopen just those: a raw file by path (local or
pyarrow.fs), a pack member by streaming its pack once, dump-log text by parsing it again. Each decoded file
reports its record count and first error, which the driver folds into the file's bronze_ingest_files row.
"""
from __future__ import annotations

import io
import json
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import pyarrow as pa

from jobs.engine.local_frames import local_frame
from udfs import pack_reader
from udfs.errors import DecodeError

from . import metadata_files
from .filesystems import open_root
from .log_dir_rows import DecodeOptions, FileOutcome
from .loose_files import LooseFile, _dump_text, readable
from .records_direct import DirectRecords
from .tagged_rows import SEQUENCE_TABLES, RowSink
from .task_gc import fewer_collections
from .task_inputs import task_frame, task_indexes

SOURCE_KEYS = ("copy_id", "source_file", "source_kind", "section", "snapshot_end_offset")


def select_files(locators: Iterable[Dict[str, Any]], copy_id: str, sequence_snapshot: Optional[int],
                 unmatched: Iterable[str] = ()) -> List[Dict[str, Any]]:
    """The authoritative copy's files the sequence needs: every log segment (history reaches below the
    snapshot) and dump text, plus the one snapshot the sequence starts from; and the ``unmatched`` files of
    other copies (holding batches the authoritative copy does not hold)."""
    chosen = []
    extra = set(unmatched)
    for loc in locators:
        if loc.get("copy_id") != copy_id:
            if loc.get("source_file") in extra:
                chosen.append(loc)
            continue
        section = loc.get("section")
        if section in ("log", "dump") or (section == "snapshot" and sequence_snapshot is not None
                                           and loc.get("snapshot_end_offset") == sequence_snapshot):
            chosen.append(loc)
    return sorted(chosen, key=lambda loc: loc.get("source_file") or "")


def _source(loc: Dict[str, Any]) -> Dict[str, Any]:
    return {key: loc.get(key) for key in SOURCE_KEYS}


def _open_path(loc: Dict[str, Any]) -> Callable[[], Any]:
    root, path = loc["root"], loc["path"]
    if "://" not in root:
        return lambda: open(path, "rb")
    filesystem, _ = open_root(root)
    return lambda: filesystem.open_input_file(path)


def is_binary(loc: Dict[str, Any]) -> bool:
    return loc.get("format") != "dump_text"


def split_files(chosen: List[Dict[str, Any]], starts: Dict[str, List[int]]) -> List[List[Dict[str, Any]]]:
    """Tasks for the second pass: each binary file cut at the batch positions in ``starts`` (its first chunk
    starts at 0, its last runs to the end of the file, so nothing is skipped), one chunk per task; the members
    of one pack share a task per chunk index (a task streams its pack once)."""
    groups: Dict[Any, Dict[int, List[Dict[str, Any]]]] = {}
    for loc in chosen:
        key = (loc["root"], loc["path"]) if loc.get("kind") == "pack_member" else loc["source_file"]
        cuts = sorted(p for p in set(starts.get(loc["source_file"], ())) if p > 0) if is_binary(loc) else []
        bounds = [0, *cuts, None]
        for index, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False)):
            chunk = dict(loc, start=start, end=end) if cuts else dict(loc)
            groups.setdefault(key, {}).setdefault(index, []).append(chunk)
    return [task for by_index in groups.values() for task in by_index.values()]


def _decode_file(loc: Dict[str, Any], sink: RowSink, data_opener: Callable[[], Any],
                 options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    outcome = FileOutcome()
    try:
        item = LooseFile(data_opener, loc["source_file"], None, None)
        if not is_binary(loc):
            yield from _dump_text(item, sink, outcome, loc["copy_id"], loc, records_only=True)
        else:
            with item.open_binary() as stream:
                yield from metadata_files.emit_records(readable(stream), sink, outcome, _source(loc),
                                                       options.decompression_limit_bytes,
                                                       start=loc.get("start") or 0, end=loc.get("end"))
    except (OSError, EOFError, ValueError) as exc:  # gone or changed since the first pass
        outcome.fail(DecodeError("io_error", f"second pass could not read the file: {type(exc).__name__}: {exc}"))
    metadata_files.add_decoded(sink, loc["source_file"], outcome.rows, outcome.error, loc.get("start") or 0)
    yield from sink.ready()


def _decode_pack(root: str, path: str, members: List[Dict[str, Any]], sink: RowSink,
                 options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    """Stream one pack once and decode the wanted members' embedded bytes."""
    wanted: Dict[Tuple[str, str], Dict[str, Any]] = {(m["log_dir"], m["member"]): m for m in members}
    filesystem, _ = open_root(root)
    with filesystem.open_input_stream(path, compression=None) as stream:
        reader = pack_reader.read_pack(stream, **options.pack_limits())
        for entry in reader:
            loc = wanted.pop((entry.get("log_dir"), entry.get("path")), None)
            if loc is None:
                continue
            content = entry.get("content")
            if content is None:
                outcome = FileOutcome()
                outcome.fail(DecodeError("io_error", "second pass: the pack member has no embedded bytes"))
                metadata_files.add_decoded(sink, loc["source_file"], 0, outcome.error, loc.get("start") or 0)
                continue
            yield from _decode_file(loc, sink, lambda data=content: io.BytesIO(data), options)
            if not wanted:
                break
        reader.close()
    for loc in wanted.values():
        error = DecodeError("io_error", "second pass: the member is no longer in the pack")
        metadata_files.add_decoded(sink, loc["source_file"], 0, error, loc.get("start") or 0)


def decode_sequence_files(locators: Iterable[Dict[str, Any]], options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    """Records of the given files, as tagged batches (the body of ``mapInArrow``); packs are grouped so each
    is streamed once. A failure is reported for its file; the others go on."""
    sink = RowSink(options.batch_rows, SEQUENCE_TABLES)
    packs: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for loc in locators:
        if loc.get("kind") == "pack_member":
            packs.setdefault((loc["root"], loc["path"]), []).append(loc)
            continue
        try:
            yield from _decode_file(loc, sink, _open_path(loc), options)
        except Exception as exc:  # a bug must not stop the other files
            metadata_files.add_decoded(sink, loc.get("source_file") or "?", 0, DecodeError(
                "io_error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"[:4000]))
    for (root, path), members in packs.items():
        try:
            yield from _decode_pack(root, path, members, sink, options)
        except Exception as exc:
            for loc in members:
                metadata_files.add_decoded(sink, loc.get("source_file") or "?", 0, DecodeError(
                    "io_error", f"{type(exc).__name__}: {exc}"[:4000]))
    yield from sink.drain()


def map_sequence(options: DecodeOptions, tasks: List[List[Dict[str, Any]]], direct: Optional[DirectRecords] = None
                 ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function handed to ``DataFrame.mapInArrow`` over :func:`task_frame`'s rows: task ``i`` decodes
    ``tasks[i]`` (file locators: one copy's segments and snapshot, cut into parts, so always a short list that
    can travel with the function); with ``direct``, the records are written to the table's staging folder
    instead of returned."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        def locators() -> Iterator[Dict[str, Any]]:
            for task in task_indexes(batches):
                yield from tasks[task]
        with fewer_collections():
            tagged = decode_sequence_files(locators(), options)
            yield from (tagged if direct is None else direct.divert(tagged))
    return run


@dataclass
class SequenceResult:
    """The second pass's output: decoded records (None when nothing was decoded), per-file outcomes
    (``path -> (records, error kind, detail JSON)``, one per decoded file) and rows per table."""

    records: Optional[Any]
    outcomes: Dict[str, Tuple[int, Optional[str], Optional[str]]] = field(default_factory=dict)
    rows_emitted: Dict[str, int] = field(default_factory=dict)


CUT_GRAIN = 16  # positions a part boundary may move to, per chunk_bytes


def balanced_cuts(spans: List[Tuple[int, int]], chunk_bytes: int) -> List[int]:
    """Where to cut one file for the second pass: into the fewest parts of at most about ``chunk_bytes``, of equal
    size, each starting at a batch start. ``spans``: ``(first batch start, last batch end)`` per grain of the file
    (``chunk_bytes / CUT_GRAIN`` bytes), from the first pass's batch rows in the copies comparison's job
    (:func:`jobs.ingest.metadata_copies.compute_copies`). Returns the cut positions, ascending, the first being
    the first batch's start; each boundary is the grain start nearest its ideal position.

    Why equal: a 55 MB log cut every 16 MiB gave parts of 16, 16, 16 and 5 MB; on two cores one worker
    decoded two large parts while the other finished early (real 1M log: the pass took ~1.3x its share)."""
    size = max(end for _, end in spans)
    parts = max(1, -(-size // chunk_bytes))
    starts = [start for start, _ in spans]
    cuts = {starts[0]}
    for k in range(1, parts):
        ideal = size * k // parts
        cuts.add(min(starts, key=lambda s, ideal=ideal: (abs(s - ideal), s)))
    return sorted(cuts)


def decode_sequence(spark, locators: List[Dict[str, Any]], auth, options: DecodeOptions,
                    persisted: List[Any], unmatched: Iterable[str] = (), cuts: Optional[Dict[str, List[int]]] = None,
                    direct: Optional[DirectRecords] = None) -> SequenceResult:
    """Decode the authoritative copy's files (and the ``unmatched`` files of other copies) on executors: a
    large segment or snapshot is cut at the batch starts ``cuts`` names (per file: the copies comparison's, parts of
    about ``options.metadata_chunk_bytes``), one task per part, so one big file is decoded by every core. The output
    is persisted (appended to ``persisted``) and its per-file facts come back to the driver. With ``direct``
    the tasks write the records' Parquet files themselves (:mod:`jobs.ingest.records_direct`) and
    ``records`` stays None."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from .tagged_rows import FACTS, spark_schema

    if auth is None:
        return SequenceResult(None)
    chosen = select_files(locators, auth.copy_id, auth.sequence_snapshot, unmatched)
    if not chosen:
        return SequenceResult(None)
    tasks = split_files(chosen, cuts or {})
    tagged = task_frame(spark, len(tasks)).mapInArrow(map_sequence(options, tasks, direct),
                                                      spark_schema(SEQUENCE_TABLES))
    if direct is None:
        tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(tagged)
    facts = [r[FACTS.name].asDict() for r in tagged.where(F.col("table") == FACTS.name).select(FACTS.name).collect()]
    result = SequenceResult(None if direct is not None else tagged.where(
        F.col("table") == metadata_files.RECORDS).select(f"`{metadata_files.RECORDS}`.*"))
    parts: Dict[str, List[Tuple[int, Optional[str], Optional[str]]]] = {}
    for fact in facts:
        if fact["fact"] == metadata_files.DECODED_FACT:
            parts.setdefault(fact["source"], []).append((int(fact["long_value"] or 0), fact["text_value"],
                                                         fact["detail"]))
        elif fact["fact"] == "rows":
            result.rows_emitted[fact["source"]] = result.rows_emitted.get(fact["source"], 0) + int(fact["long_value"] or 0)
    result.outcomes = {path: metadata_files.merge_decoded(file_parts) for path, file_parts in parts.items()}
    return result


def fold_decoded_outcomes(files, locators: List[Dict[str, Any]],
                          outcomes: Dict[str, Tuple[int, Optional[str], Optional[str]]], file_status: Dict[str, int]):
    """bronze_ingest_files rows with the second pass folded in: records added to ``rows_produced``, and a file
    the first pass found sound but whose records fail to decode quarantined with that reason.
    ``file_status`` (files per status, from the first pass) is corrected in place."""
    from pyspark.sql import functions as F

    if not outcomes:
        return files
    first_status = {loc.get("source_file"): loc.get("status") for loc in locators}
    rows = []
    for path, (records, kind, detail) in sorted(outcomes.items()):
        info = json.loads(detail) if detail else {}
        rows.append((path, records, kind, info.get("message"), info.get("offset"), info.get("line")))
        if kind is not None and first_status.get(path) == "ok":
            file_status["ok"] = file_status.get("ok", 0) - 1
            file_status["quarantined"] = file_status.get("quarantined", 0) + 1
    spark = files.sparkSession
    extra = local_frame(spark, rows, "path string, _rows long, _kind string, _message string, _offset long, _line int")
    newly_bad = (F.col("status") == "ok") & F.col("_kind").isNotNull()
    replaced = {"status": F.lit("quarantined"), "error_kind": F.col("_kind"), "error_message": F.col("_message"),
                "error_offset": F.col("_offset"), "error_line": F.col("_line")}
    columns = []
    for c in files.columns:
        if c in replaced:
            columns.append(F.when(newly_bad, replaced[c]).otherwise(F.col(c)).alias(c))
        elif c == "rows_produced":
            columns.append((F.col(c) + F.coalesce(F.col("_rows"), F.lit(0))).alias(c))
        else:
            columns.append(F.col(c))
    return files.join(F.broadcast(extra), "path", "left").select(*columns)
