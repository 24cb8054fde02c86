"""Broker-side collector, command line and the built stand-alone file: exit codes, output naming, stdout,
Python 3.8 grammar, stdlib-only imports, runs without the project.
"""
from __future__ import annotations

import ast
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from collector_trees import CLUSTER_ID, by_key, disk_listing, read_all

import collector
from collector import main
from collector.build import build, build_source

# ------------------------------------------------------------------------------------------- CLI


def test_cli_writes_pack_and_prints_one_summary_line(b102, tmp_path, capsys):
    out = tmp_path / "b102.jsonl.gz"
    assert main(["--log-dir", b102[0], "--log-dir", b102[1], "--out", str(out),
                 "--capture-time", "2026-11-22T08:32:56Z", "--max-file-bytes", "1K"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kafka-recon collect: broker 102 cluster " + CLUSTER_ID)
    reader, entries = read_all(out)
    assert reader.complete and reader.header["capture_time"] == "2026-11-22T08:32:56.000Z"
    assert reader.header["options"]["max_file_bytes"] == 1024


def test_cli_directory_output_gets_an_automatic_name(b102, tmp_path, capsys):
    out_dir = tmp_path / "packs"
    out_dir.mkdir()
    assert main(["--log-dir", *b102, "--out", str(out_dir), "--capture-time", "2026-11-22T08:32:56Z"]) == 0
    names = os.listdir(out_dir)
    assert len(names) == 1 and names[0].endswith("-broker-102-20261122T083256Z.jsonl.gz")
    assert names[0].endswith(collector.PACK_SUFFIXES)
    capsys.readouterr()


def test_cli_exit_codes(b102, tmp_path, capsys):
    assert main([]) == 2
    assert main(["--log-dir", str(tmp_path / "missing"), "--out", str(tmp_path / "x.gz")]) == 2
    assert main(["--log-dir", b102[0], b102[0], "--out", str(tmp_path / "x.gz")]) == 2
    assert main(["--log-dir", b102[0], "--out", str(tmp_path / "x.gz"), "--capture-time", "yesterday"]) == 2
    assert main(["--log-dir", b102[0], "--out", str(tmp_path / "x.gz"), "--max-file-bytes", "lots"]) == 2
    assert main(["--log-dir", b102[0], "--out", str(tmp_path / "no-such-dir" / "x.gz")]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert main(["--version"]) == 0
    assert not (tmp_path / "x.gz").exists()


def test_cli_writes_to_stdout(b102, tmp_path):
    run = subprocess.run([sys.executable, "-I", str(build(tmp_path / "collector.py")), "--log-dir", b102[1], "--out", "-"],
                         capture_output=True, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    reader, entries = read_all(run.stdout)
    assert reader.complete and reader.header["broker_id"] == 102


# ----------------------------------------------------------------------------------- stand-alone file


def test_module_source_keeps_python_38_grammar_and_stdlib_imports():
    """The one file brokers run (built from the package) parses as Python 3.8 and imports only the stdlib."""
    source = build_source()
    tree = ast.parse(source, feature_version=(3, 8))
    optional = set()  # imported inside ``try: ... except ImportError``
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                                             for h in node.handlers):
            for inner in node.body:
                optional.update(_imported_modules(inner))
    imported = _imported_modules(tree) - optional
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
    assert optional == set()  # the reader and its accelerators live in udfs.pack_reader, not on brokers


def _imported_modules(tree) -> set:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            names.add(node.module.split(".")[0])
    return names


def _find_python38() -> str | None:
    """A Python 3.8 to prove the broker-side promise (PATH, else a pyenv install)."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which("python3.8"), *map(str, sorted(Path(root, "versions").glob("3.8*/bin/python3.8")))]
    for candidate in filter(None, candidates):
        try:
            probe = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                                   capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.stdout.strip() == "(3, 8)":
            return candidate
    return None


PY38 = _find_python38()


@pytest.mark.parametrize("python", [sys.executable, PY38], ids=["current", "python3.8"])
def test_stand_alone_copy_runs_without_the_project(b102, tmp_path, python):
    if python is None:
        pytest.skip("no Python 3.8 interpreter on this machine")
    alone = tmp_path / "alone"
    alone.mkdir()
    build(alone / "collector.py")
    out = tmp_path / "pack.jsonl.gz"
    run = subprocess.run([python, "-I", "-S", str(alone / "collector.py"), "--log-dir", *b102, "--out", str(out),
                          "--include-metadata-log"], capture_output=True, text=True, cwd=str(alone))
    assert run.returncode == 0, run.stderr
    reader, entries = read_all(out)
    assert reader.complete
    got = {k: (e["kind"], e["size"], e["content"]) for k, e in by_key(entries).items()}
    assert got == disk_listing(b102, include_metadata_log=True)
    with gzip.open(out) as f:
        assert json.loads(f.readline())["python_version"].startswith("3.8." if python == PY38 else "3.")
