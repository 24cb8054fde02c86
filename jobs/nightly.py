"""The nightly verification job: ingest -> reconcile -> data quality -> report.

Run it as::

    spark-submit jobs/nightly.py --capture /captures/2026-11-22 --out /reports/2026-11-22
    kafka-recon nightly --capture /captures/2026-11-22 --out /reports/2026-11-22 --fail-on warning

Exit codes (documented in the README; Spark reserves 50-52, 124 and 127, so they are never used):
``0`` no open finding at or above ``--fail-on``; ``10`` at least one; ``1`` the job itself failed;
``2`` bad command line.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
import uuid
from datetime import datetime, timezone
from typing import List, Optional

if __package__ in (None, ""):  # `spark-submit jobs/nightly.py`: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jobs.config import ConfigError, load_config  # noqa: E402
from jobs.report.summary import EXIT_FINDINGS, EXIT_OK, FAIL_ON, exit_code_for  # noqa: E402
from jobs.stage_log import StageTimer, get_logger  # noqa: E402

EXIT_ERROR = 1
EXIT_USAGE = 2
__all__ = ["main", "exit_code_for", "EXIT_OK", "EXIT_FINDINGS", "EXIT_ERROR", "EXIT_USAGE"]


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="kafka-recon nightly", description=__doc__.split("\n\n")[0])
    p.add_argument("--capture", action="append", required=True, metavar="PATH",
                   help="capture folder or URI (repeatable; a comma-separated list is split)")
    p.add_argument("--out", required=True, help="output folder for the reports")
    p.add_argument("--conf", help="YAML file overriding conf/*.yaml")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override one setting")
    p.add_argument("--capture-time", help="ISO-8601 time of the capture (default: collector record / newest mtime)")
    p.add_argument("--fail-on", choices=FAIL_ON, help="lowest severity that makes the exit code 10")
    p.add_argument("--run-id", help="explicit run id (default: a new one)")
    p.add_argument("--skip-quality", action="store_true", help="do not run Great Expectations")
    return p.parse_args(argv)


def parse_capture_time(text: Optional[str]) -> Optional[datetime]:
    if not text:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]


def main(argv: Optional[List[str]] = None) -> int:
    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse: --help -> 0, bad usage -> 2
        return int(exc.code or 0)
    log = get_logger()
    try:
        cfg = load_config(args.conf, args.set)
        captures = [c for item in args.capture for c in item.split(",") if c.strip()]
        fail_on = args.fail_on or cfg.run.fail_on
        if fail_on not in FAIL_ON:
            raise ConfigError(f"run.fail_on must be one of {FAIL_ON}, got {fail_on!r}")
        from jobs.pipeline import run_pipeline

        result = run_pipeline(
            cfg=cfg,
            captures=captures,
            out_dir=args.out,
            capture_time=parse_capture_time(args.capture_time),
            run_id=args.run_id or new_run_id(),
            fail_on=fail_on,
            run_quality=not args.skip_quality,
            timer=StageTimer(),
        )
    except ConfigError as exc:
        log.error("status=error kind=config message=%s", exc)
        return EXIT_ERROR
    except Exception as exc:  # the job failed: say why, exit 1 (never Spark's reserved codes)
        log.error("status=error kind=%s message=%s\n%s", type(exc).__name__, exc, traceback.format_exc())
        return EXIT_ERROR
    code = exit_code_for(result.counts_by_severity, fail_on)
    log.info("status=finished exit_code=%d open_findings=%s report=%s", code, sum(result.counts_by_severity.values()),
             result.report_html)
    return code


if __name__ == "__main__":
    sys.exit(main())
