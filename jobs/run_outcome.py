"""How a run ends, decided as early as it can be: never a false green.

* A bad command line or configuration is a :class:`UsageError`: one line, exit 2, checked before Spark starts
  (local capture paths must exist, URIs need a filesystem pyarrow knows, times must parse).
* A capture that cannot support a verdict is *incomplete* (exit 3), never ``ok``: no input files at all
  (decided before Spark), no log dir or no controller view (after ingest), brokers the metadata registers but
  the capture lacks, a capture much smaller than the previous one of the same cluster, or metadata records
  of a type or version newer than the record schemas (after reconcile).
  ``run.allow_partial`` (``--allow-partial``) accepts the last four knowingly: the run then ends on its
  findings and ``summary.json`` still lists the gaps.
* Every run leaves a ``summary.json``: the report stage writes the full one; when the run stops or fails
  before that, :func:`write_outcome_summary` writes the same fields it knows (status, failed stage, error).
  ``--out`` is checked writable before Spark starts (:func:`check_out_dir`), so no run merges findings into
  gold and then finds it cannot report them. A run stopped by SIGINT or SIGTERM is ``cancelled`` (exit 130 or
  143) with the stage it was in (:class:`Cancelled`).
"""
from __future__ import annotations

import json
import os
import re
import signal
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from jobs.report.summary import SCHEMA_VERSION

# pyarrow.fs.FileSystem.from_uri understands these; anything else would fail after Spark started
KNOWN_SCHEMES = ("file", "s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss", "az")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
USABLE_UNITS = ("log_dir", "pack", "file")  # links and undecodable names are reported, not read


class UsageError(ValueError):
    """A command-line or configuration mistake: reported in one line, exit 2."""


class IncompleteCapture(Exception):
    """The capture cannot support a verdict (see :func:`gaps_after_ingest`); ends the run with exit 3."""

    stage_status = "stopped"  # stage_log: a stage stopped on purpose is not a failed stage

    def __init__(self, gaps: List[Dict[str, Any]]) -> None:
        super().__init__("; ".join(g["message"] for g in gaps))
        self.gaps = gaps


class Cancelled(KeyboardInterrupt):
    """The run was stopped by a signal (SIGTERM; SIGINT arrives as KeyboardInterrupt, PySpark raises it after
    cancelling the Spark jobs). A KeyboardInterrupt so that no ``except Exception`` on the way swallows it."""

    stage_status = "cancelled"

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def raise_cancelled(signum: int, _frame: Any) -> None:
    """Signal handler (SIGTERM): cancel the running Spark jobs, as PySpark's own SIGINT handler does, then stop
    the main thread with :class:`Cancelled`."""
    sc = getattr(sys.modules.get("pyspark"), "SparkContext", None)
    try:
        if sc is not None and sc._active_spark_context is not None:
            sc._active_spark_context.cancelAllJobs()
    except Exception:  # the JVM may already be gone: the run is stopping either way
        pass
    raise Cancelled(signum)


def cancelled_signal(exc: KeyboardInterrupt) -> int:
    """The signal that stopped the run: a :class:`Cancelled`'s, else SIGINT (Ctrl-C)."""
    return int(getattr(exc, "signum", signal.SIGINT))


def gap(reason: str, message: str, **details: Any) -> Dict[str, Any]:
    return {"reason": reason, "message": message, **details}


def check_capture_roots(captures: Sequence[str]) -> None:
    """Local roots must exist; URIs must name a filesystem pyarrow can open."""
    if not captures:
        raise UsageError("--capture: no capture path given")
    for root in captures:
        match = _SCHEME.match(root)
        if match:
            if match.group(1).lower() not in KNOWN_SCHEMES:
                raise UsageError(f"--capture {root}: unknown filesystem {match.group(1)!r} "
                                 f"(one of {', '.join(KNOWN_SCHEMES)}, or a local path)")
        elif not os.path.exists(os.path.expanduser(root)):
            raise UsageError(f"--capture {root}: no such file or directory")


def parse_capture_time(text: Optional[str]) -> Optional[datetime]:
    """``--capture-time``: ISO-8601; a time without zone is UTC."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--capture-time {text!r}: expected an ISO-8601 time such as 2026-11-22T03:00:00Z") from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


VIRTUAL_FILESYSTEMS = ("/proc", "/sys", "/dev")  # kernel views: a report written there is lost or an error


def check_capture_time_not_future(value: Optional[datetime], slack_seconds: float, allowed: bool,
                                  now: Optional[datetime] = None) -> None:
    """A ``--capture-time`` more than ``slack_seconds`` ahead of this machine's clock is a typo (2030 for
    2026) or a wrong zone: every age-based check would measure to it. UsageError unless ``allowed``."""
    if value is None or allowed:
        return
    now = now or datetime.now(timezone.utc)
    ahead = (value - now).total_seconds()
    if ahead > slack_seconds:
        raise UsageError(f"--capture-time {value.isoformat()}: {ahead / 3600:.1f} h ahead of this machine's clock "
                         f"({now.replace(microsecond=0).isoformat()}); pass --allow-future-capture-time if it is "
                         f"meant")


def check_out_dir(out: str) -> None:
    """``--out`` must be a folder this run can write, checked before Spark starts: a run that finds out only at
    the report stage has already merged its findings into gold and leaves no summary.json. The folder is
    created here (summary.json goes into it on every outcome) and a probe file written and removed."""
    path = Path(os.path.abspath(os.path.expanduser(out)))
    real = Path(os.path.realpath(path))
    for root in VIRTUAL_FILESYSTEMS:
        if real == Path(root) or Path(root) in real.parents:
            raise UsageError(f"--out {out}: {root} is a kernel filesystem, not a place for reports; choose a "
                             f"real folder")
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create it ({exc.strerror or exc})") from None
    probe = path / f".kafka-recon-write-probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None


def gaps_before_spark(kinds: Iterable[str]) -> List[Dict[str, Any]]:
    """From discovery alone (work-unit kinds): a capture with nothing readable stops here, before Spark."""
    kinds = list(kinds)
    if not any(k in USABLE_UNITS for k in kinds):
        detail = f" ({len(kinds)} unreadable entries)" if kinds else ""
        return [gap("no_input_files", f"the capture holds no file to read{detail}: check the collector's output "
                                      "path, permissions and mounts")]
    return []


def gaps_nothing_recognised(found: Optional[Sequence[str]]) -> List[Dict[str, Any]]:
    """A capture whose every entry is something kafka-recon does not read (a text file given as the capture, a
    folder of unrelated files: :func:`jobs.ingest.discover.unrecognised_capture`): ``no_input_files`` before
    Spark, naming what was found."""
    if found is None:
        return []
    shown = ", ".join(found[:20]) + (f" and {len(found) - 20} more" if len(found) > 20 else "")
    return [gap("no_input_files", f"the capture holds nothing kafka-recon reads (no log dir with meta.properties, "
                                  f"no collector pack, no metadata log, dump-log text or ZooKeeper dump); found: "
                                  f"{shown or 'nothing'}", found=list(found))]


def gaps_after_ingest(rows_emitted: Mapping[str, int], has_metadata_log: bool) -> List[Dict[str, Any]]:
    """From ingest's counts: log dirs to check, and a controller view to check them against (a metadata-log
    copy or its dump-log text, or ZooKeeper's znodes and logs; a log dir's bootstrap.checkpoint is none)."""
    out = []
    if not rows_emitted.get("bronze_log_dirs"):
        out.append(gap("no_log_dirs", "no log dir in the capture (no meta.properties anywhere): nothing to "
                                      "reconcile"))
    if not has_metadata_log and not rows_emitted.get("bronze_zk_events"):
        out.append(gap("no_controller_view", "no controller view: no __cluster_metadata-0 copy, dump-log text or "
                                             "ZooKeeper dump; collect with --include-metadata-log on a controller"))
    return out


def gaps_from_damaged_inputs(damaged: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """One ``damaged_input`` gap per input the ingest could not read whole (``jobs/ingest/input_damage.py``:
    a pack cut short or corrupt, a file named like a pack that is none, an unreadable file): which file, which
    node, what could not be read, and how much was read. Decided after ingest; the report is still written
    and the run ends ``incomplete`` unless ``--allow-partial``."""
    out = []
    for item in damaged:
        node = item.get("node")
        where = f"node {node}" if node is not None else "node unknown"
        read = item.get("rows_read")
        size = item.get("bytes")
        amount = (f"{read if read is not None else '?'} entries listed" if item.get("file_kind") == "log_dir"
                  else f"{read if read is not None else '?'} rows read from its {size if size is not None else '?'} "
                       f"bytes")
        undecided = (f"findings that rest on something absent from node {node} are undecided"
                     if node is not None else "it adds nothing to any node's findings")
        out.append(gap("damaged_input", f"{item.get('file')} ({where}) could not be read whole: "
                                        f"{item.get('error') or item.get('error_kind')}; {amount}: {undecided}; "
                                        "collect it again",
                       file=item.get("file"), node=node, file_kind=item.get("file_kind"),
                       error_kind=item.get("error_kind"), error=item.get("error"), rows_read=read, bytes=size))
    return out


def gaps_after_reconcile(missing_brokers: Sequence[int], files_seen: Optional[int],
                         previous_files_seen: Optional[int], min_ratio: float) -> List[Dict[str, Any]]:
    """Registered brokers the capture lacks, and a capture that shrank against the cluster's previous one."""
    out = []
    if missing_brokers:
        ids = sorted(int(b) for b in missing_brokers)
        out.append(gap("brokers_not_captured", f"{len(ids)} registered broker(s) not in the capture: "
                                               f"{', '.join(map(str, ids[:20]))}{' ...' if len(ids) > 20 else ''}",
                       brokers=ids))
    if files_seen is not None and previous_files_seen and min_ratio > 0 \
            and files_seen < min_ratio * previous_files_seen:
        out.append(gap("capture_shrunk", f"{files_seen} input files against {previous_files_seen} in the previous "
                                         f"capture of this cluster (below run.min_capture_ratio {min_ratio})",
                       files_seen=int(files_seen), previous_files_seen=int(previous_files_seen)))
    return out


# decode errors that mean "written by a Kafka newer than these schemas" (udfs/metadata_log.py, dump_log_text.py)
UNREADABLE_KINDS = ("unknown_version", "unknown_api_key")


def gaps_unreadable_metadata_records(groups: Iterable[Mapping[str, Any]], schema_release: str
                                     ) -> List[Dict[str, Any]]:
    """Records of the authoritative metadata sequence whose type or version the schemas do not know: one gap
    per (record type, version), named with its count and first offset.

    A Kafka newer than this kafka-recon writes them (a record version is only written once the cluster's
    ``metadata.version`` allows it, docs/kafka-versions.md). The replay skipped them, so every fact they carry
    (a broker's registration, a partition's change) is missing from the controller view: the run cannot give a
    verdict on what they describe, and says so instead of passing or failing on the rest.

    :param groups: one mapping per (record_type, api_key, version, error_kind, is_control) with ``count`` and
        ``first_offset`` (the pipeline's aggregate of bronze_metadata_records).
    :param schema_release: the Kafka release the schemas describe (``udfs/schemas`` ``upstream.release``).
    """
    out = []
    for g in sorted(groups, key=lambda g: (g.get("first_offset") is None, g.get("first_offset") or 0)):
        count, first = int(g["count"]), g.get("first_offset")
        kind = "control record" if g.get("is_control") else "metadata record"
        if g.get("error_kind") == "unknown_api_key":
            what = f"{kind} type {g.get('api_key')}"
        else:
            what = f"{g.get('record_type') or kind} version {g.get('version')}"
        out.append(gap(
            "unreadable_metadata_records",
            f"{count} {what} record(s) from offset {first} could not be read: written by a Kafka newer than "
            f"{schema_release} (the newest release kafka-recon's record schemas describe); kafka-recon needs an "
            "upgrade. What they say is missing from the controller view, so checks that depend on it are "
            "undecided",
            record_type=g.get("record_type"), api_key=g.get("api_key"), version=g.get("version"),
            error_kind=g.get("error_kind"), count=count, first_offset=first, schema_release=schema_release))
    return out


def outcome_summary(run_id: str, status: str, exit_code: int, fail_on: Optional[str], *, stage: Optional[str] = None,
                    error: Optional[Dict[str, str]] = None, stages: Optional[Mapping[str, float]] = None,
                    gaps: Sequence[Mapping[str, Any]] = (), allow_partial: bool = False,
                    files: Optional[Mapping[str, Any]] = None, started_at: Optional[datetime] = None
                    ) -> Dict[str, Any]:
    """summary.json for a run that ended before the report stage: the report's fields it can know, the rest
    null, plus ``stage`` (where it ended) and ``error`` (kind, message)."""
    now = datetime.now(timezone.utc).isoformat()
    return {
        "schema_version": SCHEMA_VERSION, "run_id": run_id, "capture_id": None, "cluster_id": None,
        "capture_time": None, "started_at": started_at.isoformat() if started_at else None, "finished_at": now,
        "generated_at": now, "status": status, "exit_code": exit_code, "fail_on": fail_on,
        "stage": stage, "error": dict(error) if error else None,
        "inputs": inputs_doc(gaps, allow_partial),
        "counts": None, "bytes_reclaimable": None,
        "files": dict(files) if files else {"seen": None, "ok": None, "quarantined": None},
        "stages": {k: round(float(v), 3) for k, v in (stages or {}).items()},
        "findings_open": None, "findings_new": None, "findings_resolved": None, "dq": None, "report_files": {},
    }


def inputs_doc(gaps: Sequence[Mapping[str, Any]], allow_partial: bool) -> Dict[str, Any]:
    return {"complete": not gaps, "allow_partial": bool(allow_partial), "gaps": [dict(g) for g in gaps]}


def write_outcome_summary(out_dir: str, doc: Mapping[str, Any]) -> Optional[Path]:
    """Write summary.json atomically (temp file + rename); None when the output folder cannot be written."""
    try:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "summary.json"
        tmp = out / ".summary.json.tmp"
        tmp.write_text(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return path
    except OSError:
        return None


