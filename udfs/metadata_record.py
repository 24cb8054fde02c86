"""The row every metadata-log reader yields (binary segments, snapshots, dump-log text): one shape, one table."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from .errors import DecodeError

# Control record types as Kafka names them (ControlRecordType.java); metadata records use the
# MetadataRecordType enum name (TOPIC_RECORD, PARTITION_CHANGE_RECORD, ...).
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}


@dataclass
class MetadataRecord:
    """One KRaft metadata or control record.

    ``data`` is a dict in Kafka's DumpLogSegments JSON order (tagged fields at their default omitted), or None
    when the record could not be decoded; then ``error`` says why and ``raw_value`` keeps the bytes.
    """

    offset: int
    batch_base_offset: int
    batch_last_offset: int
    leader_epoch: int
    timestamp: int  # batch maxTimestamp (ms since epoch) == append time for metadata batches
    is_control: bool
    type: Optional[str]  # "TOPIC_RECORD", ... or control "LEADER_CHANGE", ...; None if unknown
    api_key: Optional[int]  # metadata apiKey; for control records the control type id
    version: Optional[int]
    data: Optional[dict]
    error: Optional[DecodeError] = None
    raw_value: Optional[bytes] = None
    position: Optional[int] = None  # byte position of the batch in its file, when binary

    def payload_json(self) -> Optional[str]:
        """``data`` as compact JSON, byte-equal to Kafka's ``"data":{...}`` part of the dump-log payload."""
        if self.data is None:
            return None
        return json.dumps(self.data, separators=(",", ":"), ensure_ascii=False)

    def as_json_line(self) -> dict[str, Any]:
        """The object ``kafka-recon decode`` prints for this record."""
        out: dict[str, Any] = {"offset": self.offset, "type": self.type, "version": self.version, "data": self.data}
        if self.is_control:
            out["control"] = True
        if self.error is not None:
            out["error"] = self.error.as_dict()
        return out
