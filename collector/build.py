"""Build the collector as one stdlib-only file to copy to brokers: ``python -m collector.build OUT.py``.

The package's modules are concatenated in dependency order (:data:`MODULES`); their relative imports are
dropped (every name then lives in the one file), ``from __future__`` is written once at the top and each
module's docstring becomes a comment line. The result runs with ``python3 -I -S OUT.py --log-dir ...`` on any
Python >= 3.8, nothing installed (tests/unit/test_collector.py runs it that way).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import List, Optional

PACKAGE = Path(__file__).resolve().parent
# each module imports only from modules before it
MODULES = ("pack_format", "options", "filesystem", "segments", "java_properties", "walk", "header", "pack_writer",
           "cli")
FILE_NAME = "kafka-recon-collector.py"


def _module_body(name: str) -> str:
    """A module's source without its docstring, ``from __future__`` and relative imports."""
    source = (PACKAGE / f"{name}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    drop = set()
    for node in tree.body:
        relative = isinstance(node, ast.ImportFrom) and (node.level > 0 or node.module == "__future__")
        docstring = (node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                     and isinstance(node.value.value, str))
        if relative or docstring:
            drop.update(range(node.lineno, node.end_lineno + 1))
    lines = source.splitlines()
    kept = [line for number, line in enumerate(lines, 1) if number not in drop]
    return "\n".join(kept).strip("\n")


def build_source() -> str:
    """The one-file collector's text."""
    source = (PACKAGE / "pack_format.py").read_text(encoding="utf-8")
    doc = ast.get_source_segment(source, ast.parse(source).body[0]) or ""  # the format's docstring, as written
    parts: List[str] = ["#!/usr/bin/env python3", doc, "from __future__ import annotations"]
    for name in MODULES:
        parts.append(f"# {'-' * 40} collector/{name}.py\n" + _module_body(name))
    return "\n\n".join(parts) + "\n"


def build(out: Path) -> Path:
    out = Path(out)
    if out.is_dir():
        out = out / FILE_NAME
    text = build_source()
    out.parent.mkdir(parents=True, exist_ok=True)
    compile(text, str(out), "exec")  # a syntax error here is a bug in the build, not on the broker
    out.write_text(text, encoding="utf-8")
    out.chmod(0o755)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(f"usage: python -m collector.build OUT  (a file, or a folder to hold {FILE_NAME})",
              file=sys.stderr if len(args) != 1 else sys.stdout)
        return 2 if len(args) != 1 else 0
    path = build(Path(args[0]))
    print(f"wrote {path} ({path.stat().st_size} bytes): copy it to each broker and run `python3 {path.name} --help`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
