"""A pack's header: capture time, the node's identity from its log dirs' meta.properties, the walk options."""
from __future__ import annotations

import datetime
import json
import re
import socket
import sys
from typing import Any, Dict, List, Optional

from .filesystem import LocalFileSystem, default_fs, oserror_text
from .java_properties import parse_properties
from .options import CollectOptions
from .pack_format import COLLECTOR_VERSION, FORMAT_NAME, FORMAT_VERSION


def utc_now_iso() -> str:
    return _iso(datetime.datetime.now(datetime.timezone.utc))


def _iso(moment: datetime.datetime) -> str:
    moment = moment.astimezone(datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


_ISO_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]{1,9}))?)?"
    r"(?:([Zz])|([+-])([0-9]{2}):?([0-9]{2}))?\Z"
)


def parse_capture_time(text: str) -> str:
    """Normalise an ISO-8601 time to the header form (UTC, milliseconds, ``Z``); a time without offset is UTC.

    A regex rather than ``datetime.fromisoformat``, whose accepted forms differ between Python 3.8 and 3.11.
    """
    match = _ISO_TIME.match(text.strip())
    if not match:
        raise ValueError("capture time %r is not ISO-8601 (e.g. 2026-11-22T08:32:56Z)" % (text,))
    year, month, day, hour, minute, second, fraction, _, sign, off_h, off_m = match.groups()
    offset = datetime.timedelta(0)
    if sign:
        offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m)) * (1 if sign == "+" else -1)
    try:
        moment = datetime.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
            int((fraction or "0").ljust(6, "0")[:6]), tzinfo=datetime.timezone(offset),
        )
    except ValueError as exc:
        raise ValueError("capture time %r is not a valid time: %s" % (text, exc)) from None
    return _iso(moment)


def read_identity(
    log_dirs: List[str], fs: Optional[LocalFileSystem] = None, options: Optional[CollectOptions] = None
) -> Dict[str, Any]:
    """Broker id, cluster id and directory ids from the log dirs' ``meta.properties`` (+ warnings)."""
    fs = fs if fs is not None else default_fs()
    cap = (options or CollectOptions()).max_file_bytes
    warnings: List[str] = []
    broker_ids: Dict[str, str] = {}
    cluster_ids: Dict[str, str] = {}
    dir_ids: Dict[str, Optional[str]] = {}
    for log_dir in log_dirs:
        dir_ids[log_dir] = None
        try:
            root = fs.open_root(log_dir)
        except OSError as exc:
            warnings.append("%s: cannot open log dir: %s" % (log_dir, oserror_text(exc)))
            continue
        try:
            content, _ = fs.read(root, "meta.properties", cap)
        except OSError as exc:
            warnings.append("%s: no readable meta.properties: %s" % (log_dir, oserror_text(exc)))
            continue
        finally:
            fs.close(root)
        if content is None:
            warnings.append("%s: meta.properties larger than %d bytes" % (log_dir, cap))
            continue
        props = parse_properties(content.decode("latin-1"))  # Properties.load(InputStream), as Kafka reads it
        node = props.get("node.id", props.get("broker.id"))
        if node is not None:
            broker_ids[log_dir] = node.strip()
        if "cluster.id" in props:
            cluster_ids[log_dir] = props["cluster.id"].strip()
        dir_ids[log_dir] = props.get("directory.id")
    broker_id: Optional[int] = None
    if len(set(broker_ids.values())) > 1:
        warnings.append("node.id/broker.id differ across log dirs: %s" % json.dumps(broker_ids, sort_keys=True))
    elif broker_ids:
        text = next(iter(broker_ids.values()))
        if re.match(r"-?[0-9]{1,10}\Z", text):
            broker_id = int(text)
        else:
            warnings.append("node.id/broker.id %r is not an integer" % (text,))
    cluster_id: Optional[str] = None
    if len(set(cluster_ids.values())) > 1:
        warnings.append("cluster.id differs across log dirs: %s" % json.dumps(cluster_ids, sort_keys=True))
    elif cluster_ids:
        cluster_id = next(iter(cluster_ids.values()))
    return {"broker_id": broker_id, "cluster_id": cluster_id, "log_dir_ids": dir_ids, "warnings": warnings}


def make_header(
    log_dirs: List[str],
    options: Optional[CollectOptions] = None,
    fs: Optional[LocalFileSystem] = None,
    host: Optional[str] = None,
    capture_time: Optional[str] = None,
) -> Dict[str, Any]:
    """The pack header for these log dirs (also what raw-tree ingest should record for a capture)."""
    options = (options or CollectOptions()).checked()
    identity = read_identity(log_dirs, fs, options)
    return {
        "rec": "header",
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "collector_version": COLLECTOR_VERSION,
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "broker_id": identity["broker_id"],
        "cluster_id": identity["cluster_id"],
        "log_dir_ids": identity["log_dir_ids"],
        "host": host if host is not None else socket.gethostname(),
        "capture_time": capture_time if capture_time is not None else utc_now_iso(),
        "log_dirs": list(log_dirs),
        "options": dict(options._asdict()),
        "warnings": identity["warnings"],
    }
