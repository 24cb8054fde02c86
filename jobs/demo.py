"""``kafka-recon demo`` (what ``make demo`` runs): simulate the demo fleet, run the nightly job on it, and
print a terminal summary with the paths of report.html and the Data Docs.

The demo uses its own table root under the output folder so it never touches a real deployment's tables.
It never deletes what it did not write: a folder it creates holds its marker file (:data:`MARKER`); a re-run
replaces only its own entries (:data:`OWNED`) there, and a non-empty folder without the marker is refused
(exit 2) unless ``--force``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import List, Optional

MARKER = ".kafka-recon-demo"  # written into --out by the demo: the folder is the demo's to refill
OWNED = ("capture", "report", "tables")  # the entries a demo run writes (and a re-run replaces)


class DemoRefused(Exception):
    """--out is not the demo's to overwrite: one line, exit 2."""


def prepare_out(out: Path, keep: bool, force: bool) -> None:
    """Make ``out`` ready for a demo run, deleting only the demo's own entries.

    A missing or empty folder is taken (and marked); a folder holding the marker is the demo's: its
    :data:`OWNED` entries are replaced (kept with ``keep``), anything else in it is left alone. A non-empty
    folder without the marker is refused unless ``force``, which also replaces only :data:`OWNED` entries."""
    if out.exists() and not out.is_dir():
        raise DemoRefused(f"--out {out}: exists and is not a directory")
    entries = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    ours = MARKER in entries
    if entries and not ours and not force:
        shown = ", ".join(e + ("/" if (out / e).is_dir() and not (out / e).is_symlink() else "")
                          for e in entries[:5]) + (" ..." if len(entries) > 5 else "")
        raise DemoRefused(f"--out {out}: not empty and not a demo folder (holds {shown}); choose an empty or new "
                          f"folder, or pass --force to write the demo's {', '.join(OWNED)} there")
    if not keep:
        for name in OWNED:
            path = out / name
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(json.dumps({"format": "kafka-recon-demo", "owns": list(OWNED)}) + "\n",
                              encoding="utf-8")


def _table(rows: List[List[str]], header: List[str]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    line = "+".join("-" * (w + 2) for w in widths)
    fmt = " | ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*header), line]
    out += [fmt.format(*[str(x) for x in r]) for r in rows]
    return "\n".join(out)


def terminal_summary(summary: dict) -> str:
    by_check = summary.get("counts", {}).get("by_check", {})
    rows = [[check, n] for check, n in sorted(by_check.items(), key=lambda kv: (-kv[1], kv[0]))]
    sev = summary.get("counts", {}).get("by_severity", {})
    head = (f"status: {summary.get('status')}   open findings: {summary.get('findings_open')}   "
            f"critical: {sev.get('critical', 0)}  warning: {sev.get('warning', 0)}  info: {sev.get('info', 0)}")
    return head + "\n\n" + (_table(rows, ["check", "open findings"]) if rows else "(no findings)")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="kafka-recon demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="demo-out", help="folder for the demo capture, tables and report")
    p.add_argument("--seed", default="7")
    p.add_argument("--keep", action="store_true", help="keep an existing demo folder (adds a run to its history)")
    p.add_argument("--force", action="store_true",
                   help="use a non-empty --out the demo did not create (replaces only its capture, report, tables)")
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)

    from jobs import nightly
    from jobs.simulate.command import main as simulate

    out = Path(args.out).resolve()
    try:
        prepare_out(out, keep=args.keep, force=args.force)
    except (DemoRefused, OSError) as exc:
        print(f"kafka-recon demo: {exc}", file=sys.stderr)
        return 2
    capture = out / "capture"
    if not capture.exists():
        code = simulate(["--scenario", "demo", "--out", str(capture), "--seed", str(args.seed)])
        if code:
            print(f"demo: simulate failed with exit code {code}", file=sys.stderr)
            return 1
    report = out / "report"
    code = nightly.main(["--capture", str(capture), "--out", str(report), "--fail-on", "never",
                         "--set", f"storage.root={out / 'tables'}"])
    if code not in (0, 10):
        print(f"demo: the nightly job failed (exit {code}); see the log above", file=sys.stderr)
        return code
    summary = json.loads((report / "summary.json").read_text())
    print("\n" + terminal_summary(summary) + "\n")
    print(f"report:    {report / 'report.html'}")
    docs = report / "dq" / "index.html"
    print(f"data docs: {docs if docs.exists() else '(not built)'}")
    print(f"tables:    {out / 'tables'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
