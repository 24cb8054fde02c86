"""The remediation plan: per broker, the exact dirs and the safe action, as a dry-run checklist.

The job never touches brokers. For leftover data (checks marked ``reclaimable`` in conf/checks.yaml) the safe action is
reversible: stop the broker, *move* the dir into a quarantine folder beside its log dir (same filesystem, so
``mv`` is a rename), start and verify, and delete only after ``quarantine_days``. Every other finding gets its
own remediation text and no disk command.

Where the commands point: the broker's own absolute log-dir path when it is known (a finding's ``log_dir``
that is absolute, or the path a collector pack recorded: ``<pack>!/var/lib/kafka/data``, looked up by broker
and log-dir name in ``log_dir_paths``); otherwise (a copied tree, where only the capture's path is known) the
commands are relative to the log dir, after a "cd into broker N's log dir <name>" step. Paths are quoted with
``shlex.quote``. A dir name that could leave its log dir (``/``, ``..``, control characters) gets no command at
all, only a "review by hand" item: the plan never prints a command whose target is not exactly the named dir.
"""
from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

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


@dataclass(frozen=True)
class Step:
    """One checklist line: plain ``text``, optionally followed by the exact shell ``command``."""

    text: str
    command: Optional[str] = None


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
    source: Optional[str] = None        # the dir, as the command names it
    target: Optional[str] = None        # where the plan moves it
    unsafe_reason: Optional[str] = None


@dataclass
class LogDirGroup:
    """The quarantine moves inside one log dir; ``absolute`` False means commands run from inside it."""

    name: str
    captured_as: str
    absolute: bool
    root: str
    items: List[PlanItem] = field(default_factory=list)


@dataclass
class BrokerPlan:
    broker: str
    groups: List[LogDirGroup] = field(default_factory=list)
    review: List[PlanItem] = field(default_factory=list)

    @property
    def quarantine(self) -> List[PlanItem]:
        return [item for group in self.groups for item in group.items]

    @property
    def reclaimable_bytes(self) -> int:
        return sum(i.bytes or 0 for i in self.quarantine)

    def steps(self, settings: ReportSettings) -> List[Step]:
        """The checklist in order (callers escape the text for HTML/Markdown)."""
        if not self.groups:
            return []
        steps = [Step(f"Check that every partition on broker {self.broker} has enough in-sync replicas on other "
                      f"brokers, then stop broker {self.broker} (controlled shutdown).")]
        for group in self.groups:
            if not group.absolute:
                steps.append(Step(f"cd into broker {self.broker}'s log dir named {group.name!r} (captured as "
                                  f"{group.captured_as!r}); the next commands are relative to it."))
            steps.append(Step("Create the quarantine folder", f"mkdir -p -- {shlex.quote(group.root)}"))
            steps += [Step(f"Move {item.check_id} dir aside", f"mv -- {shlex.quote(item.source)} "
                           f"{shlex.quote(item.target)}") for item in group.items]
        steps.append(Step(f"Start broker {self.broker}; verify: it registers, no offline log dir, under-replicated "
                          f"partitions back to 0, and the moved dirs were not re-created."))
        for group in self.groups:
            where = "" if group.absolute else f" (from broker {self.broker}'s log dir {group.name!r})"
            steps.append(Step(f"After {settings.quarantine_days} days without problems, delete the quarantine{where}",
                              f"rm -rf -- {shlex.quote(group.root)}"))
        return steps


def unsafe_name(name: Optional[str]) -> bool:
    return (not name or name in (".", "..") or "/" in name or "\\" in name or bool(_UNSAFE_CHARS & set(name)))


def unsafe_reason(log_dir: Optional[str], dir_name: Optional[str]) -> Optional[str]:
    """Why no absolute command may be printed for ``log_dir/dir_name``, or None when it is exact and safe."""
    if not dir_name:
        return "the finding names no dir"
    if not log_dir:
        return "the finding names no log dir"
    if unsafe_name(dir_name):
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


def broker_path(captured: Optional[str]) -> Optional[str]:
    """The broker's own path of a log dir as ingest recorded it: the part after ``!`` for a pack member."""
    if not captured:
        return None
    return captured.rsplit("!", 1)[1] if "!" in captured else captured


def _resolve(row_log_dir: str, broker: str, paths: Mapping[Tuple[str, str], str]) -> Tuple[Optional[str], str]:
    """(absolute broker-side path or None, path as captured) for a finding's log dir (a path or a basename)."""
    name = posixpath.basename(row_log_dir.rstrip("/")) or row_log_dir
    captured = paths.get((broker, name)) or row_log_dir
    for candidate in (row_log_dir, broker_path(captured)):
        if candidate and unsafe_reason(candidate, "x") is None:
            return candidate.rstrip("/"), captured
    return None, captured


def build_plan(rows: Iterable[Dict[str, Any]], settings: ReportSettings, capture_tag: str,
               log_dir_paths: Optional[Mapping[Tuple[str, str], str]] = None) -> List[BrokerPlan]:
    """Per-broker plans from (bounded) finding rows; only open findings are planned.

    :param log_dir_paths: (broker id as text, log-dir name) -> log dir as captured (bronze_log_dirs.log_dir).
    """
    tag = _safe_tag(capture_tag)
    paths = dict(log_dir_paths or {})
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
            item.unsafe_reason = _place(plan, item, broker, settings, tag, paths)
            if item.unsafe_reason is None:
                continue
        plan.review.append(item)
    for plan in plans.values():
        plan.review.sort(key=lambda i: (-SEVERITY_RANK.get(i.severity, 0), i.check_id, i.dir_name or ""))
    return [plans[b] for b in sorted(plans, key=lambda b: (0, int(b), "") if b.lstrip("-").isdigit() else (1, 0, b))]


def _place(plan: BrokerPlan, item: PlanItem, broker: str, settings: ReportSettings, tag: str,
           paths: Mapping[Tuple[str, str], str]) -> Optional[str]:
    """Put a quarantine item in its log-dir group; return why it cannot be planned, or None."""
    if not item.dir_name:
        return "the finding names no dir"
    if not item.log_dir:
        return "the finding names no log dir"
    if unsafe_name(item.dir_name):
        return "the dir name could point outside its log dir"
    absolute, captured = _resolve(item.log_dir, broker, paths)
    if absolute is not None:
        name, root = posixpath.basename(absolute), quarantine_root(absolute, settings, tag)
        source = posixpath.join(absolute, item.dir_name)
    else:
        name = posixpath.basename(item.log_dir.rstrip("/"))
        if unsafe_name(name):
            return "the log dir name is not a plain folder name"
        root = posixpath.join("..", settings.quarantine_dir_name, tag, name)
        source = item.dir_name
    group = next((g for g in plan.groups if g.root == root), None)
    if group is None:
        group = LogDirGroup(name=name, captured_as=captured, absolute=absolute is not None, root=root)
        plan.groups.append(group)
    item.source, item.target = source, posixpath.join(root, item.dir_name)
    group.items.append(item)
    return None
