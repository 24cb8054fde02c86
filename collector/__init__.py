"""kafka-recon's broker-side collector: walk a broker's log dirs read-only and write one packed snapshot.

Modules, in the order the one-file build (``python -m collector.build``) joins them: ``pack_format`` (the format
and its constants), ``options``, ``filesystem`` (the read-only filesystem protocol), ``segments`` (segment
summaries), ``java_properties``, ``walk``, ``header``, ``pack_writer``, ``cli``. Everything here is stdlib only;
packs are read by :mod:`udfs.pack_reader`.
"""
from .cli import (  # noqa: F401
    build_parser,
    main,
)
from .filesystem import (  # noqa: F401
    LocalFileSystem,
    NotRegularFile,
    PathFileSystem,
    RandomReader,
    Stat,
    default_fs,
    oserror_text,
)
from .header import (  # noqa: F401
    make_header,
    parse_capture_time,
    read_identity,
    utc_now_iso,
)
from .java_properties import (  # noqa: F401
    MalformedProperty,
    java_properties,
    parse_properties,
)
from .options import (  # noqa: F401
    CollectOptions,
    embed_cap,
)
from .pack_format import (  # noqa: F401
    COLLECTOR_VERSION,
    DEFAULT_COMPRESS_LEVEL,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_METADATA_FILE_BYTES,
    DEFAULT_SEGMENT_SCAN_BYTES,
    ENTRY_FIELDS,
    ENTRY_KINDS,
    FLAG_CHANGED,
    FLAG_INCOMPLETE,
    FLAG_NON_UTF8,
    FLAG_OVER_CAP,
    FLAG_UNREADABLE,
    FLAG_VANISHED,
    FORMAT_NAME,
    FORMAT_VERSION,
    KIND_DIR,
    KIND_FILE,
    KIND_OTHER,
    KIND_SYMLINK,
    LOCK_FILE,
    MAX_SUMMARY_MARKERS,
    METADATA_DIR,
    PACK_SUFFIXES,
    PART_BYTES,
)
from .pack_writer import (  # noqa: F401
    UsageError,
    check_output_path,
    collect,
    default_pack_name,
    entry_lines,
    write_pack,
)
from .segments import (  # noqa: F401
    last_index_entry,
    segment_summary,
    summarize_segment,
    summary_targets,
)
from .walk import (  # noqa: F401
    walk_log_dirs,
)
