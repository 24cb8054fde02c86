"""The nightly verification job: ingest -> reconcile -> data quality -> report.

Run it as::

    spark-submit jobs/nightly.py --capture /captures/2026-11-22 --out /reports/2026-11-22
    kafka-recon nightly --capture /captures/2026-11-22 --out /reports/2026-11-22 --fail-on warning

Exit codes (README "Exit codes"; owned by ``jobs/report/summary.py``; Spark's reserved 50-52, 124 and 127
are never used): ``0`` no open finding at or above ``--fail-on``; ``10`` at least one; ``3`` the capture is
incomplete (no input, no log dir, no controller view, registered brokers missing, shrunk; see
``jobs/run_outcome.py``); ``1`` the job failed; ``2`` bad command line or configuration; ``130`` / ``143`` cancelled by SIGINT /
SIGTERM. Every outcome but ``--help`` (and an ``--out`` that cannot be written) leaves ``summary.json`` there.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
import uuid
from datetime import datetime, timezone
from typing import List, Optional

if __package__ in (None, ""):  # `spark-submit jobs/nightly.py`: make the repo importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jobs.config import ConfigError  # noqa: E402
from jobs.report.summary import (  # noqa: E402
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USAGE,
    FAIL_ON,
    exit_code_for,
)
from jobs.run_outcome import (  # noqa: E402
    IncompleteCapture,
    UsageError,
    cancelled_signal,
    check_capture_roots,
    check_capture_time_not_future,
    check_out_dir,
    gaps_before_spark,
    gaps_nothing_recognised,
    outcome_summary,
    parse_capture_time,
    raise_cancelled,
    write_outcome_summary,
)
from jobs.settings import Settings  # noqa: E402
from jobs.stage_log import NOTICE, ProgressReporter, StageTimer, get_logger, quiet_output  # noqa: E402

__all__ = ["main", "exit_code_for", "EXIT_OK", "EXIT_FINDINGS", "EXIT_ERROR", "EXIT_USAGE", "EXIT_INCOMPLETE"]


class _OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (and exit 2), not argparse's usage block."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see --help)\n")


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = _OneLineParser(prog="kafka-recon nightly", description=__doc__.split("\n\n")[0])
    p.add_argument("--capture", action="append", required=True, metavar="PATH",
                   help="capture folder or URI (repeatable; a comma-separated list is split)")
    p.add_argument("--out", required=True, help="output folder for the reports and summary.json")
    p.add_argument("--conf", help="YAML file overriding conf/*.yaml")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override one setting")
    p.add_argument("--capture-time", help="ISO-8601 time of the capture (default: collector record / newest mtime)")
    p.add_argument("--fail-on", choices=FAIL_ON, help="lowest severity that makes the exit code 10")
    p.add_argument("--allow-partial", action="store_true", default=None,
                   help="accept a capture with gaps (listed in summary.json) instead of exit 3")
    p.add_argument("--allow-future-capture-time", action="store_true",
                   help="accept a --capture-time ahead of this machine's clock (default: a usage error)")
    p.add_argument("--run-id", help="explicit run id (default: a new one)")
    p.add_argument("--skip-quality", action="store_true", help="do not run Great Expectations")
    p.add_argument("--quiet", action="store_true",
                   help="print only the final lines and errors; the rest (and Spark's output) in --out/kafka-recon.log")
    p.add_argument("--debug", action="store_true", help="print the traceback of a failure")
    return p.parse_args(argv)


QUIET_LOG = "kafka-recon.log"  # --quiet: every log line and the JVM's output, in --out


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]


def main(argv: Optional[List[str]] = None) -> int:
    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse: --help -> 0, bad usage -> 2
        return int(exc.code or 0)
    log = get_logger()
    run_id = args.run_id or new_run_id()
    started_at = datetime.now(timezone.utc)
    timer = StageTimer()
    decided = {"fail_on": args.fail_on, "allow_partial": bool(args.allow_partial)}  # settings may change both

    def finish(status: str, code: int, message: str, stage: Optional[str] = None, gaps=(), kind: str = "",
               files=None) -> int:
        """The run ended before the report stage: one line, and a summary.json saying so."""
        error = {"kind": kind, "message": message} if status in ("error", "usage", "cancelled") else None
        doc = outcome_summary(run_id, "error" if status == "usage" else status, code, decided["fail_on"],
                              stage=stage, error=error, stages=timer.seconds, gaps=gaps,
                              allow_partial=decided["allow_partial"], started_at=started_at, files=files)
        written = write_outcome_summary(args.out, doc)
        log.error("status=%s exit_code=%d %s%s", doc["status"], code, message,
                  f" summary={written}" if written else "")
        return code

    in_main_thread = threading.current_thread() is threading.main_thread()
    previous_sigterm = signal.signal(signal.SIGTERM, raise_cancelled) if in_main_thread else None
    try:
        return _run(args, log, timer, finish, decided, run_id)
    except KeyboardInterrupt as exc:  # SIGINT (PySpark cancels its jobs first) or SIGTERM: one line, no traceback
        if in_main_thread:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the summary short
        if args.debug:
            log.error("%s", traceback.format_exc())
        signum = cancelled_signal(exc)
        stage = timer.current or timer.position
        return finish("cancelled", EXIT_SIGTERM if signum == signal.SIGTERM else EXIT_SIGINT,
                      f"cancelled by {signal.Signals(signum).name} during {stage}", stage=stage, kind="cancelled")
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous_sigterm)


def _run(args: argparse.Namespace, log, timer: StageTimer, finish, decided: dict, run_id: str) -> int:
    """The run once its command line parsed: the checks before Spark, then the pipeline; ``finish`` ends it
    early with a summary.json. ``decided`` receives ``fail_on`` / ``allow_partial`` once the settings say."""
    try:
        check_out_dir(args.out)
    except UsageError as exc:
        return finish("usage", EXIT_USAGE, str(exc), stage="startup", kind="usage")
    if args.quiet and not args.debug:  # the final lines only; everything else in --out/kafka-recon.log
        with quiet_output(os.path.join(args.out, QUIET_LOG)) as log_path:
            return _checked_run(args, log, timer, finish, decided, run_id, log_path)
    return _checked_run(args, log, timer, finish, decided, run_id, None)


def _checked_run(args: argparse.Namespace, log, timer: StageTimer, finish, decided: dict, run_id: str,
                 log_path: Optional[str]) -> int:
    try:  # everything a user can get wrong, checked before Spark starts
        captures = [c.strip() for item in args.capture for c in item.split(",") if c.strip()]
        capture_time = parse_capture_time(args.capture_time)
        settings = Settings.load(args.conf, args.set)  # the run's one typed configuration, checked here
        decided["fail_on"] = fail_on = decided["fail_on"] or settings.run.fail_on
        decided["allow_partial"] = allow_partial = bool(args.allow_partial or settings.run.allow_partial)
        check_capture_time_not_future(capture_time, settings.run.future_capture_time_slack_seconds,
                                      args.allow_future_capture_time)
        quality = not args.skip_quality and settings.quality.enabled
        timer.planned = ("ingest", "reconcile", *(("quality",) if quality else ()), "report")
        check_capture_roots(captures)
        from jobs.ingest.discover import discover

        timer.at("discover")
        units = discover(captures)
    except (UsageError, ConfigError) as exc:
        return finish("usage", EXIT_USAGE, str(exc), stage="startup", kind="usage")
    except FileNotFoundError as exc:  # a URI root that does not exist
        return finish("usage", EXIT_USAGE, str(exc), stage="startup", kind="usage")
    except Exception as exc:  # listing failed: permissions, credentials, network
        if args.debug:
            log.error("%s", traceback.format_exc())
        return finish("error", EXIT_ERROR, f"{type(exc).__name__}: {exc}", stage="discover", kind=type(exc).__name__)
    from jobs.ingest.discover import unrecognised_capture

    gaps = gaps_before_spark(u.kind for u in units) or gaps_nothing_recognised(unrecognised_capture(units))
    if gaps:
        return finish("incomplete", EXIT_INCOMPLETE, gaps[0]["message"], stage="discover", gaps=gaps,
                      files={"seen": len(units), "ok": 0, "quarantined": None})
    try:
        from jobs.pipeline import run_pipeline

        with ProgressReporter(timer, settings.run.progress_seconds, enabled=not args.quiet):
            result = run_pipeline(settings=settings, captures=captures, out_dir=args.out, capture_time=capture_time,
                                  run_id=run_id, fail_on=fail_on, run_quality=not args.skip_quality, timer=timer,
                                  units=units, allow_partial=allow_partial)
    except IncompleteCapture as exc:
        return finish("incomplete", EXIT_INCOMPLETE, str(exc), stage=timer.position, gaps=exc.gaps)
    # the job failed: say why, exit 1 (never Spark's reserved codes). A library's sys.exit mid-run counts too: even
    # exit(0) leaves the run unfinished
    except (Exception, SystemExit) as exc:
        if args.debug:
            log.error("%s", traceback.format_exc())
        stage = timer.failed_stage or timer.position
        return finish("error", EXIT_ERROR, f"{type(exc).__name__}: {_first_line(exc)}", stage=stage,
                      kind=type(exc).__name__)
    code = result.exit_code
    log.log(NOTICE, "status=finished exit_code=%d open_findings=%s run_status=%s report=%s%s", code,
            sum(result.counts_by_severity.values()), result.summary.get("status"), result.report_html,
            f" log={log_path}" if log_path else "")
    return code


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else ""


if __name__ == "__main__":
    sys.exit(main())
