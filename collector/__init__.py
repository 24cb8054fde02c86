"""kafka-recon's broker-side collector: walk a broker's log dirs read-only and write one packed snapshot.

Modules, in the order the one-file build (``python -m collector.build``) joins them: ``pack_format`` (the format
and its constants), ``options``, ``filesystem`` (the read-only filesystem protocol), ``segments`` (segment
summaries), ``java_properties``, ``walk``, ``header``, ``pack_writer``, ``cli``. Everything here is stdlib only;
packs are read by :mod:`udfs.pack_reader`.
This module re-exports what ingest, the simulator and the tests use.
"""
from .cli import main
from .filesystem import LocalFileSystem, NotRegularFile, PathFileSystem, Stat, default_fs
from .header import make_header, parse_capture_time
from .java_properties import MalformedProperty, java_properties, parse_properties
from .options import CollectOptions
from .pack_format import (
    DEFAULT_MAX_METADATA_FILE_BYTES,
    DEFAULT_SEGMENT_SCAN_BYTES,
    ENTRY_FIELDS,
    FLAG_OVER_CAP,
    FORMAT_NAME,
    KIND_DIR,
    KIND_FILE,
    KIND_OTHER,
    KIND_SYMLINK,
    PACK_SUFFIXES,
    PART_BYTES,
)
from .pack_writer import UsageError, collect, write_pack
from .segments import last_index_entry, summarize_segment, summary_targets
from .walk import walk_log_dirs

__all__ = ['CollectOptions', 'DEFAULT_MAX_METADATA_FILE_BYTES', 'DEFAULT_SEGMENT_SCAN_BYTES', 'ENTRY_FIELDS', 'FLAG_OVER_CAP', 'FORMAT_NAME', 'KIND_DIR', 'KIND_FILE', 'KIND_OTHER', 'KIND_SYMLINK', 'LocalFileSystem', 'MalformedProperty', 'NotRegularFile', 'PACK_SUFFIXES', 'PART_BYTES', 'PathFileSystem', 'Stat', 'UsageError', 'collect', 'default_fs', 'java_properties', 'last_index_entry', 'main', 'make_header', 'parse_capture_time', 'parse_properties', 'summarize_segment', 'summary_targets', 'walk_log_dirs', 'write_pack']
