"""MetadataRecord -> bronze_metadata_records row, driven by one table of (record type -> {column: data key}).

The typed columns (topic_id, replicas, fenced, ...) are lifted out of each record's ``data`` dict (Kafka's
DumpLogSegments JSON names) so later stages never parse ``payload_json``. Adding a record type means adding
one line to :data:`jobs.tables.record_columns.COLUMN_SOURCES` (whose column types come from Kafka's specs),
not a branch.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.compute as pc

# which record field feeds which typed column, and the columns' types derived from Kafka's message specs
from jobs.tables.record_columns import COLUMN_SOURCES, COLUMN_TYPES, source_parts
from udfs.metadata_record import BatchRows, MetadataRecord

from .tagged_rows import CONVERSION_ERRORS, fit


def _coerce(value: Any, type_name: str) -> Any:
    """JSON value -> column value; a value of the wrong shape becomes null rather than failing the file."""
    if value is None:
        return None
    try:
        if type_name in ("int", "long"):
            if isinstance(value, bool):
                return int(value)
            return int(value) if isinstance(value, (int, float)) or str(value).lstrip("-").isdigit() else None
        if type_name == "string":
            return value if isinstance(value, str) else None
        if type_name == "array<int>":
            return [int(v) for v in value] if isinstance(value, list) else None
        if type_name == "array<string>":
            return [str(v) for v in value] if isinstance(value, list) else None
    except (TypeError, ValueError):
        return None
    return None


def _fast(type_name: str):
    """The coercion of one column type, with the common case (the decoder's own types) checked first."""
    if type_name in ("int", "long"):
        return lambda v: v if type(v) is int else _coerce(v, type_name)
    if type_name == "string":
        return lambda v: v if type(v) is str else None
    item = int if type_name == "array<int>" else str
    return lambda v: v if type(v) is list and all(type(x) is item for x in v) else _coerce(v, type_name)


# per record type: (column, data key, value when absent, coercion), built once from the table above
_PLANS: Dict[str, tuple] = {
    record_type: tuple((column, *source_parts(source),
                        _fast(COLUMN_TYPES[column])) for column, source in sources.items())
    for record_type, sources in COLUMN_SOURCES.items()
}
_NO_COLUMNS: Dict[str, Any] = dict.fromkeys(COLUMN_TYPES)


def _as_int(value: Any) -> Any:
    return _coerce(value, "int")


# what the filler checks of a decoded scalar (a bool, RegisterBroker's fenced, becomes 0/1 in an int column)
_CHECKS = dict.fromkeys(("int", "long"), "v if v is None or type(v) is int else _as_int(v)")
_CHECKS["string"] = "v if type(v) is str else None"


def _source_sets() -> list:
    """The distinct column-source sets of :data:`COLUMN_SOURCES`, the partition records' first (most records of a
    real log): one filler branch each (PartitionRecord and PartitionChangeRecord share one)."""
    sets: list = []
    for record_type in sorted(COLUMN_SOURCES, key=lambda t: not t.startswith("PARTITION")):
        if COLUMN_SOURCES[record_type] not in sets:
            sets.append(COLUMN_SOURCES[record_type])
    return sets


# what the fused row functions return per record type (udfs.message_codegen_rows): each typed column's field, in
# the order of COLUMN_SOURCES, with its value when absent
ROW_FIELDS = tuple((record_type, tuple(source_parts(source) for source in sources.values()))
                   for record_type, sources in COLUMN_SOURCES.items())


def _trusted_filler_source(from_values: bool = False) -> Tuple[str, Dict[str, int]]:
    """The source of ``fill(types, datas, at, typed)``: the typed columns of decoded rows ``at``, ``at + 1``, ...
    whose data the generated decoders produced (dicts of the spec'd value types, so arrays need no check),
    written from :data:`COLUMN_SOURCES` as one branch of straight assignments per set of column sources.
    ``from_values``: ``datas`` are the fused row functions' value tuples (:data:`ROW_FIELDS`' order), unpacked
    instead of read by key. Why: a loop over each record's plan (``_set_typed``) cost ~1.1 CPU s per million
    records of the real log, whose batches mix seven record types; the branches cost ~0.7 (session 35,
    docs/benchmarks.md). Names in the text come from our own tables, never from input. See the text with
    ``print(_trusted_filler_source()[0])``."""
    columns = {column: f"c{n}" for n, column in enumerate(COLUMN_TYPES)}
    sources = _source_sets()
    lines = ["def fill(types, datas, at, typed):"]
    lines += [f"    {local} = typed[{column!r}]" for column, local in columns.items()]
    lines += ["    i = at", "    for t, d in zip(types, datas):", "        k = _codes_get(t)"]
    for k, columns_of in enumerate(sources):
        lines.append(f"        {'if' if k == 0 else 'elif'} k == {k}:")
        if from_values:
            names = [f"x{n}" for n in range(len(columns_of))]
            lines.append(f"            {', '.join(names)}{',' if len(names) == 1 else ''} = d")
        else:
            lines.append("            g = d.get")
        for n, (column, source) in enumerate(columns_of.items()):
            key, default = source_parts(source)
            local, check = columns[column], _CHECKS.get(COLUMN_TYPES[column])
            get = f"x{n}" if from_values else f"g({key!r}{'' if default is None else f', {default!r}'})"
            if check:
                lines += [f"            v = {get}", f"            {local}[i] = {check}"]
            else:  # arrays: lists of the spec'd element type already
                lines.append(f"            {local}[i] = {get}")
    lines.append("        i += 1")
    codes = {record_type: sources.index(columns_of) for record_type, columns_of in COLUMN_SOURCES.items()}
    return "\n".join(lines) + "\n", codes


def _trusted_filler(from_values: bool = False):
    source, codes = _trusted_filler_source(from_values)
    namespace = {"_codes_get": codes.get, "_as_int": _as_int}
    exec(compile(source, "<generated typed-column filler>", "exec"), namespace)  # noqa: S102 - our own text
    return namespace["fill"]


_fill_trusted = _trusted_filler()
_fill_values = _trusted_filler(from_values=True)


def typed_columns(record_type: Optional[str], data: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The typed columns of one record as a dict: every column of :data:`COLUMN_TYPES`, null when not
    applicable, every value checked against its column type. :class:`RecordColumns` fills decoded batches with
    the generated filler (:func:`_trusted_filler_source`), untrusted batches of one type column by column, and
    any other record through this."""
    out = _NO_COLUMNS.copy()
    plan = _PLANS.get(record_type or "")
    if not plan or not (type(data) is dict or isinstance(data, Mapping)):
        return out
    get = data.get
    for column, key, default, coerce in plan:
        value = get(key, default)
        out[column] = None if value is None else coerce(value)
    return out


def record_hash(record: MetadataRecord, payload: Optional[str] = None) -> str:
    """Hash of what a record says (control flag, type, version, payload), equal across copies of one record.

    Control records other than transaction markers hash by type only: kafka-dump-log prints no payload for
    LEADER_CHANGE and no version for any control record, and their content is implied by offset and epoch.
    The digest is SHA-256 of ``"type|version|payload"`` (:func:`_hashes`, which ingest calls a batch at a time).
    """
    if record.is_control:
        text = f"control|{record.type}"
    elif record.data is not None:
        return _hashes([record.type], [record.version],
                       [payload if payload is not None else record.payload_json()])[0]
    else:
        text = f"undecodable|{record.type}|{record.version}|{(record.raw_value or b'').hex()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _hashes(types: Sequence[Optional[str]], versions: Sequence[Optional[int]], payloads: Sequence[str]) -> list:
    """:func:`record_hash` of decoded records that are not control records: SHA-256 of ``"type|version|payload"``,
    first 32 hex digits; a batch at a time, one digest per record through ``map`` (~0.55 us per record)."""
    return [digest.hexdigest()[:32] for digest in map(hashlib.sha256, [
        f"{t}|{v}|{p}".encode("utf-8") for t, v, p in zip(types, versions, payloads, strict=True)])]


@lru_cache(maxsize=4096)  # the records of one batch share its timestamp
def millis_to_datetime(millis: Optional[int]) -> Optional[datetime]:
    if millis is None or millis < 0:
        return None
    try:
        return datetime.fromtimestamp(millis / 1000.0, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


SOURCE_COLUMNS = ("copy_id", "source_broker_id", "source_file", "source_kind", "section", "snapshot_end_offset")
RECORD_COLUMNS = ("offset", "batch_base_offset", "leader_epoch", "append_time", "is_control", "record_type",
                  "api_key", "version", "payload_json", "record_hash", "error_kind", "error_message", "raw_value")


class RecordColumns:
    """bronze_metadata_records rows (without capture_id/run_id) built column by column, a batch at a time.

    Why columns: a dict per record, then Arrow's dict-to-struct conversion, cost ~9 CPU s per million records
    (bench 1M log into bronze); one list per column, converted once, costs a fraction. Why a batch at a
    time (:meth:`add_many`): a method call per record with a dozen appends was the largest single cost left
    (cProfile: ~40% of building a block); a batch's records extend each column in one comprehension, and the
    typed columns of decoded records are filled by one generated function per batch
    (:func:`_trusted_filler_source`). Typed columns are sparse (a record fills 1-8 of 20), so they are
    preallocated and filled by index or slice. ``source`` gives copy_id, source_broker_id, source_file,
    source_kind, section, snapshot_end_offset, held as runs of one value. A binary log's batches go in as the
    decoder leaves them (:meth:`add_batch`: no MetadataRecord per record); dump text and tests add records
    (:meth:`add_many`).

    Example::

        cols = RecordColumns()
        for batch in metadata_log.iter_metadata_batch_rows(path, row_fields=ROW_FIELDS):
            cols.add_batch(batch, {"copy_id": "1:/data", "source_file": path})
        block = cols.take(STRUCT)   # a pyarrow StructArray of every row, and the builder is empty again
    """

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._reset()

    def _reset(self) -> None:
        self.n = 0
        self._runs: list = []  # [source, rows]: consecutive records of one file share their source dict
        self._record = [[] for _ in RECORD_COLUMNS]  # append_time holds the batch's milliseconds until take()
        self._typed = {column: [None] * self.capacity for column in COLUMN_TYPES}

    def __len__(self) -> int:
        return self.n

    def full(self) -> bool:
        return self.n >= self.capacity

    def add(self, record: MetadataRecord, source: Mapping[str, Any]) -> None:
        """Add one record (the builder grows past ``capacity`` if the caller does not :meth:`take`)."""
        self.add_many((record,), source)

    def add_many(self, records: Sequence[MetadataRecord], source: Mapping[str, Any]) -> None:
        """Add records that share ``source`` (usually one batch's), in order."""
        count = len(records)
        if not count:
            return
        at = self._open(count, source)
        payloads = [r.payload_json() for r in records]
        types = [r.type for r in records]
        versions = [r.version for r in records]
        controls = [bool(r.is_control) for r in records]
        errors = [r.error for r in records]
        if True in controls or None in payloads:
            hashes = [record_hash(r, p) for r, p in zip(records, payloads, strict=True)]
        else:
            hashes = _hashes(types, versions, payloads)
        self._extend([r.offset for r in records], [r.batch_base_offset for r in records],
                     [r.leader_epoch for r in records], [r.timestamp for r in records], controls, types,
                     [r.api_key for r in records], versions, payloads, hashes,
                     [e.kind if e else None for e in errors], [e.message if e else None for e in errors],
                     [None if e is None or r.raw_value is None else bytes(r.raw_value)
                      for r, e in zip(records, errors, strict=True)])
        datas = [r.data for r in records]
        if all(type(d) is dict for d in datas):
            if all(r._json_writer is not None for r in records):
                _fill_trusted(types, datas, at, self._typed)
                return
            if types.count(types[0]) == count:
                self._typed_one_type(at, types[0], datas)
                return
        for index, record in enumerate(records, at):
            self._set_typed(index, record.type, record.data)

    def add_batch(self, batch: BatchRows, source: Mapping[str, Any]) -> None:
        """Add one batch's records as the decoder left them
        (:func:`udfs.metadata_log.iter_metadata_batch_rows` with ``row_fields=ROW_FIELDS``: each decoded record's
        JSON text and typed fields from its fused row function, no MetadataRecord or dict per record). Records
        off the fast path (control records, errors, unusual shapes) go through :meth:`add_many`, in order."""
        if not batch.fused:
            self.add_many(batch.records(), source)
            return
        rows = batch.rows
        if batch.others:
            start = 0
            for end in [n for n, row in enumerate(rows) if type(row) is not tuple] + [len(rows)]:
                self._add_fused(batch, rows[start:end], source)
                if end < len(rows):
                    self.add_many((rows[end],), source)
                start = end + 1
            return
        self._add_fused(batch, rows, source)

    def _add_fused(self, batch: BatchRows, rows: list, source: Mapping[str, Any]) -> None:
        """Consecutive fused rows of ``batch``: its fields repeated, the texts and value tuples as they came."""
        count = len(rows)
        if not count:
            return
        at = self._open(count, source)
        offsets, frames, payloads, values = zip(*rows, strict=True)
        types = [frame[0] for frame in frames]
        versions = [frame[3] for frame in frames]
        nothing = [None] * count
        self._extend(offsets, [batch.base_offset] * count, [batch.leader_epoch] * count, [batch.timestamp] * count,
                     [False] * count, types, [frame[2] for frame in frames], versions, payloads,
                     _hashes(types, versions, payloads), nothing, nothing, nothing)
        _fill_values(types, values, at, self._typed)

    def _open(self, count: int, source: Mapping[str, Any]) -> int:
        """Room for ``count`` more rows of ``source``; returns the index of the first."""
        at = self.n
        room = len(self._typed["topic_id"])  # every typed column has the same length
        if at + count > room:
            grow = max(self.capacity, at + count - room)
            for values in self._typed.values():
                values.extend([None] * grow)
        runs = self._runs
        if runs and runs[-1][0] is source:
            runs[-1][1] += count
        else:
            runs.append([source, count])
        self.n = at + count
        return at

    def _extend(self, *columns: Sequence[Any]) -> None:
        """Extend the record columns (:data:`RECORD_COLUMNS`, in that order)."""
        for values, more in zip(self._record, columns, strict=True):
            values.extend(more)

    def _typed_one_type(self, at: int, record_type: Optional[str], datas: list) -> None:
        """The typed columns of rows of one record type whose data are dicts (not all from the generated
        decoders, so every value is checked), column by column."""
        typed, count = self._typed, len(datas)
        for column, key, default, coerce in _PLANS.get(record_type or "") or ():
            typed[column][at:at + count] = [None if (v := d.get(key, default)) is None else coerce(v) for d in datas]

    def _set_typed(self, at: int, record_type: Optional[str], data: Any) -> None:
        """One record's typed columns (a batch whose records are not all decoded dicts of one kind: rare)."""
        typed = self._typed
        for column, value in typed_columns(record_type, data).items():
            if value is not None:
                typed[column][at] = value

    def _source_columns(self) -> list:
        columns = [[] for _ in SOURCE_COLUMNS]
        for source, rows in self._runs:
            for values, column in zip(columns, SOURCE_COLUMNS, strict=True):
                values.extend([source.get(column)] * rows)
        return columns

    def _source_array(self, column: str, type_: pa.DataType) -> pa.Array:
        """A source column as runs of one value (no list of a million equal values to convert)."""
        runs = [pa.repeat(pa.scalar(source.get(column), type_), rows) for source, rows in self._runs]
        return runs[0] if len(runs) == 1 else pa.concat_arrays(runs) if runs else pa.nulls(0, type_)

    def _held(self) -> Dict[str, list]:
        """The record and typed columns as lists (the source columns are runs: :meth:`_source_array`)."""
        held = dict(zip(RECORD_COLUMNS, self._record, strict=True))
        held.update((column, values[: self.n]) for column, values in self._typed.items())
        return held

    def rows(self) -> list:
        """The rows held, as dicts (for :func:`metadata_row` and the value-does-not-fit fallback)."""
        held = dict(zip(SOURCE_COLUMNS, self._source_columns(), strict=True))
        held.update(self._held())
        held["append_time"] = [millis_to_datetime(m) for m in held["append_time"]]
        names = list(held)
        return [dict(zip(names, values, strict=True)) for values in zip(*held.values(), strict=True)]

    def take(self, struct):
        """Every row held as a ``pyarrow.StructArray`` of type ``struct`` (field names are column names); the
        builder is empty afterwards. A value that does not fit its column is nulled and explained in the row's
        error columns (tagged_rows.fit), as for every other table."""
        held = self._held()
        try:
            arrays = [self._source_array(f.name, f.type) if f.name in SOURCE_COLUMNS else
                      _millis_array(held[f.name], f.type) if f.name == "append_time" else
                      pa.array(held[f.name], type=f.type) if f.name in held else pa.nulls(self.n, f.type)
                      for f in struct]
            block = pa.StructArray.from_arrays(arrays, fields=list(struct))
        except CONVERSION_ERRORS:
            block = pa.array([fit(row, struct) for row in self.rows()], type=struct)
        self._reset()
        return block


# the last millisecond datetime can hold (9999-12-31T23:59:59.999Z): millis_to_datetime's range
_MAX_MILLIS = 253_402_300_799_999


def _millis_array(millis: list, type_: pa.DataType) -> pa.Array:
    """Batch timestamps (ms) as ``type_``, null where :func:`millis_to_datetime` gives None (negative: no
    timestamp, or past year 9999), without a datetime object per record."""
    values = pa.array(millis, type=pa.int64())
    valid = pc.and_(pc.greater_equal(values, 0), pc.less_equal(values, _MAX_MILLIS))
    values = pc.if_else(valid, values, pa.scalar(None, pa.int64()))
    return values.cast(pa.timestamp("ms", tz="UTC")).cast(type_)


def metadata_row(record: MetadataRecord, source: Mapping[str, Any]) -> Dict[str, Any]:
    """One bronze_metadata_records row (without capture_id/run_id), as :class:`RecordColumns` builds it."""
    columns = RecordColumns(1)
    columns.add(record, source)
    return columns.rows()[0]


def batch_row(summary: Mapping[str, Any], source: Mapping[str, Any]) -> Dict[str, Any]:
    """One bronze_metadata_batches row (without capture_id/run_id) from a batch summary
    (``udfs.metadata_log.iter_metadata_batches`` or a dump-log batch line) and its ``source``."""
    error = summary.get("error")
    return {
        "copy_id": source.get("copy_id"), "source_broker_id": source.get("source_broker_id"),
        "source_file": source.get("source_file"), "source_kind": source.get("source_kind"),
        "section": source.get("section"), "snapshot_end_offset": source.get("snapshot_end_offset"),
        "base_offset": summary.get("base_offset"), "last_offset": summary.get("last_offset"),
        "records": summary.get("records"), "leader_epoch": summary.get("leader_epoch"), "crc": summary.get("crc"),
        "crc_valid": summary.get("crc_valid"), "is_control": summary.get("is_control"),
        "is_transactional": summary.get("is_transactional"), "position": summary.get("position"),
        "size_bytes": summary.get("size_bytes"), "max_timestamp": millis_to_datetime(summary.get("max_timestamp_ms")),
        "error_kind": error.kind if error is not None else None,
        "error_message": error.message if error is not None else None,
    }
