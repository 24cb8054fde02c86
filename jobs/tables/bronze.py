"""Bronze tables: what the inputs say, decoded but not interpreted. Every row carries capture_id and run_id."""
from __future__ import annotations

from . import record_columns
from .spec import TableSpec, cols

RUN_COLS = (
    ("capture_id", "string", "the capture this row came from (stable for a re-run of the same capture)"),
    ("run_id", "string", "the nightly run that wrote the row"),
)

INGEST_FILES = TableSpec(
    name="bronze_ingest_files",
    layer="bronze",
    description="Every input file seen, with its outcome: ok, or quarantined with the reason. seen = ok + quarantined.",
    keys=("capture_id", "path"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("path", "string", "path or URI of the file (inside a packed snapshot: pack path + '!' + member path)"),
        ("file_kind", "string", "meta_properties, partition_metadata, metadata_segment, metadata_snapshot, "
         "bootstrap_checkpoint, checkpoint, quorum_state, producer_snapshot, txnindex, dump_log_text, "
         "zk_znodes, zk_log, log_dirs_json, packed_snapshot, data_segment, index, capture_record, other"),
        ("broker_id", "int", "broker the file belongs to, when known"),
        ("log_dir", "string", "log dir holding the file (null for files outside log dirs)"),
        ("bytes", "long", "file size in bytes (apparent size)"),
        ("status", "string", "ok | quarantined"),
        ("error_kind", "string", "udfs.errors kind when quarantined or partly decoded"),
        ("error_message", "string", "the specific reason"),
        ("error_offset", "long", "byte offset of the first error"),
        ("error_line", "int", "1-based line of the first error"),
        ("rows_produced", "long", "rows this file contributed to bronze tables"),
    ),
)

LOG_DIRS = TableSpec(
    name="bronze_log_dirs",
    layer="bronze",
    description="One row per log dir (a folder holding meta.properties).",
    keys=("capture_id", "log_dir"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("cluster_id", "string", "meta.properties cluster.id"),
        ("broker_id", "int", "meta.properties node.id (v1) or broker.id (v0), never the folder name"),
        ("log_dir", "string", "path of the log dir as captured"),
        ("directory_id", "string", "meta.properties directory.id (base64 Uuid), null when absent"),
        ("meta_version", "int", "meta.properties version (0 ZooKeeper, 1 KRaft)"),
        ("host", "string", "host the collector ran on, when known"),
        ("capture_time", "timestamp", "when the capture was taken"),
        ("has_metadata_log", "boolean", "holds __cluster_metadata-0"),
        ("entry_count", "long", "entries at the top of the log dir"),
        ("error_kind", "string", "set when meta.properties is unreadable or incomplete"),
        ("error_message", "string", ""),
    ),
)

DIR_ENTRIES = TableSpec(
    name="bronze_dir_entries",
    layer="bronze",
    description="Every entry at the top of every log dir, with its parsed name and partition.metadata outcome.",
    keys=("capture_id", "log_dir", "entry_name"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("cluster_id", "string", ""),
        ("broker_id", "int", ""),
        ("log_dir", "string", ""),
        ("directory_id", "string", "the log dir's directory.id"),
        ("entry_name", "string", "name of the entry in the log dir"),
        ("entry_kind", "string", "partition, delete, future, stray, metadata, top_file, non_kafka, special "
         "(symlink, FIFO, socket, device: never followed)"),
        ("is_dir", "boolean", ""),
        ("topic", "string", "topic parsed from the name (may be cut short in -delete/-stray names)"),
        ("partition", "int", ""),
        ("suffix_id", "string", "32-hex unique id of -delete/-future/-stray names"),
        ("name_error", "string", "why the name is not a Kafka entry (Kafka's own message)"),
        ("bytes", "long", "sum of file sizes inside the entry (apparent)"),
        ("segment_count", "int", "number of .log segments"),
        ("newest_mtime", "timestamp", "newest mtime inside the entry"),
        ("first_written", "timestamp", "when the dir existed by: partition.metadata's mtime (Kafka writes it once, "
         "when it creates the log), else the oldest file mtime inside the entry"),
        ("log_start_offset", "long", "base offset of the oldest segment"),
        ("newest_segment_offset", "long", "base offset of the newest segment"),
        ("pm_status", "string", "ok, missing, log_dir_offline, broker_start_fails, not_applicable"),
        ("pm_message", "string", "what Kafka would log/throw"),
        ("pm_version", "int", "version read from partition.metadata"),
        ("topic_id", "string", "topic id from partition.metadata (base64), null when missing or bad"),
        ("log_end_offset", "long", "offset after the newest segment's last batch (Kafka's readNextOffset), from "
         "the collector's segment summary; null when not read"),
        ("tail_scanned", "boolean", "every summarized segment (the newest, and those from the newest producer "
         "snapshot on) was read to its end, so its transaction markers are all known"),
        ("newest_segment_bytes", "long", "size of the newest .log segment"),
        ("index_last_position", "long", "file position of the newest segment's last offset-index entry"),
    ),
)

METADATA_RECORDS = TableSpec(
    name="bronze_metadata_records",
    layer="bronze",
    description="One row per KRaft metadata or control record of the authoritative copy of the metadata log "
    "(its log segments and the snapshot its sequence starts from; segment or dump text), of other copies' segments "
    "holding batches the authoritative copy lacks, and of bootstrap files. The other copies are compared batch by "
    "batch (bronze_metadata_batches), not decoded.",
    keys=("capture_id", "copy_id", "source_file", "offset"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("copy_id", "string", "which copy of the metadata log: broker id + log dir, or the external file"),
        ("source_broker_id", "int", "broker whose disk held the copy, when known"),
        ("source_file", "string", ""),
        ("source_kind", "string", "segment, snapshot, bootstrap, dump_log_text"),
        ("section", "string", "what the records belong to, whatever the source form: log, snapshot, bootstrap"),
        ("snapshot_end_offset", "long", "for snapshots: the snapshot id's end offset (exclusive)"),
        ("offset", "long", "record offset (inside a snapshot: the snapshot's own offset)"),
        ("batch_base_offset", "long", ""),
        ("leader_epoch", "int", "partitionLeaderEpoch of the batch"),
        ("append_time", "timestamp", "batch maxTimestamp as a timestamp"),
        ("is_control", "boolean", ""),
        ("record_type", "string", "Kafka's MetadataRecordType name (TOPIC_RECORD, ...) or control type"),
        ("api_key", "int", ""),
        ("version", "int", ""),
        ("payload_json", "string", "Kafka's DumpLogSegments JSON of the data"),
        *record_columns.table_columns(),  # typed columns: types from Kafka's message specs
        ("record_hash", "string", "hash of type, version and payload: compares copies"),
        ("error_kind", "string", "set when this record could not be decoded (kept, never dropped)"),
        ("error_message", "string", ""),
        ("raw_value", "binary", "the record's value bytes as Kafka wrote them, kept when it could not be decoded "
         "(a record type or version newer than the schemas: docs/kafka-versions.md); null when decoded"),
        ("in_authoritative_sequence", "boolean", "part of the one authoritative sequence: the authoritative "
         "copy's log records, plus the snapshot its log starts from when the log does not reach offset 0"),
    ),
)

METADATA_BATCHES = TableSpec(
    name="bronze_metadata_batches",
    layer="bronze",
    description="One row per record batch of every copy of the metadata log (segments and snapshots, on every "
    "broker, and dump-log text): offsets, leader epoch and CRC, enough to compare copies without decoding them.",
    keys=("capture_id", "copy_id", "source_file", "position"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("copy_id", "string", "which copy of the metadata log: the __cluster_metadata-0 folder or dump-text folder"),
        ("source_broker_id", "int", "broker whose disk held the copy, when known"),
        ("source_file", "string", ""),
        ("source_kind", "string", "segment, snapshot, dump_log_text"),
        ("section", "string", "log or snapshot"),
        ("snapshot_end_offset", "long", "for snapshots: the snapshot id's end offset (exclusive)"),
        ("base_offset", "long", "null when the file could not be framed at this position"),
        ("last_offset", "long", ""),
        ("records", "int", "records count of the batch"),
        ("leader_epoch", "int", "partitionLeaderEpoch"),
        ("crc", "long", "stored CRC-32C (unsigned), as kafka-dump-log prints it"),
        ("crc_valid", "boolean", "CRC recomputed over the batch bytes matches (null for dump text: as printed)"),
        ("is_control", "boolean", ""),
        ("is_transactional", "boolean", ""),
        ("position", "long", "byte position of the batch in its file (dump text: as printed)"),
        ("size_bytes", "int", ""),
        ("max_timestamp", "timestamp", "batch maxTimestamp"),
        ("error_kind", "string", "set when the batch is corrupt or the file ends in a framing error"),
        ("error_message", "string", ""),
    ),
)

METADATA_COPIES = TableSpec(
    name="bronze_metadata_copies",
    layer="bronze",
    description="Per copy of the metadata log: where it starts and ends, whether it is the authoritative one, "
    "and the first offset where it disagrees with it.",
    keys=("capture_id", "copy_id"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("copy_id", "string", ""),
        ("source_broker_id", "int", ""),
        ("snapshot_end_offset", "long", "end offset of the newest snapshot of this copy (null if none)"),
        ("first_offset", "long", "first log offset present"),
        ("last_offset", "long", "last log offset present"),
        ("records", "long", ""),
        ("is_authoritative", "boolean", "the longest consistent copy"),
        ("diverges_at_offset", "long", "first offset whose record differs from the authoritative copy"),
        ("gap_after_offset", "long", "a hole in offsets after this offset, if any"),
        ("sequence_snapshot_end_offset", "long", "authoritative copy: end offset of the snapshot the authoritative "
         "sequence starts from (null when its log starts at offset 0)"),
        ("source_kind", "string", "segment (a broker's __cluster_metadata-0), dump_log_text, or external files"),
        ("log_dir", "string", "log dir holding the copy, when it is on a broker's disk"),
    ),
)

PRODUCER_STATES = TableSpec(
    name="bronze_producer_states",
    layer="bronze",
    description="Producer-state snapshot entries and transactional batch producer ids found on brokers.",
    keys=("capture_id", "log_dir", "entry_name", "source_file", "producer_id"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("broker_id", "int", ""),
        ("log_dir", "string", ""),
        ("entry_name", "string", "partition dir holding the snapshot"),
        ("topic", "string", ""),
        ("partition", "int", ""),
        ("topic_id", "string", ""),
        ("source_file", "string", ""),
        ("source_kind", "string", "producer_snapshot, batch_header, or txn_marker (the producer's last "
         "transaction marker in the summarized segments; last_offset is the marker's offset)"),
        ("snapshot_offset", "long", "offset in the snapshot's name"),
        ("producer_id", "long", ""),
        ("producer_epoch", "int", ""),
        ("last_sequence", "int", ""),
        ("last_offset", "long", ""),
        ("timestamp", "timestamp", "last write time for this producer"),
        ("coordinator_epoch", "int", ""),
        ("current_txn_first_offset", "long", ""),
    ),
)

OFFSET_CHECKPOINTS = TableSpec(
    name="bronze_offset_checkpoints",
    layer="bronze",
    description="Entries of each log dir's offset checkpoints (recovery-point, log-start, replication, cleaner): "
    "the offsets the broker acts on at its next start. Keyed by topic name, as Kafka writes them.",
    keys=("capture_id", "log_dir", "checkpoint", "topic", "partition"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("log_dir", "string", ""),
        ("checkpoint", "string", "file name: recovery-point-offset-checkpoint, log-start-offset-checkpoint, "
         "replication-offset-checkpoint or cleaner-offset-checkpoint"),
        ("topic", "string", ""),
        ("partition", "int", ""),
        ("offset", "long", ""),
        ("source_file", "string", ""),
    ),
)

ZK_EVENTS = TableSpec(
    name="bronze_zk_events",
    layer="bronze",
    description="ZooKeeper-mode facts: znodes from a znode dump and events from controller/server/state-change logs.",
    keys=("capture_id", "source_file", "seq", "topic_name"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("source_file", "string", ""),
        ("source_kind", "string", "znode_dump, controller_log, server_log, state_change_log"),
        ("seq", "long", "line number, or znode index in the dump"),
        ("event_time", "timestamp", "log line time or znode mtime"),
        ("event_type", "string", "topic_znode, partition_state, delete_marker, producer_id_block, migration, "
         "topic_created, topic_deletion_started, topic_deletion_halted, topic_deletion_completed, "
         "producer_id_block_acquired, log_renamed_for_delete, log_deleted, ..."),
        ("zk_path", "string", ""),
        ("topic_name", "string", ""),
        ("topic_id", "string", ""),
        ("partition", "int", ""),
        ("broker_id", "int", "broker the event concerns (block owner, log line's broker)"),
        ("replicas", "array<int>", ""),
        ("block_start", "long", ""),
        ("block_end", "long", ""),
        ("zk_version", "int", "znode stat version"),
        ("payload_json", "string", "znode data or the parsed fields as JSON"),
        ("message", "string", "the raw log line or znode path"),
    ),
)

REPORTED_REPLICAS = TableSpec(
    name="bronze_reported_replicas",
    layer="bronze",
    description="kafka-log-dirs --describe JSON: what each broker reports per log dir and partition.",
    keys=("capture_id", "broker_id", "log_dir", "topic", "partition", "is_future"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("source_file", "string", ""),
        ("broker_id", "int", ""),
        ("log_dir", "string", ""),
        ("log_dir_error", "string", ""),
        ("topic", "string", ""),
        ("partition", "int", ""),
        ("size", "long", ""),
        ("offset_lag", "long", ""),
        ("is_future", "boolean", ""),
    ),
)

LEADER_EPOCHS = TableSpec(
    name="bronze_leader_epochs",
    layer="bronze",
    description="One row per entry of a replica dir's leader-epoch-checkpoint that parses (a file Kafka cannot "
    "read gives no rows: it is quarantined in bronze_ingest_files with Kafka's message).",
    keys=("capture_id", "source_file", "position"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("broker_id", "int", "from the log dir's meta.properties"),
        ("log_dir", "string", ""),
        ("entry_name", "string", "replica dir holding the file"),
        ("topic", "string", ""),
        ("partition", "int", ""),
        ("topic_id", "string", "from the replica dir's partition.metadata (null when missing or bad)"),
        ("position", "int", "0-based index of the entry in the file"),
        ("epoch", "int", "leader epoch"),
        ("start_offset", "long", "first offset of the epoch in this replica's log"),
        ("kafka_keeps", "boolean", "LeaderEpochFileCache keeps the entry when it loads the file (it drops "
         "entries that break the order of epochs and start offsets)"),
        ("source_file", "string", ""),
    ),
)

TABLES = (INGEST_FILES, LOG_DIRS, DIR_ENTRIES, METADATA_RECORDS, METADATA_BATCHES, METADATA_COPIES, PRODUCER_STATES,
          OFFSET_CHECKPOINTS, ZK_EVENTS, REPORTED_REPLICAS, LEADER_EPOCHS)
