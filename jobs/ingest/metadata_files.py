"""The first pass over a metadata-log file: batch summaries now, records later and only if needed.

Every broker holds a full copy of ``__cluster_metadata-0``. The first pass reads each copy's segments and
snapshots as batch summaries (offsets, epoch, CRC: no record is decoded) and leaves a *locator* fact per file;
once the authoritative copy is known, :mod:`jobs.ingest.metadata_sequence` reopens just that copy's files
and decodes their records. Bootstrap files are small and not copies of the log: they are decoded at once.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Tuple

from udfs import metadata_log

from .metadata_rows import ROW_FIELDS, RecordColumns, batch_row
from .tagged_rows import STRUCTS
from .task_gc import cycle_collector_paused

BATCHES = "bronze_metadata_batches"
RECORDS = "bronze_metadata_records"
FACT = "metadata_file"
DECODED_FACT = "metadata_file_decoded"
RECORDS_STRUCT = STRUCTS[RECORDS]
BLOCK_ROWS = 4096
# the functions' default cap for callers without settings (the job passes conf ingest.decompression_limit_bytes):
# raft batches are at most 8 MiB, so 64 MiB is generous for a real batch and still bounds a bomb
DEFAULT_DECOMPRESSION_LIMIT = 64 * 1024 * 1024


def emit_batches(data: Any, sink, outcome, source: Mapping[str, Any]) -> None:
    """Batch rows of one segment or snapshot; a corrupt batch or a framing error quarantines the file."""
    for summary in metadata_log.iter_metadata_batches(data):
        sink.add(BATCHES, batch_row(summary, source))
        outcome.rows += 1
        if summary["error"] is not None:
            outcome.fail(summary["error"])


def record_blocks(data: Any, outcome, source: Mapping[str, Any],
                  max_decompressed_bytes: int = DEFAULT_DECOMPRESSION_LIMIT, start: int = 0,
                  end: Optional[int] = None) -> Iterator[Any]:
    """bronze_metadata_records rows of one metadata file (bootstrap files now, the authoritative copy in the
    second pass) as struct arrays of at most :data:`BLOCK_ROWS` rows (memory stays flat); the caller adds
    them to its sink. A batch inflating past ``max_decompressed_bytes`` (``ingest.decompression_limit_bytes``)
    is a decompression_bomb error row. ``start``/``end``: only the batches starting in that byte range."""
    columns = RecordColumns(BLOCK_ROWS)
    batches = metadata_log.iter_metadata_batch_rows(data, start=start, end=end,
                                                    max_decompressed_bytes=max_decompressed_bytes,
                                                    row_fields=ROW_FIELDS)
    while True:
        with cycle_collector_paused():
            batch = next(batches, None)
            if batch is None:
                break
            outcome.rows += len(batch.rows)
            if batch.others:  # only records outside the generated decoders' rows can carry an error
                for error in [r.error for r in batch.rows if type(r) is not tuple and r.error is not None]:
                    outcome.fail(error)
            columns.add_batch(batch, source)
            full = columns.full()
        if full:
            yield columns.take(RECORDS_STRUCT)
    if len(columns):
        yield columns.take(RECORDS_STRUCT)


def emit_records(data: Any, sink, outcome, source: Mapping[str, Any],
                 max_decompressed_bytes: int = DEFAULT_DECOMPRESSION_LIMIT, start: int = 0,
                 end: Optional[int] = None) -> Iterator:
    """:func:`record_blocks` into ``sink``, yielding each ready batch at once."""
    for block in record_blocks(data, outcome, source, max_decompressed_bytes, start, end):
        sink.add_block(RECORDS, block)
        yield from sink.ready()


def first_pass(data: Any, sink, outcome, source: Mapping[str, Any], locator: Optional[Mapping[str, Any]],
               max_decompressed_bytes: int = DEFAULT_DECOMPRESSION_LIMIT) -> Iterator[Any]:
    """What the first pass does with one metadata file. Yields the record blocks to keep now (bootstrap
    files, or any file that cannot be reopened: ``locator`` None) for the caller to add and flush as it can;
    then adds the batch rows and the locator to ``sink``."""
    if source.get("section") == "bootstrap" or locator is None:
        yield from record_blocks(data, outcome, source, max_decompressed_bytes)
        if source.get("section") == "bootstrap":
            return
        if hasattr(data, "seek"):
            data.seek(0)
    emit_batches(data, sink, outcome, source)
    if locator is not None:
        add_locator(sink, source, locator, outcome)


def add_locator(sink, source: Mapping[str, Any], locator: Mapping[str, Any], outcome) -> None:
    """The fact the driver uses to pick and reopen this file: where it is, which copy, and how the scan went."""
    detail = dict(locator, copy_id=source.get("copy_id"), section=source.get("section"),
                  source_kind=source.get("source_kind"), snapshot_end_offset=source.get("snapshot_end_offset"),
                  source_file=source.get("source_file"), status=outcome.status)
    sink.add("_ingest_facts", {"fact": FACT, "source": source.get("source_file"), "text_value": source.get("copy_id"),
                               "detail": json.dumps(detail, sort_keys=True)})


def add_decoded(sink, path: str, records: int, error, start: int = 0) -> None:
    """The second pass's outcome for one file, or for the part of it from byte ``start`` (folded into the
    file's bronze_ingest_files row by the driver: records summed, the first part's error kept)."""
    detail: Dict[str, Any] = {"start": start}
    if error is not None:
        detail.update(message=error.message, offset=error.offset, line=error.line)
    sink.add("_ingest_facts", {"fact": DECODED_FACT, "source": path, "long_value": records,
                               "text_value": error.kind if error is not None else None,
                               "detail": json.dumps(detail)})


def merge_decoded(parts: Iterable[Tuple[int, Optional[str], Optional[str]]]
                  ) -> Tuple[int, Optional[str], Optional[str]]:
    """One file's outcome from its parts' ``(records, error kind, detail JSON)``: the records summed, and the
    error of the part that starts first (the file's first error)."""
    total, first = 0, None
    for records, kind, detail in parts:
        total += records
        info = json.loads(detail) if detail else {}
        start = info.pop("start", 0)
        if kind is not None and (first is None or start < first[0]):
            first = (start, kind, json.dumps(info))
    return (total, None, None) if first is None else (total, first[1], first[2])
