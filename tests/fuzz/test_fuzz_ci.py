"""The CI share of the fuzzing budget: a bounded, seeded run of the fuzz harness over every decoder (with its
per-input time bound and memory cap), hypothesis over the same targets, and a check that the harness really
reports crashes, hangs and memory hogs. ``make fuzz`` runs the long budget (1M executions)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .run_fuzz import mutate
from .targets import TARGETS

ROOT = Path(__file__).resolve().parent.parent.parent
CI_EXECUTIONS = 20_000


def _run_fuzz(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tests.fuzz.run_fuzz", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def _result(stdout: str) -> dict:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("fuzz result "))
    return dict(re.findall(r"(\w+)=(\S+)", line))


def test_bounded_fuzz_run_over_every_decoder_finds_nothing(tmp_path):
    proc = _run_fuzz("--engine", "python", "--executions", str(CI_EXECUTIONS), "--seed", "20261122",
                     "--time-per-input", "10", "--rss-limit-mb", "1024", "--artifacts", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    result = _result(proc.stdout)
    assert int(result["executions"]) == CI_EXECUTIONS
    assert (result["crashes"], result["timeouts"], result["memory"]) == ("0", "0", "0")
    assert int(result["targets"]) == len(TARGETS)
    assert list(tmp_path.iterdir()) == []  # no reproducer written


def test_harness_reports_a_planted_crash_hang_and_memory_hog(tmp_path):
    proc = _run_fuzz("--self-test", "--executions", "150", "--time-per-input", "0.1", "--rss-limit-mb", "512",
                     "--artifacts", str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    result = _result(proc.stdout)
    assert (result["crashes"], result["timeouts"], result["memory"]) == ("1", "1", "1")
    saved = sorted(p.name.split("-")[0] + "-" + p.name.split("-")[1] for p in tmp_path.iterdir())
    assert saved == ["planted_crash-crash", "planted_hang-timeout", "planted_hog-memory"]
    crash = next(tmp_path.glob("planted_crash-*.bin"))
    assert b"\x13" in crash.read_bytes()  # the reproducer really reproduces
    replay = _run_fuzz("--replay", str(next(tmp_path.glob("planted_crash-*"))), "--targets", "metadata_log")
    assert replay.returncode == 0  # replaying through a real decoder: no exception


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_every_seed_is_real_and_decodes_without_an_exception(target):
    seeds = target.seeds()
    assert seeds, f"{target.name} has no seeds"
    for seed in seeds:
        try:
            target.run(seed)
        except target.allowed:
            pass


def _inputs(target):
    seeds = target.seeds()
    mutated = st.builds(lambda seed, rng: mutate(seed, rng, seeds), st.sampled_from(seeds),
                        st.randoms(use_true_random=False))
    return st.one_of(st.binary(max_size=600), mutated)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_hypothesis_inputs_never_raise_outside_the_documented_errors(target):
    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_inputs(target))
    def check(data):
        try:
            target.run(data)
        except target.allowed:
            pass

    check()
