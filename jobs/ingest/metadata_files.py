"""The first pass over a metadata-log file: batch summaries now, records later and only if needed.

Every broker holds a full copy of ``__cluster_metadata-0``. The first pass reads each copy's segments and
snapshots as batch summaries (offsets, epoch, CRC: no record is decoded) and leaves a *locator* fact per file;
once the authoritative copy is known, :mod:`jobs.ingest.metadata_sequence` reopens just that copy's files
and decodes their records. Bootstrap files are small and not copies of the log: they are decoded at once.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Iterator, Mapping, Optional

from udfs import metadata_log

from .metadata_rows import batch_row, metadata_row

BATCHES = "bronze_metadata_batches"
RECORDS = "bronze_metadata_records"
FACT = "metadata_file"
DECODED_FACT = "metadata_file_decoded"
# DecodeOptions.decompression_limit_bytes's default (conf ingest.decompression_limit_bytes): raft batches are at
# most 8 MiB, so 64 MiB is generous for a real batch and still bounds a bomb
DEFAULT_DECOMPRESSION_LIMIT = 64 * 1024 * 1024


def emit_batches(data: Any, sink, outcome, source: Mapping[str, Any]) -> None:
    """Batch rows of one segment or snapshot; a corrupt batch or a framing error quarantines the file."""
    for summary in metadata_log.iter_metadata_batches(data):
        sink.add(BATCHES, batch_row(summary, source))
        outcome.rows += 1
        if summary["error"] is not None:
            outcome.fail(summary["error"])


def record_rows(data: Any, outcome, source: Mapping[str, Any],
                max_decompressed_bytes: int = DEFAULT_DECOMPRESSION_LIMIT) -> Iterator[Dict[str, Any]]:
    """bronze_metadata_records rows of one metadata file (bootstrap files now, the authoritative copy in the
    second pass); the caller adds them to its sink and flushes as it sees fit. A batch inflating past
    ``max_decompressed_bytes`` (``ingest.decompression_limit_bytes``) is a decompression_bomb error row."""
    for record in metadata_log.iter_metadata_records(data, max_decompressed_bytes=max_decompressed_bytes):
        outcome.rows += 1
        if record.error is not None:
            outcome.fail(record.error)
        yield metadata_row(record, source)


def emit_records(data: Any, sink, outcome, source: Mapping[str, Any],
                 max_decompressed_bytes: int = DEFAULT_DECOMPRESSION_LIMIT) -> Iterator:
    """:func:`record_rows` into ``sink``, yielding ready batches every 4096 rows (memory stays flat)."""
    for row in record_rows(data, outcome, source, max_decompressed_bytes):
        sink.add(RECORDS, row)
        if outcome.rows % 4096 == 0:
            yield from sink.ready()


def first_pass(data: Any, sink, outcome, source: Mapping[str, Any], locator: Optional[Mapping[str, Any]],
               max_decompressed_bytes: int = DEFAULT_DECOMPRESSION_LIMIT) -> Iterator[Dict[str, Any]]:
    """What the first pass does with one metadata file. Yields the record rows to keep now (bootstrap files,
    or any file that cannot be reopened: ``locator`` None) for the caller to add and flush as it can; then adds
    the batch rows and the locator to ``sink``."""
    if source.get("section") == "bootstrap" or locator is None:
        yield from record_rows(data, outcome, source, max_decompressed_bytes)
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


def add_decoded(sink, path: str, records: int, error) -> None:
    """The second pass's outcome for one file (folded into its bronze_ingest_files row by the driver)."""
    detail: Optional[Dict[str, Any]] = None
    if error is not None:
        detail = {"message": error.message, "offset": error.offset, "line": error.line}
    sink.add("_ingest_facts", {"fact": DECODED_FACT, "source": path, "long_value": records,
                               "text_value": error.kind if error is not None else None,
                               "detail": json.dumps(detail) if detail else None})
