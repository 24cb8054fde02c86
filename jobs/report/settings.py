"""Report settings (conf/report.yaml ``report:`` section) as one frozen object, with the defaults in one place."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Tuple


def _catalogue_reclaimable() -> Tuple[str, ...]:
    from jobs.reconcile.catalogue import default_catalogue

    return default_catalogue().reclaimable()


@dataclass(frozen=True)
class ReportSettings:
    """``report`` (conf/report.yaml), plus the run's fail_on and the catalogue's reclaimable checks. The values
    come from conf/*.yaml; ``ReportSettings.from_config(None)`` is the shipped report."""

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
    reclaimable_checks: Tuple[str, ...] = field(default_factory=_catalogue_reclaimable)
    fail_on: str = "critical"  # the run's --fail-on (run.fail_on), given by from_config

    def __post_init__(self) -> None:
        for name in ("max_rows_in_html", "max_rows_in_md", "max_pid_blocks", "max_evidence_chars", "trend_runs"):
            if getattr(self, name) < 0:
                raise ValueError(f"report.{name} must be >= 0, got {getattr(self, name)!r}")
        if self.fail_on not in ("info", "warning", "critical", "never"):
            raise ValueError(f"run.fail_on must be info, warning, critical or never; got {self.fail_on!r}")
        name = self.quarantine_dir_name
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"report.quarantine_dir_name must be a plain folder name, got {name!r}")

    @classmethod
    def from_config(cls, cfg: Any, fail_on: str = "", catalogue: Any = None) -> "ReportSettings":
        """``catalogue``: the run's check catalogue (default: the one ``cfg`` carries, else the shipped one)."""
        from jobs.settings import RunSettings, section

        if catalogue is None:
            from jobs.reconcile.catalogue import catalogue_for

            catalogue = catalogue_for(cfg)
        return section(cfg, cls, reclaimable_checks=catalogue.reclaimable(),
                       fail_on=fail_on or section(cfg, RunSettings).fail_on)
