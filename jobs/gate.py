"""``kafka-recon gate --summary OUT/summary.json --fail-on critical``: a run's verdict as an exit code, read back from
its summary.json.

Why a separate step: schedulers retry a failed task whatever its exit code (a Databricks job's ``max_retries``), so
a nightly that fails on findings is re-run for nothing. The bundle's nightly task runs with ``--fail-on never``
(it fails only on errors, which a retry may cure) and this gate, never retried, fails when the run's open findings
reach ``--fail-on`` (exit 10), or passes the run's own failure on (1, 2, 3). Notifications go out on either.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from jobs.report.summary import EXIT_ERROR, EXIT_INCOMPLETE, EXIT_USAGE, FAIL_ON, exit_code_for


def verdict(summary: dict, fail_on: str) -> int:
    """The exit code a run with ``summary`` gets under ``fail_on``."""
    status = summary.get("status")
    if status in ("error", "incomplete", "cancelled"):
        return int(summary.get("exit_code") or (EXIT_INCOMPLETE if status == "incomplete" else EXIT_ERROR))
    counts = (summary.get("counts") or {}).get("by_severity") or {}
    return exit_code_for({str(k): int(v) for k, v in counts.items()}, fail_on)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kafka-recon gate",
                                     description="Exit with a finished run's verdict, read from its summary.json.")
    parser.add_argument("--summary", required=True, help="the run's summary.json (in its --out)")
    parser.add_argument("--fail-on", default="critical", choices=FAIL_ON,
                        help="exit 10 when an open finding is at or above this severity (default critical)")
    args = parser.parse_args(argv)
    try:
        with open(args.summary, encoding="utf-8") as fh:
            summary = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"kafka-recon gate: cannot read {args.summary}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    code = verdict(summary, args.fail_on)
    counts = (summary.get("counts") or {}).get("by_severity") or {}
    print(f"kafka-recon gate: run {summary.get('run_id')} status={summary.get('status')} open={counts} "
          f"fail_on={args.fail_on} exit={code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
