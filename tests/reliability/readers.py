"""Each decoder's public entry point, reduced to one shape: the errors it reported and the good items around them.

``READERS[name](data) -> Outcome``. Every reader here is a "never raises" public function of ``udfs``; the
corpus tests and the fuzz harness call them the same way, so a decoder that lets an exception escape fails
both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List

from udfs import dump_log_text, leader_epochs, log_dirs_describe, metadata_log, record_batch, zookeeper
from udfs.errors import DecodeError
from udfs.json_state_files import parse_quorum_state
from udfs.pack_reader import read_pack
from udfs.partition_metadata import read_partition_metadata
from udfs.producer_state import decode_producer_snapshot, iter_txn_index
from udfs.properties_files import (
    parse_leader_epoch_checkpoint,
    parse_meta_properties,
    parse_offset_checkpoint,
)


@dataclass
class Outcome:
    """``errors`` in the order found; ``good_before``/``good_after`` count clean items around the first one."""

    errors: List[DecodeError] = field(default_factory=list)
    good_before: int = 0
    good_after: int = 0

    @property
    def first(self):
        return self.errors[0] if self.errors else None


def _sequence(items, is_error: Callable) -> Outcome:
    out = Outcome()
    for item in items:
        if is_error(item):
            out.errors.append(item)
        elif out.errors:
            out.good_after += 1
        else:
            out.good_before += 1
    return out


def metadata_records(data) -> Outcome:
    """Metadata segment / snapshot: records with ``error`` set are the errors."""
    out = Outcome()
    for rec in metadata_log.iter_metadata_records(data):
        if rec.error is not None:
            out.errors.append(rec.error)
        elif out.errors:
            out.good_after += 1
        else:
            out.good_before += 1
    return out


def segment_headers(data) -> Outcome:
    """Data segment header scan (what ingest reads of data partitions)."""
    return _sequence(record_batch.scan_headers(data), lambda i: isinstance(i, DecodeError))


def batch_records(data) -> Outcome:
    """Full decode of a data segment: every batch's records (CRC checked)."""
    out = Outcome()
    for item in record_batch.read_batches(data):
        if isinstance(item, DecodeError):
            out.errors.append(item)
            continue
        if isinstance(item, record_batch.LegacyEntry):
            out.errors.append(item.error)
            continue
        if item.header.crc_valid is False:
            out.errors.append(item.crc_error())
            continue
        for rec in record_batch.iter_records(item):
            if isinstance(rec, DecodeError):
                out.errors.append(rec)
            elif out.errors:
                out.good_after += 1
            else:
                out.good_before += 1
    return out


def _single(result, good: int = 1) -> Outcome:
    return Outcome([result.error] if result.error is not None else [], 0 if result.error is not None else good)


def partition_metadata(data) -> Outcome:
    return _single(read_partition_metadata(bytes(data)))


def meta_properties(data) -> Outcome:
    return _single(parse_meta_properties(bytes(data)))


def quorum_state(data) -> Outcome:
    return _single(parse_quorum_state(bytes(data)))


def producer_snapshot(data) -> Outcome:
    result = decode_producer_snapshot(bytes(data))
    return Outcome([result.error] if result.error is not None else [], len(result.entries))


def txn_index(data) -> Outcome:
    return _sequence(iter_txn_index(bytes(data)), lambda i: isinstance(i, DecodeError))


def offset_checkpoint(data) -> Outcome:
    result = parse_offset_checkpoint(bytes(data))
    return Outcome([result.error] if result.error is not None else [], len(result.entries))


def leader_epoch_checkpoint(data) -> Outcome:
    """The parse, then LeaderEpochFileCache's load (which rejects a negative epoch or start offset)."""
    result = parse_leader_epoch_checkpoint(bytes(data))
    if result.error is not None:
        return Outcome([result.error], len(result.entries))
    loaded = leader_epochs.load([(e.epoch, e.start_offset) for e in result.entries])
    if loaded.error is not None:
        return Outcome([loaded.error], loaded.error.line - 3)
    return Outcome([], len(result.entries))


def _lines(data) -> List[str]:
    return bytes(data).decode("utf-8", "replace").splitlines()


def dump_log(data) -> Outcome:
    out = Outcome()
    for section in dump_log_text.parse_dump_log(_lines(data)):
        out.errors.extend(section.errors)
        for rec in section.records:
            if rec.error is not None:
                out.errors.append(rec.error)
            elif out.errors:
                out.good_after += 1
            else:
                out.good_before += 1
    return out


def znode_dump(data) -> Outcome:
    parsed = zookeeper.parse_znode_dump(_lines(data))
    out = Outcome(list(parsed.errors))
    first_bad = min((e.line for e in parsed.errors if e.line is not None), default=None)
    for row in parsed.rows:
        seq = row.get("seq") if isinstance(row, dict) else None
        if first_bad is not None and seq is not None and seq > first_bad:
            out.good_after += 1
        else:
            out.good_before += 1
    return out


def log_dirs_json(data) -> Outcome:
    parsed = log_dirs_describe.parse_log_dirs_output(bytes(data).decode("utf-8", "replace"))
    return Outcome(list(parsed.errors), len(parsed.rows))


def pack(data) -> Outcome:
    """Packed snapshot: PackErrors are turned into DecodeErrors (same kind; line kept)."""
    reader = read_pack(bytes(data))
    entries = list(reader)
    errors = [DecodeError(e.kind, e.message + (f" (member {e.path})" if e.path else ""), line=e.line)
              for e in reader.errors]
    return Outcome(errors, len(entries))


READERS: Dict[str, Callable[[bytes], Outcome]] = {
    "metadata_log": metadata_records,
    "segment_headers": segment_headers,
    "batch_records": batch_records,
    "partition_metadata": partition_metadata,
    "meta_properties": meta_properties,
    "quorum_state": quorum_state,
    "producer_snapshot": producer_snapshot,
    "txn_index": txn_index,
    "offset_checkpoint": offset_checkpoint,
    "leader_epoch_checkpoint": leader_epoch_checkpoint,
    "dump_log_text": dump_log,
    "znode_dump": znode_dump,
    "log_dirs_json": log_dirs_json,
    "pack": pack,
}
