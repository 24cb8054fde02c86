"""Report settings (conf/report.yaml ``report:`` section) as one frozen object, with the defaults in one place."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Tuple


def _catalogue_reclaimable() -> Tuple[str, ...]:
    from jobs.reconcile.catalogue import default_catalogue

    return default_catalogue().reclaimable()


@dataclass(frozen=True)
class ReportSettings:
    max_rows_in_html: int = 5000
    max_rows_in_md: int = 200
    max_pid_blocks: int = 2000
    max_evidence_chars: int = 4000
    trend_runs: int = 30
    title: str = "Kafka disk reconciliation"
    # from the check catalogue (conf/checks.yaml ``reclaimable: true``), never listed here
    reclaimable_checks: Tuple[str, ...] = field(default_factory=_catalogue_reclaimable)
    quarantine_dir_name: str = "kafka-recon-quarantine"
    quarantine_days: int = 7
    fail_on: str = "critical"

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
        section = dict((cfg or {}).get("report", {}) or {}) if cfg is not None else {}
        run = dict((cfg or {}).get("run", {}) or {}) if cfg is not None else {}
        known = {f for f in cls.__dataclass_fields__ if f not in ("fail_on", "reclaimable_checks")}
        values = {k: v for k, v in section.items() if k in known}
        if catalogue is None:
            from jobs.reconcile.catalogue import catalogue_for

            catalogue = catalogue_for(cfg)
        values["reclaimable_checks"] = catalogue.reclaimable()
        return cls(**values, fail_on=fail_on or run.get("fail_on") or "critical")
