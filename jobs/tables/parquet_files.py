"""What the Delta log needs to know about a Parquet file Spark wrote: partition values and column stats;
and :class:`StagedParquet`, files written with pyarrow outside Spark and committed the same way.

Spark-free (pyarrow only) so it is unit-tested without a session. Facts it relies on, checked here:
- Spark names partition folders ``col=value`` with ``value`` escaped as ``%XX`` for a fixed set of ASCII
  characters (``ExternalCatalogUtils.escapePathName``) and spells null (and the empty string) as
  ``__HIVE_DEFAULT_PARTITION__``. Decoding is the exact inverse: every ``%XX`` becomes one character.
- The Delta log wants the *decoded* value in ``partitionValues`` and the raw on-disk relative path in the
  add action (delta-rs URI-encodes it itself; encoding it here would double-encode it).
- Column stats come from the Parquet footer only (no data read). Data skipping must never skip a file
  that holds a matching row, so bounds are widened, never narrowed: timestamps to whole milliseconds
  outward, text min cut to 32 characters, text max dropped when longer; doubles and booleans get no
  min/max (NaN ordering differs between readers), nested columns get no stats.
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

import pyarrow as pa

from .spec import TableSpec, arrow_type

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
STRING_STATS_PREFIX = 32
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MIN_MAX_TYPES = ("string", "int", "long", "timestamp")
PARTITION_TYPES = ("string", "int", "long", "boolean")
"""Column types the embedded backend accepts as partition columns (their folder text is Delta's text)."""


def unescape_path_name(text: str) -> str:
    """Inverse of Spark's ``escapePathName``: each ``%XX`` is one character."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def partition_values_from_dir(rel_dir: str, partition_by: Sequence[str]) -> Dict[str, Optional[str]]:
    """``"capture_id=a%3Ab"`` -> ``{"capture_id": "a:b"}``; raise ValueError if the folders are not the partitions."""
    parts = [p for p in rel_dir.split("/") if p] if rel_dir else []
    if len(parts) != len(partition_by):
        raise ValueError(f"file folder {rel_dir!r} does not match partition columns {list(partition_by)}")
    values: Dict[str, Optional[str]] = {}
    for part, column in zip(parts, partition_by, strict=True):
        name, sep, raw = part.partition("=")
        if not sep or unescape_path_name(name) != column:
            raise ValueError(f"folder {part!r} in {rel_dir!r} is not a '{column}=<value>' partition folder")
        values[column] = None if raw == NULL_PARTITION else unescape_path_name(raw)
    return values


def _micros(value: Any) -> int:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return (value - _EPOCH) // _dt.timedelta(microseconds=1)
    return int(value)


def _millis_text(micros: int, round_up: bool) -> str:
    millis = -(-micros // 1000) if round_up else micros // 1000
    moment = _EPOCH + _dt.timedelta(milliseconds=millis)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class FileStats:
    """Row count and per-column bounds of one Parquet file (raw values, before Delta's widening)."""

    num_records: int
    min_values: Dict[str, Any] = field(default_factory=dict)
    max_values: Dict[str, Any] = field(default_factory=dict)
    null_counts: Dict[str, int] = field(default_factory=dict)
    types: Dict[str, str] = field(default_factory=dict)

    def delta_json(self) -> str:
        """The add action's ``stats`` string (numRecords, minValues, maxValues, nullCount)."""
        mins: Dict[str, Any] = {}
        maxs: Dict[str, Any] = {}
        for name, value in self.min_values.items():
            kind = self.types[name]
            if kind == "timestamp":
                mins[name] = _millis_text(_micros(value), round_up=False)
            elif kind == "string":
                mins[name] = value[:STRING_STATS_PREFIX]
            else:
                mins[name] = value
        for name, value in self.max_values.items():
            kind = self.types[name]
            if kind == "timestamp":
                maxs[name] = _millis_text(_micros(value), round_up=True)
            elif kind == "string":
                if len(value) <= STRING_STATS_PREFIX:
                    maxs[name] = value
            else:
                maxs[name] = value
        return json.dumps({"numRecords": self.num_records, "minValues": mins, "maxValues": maxs,
                           "nullCount": dict(self.null_counts)}, separators=(",", ":"), ensure_ascii=False)


def footer_stats(metadata, spec: TableSpec) -> FileStats:
    """Stats of the spec's non-partition, non-nested columns from a ``pyarrow.parquet.FileMetaData``."""
    wanted = {c.name: c.type for c in spec.columns if c.name not in spec.partition_by and "<" not in c.type}
    chunks: Dict[str, List[Any]] = {name: [] for name in wanted}
    for rg_index in range(metadata.num_row_groups):
        row_group = metadata.row_group(rg_index)
        for col_index in range(row_group.num_columns):
            chunk = row_group.column(col_index)
            if chunk.path_in_schema in chunks:
                chunks[chunk.path_in_schema].append((row_group.num_rows, chunk.statistics))
    mins: Dict[str, Any] = {}
    maxs: Dict[str, Any] = {}
    nulls: Dict[str, int] = {}
    for name, found in chunks.items():
        if len(found) != metadata.num_row_groups:
            continue  # column absent from some row group: say nothing rather than something wrong
        if all(s is not None and s.has_null_count for _, s in found):
            nulls[name] = sum(s.null_count for _, s in found)
        if wanted[name] not in _MIN_MAX_TYPES:
            continue
        bounded = [s for rows, s in found if not (s is not None and s.has_null_count and s.null_count == rows)]
        if not bounded or not all(s is not None and s.has_min_max for s in bounded):
            continue
        mins[name] = min(s.min for s in bounded)
        maxs[name] = max(s.max for s in bounded)
    return FileStats(metadata.num_rows, mins, maxs, nulls, dict(wanted))


def file_schema_problems(file_schema: pa.Schema, spec: TableSpec) -> List[str]:
    """Differences between a written file's Arrow schema and the spec (partition columns excluded).

    Catches what the DataFrame schema cannot show, e.g. a session writing INT96 timestamps
    (read back as ``timestamp[ns]``) instead of TIMESTAMP_MICROS.
    """
    problems = []
    for column in spec.columns:
        if column.name in spec.partition_by:
            continue
        index = file_schema.get_field_index(column.name)
        if index < 0:
            problems.append(f"written file lacks column {column.name!r}")
            continue
        if not _same_arrow_type(file_schema.field(index).type, arrow_type(column.type)):
            problems.append(f"column {column.name!r}: file has {file_schema.field(index).type}, "
                            f"table needs {arrow_type(column.type)}")
    return problems


def _same_arrow_type(found: pa.DataType, expected: pa.DataType) -> bool:
    if pa.types.is_list(expected):
        return (pa.types.is_list(found) or pa.types.is_large_list(found)) and _same_arrow_type(
            found.value_type, expected.value_type)
    if pa.types.is_string(expected):
        return pa.types.is_string(found) or pa.types.is_large_string(found)
    if pa.types.is_binary(expected):
        return pa.types.is_binary(found) or pa.types.is_large_binary(found)
    return found.equals(expected)


def partition_dir(values: Mapping[str, Optional[str]], partition_by: Sequence[str]) -> str:
    """Inverse of ``partition_values_from_dir`` for tests and messages (Spark's escaping of the common set)."""
    out = []
    for column in partition_by:
        value = values.get(column)
        text = NULL_PARTITION if value in (None, "") else "".join(
            f"%{ord(ch):02X}" if ch in _SPARK_ESCAPED or ord(ch) < 0x20 else ch for ch in value)
        out.append(f"{column}={text}")
    return "/".join(out)


_SPARK_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^')


STAGING_DIR = "_kr_staging"
"""Folder under a table's location where files wait for their commit (ignored by Delta readers: ``_`` prefix)."""


def location_filesystem(location: str):
    """``(pyarrow filesystem, root path)`` of a table location: a local path, ``file://`` or any pyarrow URI."""
    import os

    from pyarrow import fs as pafs

    if "://" in location and not location.startswith("file://"):
        filesystem, root = pafs.FileSystem.from_uri(location)
        return filesystem, root.rstrip("/")
    local = os.path.abspath(location[len("file://"):] if location.startswith("file://") else location)
    return pafs.LocalFileSystem(), local


@dataclass(frozen=True)
class StagedParquet:
    """Parquet files of one table's slice written outside Spark (by executors, with pyarrow) and committed
    with that table's next ``replace_slice``: rows that never pass through the JVM.

    Picklable (plain fields), so it travels to executors inside the task closure. Writers put their files
    under ``<location>/<staging>/<partition>/``; only complete ``*.parquet`` files are committed (a writer
    names a file after its task, so a retried task replaces its file instead of adding one).
    """

    table: str
    location: str  # the table's location (local path or URI)
    staging: str  # folder relative to ``location``, under STAGING_DIR
    partition: str  # the slice's partition folder, e.g. "capture_id=cap-1" ("" when unpartitioned)
    schema: pa.Schema  # file columns: the table's minus its partition columns, in spec order

    def folder(self):
        """``(pyarrow filesystem, path)`` of the folder writers put this slice's files in."""
        filesystem, root = location_filesystem(self.location)
        return filesystem, "/".join(p for p in (root, self.staging, self.partition) if p)

    def discard(self) -> None:
        """Delete the staging folder and whatever writers put there (best effort; committed: gone already)."""
        filesystem, root = location_filesystem(self.location)
        try:
            filesystem.delete_dir(f"{root}/{self.staging}")
        except (FileNotFoundError, OSError):
            pass
