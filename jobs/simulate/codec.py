"""The simulator's only door to Kafka's byte formats: thin wrappers over the ``udfs`` encoders.

One codec, both directions: every byte the simulator writes comes from the same modules ingest decodes with,
so a simulated capture is also a round-trip test of them. Nothing here assembles bytes itself.
"""
from __future__ import annotations

import datetime as _dt
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from udfs import (
    json_state_files,
    log_dir_names,
    log_index,
    metadata_log,
    partition_metadata,
    producer_state,
    properties_files,
    record_encode,
)
from udfs.kafka_uuid import to_string as uuid_str

SNAPSHOT_RECORDS_PER_BATCH = 2000


# ---- names ----

def partition_dir_name(topic: str, partition: int) -> str:
    return log_dir_names.log_dir_name(topic, partition)


def delete_dir_name(topic: str, partition: int, unique_hex: str) -> str:
    return log_dir_names.delete_dir_name(topic, partition, unique_hex)


def stray_dir_name(topic: str, partition: int, unique_hex: str) -> str:
    return log_dir_names.stray_dir_name(topic, partition, unique_hex)


def future_dir_name(topic: str, partition: int, unique_hex: str) -> str:
    return log_dir_names.future_dir_name(topic, partition, unique_hex)


def new_unique_id(rng) -> str:
    return log_dir_names.new_unique_id(rng)


def segment_name(base_offset: int, suffix: str = ".log") -> str:
    return log_dir_names.segment_file_name(base_offset, suffix)


def snapshot_name(end_offset: int, epoch: int) -> str:
    return metadata_log.snapshot_file_name(end_offset, epoch)


def producer_snapshot_name(end_offset: int) -> str:
    return producer_state.producer_snapshot_file_name(end_offset)


# ---- metadata log ----

def metadata_batch(records: Sequence[tuple], base_offset: int, epoch: int, append_ms: int) -> bytes:
    return metadata_log.encode_metadata_batch(list(records), base_offset, epoch, append_ms)


def leader_change_batch(base_offset: int, epoch: int, append_ms: int, leader_id: int, voters: Sequence[int]) -> bytes:
    return metadata_log.encode_leader_change_batch(base_offset, epoch, append_ms, leader_id, list(voters))


def snapshot_parts(records: Iterable[tuple], epoch: int, last_ts: int, create_ms: int) -> Iterator[bytes]:
    """A snapshot file streamed batch by batch: header control batch, data batches, footer control batch.

    Same layout as ``metadata_log.encode_snapshot`` (kraft.version 0), without holding all records at once.
    """
    header = [("SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": last_ts})]
    yield metadata_log.encode_control_batch(header, 0, epoch, create_ms)
    offset = len(header)
    chunk: List[tuple] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= SNAPSHOT_RECORDS_PER_BATCH:
            yield metadata_log.encode_metadata_batch(chunk, offset, epoch, create_ms)
            offset += len(chunk)
            chunk = []
    if chunk:
        yield metadata_log.encode_metadata_batch(chunk, offset, epoch, create_ms)
        offset += len(chunk)
    yield metadata_log.encode_control_batch([("SNAPSHOT_FOOTER", {"version": 0})], offset, epoch, create_ms)


def bootstrap_checkpoint(metadata_version: int, create_ms: int) -> bytes:
    """``bootstrap.checkpoint`` as ``kafka-storage format`` writes it (BootstrapDirectory)."""
    records = [("FeatureLevelRecord", 0, {"name": "metadata.version", "featureLevel": metadata_version})]
    return metadata_log.encode_snapshot(records, 0, 0, 0, append_time_ms=create_ms)


# ---- data segments ----

def data_batch(values: Sequence[Tuple[Optional[bytes], bytes, int]], base_offset: int, leader_epoch: int,
               producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
               transactional: bool = False, compression: str = "none") -> bytes:
    """A produced batch; ``values`` are (key, value, timestamp ms)."""
    records = [record_encode.NewRecord(value=v, key=k, timestamp=ts) for k, v, ts in values]
    return record_encode.encode_batch(records, base_offset, partition_leader_epoch=leader_epoch,
                                      producer_id=producer_id, producer_epoch=producer_epoch,
                                      base_sequence=base_sequence, is_transactional=transactional,
                                      compression_codec=compression)


def txn_marker_batch(base_offset: int, leader_epoch: int, ts: int, producer_id: int, producer_epoch: int,
                     commit: bool, coordinator_epoch: int) -> bytes:
    return metadata_log.encode_txn_marker_batch(base_offset, leader_epoch, ts, producer_id, producer_epoch,
                                                commit, coordinator_epoch)


def producer_snapshot(entries: Sequence[dict]) -> bytes:
    """``entries``: dicts with producer_id, epoch, last_sequence, last_offset, offset_delta, timestamp,
    coordinator_epoch, current_txn_first_offset."""
    return producer_state.encode_producer_snapshot([producer_state.ProducerEntry(**e) for e in entries])


def offset_index(entries: Sequence[Tuple[int, int]]) -> bytes:
    return log_index.encode_offset_index(entries)


def time_index(entries: Sequence[Tuple[int, int]]) -> bytes:
    return log_index.encode_time_index(entries)


# ---- small files ----

def partition_metadata_file(topic_id: bytes) -> bytes:
    return partition_metadata.encode_partition_metadata(uuid_str(topic_id))


def meta_properties(version: int, node_id: int, cluster_id: str, directory_id: Optional[bytes], when_ms: int) -> bytes:
    when = _dt.datetime.fromtimestamp(when_ms / 1000, tz=_dt.timezone.utc)
    return properties_files.write_meta_properties(version, node_id, cluster_id,
                                                  uuid_str(directory_id) if directory_id else None, when)


def offset_checkpoint(entries: Iterable[Tuple[str, int, int]]) -> bytes:
    return properties_files.write_offset_checkpoint(entries)


def leader_epoch_checkpoint(entries: Iterable[Tuple[int, int]]) -> bytes:
    return properties_files.write_leader_epoch_checkpoint(entries)


def quorum_state(leader_id: int, leader_epoch: int, voters: Sequence[int]) -> bytes:
    return json_state_files.write_quorum_state(0, leader_id=leader_id, leader_epoch=leader_epoch,
                                               current_voters=list(voters))


def clean_shutdown(broker_epoch: int) -> bytes:
    return json_state_files.write_clean_shutdown(broker_epoch)
