"""One simulated demo fleet run through the whole nightly pipeline, shared by the integration tests."""
from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def demo_capture(tmp_path_factory) -> Path:
    """simulate --scenario demo (seed 7): the capture and its expected_findings.json, no Spark."""
    from jobs.simulate.command import main as simulate

    capture = tmp_path_factory.mktemp("demo-capture") / "capture"
    assert simulate(["--scenario", "demo", "--out", str(capture), "--seed", "7"]) == 0
    return capture


@pytest.fixture(scope="session")
def demo_run(spark, demo_capture, tmp_path_factory):
    """The demo capture -> nightly; returns paths of the capture, tables and report."""
    from jobs import nightly

    base = tmp_path_factory.mktemp("demo")
    capture, tables, report = demo_capture, base / "tables", base / "report"
    code = nightly.main(["--capture", str(capture), "--out", str(report), "--fail-on", "warning",
                         "--set", f"storage.root={tables}"])
    summary = json.loads((report / "summary.json").read_text())
    expected = json.loads((capture / "expected_findings.json").read_text())
    return {"base": base, "capture": capture, "tables": tables, "report": report, "exit_code": code,
            "summary": summary, "expected": expected}


def notebook_cells(path: Path):
    """Code cells of a Databricks notebook source file (MAGIC markdown cells skipped)."""
    text = path.read_text()
    assert text.startswith("# Databricks notebook source\n"), f"{path} is not in Databricks source format"
    for cell in text.split("# COMMAND ----------"):
        lines = [ln for ln in cell.splitlines() if not ln.startswith("# Databricks notebook source")]
        if all(ln.startswith("# MAGIC") or not ln.strip() for ln in lines):
            continue
        yield "\n".join(lines)
