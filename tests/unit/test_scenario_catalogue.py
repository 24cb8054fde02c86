"""The scenario catalogue's order (``simulate --list``, docs/scenarios.md, the scenario matrix's parametrisation)
does not depend on which family module a process imports first."""
from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from jobs.simulate.scenarios import FAMILIES, names


def _names_after_importing(module: str) -> list:
    code = f"import {module}\nfrom jobs.simulate.scenarios import names\nprint(names())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out)


@pytest.mark.parametrize("family", ["scenarios_demo", "scenarios_partition_metadata", "scenarios_hazards"])
def test_importing_a_family_first_keeps_the_catalogue_order(family):
    assert _names_after_importing(f"jobs.simulate.{family}") == names()


def test_every_family_module_is_placed():
    from jobs.simulate.scenarios import CATALOGUE

    assert {entry.build.__module__.rsplit(".", 1)[-1] for entry in CATALOGUE.values()} == set(FAMILIES)
    assert names()[:2] == ["healthy", "zk-healthy"]
