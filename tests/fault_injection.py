"""Run the real command line with a fault injected at a named point of the pipeline (crash-safety and
run-outcome tests)::

    python -m tests.fault_injection --kill-at before_findings_merge -- nightly --capture ...
    python -m tests.fault_injection --fail-at after_ingest -- nightly --capture ...

``--kill-at`` SIGKILLs the process there (a machine that dies), ``--fail-at`` raises there (a stage failing
mid-way), ``--interrupt-at`` / ``--terminate-at`` send it SIGINT (Ctrl-C) / SIGTERM (a scheduler stopping it). The points wrap the stage functions the pipeline calls, so production code carries no test hooks.
"""
from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import time
from typing import Callable, Dict, Tuple


def _act(mode: str, point: str) -> None:
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode in ("interrupt", "terminate"):
        os.kill(os.getpid(), signal.SIGINT if mode == "interrupt" else signal.SIGTERM)
        time.sleep(5)  # the handler raises in the main thread at its next bytecode
    raise RuntimeError(f"injected failure at {point}")


def _wrap(module, name: str, before: Callable[[], None] = lambda: None,
          after: Callable[[], None] = lambda: None) -> None:
    original = getattr(module, name)

    @functools.wraps(original)
    def wrapped(*args, **kwargs):
        before()
        result = original(*args, **kwargs)
        after()
        return result

    setattr(module, name, wrapped)


def _points() -> Dict[str, Tuple[object, str, bool]]:
    """point -> (module, function, act after it returns rather than before it starts)."""
    from jobs.ingest import stage
    from jobs.reconcile import gold
    from jobs.report import writer

    return {
        "after_ingest": (stage, "run_ingest", True),              # bronze written, nothing else
        "before_findings_merge": (gold, "write_findings", False),  # silver written, gold not yet
        "during_report": (writer, "write_reports", False),         # gold and run summary written
    }


def inject(mode: str, point: str) -> None:
    points = _points()
    if point not in points:
        raise SystemExit(f"unknown point {point!r}; known: {', '.join(points)}")
    module, name, after = points[point]
    act = functools.partial(_act, mode, point)
    if after:
        _wrap(module, name, after=act)
    else:
        _wrap(module, name, before=act)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fault_injection")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--kill-at")
    which.add_argument("--fail-at")
    which.add_argument("--interrupt-at")
    which.add_argument("--terminate-at")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the kafka-recon command line")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    modes = {"kill": args.kill_at, "fail": args.fail_at, "interrupt": args.interrupt_at,
             "terminate": args.terminate_at}
    mode = next(m for m, point in modes.items() if point)
    inject(mode, modes[mode])
    from jobs.cli import main as cli

    return cli(command)


if __name__ == "__main__":
    sys.exit(main())
