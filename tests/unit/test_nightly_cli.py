"""The nightly entry point's contract without Spark: exit codes per --fail-on, usage errors, config errors."""
import pytest

from jobs import nightly
from jobs.cli import main as cli_main


@pytest.mark.parametrize(
    "counts, fail_on, expected",
    [
        ({"critical": 1, "warning": 0, "info": 0}, "critical", 10),
        ({"critical": 0, "warning": 2, "info": 5}, "critical", 0),
        ({"critical": 0, "warning": 2, "info": 0}, "warning", 10),
        ({"critical": 0, "warning": 0, "info": 3}, "warning", 0),
        ({"critical": 0, "warning": 0, "info": 3}, "info", 10),
        ({"critical": 0, "warning": 0, "info": 0}, "info", 0),
        ({"critical": 9, "warning": 9, "info": 9}, "never", 0),
    ],
)
def test_exit_code_for_each_fail_on_level(counts, fail_on, expected):
    assert nightly.exit_code_for(counts, fail_on) == expected


def test_exit_codes_avoid_sparks_reserved_values():
    used = {nightly.EXIT_OK, nightly.EXIT_ERROR, nightly.EXIT_USAGE, nightly.EXIT_FINDINGS}
    assert used.isdisjoint({50, 51, 52, 124, 127})


def test_missing_required_arguments_is_a_usage_error(capsys):
    assert nightly.main([]) == 2
    assert "--capture" in capsys.readouterr().err


def test_bad_fail_on_value_is_a_usage_error(capsys):
    assert nightly.main(["--capture", "x", "--out", "y", "--fail-on", "sometimes"]) == 2


def test_unknown_config_key_fails_the_job_with_exit_1_before_spark(tmp_path, capsys):
    assert nightly.main(["--capture", str(tmp_path), "--out", str(tmp_path / "o"), "--set", "storage.rooot=/x"]) == 1
    assert "rooot" in capsys.readouterr().err


def test_cli_lists_commands_and_rejects_unknown_ones(capsys):
    assert cli_main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("nightly", "simulate", "collect", "decode", "demo"):
        assert command in out
    assert cli_main(["frobnicate"]) == 2
