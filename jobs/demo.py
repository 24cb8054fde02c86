"""``kafka-recon demo`` (what ``make demo`` runs): simulate the demo fleet, run the nightly job on it, and
print a terminal summary with the paths of report.html and the Data Docs.

The demo uses its own table root under the output folder so it never touches a real deployment's tables.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import List, Optional


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
    args = p.parse_args(argv)

    from jobs import nightly
    from jobs.simulate.command import main as simulate

    out = Path(args.out).resolve()
    if out.exists() and not args.keep:
        shutil.rmtree(out)
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
