"""Report settings (conf/report.yaml ``report:`` section) as one frozen object, built by jobs.settings.Settings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from jobs.config import ConfigError


@dataclass(frozen=True)
class ReportSettings:
    """``report`` (conf/report.yaml), plus the run's fail_on and the catalogue's reclaimable checks. The values
    come from conf/*.yaml; ``Settings.shipped().report`` is the shipped report."""

    SECTION = "report"
    max_rows_in_html: int
    max_rows_in_md: int
    max_pid_blocks: int
    max_evidence_chars: int
    trend_runs: int
    title: str
    quarantine_dir_name: str
    quarantine_days: int
    # from the check catalogue (conf/checks.yaml ``reclaimable: true``), never listed here
    reclaimable_checks: Tuple[str, ...]
    fail_on: str  # the run's run.fail_on; write_reports swaps in the run's --fail-on

    def __post_init__(self) -> None:
        if self.fail_on not in ("info", "warning", "critical", "never"):
            raise ConfigError(f"run.fail_on must be info, warning, critical or never; got {self.fail_on!r}")
        name = self.quarantine_dir_name
        if not name or "/" in name or name in (".", ".."):
            raise ConfigError(f"report.quarantine_dir_name must be a plain folder name, got {name!r}")
