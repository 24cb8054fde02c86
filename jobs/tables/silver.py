"""Silver tables: the controller's view (incarnations, assignments, producer-id blocks) and every replica dir
joined to it by topic id. Owned by the reconciliation stage (jobs/reconcile)."""
from __future__ import annotations

from .spec import TableSpec, cols

RUN_COLS = (
    ("capture_id", "string", "the capture the row describes"),
    ("run_id", "string", "the run that wrote the row"),
    ("cluster_id", "string", "the cluster's id (meta.properties majority / ZooKeeper /cluster/id)"),
)

BROKERS = TableSpec(
    name="silver_brokers",
    layer="silver",
    description="Every broker known from the metadata, ZooKeeper or the captured disks, with its state at capture "
    "time and its latest registration (the time Kafka re-arms delete timers from).",
    keys=("capture_id", "broker_id"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("broker_id", "int", "node id (brokers and controllers share one id space in KRaft)"),
        ("role", "string", "broker, controller (dedicated: RegisterControllerRecord, no broker registration) or "
         "broker+controller"),
        ("state", "string", "active, fenced, unregistered (decommissioned: UnregisterBrokerRecord), controller "
         "(a dedicated controller), absent (not registered at capture time)"),
        ("registered", "boolean", "registered in the image (KRaft) or /brokers/ids (ZooKeeper) at capture"),
        ("fenced", "boolean", "fenced in the image at capture"),
        ("broker_epoch", "long", "epoch of the latest registration"),
        ("registration_offset", "long", "metadata offset of the latest RegisterBrokerRecord, when in the log"),
        ("registration_time", "timestamp", "time of the latest registration (log append time, znode ctime); "
         "when only in a snapshot: the snapshot's last contained log time (an upper bound)"),
        ("registered_log_dirs", "array<string>", "directory ids the latest registration lists (RegisterBrokerRecord "
         "v3+ LogDirs, narrowed by a later BrokerRegistrationChangeRecord v2 LogDirs when a dir went offline)"),
        ("known_log_dirs", "array<string>", "every directory id the broker ever listed (snapshot + retained log)"),
        ("captured", "boolean", "the capture has at least one log dir of this broker"),
        ("log_dir_count", "int", "log dirs captured"),
        ("source", "string", "kraft, zookeeper or capture (only seen on disk)"),
    ),
)

TOPIC_INCARNATIONS = TableSpec(
    name="silver_topic_incarnations",
    layer="silver",
    description="One row per topic id ever known: name, creation and deletion (offset/time or 'before retained "
    "history'), and partition-count changes. A name re-created with a new id has two rows.",
    keys=("capture_id", "topic_id", "topic_name"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("topic_id", "string", "base64 Uuid; null for a ZooKeeper topic without topic_id"),
        ("topic_name", "string", ""),
        ("source", "string", "snapshot, log or zookeeper: where the incarnation is first known from"),
        ("in_snapshot", "boolean", "present in the authoritative copy's newest snapshot"),
        ("created_offset", "long", "offset of the TopicRecord, when in the retained log"),
        ("created_time", "timestamp", "append time of the TopicRecord / topic znode ctime / creation log line"),
        ("created_before_history", "boolean", "created before the retained history (only a snapshot shows it)"),
        ("deleted", "boolean", "RemoveTopicRecord seen / ZooKeeper deletion completed"),
        ("deleted_offset", "long", ""),
        ("deleted_time", "timestamp", "RemoveTopicRecord append time, or ZooKeeper delete marker/line time"),
        ("delete_pending", "boolean", "ZooKeeper /admin/delete_topics/<topic> exists"),
        ("delete_requested_time", "timestamp", "ZooKeeper delete marker ctime"),
        ("is_live", "boolean", "in the image at capture time"),
        ("partition_count", "int", "partitions at capture (live) or at deletion"),
        ("initial_partition_count", "int", "partitions in the creating batch, when known"),
        ("partition_count_changes_json", "string", "JSON list of {offset,time,from,to} partition additions"),
        ("whole_life_in_history", "boolean", "snapshot + log provably cover creation to now/deletion"),
    ),
)

PARTITION_ASSIGNMENTS = TableSpec(
    name="silver_partition_assignments",
    layer="silver",
    description="The controller's assignment of every live partition as of the capture (snapshot + log replay, or "
    "ZooKeeper znodes).",
    keys=("capture_id", "topic_id", "topic_name", "partition"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("topic_id", "string", ""),
        ("topic_name", "string", ""),
        ("partition", "int", ""),
        ("partition_count", "int", "partitions of the topic"),
        ("replicas", "array<int>", ""),
        ("isr", "array<int>", ""),
        ("leader", "int", "-1 = no leader"),
        ("adding_replicas", "array<int>", ""),
        ("removing_replicas", "array<int>", ""),
        ("directories", "array<string>", "assigned directory id per replica (KIP-858), aligned with replicas"),
        ("last_change_offset", "long", "offset of the last record that changed the partition (null: snapshot)"),
        ("last_change_time", "timestamp", ""),
        ("marked_for_deletion", "boolean", "ZooKeeper delete pending for the topic"),
        ("source", "string", "kraft or zookeeper"),
        ("leader_epoch", "int", "current leader epoch (KRaft: PartitionRecord LeaderEpoch + 1 per PartitionChangeRecord "
         "that sets Leader; ZooKeeper: the state znode's leader_epoch); null when the image does not say"),
    ),
)

REPLICAS = TableSpec(
    name="silver_replicas",
    layer="silver",
    description="Every replica dir (normal, -future, -delete, -stray) joined by topic id (never by name) to its "
    "incarnation and assignment, with the classification that the checks turn into findings.",
    keys=("capture_id", "broker_id", "log_dir", "dir_name"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("broker_id", "int", ""),
        ("broker_state", "string", "active, fenced, unregistered, controller, absent"),
        ("log_dir", "string", "log dir path as captured"),
        ("log_dir_name", "string", "basename of the log dir"),
        ("directory_id", "string", "the log dir's directory.id"),
        ("dir_name", "string", ""),
        ("entry_kind", "string", "partition, future, delete, stray"),
        ("topic_from_name", "string", "topic parsed from the dir name (may be cut short in -delete/-stray)"),
        ("partition", "int", ""),
        ("topic_id", "string", "from partition.metadata"),
        ("pm_status", "string", ""),
        ("pm_message", "string", ""),
        ("bytes", "long", ""),
        ("segment_count", "int", ""),
        ("newest_mtime", "timestamp", ""),
        ("log_start_offset", "long", ""),
        ("newest_segment_offset", "long", ""),
        ("log_end_offset", "long", "offset after the newest segment's last batch (null: not read)"),
        ("tail_scanned", "boolean", "the segments from the newest producer snapshot on were read to their end"),
        ("newest_segment_bytes", "long", ""),
        ("index_last_position", "long", "position of the newest segment's last offset-index entry"),
        ("topic_name", "string", "the incarnation's name (by topic id), else the name in the dir name"),
        ("id_state", "string", "live, deleted, unknown (never known), none (no topic id)"),
        ("deleted_time", "timestamp", "when the dir's topic id was deleted"),
        ("live_topic_id", "string", "the live id of topic_name"),
        ("name_delete_evidence", "boolean", "a deletion of topic_name is recorded (for ZooKeeper id changes)"),
        ("assigned", "boolean", "the broker is in the partition's replicas"),
        ("in_isr", "boolean", ""),
        ("assigned_directory_id", "string", "directory the controller assigns for this broker"),
        ("partition_count", "int", "live partition count of the topic id"),
        ("classification", "string", "valid, missing_partition_metadata, corrupt_partition_metadata, "
         "stale_topic_id, topic_id_changed, orphan, deleted, stray_not_assigned, delete_dir, stray_dir"),
        ("reason", "string", "why, in Kafka's terms"),
    ),
)

PRODUCER_ID_BLOCKS = TableSpec(
    name="silver_producer_id_blocks",
    layer="silver",
    description="One interval per producer-id allocation from every source; pointers (snapshot records with "
    "BrokerId -1, migration records, a dual-write znode with broker -1) are kept with is_allocation false.",
    keys=("capture_id", "source", "seq"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("source", "string", "kraft_log, kraft_snapshot, migration, zk_znode, zk_log"),
        ("seq", "long", "metadata offset, or the ZooKeeper event's seq"),
        ("is_allocation", "boolean", "a block handed to a broker (false: a pointer to the next block)"),
        ("broker_id", "int", "owner (-1 unknown)"),
        ("broker_epoch", "long", ""),
        ("first_producer_id", "long", "inclusive"),
        ("last_producer_id", "long", "inclusive"),
        ("next_producer_id", "long", "first id of the next block (high-water after this record)"),
        ("event_time", "timestamp", ""),
        ("source_file", "string", ""),
        ("detail", "string", "the record/line that proves it"),
    ),
)

PRODUCER_IDS_IN_USE = TableSpec(
    name="silver_producer_ids_in_use",
    layer="silver",
    description="Producer ids found on brokers (producer-state snapshots, batch headers) with the block holding "
    "each.",
    keys=("capture_id", "broker_id", "log_dir", "entry_name", "source_file", "producer_id"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("producer_id", "long", ""),
        ("producer_epoch", "int", ""),
        ("broker_id", "int", ""),
        ("log_dir", "string", ""),
        ("entry_name", "string", ""),
        ("topic", "string", ""),
        ("topic_id", "string", ""),
        ("partition", "int", ""),
        ("source_kind", "string", "producer_snapshot or batch_header"),
        ("source_file", "string", ""),
        ("last_timestamp", "timestamp", ""),
        ("in_block", "boolean", "below the allocation high-water / inside a known block"),
        ("block_first", "long", "first id of the allocation holding it, when known"),
        ("block_broker_id", "int", "owner of that allocation"),
    ),
)

LOG_DIRS = TableSpec(
    name="silver_log_dirs",
    layer="silver",
    description="Every captured log dir with its state against its node's registration, plus one row per offline "
    "dir (listed before or assigned replicas, missing from the latest registration and from the capture).",
    keys=("capture_id", "broker_id", "log_dir", "directory_id"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("broker_id", "int", "node id from meta.properties (offline rows: the registering broker)"),
        ("node_role", "string", "broker, controller or broker+controller"),
        ("broker_state", "string", "the node's state (silver_brokers.state)"),
        ("log_dir", "string", "path as captured; null for an offline dir that is not in the capture"),
        ("log_dir_name", "string", "basename of log_dir"),
        ("directory_id", "string", "meta.properties directory.id / the registered directory id"),
        ("state", "string", "registered, cordoned, unregistered, offline, no_dir_registration, controller_metadata, "
         "decommissioned, foreign"),
        ("reason", "string", "why, with the ids and records that decide it"),
        ("captured", "boolean", "the dir is in the capture"),
        ("has_metadata_log", "boolean", "holds __cluster_metadata-0"),
        ("replica_dirs", "int", "replica dirs (normal, -future, -delete, -stray) inside"),
        ("bytes", "long", "bytes of everything inside"),
        ("assigned_partitions", "int", "partitions the metadata assigns to this directory for this broker"),
        ("assigned_list", "array<string>", "those partitions as topic-partition, sorted"),
        ("cordoned_since", "timestamp", "state cordoned: when the broker cordoned the dir (the first record of its "
         "unbroken run in CordonedLogDirs, KIP-1066)"),
    ),
)

NODE_REGISTRATIONS = TableSpec(
    name="silver_node_registrations",
    layer="silver",
    description="A node's registration history as the controller recorded it: RegisterBrokerRecord, "
    "RegisterControllerRecord, fencing, LogDirs changes and unregistration (snapshot and retained log).",
    keys=("capture_id", "source", "seq"),
    partition_by=("capture_id",),
    columns=cols(
        *RUN_COLS,
        ("node_id", "int", "BrokerId / ControllerId"),
        ("role", "string", "broker or controller"),
        ("source", "string", "log or snapshot"),
        ("seq", "long", "metadata offset (log) or snapshot position"),
        ("offset", "long", "metadata offset, null for snapshot records"),
        ("event_time", "timestamp", "append time of the record's batch"),
        ("record_type", "string", ""),
        ("event", "string", "registered, controller_registered, fenced, unfenced, log_dirs_changed, "
         "unregistered, changed"),
        ("broker_epoch", "long", ""),
        ("fenced", "boolean", "fenced after this record, when the record says"),
        ("log_dirs", "array<string>", "LogDirs when the record sets them"),
    ),
)

TABLES = (BROKERS, TOPIC_INCARNATIONS, PARTITION_ASSIGNMENTS, REPLICAS, PRODUCER_ID_BLOCKS, PRODUCER_IDS_IN_USE,
          LOG_DIRS, NODE_REGISTRATIONS)
