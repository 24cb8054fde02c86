"""The packed snapshot ("pack") format, version 1: the constants the collector and the reader share.

The broker-side collector is this package (``collector/``), stdlib only (Python >= 3.8). Build it as one file,
copy that to a broker and run ::

    python -m collector.build /tmp/kafka-recon-collector.py          # where the project is installed
    python3 kafka-recon-collector.py --log-dir /var/lib/kafka/data-a /var/lib/kafka/data-b --out /tmp/broker.jsonl.gz

or, from the project, ``kafka-recon collect --log-dir DIR... --out FILE``. The collector lists every entry of
every log dir given (the log dir itself, its children, and the children of each child directory: depth 2) and
embeds the bytes of the small metadata files into one gzip file, so that Spark reads hundreds of packs instead
of millions of small files. The same file holds a raw-tree walker (``walk_log_dirs``) that yields exactly the
entries the pack would hold, so ingest of a raw tree and ingest of its pack give identical rows by construction.
Packs are read by :mod:`udfs.pack_reader` (with the decoders, on the executors; not needed on a broker).

Safety on the broker (why it looks the way it does)
---------------------------------------------------
* Read-only: files and directories are opened ``O_RDONLY`` (plus ``O_NOATIME`` when the kernel permits it,
  ``O_NOFOLLOW``, ``O_NONBLOCK`` so a FIFO swapped in can never block, ``O_CLOEXEC``). Nothing is ever
  created inside a log dir; ``--out`` inside (or equal to) a log dir is refused before anything is written.
* Kafka's ``.lock`` is never opened (it is listed like any other entry).
* Symlinks below a log dir are recorded as ``kind: symlink`` with their target text and never followed. On
  POSIX the walk is descriptor-relative (``openat``/``fstatat`` with ``O_NOFOLLOW``), so even a directory
  swapped for a symlink between listing and descending is not followed. Only the log dir paths given on the
  command line are resolved the usual way (an operator's ``/kafka -> /mnt/disk1`` link is fine).
* Files that vanish, are replaced, grow or shrink during the walk are recorded with a flag, never an error.
* Bounded memory: entries are streamed to the output as they are found (directory order, no sorting, no list
  of entries), so 100k+ partitions cost the same memory as 10. An embedded file is held in memory once; its
  size is capped (``--max-file-bytes``, ``--max-metadata-file-bytes``); a file over its cap is listed with
  the flag ``over_cap`` and its bytes are not read (a 10 GiB sparse pre-allocated index costs one ``lstat``).

Which bytes are embedded
------------------------
* In the log dir: ``meta.properties``, ``.kafka_cleanshutdown``, ``bootstrap.checkpoint`` and every
  ``*-checkpoint`` file (recovery-point, log-start, replication and cleaner offset checkpoints).
* In any child directory: ``partition.metadata``, ``leader-epoch-checkpoint``, ``quorum-state`` and producer-state
  snapshots ``<20 digits>.snapshot``.
* With ``--include-metadata-log``, in ``__cluster_metadata-0`` only: segments ``<20 digits>.log`` and snapshots
  ``<20 digits>-<10 digits>.checkpoint``, under their own cap.
Everything else (data segments, indexes, ``.lock`` ...) is listed only. Data segments that decide what the broker
does at its next start get a *segment summary* instead of their bytes (below): the newest segment of every
partition dir, and every segment from the one holding the newest producer-state snapshot's offset on.

The pack format, version 1 (public; bump ``version`` only for incompatible changes)
-----------------------------------------------------------------------------------
A pack is a gzip stream (RFC 1952; several concatenated members are allowed) of UTF-8 JSON lines, each line
one JSON object terminated by ``\\n``; an uncompressed file of the same lines is also accepted by the reader.
Every object has ``"rec"``, the record type. Readers skip record types they do not know and ignore keys they
do not know; new optional keys may appear without a version bump. Suggested name: ``*.jsonl.gz`` (Spark's and
every other JSON-lines reader then decompress it transparently). The lines, in order:

1. ``{"rec":"header"}`` exactly once, first: ``format`` = ``"kafka-recon-pack"``, ``version`` = 1,
   ``collector_version``, ``python_version``, ``broker_id`` (int or null; ``node.id``, else ``broker.id``, of the
   log dirs' ``meta.properties``, null when they disagree or none has one), ``cluster_id`` (string or null),
   ``log_dir_ids`` ({log dir: ``directory.id`` or null}), ``host`` (``socket.gethostname()``), ``capture_time``
   (UTC ISO-8601 with milliseconds and ``Z``), ``log_dirs`` (list of the log dir paths as given), ``options``
   (the walk options), ``warnings`` (list of strings).
2. ``{"rec":"entry"}`` once per entry of the walk, with
   ``log_dir`` (one of the header's ``log_dirs``), ``path`` (relative to ``log_dir``, ``/``-separated, at most
   two components; ``""`` is the log dir itself), ``kind`` (``dir``, ``file``, ``symlink`` or ``other`` =
   device, FIFO or socket), and when known: ``size`` (apparent size, ``st_size``), ``alloc`` (allocated bytes,
   ``st_blocks * 512``, smaller than ``size`` for sparse files), ``mtime_ms``, ``mode`` (``st_mode``),
   ``target`` (symlink target text, symlinks only), ``flags`` (list of strings below), ``error`` (text of the
   OS error behind a flag), and for an embedded file (``kind`` = ``file`` only): ``content_size`` (bytes),
   ``content_b64`` (standard base64 of the bytes, or of their first part) and ``content_parts`` (default 1).
   When ``content_parts`` = N > 1, the entry line is followed by N-1 lines ``{"rec":"part","content_b64":...}``
   carrying the rest in order (the writer cuts at 1 MiB, so no line is longer than ~1.4 MiB whatever the file
   size, which lets a reader bound its line length). A data segment may carry ``segment`` (a segment summary,
   read from its 61-byte batch headers only, never its records): ``next_offset`` (the offset after the last
   batch, as Kafka's ``LogSegment.readNextOffset`` sees the data; null when not reached), ``batches``,
   ``valid_bytes`` (where the scan stopped), ``end`` (``eof``, ``zeros`` = a pre-allocated zero tail,
   ``corrupt`` = a batch that cannot be framed, ``cap`` = stopped at ``segment_scan_bytes``, ``unreadable``),
   ``markers`` (``[producer id, producer epoch, offset]`` of the last transaction marker (control batch) of each
   producer, at most ``MAX_SUMMARY_MARKERS``) and ``index_last`` (``[relative offset, position]`` of the last
   entry of the segment's ``.index``, or null). Order: post-order per directory: a directory's children
   come before the directory's own entry, the log dir's entry (path ``""``) comes last for that log dir; the
   log dir's files (checkpoints) come before its directories; otherwise the order among siblings is the
   filesystem's.
   Flags: ``over_cap`` (embeddable but larger than the cap: not embedded), ``vanished`` (gone between listing
   and stat/open/read), ``unreadable`` (stat/open/read/list failed, see ``error``), ``incomplete`` (listing of
   this directory broke off part way), ``changed_during_read`` (replaced, resized or changed type between
   listing and read; ``size``/``mtime_ms`` then describe the file that was read), ``non_utf8_name`` (the name
   is not UTF-8; ``path`` holds it with ``\\xNN`` escapes).
3. ``{"rec":"trailer"}`` exactly once, last: ``entries`` and ``parts`` (line counts, so truncation is
   detectable), ``dirs``, ``files``, ``symlinks``, ``other``, ``embedded``, ``embedded_bytes``, ``flagged``,
   ``log_dirs_unreadable``, ``finish_time``, ``elapsed_ms``.

Filesystem protocol: the walker talks to a tiny object (``open_root``, ``root_stat``, ``scan``, ``open_dir``,
``readlink``, ``read``, ``close``; see ``LocalFileSystem``) so ingest can plug in an adapter (e.g. pyarrow.fs
for ``s3://``) and get the same entries from a raw tree anywhere.
"""
from __future__ import annotations

import os
import re

COLLECTOR_VERSION = "1.0.0"
FORMAT_NAME = "kafka-recon-pack"
FORMAT_VERSION = 1
# File names a pack is written under (``collect`` auto-names ``*.jsonl.gz``; a gunzipped pack is ``*.jsonl``).
# Other JSON-lines files share these suffixes: a discoverer tries ``read_pack`` and treats ``bad_header`` as
# "not a pack".
PACK_SUFFIXES = (".jsonl.gz", ".jsonl")

KIND_DIR, KIND_FILE, KIND_SYMLINK, KIND_OTHER = "dir", "file", "symlink", "other"
ENTRY_KINDS = frozenset({KIND_DIR, KIND_FILE, KIND_SYMLINK, KIND_OTHER})

# Entry flags (stable strings: tables key on them).
FLAG_OVER_CAP = "over_cap"
FLAG_VANISHED = "vanished"
FLAG_UNREADABLE = "unreadable"
FLAG_INCOMPLETE = "incomplete"
FLAG_CHANGED = "changed_during_read"
FLAG_NON_UTF8 = "non_utf8_name"

# The keys of every entry dict, in order; the walker and the reader both yield exactly these.
ENTRY_FIELDS = ("log_dir", "path", "kind", "size", "alloc", "mtime_ms", "mode", "target", "content", "flags", "error",
                "segment")

METADATA_DIR = "__cluster_metadata-0"
LOCK_FILE = ".lock"
PART_BYTES = 1 << 20  # raw bytes per content line; keeps every pack line short whatever the file size

DEFAULT_MAX_FILE_BYTES = 1 << 20
# Kafka's metadata.log.segment.bytes defaults to 1 GiB, and a 4M-partition cluster's snapshot is ~170 MB: the
# cap must let both through (the file is held in memory once; lines stay short whatever its size).
DEFAULT_MAX_METADATA_FILE_BYTES = 1 << 30
DEFAULT_COMPRESS_LEVEL = 3
# A segment summary reads 61 bytes per batch and seeks over the rest: a whole 1 GiB segment (Kafka's
# log.segment.bytes default) of 16 KiB batches is ~65k small reads.
DEFAULT_SEGMENT_SCAN_BYTES = 1 << 30
MAX_SUMMARY_MARKERS = 100000

_TOP_LEVEL_EMBED = frozenset({"meta.properties", ".kafka_cleanshutdown", "bootstrap.checkpoint"})
_PARTITION_EMBED = frozenset({"partition.metadata", "leader-epoch-checkpoint", "quorum-state"})
_PRODUCER_SNAPSHOT = re.compile(r"[0-9]{20}\.snapshot\Z")
_METADATA_SEGMENT = re.compile(r"[0-9]{20}\.log\Z")
_METADATA_SNAPSHOT = re.compile(r"[0-9]{20}-[0-9]{10}\.checkpoint\Z")
_DATA_SEGMENT = _METADATA_SEGMENT

_O_NOATIME = getattr(os, "O_NOATIME", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
