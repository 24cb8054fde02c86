"""Test helper: read Kafka's own DumpLogSegments output (tests/fixtures/kafka-devsample/tool-output/).

Only what the decoder tests compare: batch lines, record lines (with the payload or control part), producer
snapshot lines and transaction-index lines. Line shapes: core/src/main/scala/kafka/tools/DumpLogSegments.scala.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

_PAIR = re.compile(r"(\w+): (\S+)")
_RECORD = re.compile(
    r"^\| offset: (?P<offset>-?\d+) (?P<tstype>\w+): (?P<ts>-?\d+) keySize: (?P<keySize>-?\d+) "
    r"valueSize: (?P<valueSize>-?\d+)(?: sequence: (?P<sequence>-?\d+) headerKeys: \[(?P<headerKeys>[^\]]*)\])?"
    r"(?P<rest>.*)$"
)


@dataclass
class DumpRecord:
    offset: int
    timestamp_type: str
    timestamp: int
    key_size: int
    value_size: int
    sequence: Optional[int]
    header_keys: list
    rest: str  # everything after headerKeys: " key: ... payload: ...", " SnapshotHeader {...}", ...

    @property
    def payload(self) -> Optional[str]:
        m = re.search(r" payload: (.*)$", self.rest)
        return m.group(1) if m else None

    @property
    def key(self) -> Optional[str]:
        m = re.match(r"^ key: (.*?) payload: ", self.rest)
        return m.group(1) if m else None

    @property
    def metadata_json(self) -> Optional[dict]:
        p = self.payload
        if p is None or not p.startswith("{"):
            return None
        obj = json.loads(p)
        return obj if "type" in obj else None

    @property
    def control(self) -> Optional[tuple]:
        """(name, data) for decoded control records, e.g. ("SNAPSHOT_HEADER", {...}) or ("COMMIT", {...})."""
        m = re.match(r"^ endTxnMarker: (\w+) coordinatorEpoch: (-?\d+)$", self.rest)
        if m:
            return m.group(1), {"coordinatorEpoch": int(m.group(2))}
        names = {"SnapshotHeader": "SNAPSHOT_HEADER", "SnapshotFooter": "SNAPSHOT_FOOTER",
                 "KRaftVersion": "KRAFT_VERSION", "KRaftVoters": "KRAFT_VOTERS"}
        m = re.match(r"^ (SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters) (\{.*\})$", self.rest)
        if m:
            return names[m.group(1)], json.loads(m.group(2))
        m = re.match(r"^ controlType: (\w+)\((-?\d+)\)$", self.rest)
        if m:
            return m.group(1), None
        return None


@dataclass
class DumpBatch:
    fields: dict  # raw "key: value" pairs of the batch line, values as strings
    records: list = field(default_factory=list)

    def int(self, name: str) -> int:
        return int(self.fields[name])

    def bool(self, name: str) -> bool:
        return self.fields[name] == "true"


@dataclass
class Dump:
    header: list  # "Dumping ...", "Log starting offset: 0", ...
    batches: list
    trailer: list


def parse_dump(path: Path) -> Dump:
    header, batches, trailer = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            continue
        if line.startswith("baseOffset: ") or (line.startswith("offset: ") and " magic: " in line):
            pairs = dict(_PAIR.findall(line))
            batches.append(DumpBatch(pairs))
            continue
        m = _RECORD.match(line)
        if m:
            g = m.groupdict()
            batches[-1].records.append(DumpRecord(
                int(g["offset"]), g["tstype"], int(g["ts"]), int(g["keySize"]), int(g["valueSize"]),
                None if g["sequence"] is None else int(g["sequence"]),
                [k for k in (g["headerKeys"] or "").split(",") if k], g["rest"]))
            continue
        (trailer if batches else header).append(line)
    return Dump(header, batches, trailer)


def parse_skip_metadata_payloads(path: Path) -> list:
    """Payload JSON objects of a ``--skip-record-metadata`` dump, in order (control lines are empty)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(" payload: "):
            out.append(json.loads(line[len(" payload: "):]))
    return out


def parse_producer_snapshot_dump(path: Path) -> list:
    """One dict of "key: value" strings per producer line."""
    return [dict(_PAIR.findall(line)) for line in path.read_text().splitlines() if line.startswith("producerId: ")]


def parse_txnindex_dump(path: Path) -> list:
    return [{k: int(v) for k, v in _PAIR.findall(line)} for line in path.read_text().splitlines()
            if line.startswith("version: ")]


def tool_output_for(devsample: Path, data_file: Path, variant: str = "DumpLogSegments") -> Path:
    rel = data_file.relative_to(devsample)
    return devsample / "tool-output" / f"{rel}.{variant}.txt"
