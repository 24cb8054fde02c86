"""``kafka-dump-log --cluster-metadata-decoder`` text for metadata segments and snapshots.

Operators often hand over this text instead of the binary log (a KRaft controller's log dir is not on the
broker hosts), so the simulator writes it for the controller-only quorum of the migration scenario. The text
is produced from our own bytes read back with ``udfs.metadata_log`` / ``udfs.record_batch``, in the line
shapes of core/src/main/scala/kafka/tools/DumpLogSegments.scala (kafka-formats.md §5; checked byte for byte
against Kafka's own output in tests/unit/test_simulator_dump_log.py).
"""
from __future__ import annotations

import json
import os
from typing import Iterator, List

from udfs import metadata_log, record_batch
from udfs.errors import DecodeError
from udfs.metadata_record import CONTROL_TYPES

_CONTROL_JSON = {"SNAPSHOT_HEADER": "SnapshotHeader", "SNAPSHOT_FOOTER": "SnapshotFooter",
                 "KRAFT_VERSION": "KRaftVersion", "KRAFT_VOTERS": "KRaftVoters"}


def _compact(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def dump_lines(path: str, display_name: str) -> Iterator[str]:
    """The lines DumpLogSegments prints for one ``.log`` segment or ``.checkpoint`` snapshot."""
    name = os.path.basename(path)
    yield f"Dumping {display_name}"
    if name.endswith(".checkpoint"):
        end, epoch = metadata_log.parse_snapshot_file_name(name)
        yield f"Snapshot end offset: {end}, epoch: {epoch}"
    else:
        yield f"Log starting offset: {int(name.split('.')[0])}"
    records = {r.offset: r for r in metadata_log.iter_metadata_records(path)}
    for batch in record_batch.read_batches(path):
        if isinstance(batch, DecodeError):
            return
        h = batch.header
        yield (f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
               f"baseSequence: {h.base_sequence} lastSequence: {h.last_sequence} producerId: {h.producer_id} "
               f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
               f"isTransactional: {str(h.is_transactional).lower()} isControl: {str(h.is_control).lower()} "
               f"deleteHorizonMs: OptionalLong.empty position: {h.position} {h.timestamp_type}: {h.max_timestamp} "
               f"size: {h.size} magic: {h.magic} compresscodec: {h.compression_name} crc: {h.crc} isvalid: true")
        for offset_delta, key, value, _attrs, ts_delta, _headers, _size in record_batch.record_tuples(batch):
            offset = h.base_offset + offset_delta
            line = (f"| offset: {offset} {h.timestamp_type}: {h.base_timestamp + ts_delta} "
                    f"keySize: {-1 if key is None else len(key)} valueSize: {-1 if value is None else len(value)} "
                    f"sequence: -1 headerKeys: []")
            rec = records[offset]
            if h.is_control:
                label = _CONTROL_JSON.get(rec.type)
                if label is not None:
                    line += f" {label} {_compact(rec.data)}"
                else:
                    type_id = next((k for k, v in CONTROL_TYPES.items() if v == rec.type), -1)
                    line += f" controlType: {rec.type}({type_id})"
            else:
                line += f" payload: {_compact({'type': rec.type, 'version': rec.version, 'data': rec.data})}"
            yield line


def write_dump(paths: List[str], display_root: str, out_path: str) -> None:
    """One text file holding the dumps of several files (``kafka-dump-log --files a,b``)."""
    with open(out_path, "w", encoding="utf-8") as f:
        for path in paths:
            for line in dump_lines(path, f"{display_root}/{os.path.basename(path)}"):
                f.write(line + "\n")
