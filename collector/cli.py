"""The collector's command line: ``python3 kafka-recon-collector.py --log-dir DIR... --out FILE`` on a broker,
``kafka-recon collect`` from the project."""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from typing import List, Optional

from .filesystem import oserror_text
from .header import parse_capture_time
from .options import CollectOptions
from .pack_format import (
    COLLECTOR_VERSION,
    DEFAULT_COMPRESS_LEVEL,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_METADATA_FILE_BYTES,
    DEFAULT_SEGMENT_SCAN_BYTES,
)
from .pack_writer import UsageError, collect


def _parse_size(text: str) -> int:
    match = re.match(r"\s*([0-9]+)\s*([kKmMgG]?)(i?[bB])?\s*\Z", text)
    if not match:
        raise argparse.ArgumentTypeError("not a size: %r (e.g. 1048576, 512K, 64M)" % (text,))
    return int(match.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[match.group(2).lower()]


def _human(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return ("%d %s" % (value, unit)) if unit == "B" else ("%.1f %s" % (value, unit))
        value /= 1024
    return "%d B" % n


def build_parser(prog: Optional[str] = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write a kafka-recon packed snapshot of Kafka log dirs (read-only; stdlib only).",
    )
    parser.add_argument("--log-dir", dest="log_dirs", action="extend", nargs="+", required=True, metavar="DIR",
                        help="a Kafka log dir (repeat or list several)")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="pack to write (*.jsonl.gz), an existing directory (auto name) or - for stdout; "
                             "never inside a log dir")
    parser.add_argument("--include-metadata-log", action="store_true",
                        help="also embed __cluster_metadata-0 segments and snapshots")
    parser.add_argument("--max-file-bytes", type=_parse_size, default=DEFAULT_MAX_FILE_BYTES, metavar="N",
                        help="cap for an embedded file (default 1M); bigger files are listed with over_cap")
    parser.add_argument("--max-metadata-file-bytes", type=_parse_size, default=DEFAULT_MAX_METADATA_FILE_BYTES,
                        metavar="N", help="cap for an embedded metadata segment/snapshot (default 1G)")
    parser.add_argument("--segment-scan-bytes", type=_parse_size, default=DEFAULT_SEGMENT_SCAN_BYTES, metavar="N",
                        help="how far into a data segment the end-of-log summary reads batch headers (default 1G; "
                        "0: no summaries)")
    parser.add_argument("--capture-time", metavar="ISO", help="capture time to record (default: now, UTC)")
    parser.add_argument("--compress-level", type=int, default=DEFAULT_COMPRESS_LEVEL, metavar="0-9",
                        help="gzip level (default %d)" % DEFAULT_COMPRESS_LEVEL)
    parser.add_argument("--version", action="version", version="kafka-recon collector " + COLLECTOR_VERSION)
    return parser


def main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """CLI entry point; returns the exit code: 0 ok, 1 error (I/O), 2 usage. One summary line on stderr."""
    name = prog or "kafka-recon collect"
    parser = build_parser(name)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help/--version (0) or a usage error (2), already printed
        return exit_.code if isinstance(exit_.code, int) else 2
    started = time.monotonic()
    try:
        capture = parse_capture_time(args.capture_time) if args.capture_time else None
        options = CollectOptions(args.max_file_bytes, args.include_metadata_log, args.max_metadata_file_bytes,
                                 args.segment_scan_bytes)
        written, trailer = collect(args.log_dirs, args.out, options, capture, args.compress_level)
    except (UsageError, ValueError) as exc:
        sys.stderr.write("%s: error: %s\n" % (name, exc))
        return 2
    except OSError as exc:
        sys.stderr.write("%s: error: cannot write %s: %s\n" % (name, args.out, oserror_text(exc)))
        return 1
    header = trailer["header"]
    size = "" if written == "-" else " (%s)" % _human(os.path.getsize(written))
    problems = []
    if trailer["log_dirs_unreadable"]:
        problems.append("%d log dir(s) unreadable" % trailer["log_dirs_unreadable"])
    if header["warnings"]:
        problems.append("%d warning(s): %s" % (len(header["warnings"]), "; ".join(header["warnings"])))
    sys.stderr.write(
        "%s: broker %s cluster %s, %d log dir(s), %d entries (%d dirs, %d files, %d symlinks, %d other), "
        "%d embedded (%s), %d flagged -> %s%s in %.2f s%s\n"
        % (name, header["broker_id"], header["cluster_id"], len(header["log_dirs"]), trailer["entries"],
           trailer["dirs"], trailer["files"], trailer["symlinks"], trailer["other"], trailer["embedded"],
           _human(trailer["embedded_bytes"]), trailer["flagged"], written, size, time.monotonic() - started,
           "; " + "; ".join(problems) if problems else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog=os.path.basename(sys.argv[0]) or "kafka-recon-collector.py"))
