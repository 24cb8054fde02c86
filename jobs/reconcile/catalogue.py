"""The check catalogue: conf/checks.yaml turned into typed specs, checked against the contract's id list.

Checks are data (severity, texts, thresholds) so operators can tune them with ``--set`` and the README can
be generated from the same source; the code only decides *which* rows are findings.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Tuple

from jobs.config import ConfigError
from jobs.settings import Thresholds

__all__ = ["Catalogue", "CatalogueError", "CheckSpec", "Thresholds", "build_catalogue", "default_catalogue"]

SEVERITIES = ("info", "warning", "critical")

# docs/CONTRACTS.md, in this order. The catalogue must define exactly these.
CHECK_IDS: Tuple[str, ...] = (
    "STALE_TOPIC_ID", "ORPHAN_REPLICA", "STRAY_NOT_ASSIGNED", "MISSING_REPLICA", "DUPLICATE_REPLICA",
    "WRONG_LOG_DIR", "MISSING_PARTITION_METADATA", "CORRUPT_PARTITION_METADATA", "LINGERING_DELETE_DIR",
    "STRAY_DIR", "UNKNOWN_LOG_DIR_ENTRY", "SPECIAL_LOG_DIR_ENTRY", "FOREIGN_LOG_DIR", "TOPIC_ID_DIVERGENCE",
    "FUTURE_MOVE_STUCK", "OFFLINE_LOG_DIR", "UNREGISTERED_LOG_DIR", "DECOMMISSIONED_BROKER_DATA",
    "CORDONED_LOG_DIR_HOLDS_REPLICAS", "CORDON_ON_UNREGISTERED_BROKER",
    "PID_BLOCK_OVERLAP", "PID_BLOCK_REGRESSION", "PID_MIGRATION_REUSE", "PID_OUTSIDE_BLOCKS",
    "DELETE_INCOMPLETE", "DELETE_WITHOUT_CREATE", "ZK_DELETE_STUCK", "TOPIC_ID_CHANGED_WITHOUT_DELETE",
    "LOCAL_DELETE_WITHOUT_CONTROLLER_DELETE",
    "PARTITION_COUNT_CHANGED",
    "METADATA_LOG_DIVERGENCE", "METADATA_LOG_GAP",
    "LOG_START_BEYOND_LOG_END", "RECOVERY_POINT_BEYOND_LOG_END", "SEGMENT_SHORTER_THAN_INDEX",
    "CHECKPOINT_WITHOUT_DIR", "CHECKPOINT_OF_PREVIOUS_INCARNATION",  # restart_hazards
    "HANGING_TRANSACTION",  # transactions
    "LEADER_EPOCH_CHECKPOINT_UNREADABLE", "LEADER_EPOCH_NOT_MONOTONIC", "LEADER_EPOCH_DIVERGENCE",  # leader_epochs
    "LEADER_EPOCH_AHEAD_OF_METADATA", "REPLICA_TRUNCATION_ACKNOWLEDGED", "REPLICA_TRUNCATION_UNACKNOWLEDGED",
    # meta_properties
    "DUPLICATE_DIRECTORY_ID", "RESERVED_DIRECTORY_ID", "NODE_CLUSTER_ID_MISMATCH", "NODE_ID_MISMATCH",
    "META_VERSION_MIXED",
    # reassignments
    "STUCK_REASSIGNMENT",
)

# One replica dir gets one finding: the lowest rank wins (docs/CONTRACTS.md "Precedence").
REPLICA_PRECEDENCE: Tuple[str, ...] = (
    "UNKNOWN_LOG_DIR_ENTRY",
    "STRAY_DIR",
    "MISSING_PARTITION_METADATA",
    "CORRUPT_PARTITION_METADATA",
    "TOPIC_ID_CHANGED_WITHOUT_DELETE",
    "STALE_TOPIC_ID",
    "DELETE_INCOMPLETE",
    "ORPHAN_REPLICA",
    "STRAY_NOT_ASSIGNED",
    "LOCAL_DELETE_WITHOUT_CONTROLLER_DELETE",
    "LINGERING_DELETE_DIR",
    "DUPLICATE_REPLICA",
    "WRONG_LOG_DIR",
    "FUTURE_MOVE_STUCK",
)

FAMILIES = ("stale_replicas", "log_dirs", "producer_ids", "deletes", "kip253", "metadata_log",
            "restart_hazards", "transactions", "leader_epochs", "meta_properties", "reassignments")


class CatalogueError(ConfigError):
    """conf/checks.yaml does not define the contract's checks correctly (a configuration error: exit 2)."""


@dataclass(frozen=True)
class CheckSpec:
    check_id: str
    family: str
    severity: str
    title: str
    description: str
    why: str
    message: str
    remediation: str
    reclaimable: bool = False   # leftover data: its bytes count as reclaimable and the plan quarantines it
    absence_based: bool = False  # evidence is something not found on a node: undecided when its input is damaged


@dataclass(frozen=True)
class Catalogue:
    checks: Dict[str, CheckSpec]
    thresholds: Thresholds

    def __getitem__(self, check_id: str) -> CheckSpec:
        return self.checks[check_id]

    def severities(self) -> Dict[str, str]:
        return {c.check_id: c.severity for c in self.checks.values()}

    def absence_based(self) -> Tuple[str, ...]:
        """The checks whose evidence is an absence on a node (undecided when that node's input is damaged)."""
        return tuple(c for c in CHECK_IDS if self.checks[c].absence_based)

    def reclaimable(self) -> Tuple[str, ...]:
        """The checks whose open findings are leftover data (the one definition of reclaimable bytes)."""
        return tuple(c for c in CHECK_IDS if self.checks[c].reclaimable)


def _text(value) -> str:
    return " ".join(str(value or "").split())


def build_catalogue(checks: Mapping, thresholds: Thresholds) -> Catalogue:
    """The catalogue from the configuration's ``checks`` section (built by :class:`jobs.settings.Settings`)."""
    raw = dict(checks)
    missing = [c for c in CHECK_IDS if c not in raw]
    unknown = sorted(set(raw) - set(CHECK_IDS))
    if missing or unknown:
        raise CatalogueError(f"conf/checks.yaml: missing checks {missing}, unknown checks {unknown}; "
                             f"expected exactly {list(CHECK_IDS)}")
    specs: Dict[str, CheckSpec] = {}
    for check_id in CHECK_IDS:
        entry = raw[check_id] or {}
        severity = str(entry.get("severity", ""))
        if severity not in SEVERITIES:
            raise CatalogueError(f"checks.{check_id}.severity: expected one of "
                                 f"{', '.join(reversed(SEVERITIES))}, got {severity!r}")
        family = str(entry.get("family", ""))
        if family not in FAMILIES:
            raise CatalogueError(f"checks.{check_id}.family: expected one of {FAMILIES}, got {family!r}")
        for key in ("title", "description", "why", "message", "remediation"):
            if not _text(entry.get(key)):
                raise CatalogueError(f"checks.{check_id}.{key} is empty")
        reclaimable = entry.get("reclaimable", False)
        if not isinstance(reclaimable, bool):
            raise CatalogueError(f"checks.{check_id}.reclaimable: expected true or false, got {reclaimable!r}")
        absence_based = entry.get("absence_based", False)
        if not isinstance(absence_based, bool):
            raise CatalogueError(f"checks.{check_id}.absence_based: expected true or false, got {absence_based!r}")
        specs[check_id] = CheckSpec(check_id, family, severity, _text(entry["title"]), _text(entry["description"]),
                                    _text(entry["why"]), _text(entry["message"]), _text(entry["remediation"]),
                                    reclaimable, absence_based)
    return Catalogue(specs, thresholds)


def default_catalogue() -> Catalogue:
    """The catalogue as conf/*.yaml ships it (no --set, no environment): for callers without a configuration."""
    from jobs.settings import Settings

    return Settings.shipped().catalogue
