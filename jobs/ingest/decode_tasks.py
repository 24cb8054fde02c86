"""Executor-side entry point: a partition of work units (log dirs, packs, loose files) -> tagged Arrow batches.

Runs inside ``mapInArrow``: every input file is opened here, through the collector's walker (local disks)
or pyarrow.fs (URIs), never on the driver. A unit that breaks in an unexpected way is quarantined as a
whole; the task, and so the run, goes on.
"""
from __future__ import annotations

import os
import traceback
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional

import pyarrow as pa

import collector
from jobs.tables.spec import ddl_fields
from udfs import pack_reader

from .arrow_walk_fs import ArrowWalkFs
from .discover import LOOSE_KINDS
from .filesystems import join, open_root
from .log_dir_rows import FILES, DecodeOptions, decode_entries
from .loose_files import LooseFile, decode_loose, parse_time
from .rows_direct import DirectRows
from .tagged_rows import RowSink
from .task_gc import fewer_collections
from .task_inputs import task_rows

UNIT_DDL = "kind string, root string, path string, display string, size long, headless boolean"
UNIT_FIELDS = tuple(name for name, _ in ddl_fields(UNIT_DDL))

# PackError kinds (collector) are udfs.errors kinds: bronze_ingest_files keeps the pack's own, most
# specific reason (unsafe_member, truncated_pack, ...)
PACK_ERROR_KINDS = {kind: kind for kind in pack_reader.PACK_ERROR_KINDS}
CONTENT_TABLES = ("bronze_log_dirs", "bronze_dir_entries", "bronze_metadata_records", "bronze_producer_states",
                  "bronze_offset_checkpoints", "bronze_zk_events", "bronze_reported_replicas",
                  "bronze_leader_epochs")


def is_local(root: str) -> bool:
    return "://" not in root


def walk_options(options: DecodeOptions) -> collector.CollectOptions:
    """Raw trees embed what a pack with ``--include-metadata-log`` embeds, under the configured caps."""
    return collector.CollectOptions(max_file_bytes=options.max_embedded_file_bytes, include_metadata_log=True,
                                    max_metadata_file_bytes=options.max_metadata_file_bytes,
                                    segment_scan_bytes=options.segment_summary_bytes)


def _opener(root: str, folder: str) -> Callable[[str], Any]:
    """``relative path -> binary file`` inside ``folder`` (a log dir), for files the walk did not embed."""
    if is_local(root):
        return lambda rel: open(os.path.join(folder, rel), "rb")
    filesystem, _ = open_root(root)
    return lambda rel: filesystem.open_input_file(join(folder, rel))


def decode_log_dir_unit(unit: Dict[str, Any], sink: RowSink, options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    root, path = unit["root"], unit["path"]
    walk_fs = collector.default_fs() if is_local(root) else ArrowWalkFs(open_root(root)[0])
    entries = collector.walk_log_dirs([path], walk_options(options), walk_fs)
    opener = _opener(root, path)
    locate = lambda rel: {"kind": "file", "root": root, "path": join(path, rel)}  # noqa: E731
    yield from decode_entries(entries, sink, options, display=lambda _: unit["display"],
                              open_file_for=lambda _: opener, headless=bool(unit["headless"]),
                              locate_for=(lambda _: locate) if options.defer_metadata_records else None)


def _loose_file(unit: Dict[str, Any]) -> LooseFile:
    root, path = unit["root"], unit["path"]
    filesystem, _ = open_root(root)
    info = filesystem.get_file_info(path)
    mtime = info.mtime  # aware UTC datetime (or None)
    if is_local(root):
        return LooseFile(lambda: open(path, "rb"), unit["display"], info.size, mtime)
    return LooseFile(lambda: filesystem.open_input_file(path), unit["display"], info.size, mtime)


def _file_locator(unit: Dict[str, Any], options: DecodeOptions) -> Optional[Dict[str, Any]]:
    if not options.defer_metadata_records:
        return None
    return {"kind": "file", "root": unit["root"], "path": unit["path"]}


def decode_pack_unit(unit: Dict[str, Any], sink: RowSink, options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    filesystem, _ = open_root(unit["root"])
    before = sum(sink.counts[t] for t in CONTENT_TABLES)
    with filesystem.open_input_stream(unit["path"], compression=None) as stream:
        reader = pack_reader.read_pack(stream, **options.pack_limits())
        header = reader.header
        if header is None and reader.errors and reader.errors[0].kind == "bad_header":
            reader.close()  # not a pack after all (e.g. a gzipped znode dump named *.jsonl.gz)
            loose = _loose_file(unit)
            kind = _loose_kind(loose)
            if kind != "other":
                yield from decode_loose(loose, sink, kind=kind, locator=_file_locator(unit, options),
                                        decompression_limit=options.decompression_limit_bytes)
                return
            errors = list(reader.errors)  # named like a pack, read as nothing: a damaged input, never "other"
            errors[0] = errors[0]._replace(message=f"named like a collector pack but is neither a pack nor another "
                                                   f"input kafka-recon reads ({errors[0].message})")
            header = {}
        else:
            if header is not None:
                moment = parse_time(header.get("capture_time"))
                if moment is not None:
                    sink.add("_ingest_facts", {"fact": "recorded_capture_time", "source": unit["display"],
                                               "broker_id": header.get("broker_id"), "time_value": moment})
                yield from decode_entries(iter(reader), sink, options,
                                          display=lambda log_dir: f"{unit['display']}!{log_dir}",
                                          host=header.get("host"), kafka_name=lambda log_dir: log_dir,
                                          locate_for=(lambda log_dir: lambda rel: {
                                              "kind": "pack_member", "root": unit["root"], "path": unit["path"],
                                              "log_dir": log_dir, "member": rel}) if options.defer_metadata_records
                                          else None)
            errors = list(reader.errors)
    rows = sum(sink.counts[t] for t in CONTENT_TABLES) - before
    first = errors[0] if errors else None
    sink.add(FILES, {
        "path": unit["display"], "file_kind": "packed_snapshot", "log_dir": None, "bytes": unit["size"],
        "broker_id": _int_or_none((header or {}).get("broker_id")),  # the node the pack says it is
        "status": "quarantined" if first else "ok",
        "error_kind": PACK_ERROR_KINDS.get(first.kind, "malformed_line") if first else None,
        "error_message": (f"{first.message}" + (f" (member {first.path})" if first.path else "")
                          + (f"; {len(errors) - 1} more error(s)" if len(errors) > 1 else "")) if first else None,
        "error_line": first.line if first else None, "rows_produced": rows,
    })
    yield from sink.ready()


def _loose_kind(loose: LooseFile) -> str:
    """What a file named like a pack holds when it is not one (``other``: nothing kafka-recon reads)."""
    from .loose_files import classify_loose

    try:
        return classify_loose(os.path.basename(loose.display), os.path.basename(os.path.dirname(loose.display)),
                              loose.head())
    except (OSError, EOFError, ValueError):
        return "other"


def _int_or_none(value: Any) -> Optional[int]:
    try:
        return None if value is None or isinstance(value, bool) else int(value)
    except (TypeError, ValueError):
        return None


def _unread(unit: Dict[str, Any], sink: RowSink, why: str) -> Iterator[pa.RecordBatch]:
    """One quarantined bronze_ingest_files row for an entry the ingest deliberately does not read."""
    sink.add(FILES, {"path": unit["display"], "file_kind": "other", "log_dir": None, "bytes": None,
                     "status": "quarantined", "error_kind": "unsafe_path", "error_message": why, "rows_produced": 0})
    yield from sink.ready()


def report_link_unit(unit: Dict[str, Any], sink: RowSink, options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    """A symbolic link inside the capture: reported with where it points; never followed."""
    try:
        target = os.readlink(unit["path"])
    except OSError as exc:
        target = f"(unreadable: {exc})"
    return _unread(unit, sink, f"symbolic link to {target!r} not followed (it could lead outside the capture); "
                               "pass its target as a capture root, or copy it in")


def report_bad_name_unit(unit: Dict[str, Any], sink: RowSink, options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    """An entry whose name is not UTF-8, outside any log dir (name shown escaped)."""
    return _unread(unit, sink, "the name is not valid UTF-8 (shown with \\xNN escapes); not read. Rename it, "
                               "or collect its log dir with kafka-recon collect")


HANDLERS = {"log_dir": decode_log_dir_unit, "pack": decode_pack_unit, "link": report_link_unit,
            "bad_name": report_bad_name_unit,
            "file": lambda unit, sink, options: decode_loose(
                _loose_file(unit), sink, locator=_file_locator(unit, options),
                decompression_limit=options.decompression_limit_bytes)}


def decode_units(units: Iterable[Dict[str, Any]], options: DecodeOptions) -> Iterator[pa.RecordBatch]:
    """Rows of every unit, as tagged batches; the per-partition body of ``mapInArrow``."""
    sink = RowSink(options.batch_rows)
    for unit in units:
        try:
            yield from HANDLERS[unit["kind"]](unit, sink, options)
        except Exception as exc:  # a bug or an environment failure must not stop the other units
            message = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
            sink.add(FILES, {"path": unit["display"], "file_kind": "other", "log_dir": None, "bytes": unit["size"],
                             "status": "quarantined", "error_kind": "io_error", "error_message": message[:4000],
                             "rows_produced": 0})
        yield from sink.ready()
    yield from sink.drain()


def by_input(units: Iterable[Dict[str, Any]]) -> Iterator[List[Dict[str, Any]]]:
    """A task's units as inputs: each log dir and pack alone (its rows resolve on their own), each run of
    other units (loose files) together, so their rows still share batches."""
    run: List[Dict[str, Any]] = []
    for unit in units:
        if unit["kind"] not in LOOSE_KINDS:
            if run:
                yield run
                run = []
            yield [unit]
        else:
            run.append(unit)
    if run:
        yield run


def map_partition(options: DecodeOptions, tasks: Optional[List[List[tuple]]] = None,
                  direct: Optional[DirectRows] = None) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function handed to ``DataFrame.mapInArrow`` (closes over plain, picklable options): over
    :func:`jobs.ingest.task_inputs.rows_for_tasks`' frame, with the ``tasks`` list it returned. With ``direct``
    the tasks write the bulky tables' rows themselves (:mod:`jobs.ingest.rows_direct`)."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with fewer_collections():
            units = task_rows(batches, tasks, UNIT_FIELDS)
            if direct is None:
                yield from decode_units(units, options)
            else:
                yield from direct.divert(decode_units(group, options) for group in by_input(units))
    return run


__all__ = ["UNIT_DDL", "DecodeOptions", "decode_units", "map_partition"]
