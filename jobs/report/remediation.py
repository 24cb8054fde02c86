"""The remediation plan: per broker, the exact dirs and the safe action, as a dry-run checklist.

The job never touches brokers. For leftover data (``report.reclaimable_checks``) the safe action is
reversible: stop the broker, *move* the dir into a quarantine folder beside the log dir (same filesystem, so
``mv`` is a rename), start and verify, and delete only after ``quarantine_days``. Every other finding gets its
own remediation text and no disk command. Paths are shell-quoted with ``shlex.quote``; a name that could
escape its log dir (``/``, ``..``, control characters) or a relative log dir gets no command at all, only a
"review by hand" item — the plan never prints a command whose target is not exactly the dir the finding names.
"""
from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional

from .aggregates import SEVERITY_RANK
from .settings import ReportSettings

# Generic guidance when a finding carries no remediation text of its own.
GUIDANCE = {
    "MISSING_PARTITION_METADATA": "Do not delete: Kafka treats the dir as stray. Compare its data with the live "
                                  "replicas; quarantine it only once the partition is fully replicated elsewhere.",
    "CORRUPT_PARTITION_METADATA": "Do not delete: the broker fails on this file. Restore partition.metadata from "
                                  "the controller's topic id, or quarantine the dir if the partition is healthy elsewhere.",
    "DUPLICATE_REPLICA": "Keep the copy in the log dir the controller assigns; quarantine the other after checking "
                         "offsets.",
    "WRONG_LOG_DIR": "Move the replica with kafka-reassign-partitions (log dir reassignment), not by hand.",
    "MISSING_REPLICA": "No disk action: the broker lacks an assigned replica; check broker health and reassign.",
    "UNKNOWN_LOG_DIR_ENTRY": "Not Kafka's: find its owner before removing anything.",
    "FOREIGN_LOG_DIR": "The log dir belongs to another cluster: check the broker's log.dirs.",
}
_UNSAFE_CHARS = set("\x00\n\r\t")


@dataclass
class PlanItem:
    check_id: str
    severity: str
    dir_name: Optional[str]
    log_dir: Optional[str]
    topic_name: Optional[str]
    partition: Optional[int]
    bytes: Optional[int]
    message: str
    remediation: str
    source: Optional[str] = None        # exact path of the dir (quarantine items)
    target: Optional[str] = None        # where the plan moves it
    unsafe_reason: Optional[str] = None


@dataclass
class BrokerPlan:
    broker: str
    quarantine: List[PlanItem] = field(default_factory=list)
    review: List[PlanItem] = field(default_factory=list)
    quarantine_roots: List[str] = field(default_factory=list)

    @property
    def reclaimable_bytes(self) -> int:
        return sum(i.bytes or 0 for i in self.quarantine)

    def steps(self, settings: ReportSettings) -> List[str]:
        """The checklist as plain text lines (callers escape them for HTML/Markdown)."""
        lines: List[str] = []
        if self.quarantine:
            lines.append(f"Check that every partition on broker {self.broker} has enough in-sync replicas on other "
                         f"brokers, then stop broker {self.broker} (controlled shutdown).")
            for root in self.quarantine_roots:
                lines.append(f"mkdir -p -- {shlex.quote(root)}")
            for item in self.quarantine:
                lines.append(f"mv -- {shlex.quote(item.source)} {shlex.quote(item.target)}")
            lines.append(f"Start broker {self.broker}; verify: it registers, no offline log dir, under-replicated "
                         f"partitions back to 0, and the moved dirs were not re-created.")
            for root in self.quarantine_roots:
                lines.append(f"After {settings.quarantine_days} days without problems: rm -rf -- {shlex.quote(root)}")
        return lines


def unsafe_reason(log_dir: Optional[str], dir_name: Optional[str]) -> Optional[str]:
    """Why no command may be printed for this dir, or None when ``log_dir/dir_name`` is exact and safe."""
    if not dir_name:
        return "the finding names no dir"
    if not log_dir:
        return "the finding names no log dir"
    if dir_name in (".", "..") or "/" in dir_name or "\\" in dir_name or _UNSAFE_CHARS & set(dir_name):
        return "the dir name could point outside its log dir"
    if not log_dir.startswith("/") or _UNSAFE_CHARS & set(log_dir):
        return "the log dir is not an absolute path"
    if ".." in log_dir.split("/") or posixpath.normpath(log_dir) != log_dir.rstrip("/") or log_dir == "/":
        return "the log dir path is not normalized"
    return None


def quarantine_root(log_dir: str, settings: ReportSettings, capture_tag: str) -> str:
    """``<parent of log dir>/<quarantine_dir_name>/<capture>/<log dir name>``: same filesystem, outside log.dirs."""
    log_dir = log_dir.rstrip("/")
    parent, base = posixpath.split(log_dir)
    return posixpath.join(parent or "/", settings.quarantine_dir_name, capture_tag, base)


def _safe_tag(text: str) -> str:
    """A folder name from a capture id: [A-Za-z0-9._-] only, never starting with a dot (no ``..``)."""
    tag = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_.") else "_" for ch in text)[:80].lstrip(".")
    return tag or "capture"


def build_plan(rows: Iterable[Dict[str, Any]], settings: ReportSettings, capture_tag: str) -> List[BrokerPlan]:
    """Per-broker plans from (bounded) finding rows; only open findings are planned."""
    tag = _safe_tag(capture_tag)
    reclaimable = set(settings.reclaimable_checks)
    plans: Dict[str, BrokerPlan] = {}
    for row in rows:
        if row.get("status") != "open":
            continue
        broker = "unknown" if row.get("broker_id") is None else str(row["broker_id"])
        plan = plans.setdefault(broker, BrokerPlan(broker=broker))
        check = row.get("check_id") or "UNKNOWN"
        item = PlanItem(
            check_id=check, severity=row.get("severity") or "info", dir_name=row.get("dir_name"),
            log_dir=row.get("log_dir"), topic_name=row.get("topic_name"), partition=row.get("partition"),
            bytes=row.get("bytes"), message=row.get("message") or "",
            remediation=row.get("remediation") or GUIDANCE.get(check, "Review the evidence; no disk action."),
        )
        if check in reclaimable:
            reason = unsafe_reason(item.log_dir, item.dir_name)
            if reason is None:
                root = quarantine_root(item.log_dir, settings, tag)
                item.source = posixpath.join(item.log_dir.rstrip("/"), item.dir_name)
                item.target = posixpath.join(root, item.dir_name)
                plan.quarantine.append(item)
                if root not in plan.quarantine_roots:
                    plan.quarantine_roots.append(root)
                continue
            item.unsafe_reason = reason
        plan.review.append(item)
    for plan in plans.values():
        plan.review.sort(key=lambda i: (-SEVERITY_RANK.get(i.severity, 0), i.check_id, i.dir_name or ""))
    return [plans[b] for b in sorted(plans, key=lambda b: (0, int(b), "") if b.lstrip("-").isdigit() else (1, 0, b))]
