"""Expectation suites as data: which Great Expectations rules apply to which table.

A suite is built for a table from two sources:

- **column rules**, applied to every bronze/silver table that has the column (``capture_id`` never null,
  ``topic_id`` a well-formed Kafka Uuid that is not reserved, ``partition`` >= 0, block start <= end, ...),
  so a silver table added later gets them without touching this file;
- **table rules**, written per table (unique natural keys, allowed values, reconciliation invariants).

Each rule is a :class:`Rule`: an expectation class name from ``great_expectations.expectations``, its
kwargs, the columns it needs, and a ``key`` that names the row it becomes in ``gold_dq_results`` (unique per
suite, checked when the suite is built). A table rule whose columns are missing is skipped and recorded as
skipped, never silently dropped. Nothing here imports Great Expectations: the runner turns rules into
expectations.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from jobs.reconcile.catalogue import CHECK_IDS
from jobs.reconcile.silver_build import LOG_DIR_STATES
from udfs.kafka_uuid import METADATA_TOPIC_ID_STR, ZERO_STR

# 16 bytes as 22 chars of unpadded base64url: the 22nd char carries 2 bits, so only A, Q, g or w.
KAFKA_UUID_REGEX = r"^[A-Za-z0-9_-]{21}[AQgw]$"
SUFFIX_ID_REGEX = r"^[0-9a-f]{32}$"
FINDING_ID_REGEX = r"^[0-9a-f]{64}$"
METADATA_TOPIC = "__cluster_metadata"
META_KEY = "kafka_recon_key"  # expectation meta entry that ties a GX result back to its Rule
# how every "no row may match" rule's query starts (screen.py reads its condition back from it)
NO_ROWS_QUERY_PREFIX = "SELECT * FROM {batch} WHERE "

SEVERITIES = ("critical", "warning", "info")
FINDING_STATUSES = ("open", "resolved")
# CONTRACTS.md "Check ids"; conf/checks.yaml (when present) extends this list.
KNOWN_CHECK_IDS = CHECK_IDS  # one list: jobs/reconcile/catalogue.py


@dataclass(frozen=True)
class Rule:
    """One expectation: ``expectation`` is a class name in ``great_expectations.expectations``."""

    expectation: str
    kwargs: Mapping[str, object]
    columns: Tuple[str, ...]
    key: str = ""  # the gold_dq_results column_name; defaults to the columns joined by ","
    description: str = ""

    @property
    def column_key(self) -> str:
        return self.key or ",".join(self.columns)

    @property
    def expectation_type(self) -> str:
        """GX's snake_case type name (``ExpectColumnValuesToNotBeNull`` -> ``expect_column_values_to_not_be_null``)."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.expectation).lower()

    @property
    def result_key(self) -> Tuple[str, str]:
        """What ties a GX result to this rule (:func:`jobs.quality.flatten.result_key` of the result)."""
        return self.expectation_type, self.column_key


@dataclass(frozen=True)
class Suite:
    name: str
    table: str
    rules: Tuple[Rule, ...]
    skipped: Tuple[Tuple[Rule, Tuple[str, ...]], ...] = field(default=())  # (rule, missing columns)

    def __post_init__(self) -> None:
        seen = set()
        for rule in (*self.rules, *(r for r, _ in self.skipped)):
            ident = rule.result_key
            if ident in seen:
                raise ValueError(f"suite {self.name}: two rules share the result key {ident}; give one a key=")
            seen.add(ident)


def _not_null(column: str, why: str) -> Rule:
    return Rule("ExpectColumnValuesToNotBeNull", {"column": column}, (column,), description=why)


def _regex(column: str, regex: str, why: str) -> Rule:
    return Rule("ExpectColumnValuesToMatchRegex", {"column": column, "regex": regex}, (column,), description=why)


def _at_least(column: str, minimum: int, why: str) -> Rule:
    return Rule("ExpectColumnValuesToBeBetween", {"column": column, "min_value": minimum}, (column,),
                description=why)


def _in_set(column: str, values: Iterable[str], why: str) -> Rule:
    return Rule("ExpectColumnValuesToBeInSet", {"column": column, "value_set": sorted(values)}, (column,),
                description=why)


def _unique(columns: Sequence[str], why: str) -> Rule:
    cols = tuple(columns)
    if len(cols) == 1:
        return Rule("ExpectColumnValuesToBeUnique", {"column": cols[0]}, cols, description=why)
    return Rule("ExpectCompoundColumnsToBeUnique", {"column_list": list(cols)}, cols, description=why)


def _ordered(low: str, high: str, why: str) -> Rule:
    return Rule(
        "ExpectColumnPairValuesAToBeGreaterThanB",
        {"column_A": high, "column_B": low, "or_equal": True, "ignore_row_if": "either_value_is_missing"},
        (low, high), description=why,
    )


def _row_count_at_least(minimum: int, why: str) -> Rule:
    """Volume: the table's slice for this capture has at least ``minimum`` rows."""
    return Rule("ExpectTableRowCountToBeBetween", {"min_value": minimum}, (), key="table:row_count", description=why)


def _no_rows(where: str, columns: Sequence[str], key: str, why: str) -> Rule:
    """A table-level invariant: no row may match ``where`` (Spark SQL over the batch)."""
    return Rule(
        "UnexpectedRowsExpectation",
        {"unexpected_rows_query": NO_ROWS_QUERY_PREFIX + where, "description": why},
        tuple(columns), key=key, description=why,
    )


def _no_groups(query: str, columns: Sequence[str], key: str, why: str) -> Rule:
    return Rule("UnexpectedRowsExpectation", {"unexpected_rows_query": query, "description": why},
                tuple(columns), key=key, description=why)


# ---- column rules: bronze and silver ---------------------------------------------------------------------

_TOPIC_NAME_COLUMNS = ("topic_name", "topic")
UUID_COLUMNS = ("topic_id", "directory_id", "live_topic_id", "assigned_directory_id")


def column_rules(columns: Sequence[str]) -> List[Rule]:
    """Rules implied by column names alone (bronze and silver tables)."""
    have = set(columns)
    rules: List[Rule] = []
    if "capture_id" in have:
        rules.append(_not_null("capture_id", "every row has a capture"))
    if "run_id" in have:
        rules.append(_not_null("run_id", "every row has the run that wrote it"))
    for col in UUID_COLUMNS:
        if col in have:
            rules.append(_regex(col, KAFKA_UUID_REGEX, f"{col} is a Kafka Uuid: 22 chars of base64url"))
    if "topic_id" in have:
        name_col = next((c for c in _TOPIC_NAME_COLUMNS if c in have), None)
        if name_col:
            where = (f"topic_id = '{ZERO_STR}' OR (topic_id = '{METADATA_TOPIC_ID_STR}' "
                     f"AND coalesce({name_col}, '') <> '{METADATA_TOPIC}')")
            cols = ("topic_id", name_col)
        else:
            where = f"topic_id = '{ZERO_STR}'"
            cols = ("topic_id",)
        rules.append(_no_rows(where, cols, "topic_id:reserved",
                              "topic ids are not reserved (ZERO never; ONE only for the metadata topic)"))
    if "suffix_id" in have:
        rules.append(_regex("suffix_id", SUFFIX_ID_REGEX, "-delete/-future/-stray suffix is 32 hex chars"))
    for col in ("partition", "partition_id"):
        if col in have:
            rules.append(_at_least(col, 0, "partitions are >= 0"))
    for col in ("broker_id", "source_broker_id", "block_broker_id"):
        if col in have:
            rules.append(_at_least(col, -1, "broker ids are >= 0 (-1: unknown, e.g. a producer-id pointer)"))
    for col in ("bytes", "size"):
        if col in have:
            rules.append(_at_least(col, 0, "sizes are >= 0"))
    if {"block_start", "block_end"} <= have:
        rules.append(_ordered("block_start", "block_end", "a producer-id block starts at or before its end"))
        rules.append(_at_least("block_start", 0, "producer ids are >= 0"))
    if "producer_id" in have:
        rules.append(_at_least("producer_id", 0, "producer ids are >= 0"))
    if "partition_count" in have and "partition" in have:
        rules.append(_no_rows("partition >= partition_count", ("partition", "partition_count"),
                              "partition:below_count", "a partition number is below the topic's partition count"))
    return rules


# ---- table rules -----------------------------------------------------------------------------------------

def _bronze_and_silver_rules() -> Dict[str, List[Rule]]:
    return {
        "bronze_ingest_files": [
            _row_count_at_least(1, "the capture gave at least one input file (an empty capture is never green)"),
            _unique(("capture_id", "path"), "one row per input file"),
            _in_set("status", ("ok", "quarantined"), "a file is ok or quarantined"),
            _no_rows("status = 'quarantined' AND error_kind IS NULL", ("status", "error_kind"),
                     "status:quarantined_has_reason", "a quarantined file says why"),
        ],
        "bronze_log_dirs": [
            _row_count_at_least(1, "the capture holds at least one log dir"),
            _unique(("capture_id", "log_dir"), "one row per log dir"),
            _no_rows("broker_id IS NULL AND error_kind IS NULL", ("broker_id", "error_kind"),
                     "broker_id:known_or_error", "a log dir has a broker id, or an error saying why not"),
        ],
        "bronze_dir_entries": [
            _unique(("capture_id", "log_dir", "entry_name"), "one row per log-dir entry"),
            _in_set("entry_kind", ("partition", "delete", "future", "stray", "metadata", "top_file", "non_kafka",
                                  "special"),
                    "entry kinds are known"),
            _in_set("pm_status", ("ok", "missing", "log_dir_offline", "broker_start_fails", "not_applicable"),
                    "partition.metadata outcomes are known"),
        ],
        "bronze_metadata_records": [
            _unique(("capture_id", "copy_id", "source_file", "offset"), "offsets are unique per source"),
            _at_least("offset", 0, "offsets are >= 0"),
        ],
        "bronze_metadata_batches": [
            _unique(("capture_id", "copy_id", "source_file", "position"), "one row per batch position in a file"),
            _ordered("base_offset", "last_offset", "a batch's base offset is at or before its last"),
            _no_rows("crc_valid = false AND error_kind IS NULL", ("crc_valid", "error_kind"), "crc_valid:explained",
                     "a batch whose CRC does not verify carries its error"),
        ],
        "bronze_metadata_copies": [
            _unique(("capture_id", "copy_id"), "one row per copy of the metadata log"),
            _ordered("first_offset", "last_offset", "a copy's first offset is at or before its last"),
            _no_groups(
                "SELECT capture_id FROM {batch} GROUP BY capture_id "
                "HAVING sum(CASE WHEN is_authoritative THEN 1 ELSE 0 END) <> 1",
                ("capture_id", "is_authoritative"), "is_authoritative:one_per_capture",
                "exactly one authoritative copy per capture"),
        ],
        "bronze_zk_events": [
            _unique(("capture_id", "source_file", "seq"), "one row per line or znode"),
        ],
        "bronze_reported_replicas": [],
        "bronze_producer_states": [],
        "bronze_offset_checkpoints": [],
        "bronze_leader_epochs": [
            _unique(("capture_id", "source_file", "position"), "one row per leader-epoch-checkpoint entry"),
            _at_least("epoch", 0, "a negative epoch fails Kafka's load: ingest quarantines the file instead"),
            _at_least("start_offset", 0, "a negative start offset fails Kafka's load: the file is quarantined"),
        ],
        "silver_brokers": [
            _unique(("capture_id", "broker_id"), "one row per broker"),
            _in_set("state", ("active", "fenced", "controlled_shutdown", "unregistered", "controller", "absent"),
                    "broker states are known"),
        ],
        "silver_topic_incarnations": [
            _unique(("capture_id", "topic_id", "topic_name"), "one row per incarnation"),
            _no_rows("deleted AND is_live", ("deleted", "is_live"), "deleted:not_live",
                     "a deleted incarnation is not live"),
        ],
        "silver_partition_assignments": [
            _unique(("capture_id", "topic_id", "topic_name", "partition"), "one row per partition"),
        ],
        "silver_replicas": [
            _unique(("capture_id", "broker_id", "log_dir", "dir_name"), "one row per replica dir"),
            _in_set("entry_kind", ("partition", "future", "delete", "stray"), "replica dir kinds are known"),
            _in_set("classification", ("valid", "missing_partition_metadata", "corrupt_partition_metadata",
                                       "stale_topic_id", "topic_id_changed", "orphan", "deleted",
                                       "stray_not_assigned", "delete_dir", "stray_dir"),
                    "classifications are known"),
            _in_set("id_state", ("live", "deleted", "unknown", "none"), "topic id states are known"),
        ],
        "silver_log_dirs": [
            _in_set("state", LOG_DIR_STATES, "log dir states are known"),
        ],
        "silver_node_registrations": [
            _unique(("capture_id", "source", "seq"), "one row per registration record"),
        ],
        "silver_producer_id_blocks": [
            _unique(("capture_id", "source", "seq"), "one row per allocation record"),
            _not_null("broker_id", "every block has an owner (-1 when unknown)"),
            _no_rows("coalesce(is_allocation, true) AND first_producer_id > last_producer_id",
                     ("is_allocation", "first_producer_id", "last_producer_id"), "first_producer_id:start_le_end",
                     "a producer-id block starts at or before its end"),
            _no_rows("coalesce(is_allocation, true) AND first_producer_id < 0",
                     ("is_allocation", "first_producer_id"), "first_producer_id:non_negative",
                     "producer ids are >= 0"),
        ],
    }


def _gold_rules(check_ids: Sequence[str]) -> Dict[str, List[Rule]]:
    return {
        "gold_findings": [
            _unique(("finding_id",), "one row per finding (MERGE key)"),
            _regex("finding_id", FINDING_ID_REGEX, "finding_id is a sha256 hex digest"),
            _not_null("check_id", "every finding names its check"),
            _in_set("check_id", check_ids, "check ids are known"),
            _in_set("severity", SEVERITIES, "severities are critical, warning or info"),
            _not_null("severity", "every finding has a severity"),
            _in_set("status", FINDING_STATUSES, "a finding is open or resolved"),
            _not_null("message", "every finding says what is wrong"),
            _at_least("bytes", 0, "bytes are >= 0"),
            _at_least("partition", 0, "partitions are >= 0"),
            _regex("topic_id", KAFKA_UUID_REGEX, "topic_id is a Kafka Uuid"),
            _ordered("first_seen", "last_seen", "first seen at or before last seen"),
            _no_rows("status = 'resolved' AND resolved_at IS NULL", ("status", "resolved_at"),
                     "status:resolved_has_time", "a resolved finding says when"),
            _no_rows("status = 'open' AND resolved_at IS NOT NULL", ("status", "resolved_at"),
                     "status:open_not_resolved", "an open finding has no resolution time"),
            _no_rows("status = 'open' AND (remediation IS NULL OR remediation = '')", ("status", "remediation"),
                     "remediation:open_has_action", "an open finding says what to do"),
            _no_rows("status = 'resolved' AND (resolved_at < first_seen OR resolved_at <= last_seen)",
                     ("resolved_at", "first_seen", "last_seen"), "resolved_at:after_last_seen",
                     "a finding is resolved after it was last seen"),
        ],
        "gold_run_summary": [
            _unique(("run_id",), "one row per run"),
            _in_set("status", ("ok", "findings", "incomplete", "error"), "run statuses are known"),
            _no_rows("files_seen <> files_ok + files_quarantined",
                     ("files_seen", "files_ok", "files_quarantined"), "files_seen:ok_plus_quarantined",
                     "every file seen is ok or quarantined"),
            _no_rows("open_findings <> critical + warning + info", ("open_findings", "critical", "warning", "info"),
                     "open_findings:sum_of_severities", "open findings = critical + warning + info"),
            _no_rows("status = 'ok' AND open_findings > 0", ("status", "open_findings"),
                     "status:ok_means_no_findings", "a run with open findings is not ok"),
            _ordered("started_at", "finished_at", "a run finishes after it starts"),
            _at_least("bytes_reclaimable", 0, "reclaimable bytes are >= 0"),
        ],
    }


def layer_of(table: str) -> str:
    return table.split("_", 1)[0]


def build_suite(table: str, columns: Sequence[str], check_ids: Optional[Sequence[str]] = None) -> Suite:
    """The suite for ``table`` given the columns its DataFrame has.

    :param check_ids: known check ids for the gold suite (default: :data:`KNOWN_CHECK_IDS`).
    """
    have = set(columns)
    table_rules = {**_bronze_and_silver_rules(), **_gold_rules(tuple(check_ids or KNOWN_CHECK_IDS))}
    rules: List[Rule] = [] if layer_of(table) == "gold" else column_rules(columns)
    # a table rule replaces a column rule with the same result key (e.g. gold's own partition rule)
    specific = table_rules.get(table, [])
    taken = {(r.expectation_type, r.column_key) for r in specific}
    rules = [r for r in rules if (r.expectation_type, r.column_key) not in taken]
    skipped = []
    for rule in specific:
        missing = tuple(c for c in rule.columns if c not in have)
        if missing:
            skipped.append((rule, missing))
        else:
            rules.append(rule)
    return Suite(name=f"kafka_recon.{table}", table=table, rules=tuple(rules), skipped=tuple(skipped))
