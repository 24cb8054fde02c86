"""``kafka-recon``: one console script, one sub-command per entry point.

Sub-commands import their module lazily so that ``decode``, ``simulate`` and ``collect`` start in
milliseconds and never load Spark.
"""
from __future__ import annotations

import importlib
import sys
from typing import Callable, Dict, List, Optional, Tuple

COMMANDS: Dict[str, Tuple[str, str]] = {
    "nightly": ("jobs.nightly", "ingest -> reconcile -> data quality -> report, for one or more captures"),
    "simulate": ("jobs.simulate.command", "write a simulated Kafka fleet capture with known problems"),
    "collect": ("collector.cli", "pack a broker's log dirs into one snapshot file (read-only)"),
    "decode": ("jobs.decode_command", "print every record of metadata segments/snapshots/dump-log text as JSON lines"),
    "demo": ("jobs.demo", "simulate the demo fleet and run the nightly job on it"),
    "gate": ("jobs.gate", "exit with a finished run's verdict (summary.json) under --fail-on: a scheduler's last step"),
    "pyfiles": ("jobs.pyfiles", "write the job's code as one zip for spark-submit --py-files"),
    "migrate": ("jobs.tables.migrate", "bring existing Delta tables to this release's schemas (--check, --rewrite)"),
    "maintain": ("jobs.tables.maintain", "OPTIMIZE and VACUUM the Delta tables (retention: storage.vacuum_retention_hours)"),
    "class-archive": ("jobs.engine.class_archive_build", "build the JVM class archive that starts each local session ~2 s sooner"),
}

USAGE = "usage: kafka-recon <command> [options]\n\ncommands:\n" + "\n".join(
    f"  {name:<14} {doc}" for name, (_, doc) in COMMANDS.items()
) + "\n\nRun `kafka-recon <command> --help` for a command's options."


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"kafka-recon: unknown command {name!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    entry: Callable[[List[str]], int] = module.main
    code = entry(rest)
    return int(code or 0)


def run() -> None:
    """Console-script and wheel-task entry point: :func:`main`'s code as the process's exit status (a Databricks
    ``python_wheel_task`` ignores a returned value)."""
    raise SystemExit(main())


if __name__ == "__main__":
    sys.exit(main())
