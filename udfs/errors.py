"""Typed decode errors: corruption is data, not an exception.

Every decoder in ``udfs`` reports malformed input as a :class:`DecodeError` value (kind, where, message)
instead of letting an exception escape, so a Spark stage can write it to a quarantine row and go on.
Internally a decoder may raise :class:`CorruptInput` and turn it into a ``DecodeError`` at its boundary.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

# The stable error kinds. Tables and reports key on these strings, so never rename one.
KINDS = frozenset(
    {
        # framing and record batches
        "truncated_batch",        # batch header or body cut short by the end of the file
        "batch_too_small",        # batchLength says < 61 bytes (DefaultRecordBatch.RECORD_BATCH_OVERHEAD)
        "crc_mismatch",           # CRC-32C over attributes..end differs from the stored one
        "bad_magic",              # magic byte not 0, 1 or 2
        "legacy_magic",           # magic 0/1 message set (detected, not decoded further)
        "negative_length",        # a length field below its minimum (-1 for nullable)
        "length_out_of_buffer",   # a length that runs past the end of its buffer
        "varint_too_long",        # varint over 5 bytes / varlong over 10 bytes
        "garbage_after_frame",    # bytes left after a record or message body
        "invalid_utf8",           # a string field that is not UTF-8
        "decompression_failed",   # codec raised on a compressed batch
        "decompression_bomb",     # decompressed size over the configured limit
        "unsupported_compression",
        "record_count_mismatch",  # recordsCount disagrees with the records found
        # metadata frames
        "bad_frame_version",
        "unknown_api_key",
        "unknown_version",
        "value_too_large",
        "invalid_tag",            # a known tagged field in a version where it is not valid ("Tag N is not valid")
        # files and text sources
        "empty_file",
        "malformed_line",
        "bad_version",
        "missing_key",
        "invalid_uuid",
        "zero_uuid",
        "bad_json",
        "unrecognised_file",
        "io_error",
        "unsafe_path",
        "dump_log_error",         # kafka-dump-log printed "Error at <offset>, skipping. <msg>" with a cause we cannot map
        # packed snapshots (udfs/pack_reader.py PACK_ERROR_KINDS; also uses bad_json, bad_version, unsafe_path,
        # decompression_bomb, garbage_after_frame, io_error)
        "bad_header",       # first line is not a kafka-recon-pack header
        "bad_entry",        # entry/part line with missing or mistyped fields
        "unsafe_member",    # content on a symlink/dir/device member, or a log-dir entry that is not a dir
        "truncated_pack",   # gzip cut short, unterminated last line, or no trailer
        "corrupt_pack",     # gzip CRC/format error
        "count_mismatch",   # trailer counts disagree with the lines read
        "too_many_errors",  # reader gave up after its error cap
    }
)


@dataclass(frozen=True)
class DecodeError:
    """One malformed spot in one input: what kind, where (byte offset or 1-based line), and Kafka-style text."""

    kind: str
    message: str
    offset: Optional[int] = None  # byte position in the file, when binary
    line: Optional[int] = None  # 1-based line number, when text

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown DecodeError kind {self.kind!r}; expected one of {sorted(KINDS)}")

    def as_dict(self) -> dict:
        return asdict(self)


class CorruptInput(ValueError):
    """Raised inside a decoder; converted to a :class:`DecodeError` at the decoder's public boundary."""

    def __init__(self, kind: str, message: str, offset: Optional[int] = None, line: Optional[int] = None):
        super().__init__(message)
        self.error = DecodeError(kind, message, offset, line)
