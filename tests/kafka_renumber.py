"""Rewrite a real capture's metadata records under another record version, as a newer Kafka would write them.

Kafka 4.3 writes ``RegisterBrokerRecord`` version 4: KIP-1066 adds only the nullable tagged field
``CordonedLogDirs`` (default null, so not written for a broker with no cordoned dir), so a 4.3 registration is
the 3.9 body under version 4. This helper changes the version byte of every ``RegisterBrokerRecord`` value in a
file of ``__cluster_metadata-0`` (segments and snapshots: both are v2 record batches) and recomputes each
changed batch's CRC-32C, so the result is what a Kafka writing that version leaves on disk, byte for byte
apart from the version (and the CRC).

It parses the batches itself, from Kafka's format (DefaultRecordBatch: header of 61 bytes, CRC-32C at byte
17 over the bytes from the attributes at byte 21 to the batch end; DefaultRecord: zig-zag varint fields;
AbstractApiMessageSerde: uvarint frame version 1, apiKey, version, body), not with ``udfs/``: the tests it
serves check the project's decoders, so it must not share their code.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable, Tuple

import crc32c

HEADER = 61
CRC_AT = 17
ATTRIBUTES_AT = 21


def _varint(buf: bytes, pos: int) -> Tuple[int, int]:
    """A zig-zag varint (DefaultRecord's fields)."""
    shift = raw = 0
    while True:
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if not b & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7


def _uvarint(buf: bytes, pos: int) -> Tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def renumber_file(path: Path, api_key: int, new_version: int) -> int:
    """Rewrite ``path`` in place; returns how many records changed. ``new_version`` must fit one byte (< 128)
    like the version it replaces, so no length in the file moves."""
    assert 0 <= new_version < 128
    data = bytearray(path.read_bytes())
    changed = pos = 0
    while pos + HEADER <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        attributes = struct.unpack_from(">h", data, pos + ATTRIBUTES_AT)[0]
        if attributes & 0x07 or attributes & 0x20:  # compressed or control batch: left as it is
            pos = end
            continue
        (count,) = struct.unpack_from(">i", data, pos + 57)
        rec, in_batch = pos + HEADER, 0
        for _ in range(count):
            size, body = _varint(data, rec)
            p = body + 1  # attributes
            _, p = _varint(data, p)  # timestamp delta
            _, p = _varint(data, p)  # offset delta
            key_len, p = _varint(data, p)
            p += max(key_len, 0)
            value_len, p = _varint(data, p)
            if value_len > 0 and data[p] == 1:
                key, q = _uvarint(data, p + 1)
                if key == api_key and data[q] < 0x80:
                    data[q] = new_version
                    in_batch += 1
            rec = body + size
        if in_batch:
            struct.pack_into(">I", data, pos + CRC_AT, crc32c.crc32c(bytes(data[pos + ATTRIBUTES_AT:end])))
            changed += in_batch
        pos = end
    path.write_bytes(bytes(data))
    return changed


def metadata_files(root: Path) -> Iterable[Path]:
    """Every segment and snapshot of every ``__cluster_metadata-0`` copy under ``root`` (broker disks only)."""
    for path in sorted(root.rglob("__cluster_metadata-0/*")):
        if path.suffix in (".log", ".checkpoint") and "tool-output" not in path.parts:
            yield path


def renumber_capture(root: Path, api_key: int = 0, new_version: int = 4) -> int:
    """Every RegisterBrokerRecord (``api_key`` 0) of the capture under ``new_version``; returns the count."""
    return sum(renumber_file(p, api_key, new_version) for p in metadata_files(root))
