"""Log-dir checks, one finding per log dir, from silver_log_dirs (its state against the node's registration):

OFFLINE_LOG_DIR       a dir Kafka marked offline: not in the broker's latest registration while replicas are
                      still assigned to it, and missing from the capture (a dead disk) or present while the
                      broker runs without it;
UNREGISTERED_LOG_DIR  such a dir back in the capture while its broker is stopped or fenced: Kafka registers
                      it again at the next start (info: the replicas inside are matched like any other);
DECOMMISSIONED_BROKER_DATA  data left on a broker that was unregistered;
CORDONED_LOG_DIR_HOLDS_REPLICAS  a dir cordoned (KIP-1066) longer than reconcile.cordoned_dir_max_ms that still
                      holds replicas the controller assigns to it (a drain that never finished);
CORDON_ON_UNREGISTERED_BROKER  a broker's cordoned.log.dirs config left in the metadata after the broker was
                      unregistered or never registered (the node id, when reused, starts with cordoned dirs);
FOREIGN_LOG_DIR       another cluster's dir, or a directory.id no broker (or another broker) registered; a dir
                      a meta_properties finding explains (a duplicate or reserved directory.id, a node whose
                      dirs disagree on cluster.id or node.id) is reported there instead.

A controller's metadata dir (state controller_metadata) is never a finding.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame

from . import checks_meta_properties
from . import sql_functions as F
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import basename


def _listing(ctx: CheckContext) -> Column:
    n = ctx.thresholds.evidence_max_items
    more = F.size("assigned_list") - F.lit(n)
    return F.concat(F.array_join(F.slice("assigned_list", 1, n), ", "),
                    F.when(more > 0, F.concat(F.lit(" and "), more.cast("string"), F.lit(" more"))).otherwise(F.lit("")))


def _values(ctx: CheckContext, d: DataFrame, extra: dict) -> dict:
    n = ctx.thresholds.evidence_max_items
    base = {
        "broker_id": F.col("broker_id"), "log_dir": F.col("log_dir_name"), "log_dir_path": F.col("log_dir"),
        "bytes": F.col("bytes"), "key_extra": F.concat(F.lit("dir="), F.coalesce("directory_id", F.col("log_dir"))),
        "evidence": evidence(path=F.col("log_dir"), directory_id=F.col("directory_id"), state=F.col("state"),
                             reason=F.col("reason"), broker_state=F.col("broker_state"),
                             replica_dirs=F.col("replica_dirs"), bytes=F.col("bytes"),
                             assigned_partitions=F.col("assigned_partitions"),
                             partitions=F.slice("assigned_list", 1, n)),
    }
    base.update(extra)
    return base


def offline_log_dirs(ctx: CheckContext) -> DataFrame:
    d = ctx.log_dirs
    dead = d.filter(F.col("state") == "offline")
    running_without = d.filter((F.col("state") == "unregistered") & (F.col("broker_state") == "active"))
    where = (F.when(F.col("captured"), F.concat(F.lit("it is in the capture as "), F.col("log_dir"),
                                                F.lit(" but the running broker does not use it")))
             .otherwise(F.lit("it is missing from the capture (the disk is gone or unreadable)")))
    both = dead.unionByName(running_without)
    return rows(both, "OFFLINE_LOG_DIR", _values(ctx, both, {
        "since": F.lit(None).cast("timestamp"),
        "details": details(directory_id=F.col("directory_id"), where=where,
                           partitions=F.col("assigned_partitions"), listing=_listing(ctx)),
    }))


def unregistered_log_dirs(ctx: CheckContext) -> DataFrame:
    d = ctx.log_dirs.filter((F.col("state") == "unregistered") & (F.col("broker_state") != "active"))
    state = F.coalesce(F.col("broker_state"), F.lit("not registered"))
    return rows(d, "UNREGISTERED_LOG_DIR", _values(ctx, d, {
        "details": details(directory_id=F.col("directory_id"), broker_state=state,
                           replica_dirs=F.col("replica_dirs"), partitions=F.col("assigned_partitions")),
    }))


def decommissioned_data(ctx: CheckContext) -> DataFrame:
    d = ctx.log_dirs.filter((F.col("state") == "decommissioned") & (F.col("replica_dirs") > 0))
    return rows(d, "DECOMMISSIONED_BROKER_DATA", _values(ctx, d, {
        "key_extra": F.lit(None),
        "details": details(replica_dirs=F.col("replica_dirs")),
    }))


def cordoned_holding_replicas(ctx: CheckContext) -> DataFrame:
    """A cordoned dir keeps serving the replicas inside (the controller only stops placing new ones there:
    ReplicationControlManager skips cordoned dirs when it assigns a directory), so the finding is the drain
    that did not happen: replicas assigned to it past the configured age of the cordon."""
    limit = ctx.thresholds.cordoned_dir_max_ms
    age = ctx.age_ms(F.col("cordoned_since"))
    d = ctx.log_dirs.filter((F.col("state") == "cordoned") & (F.col("assigned_partitions") > 0)
                            & (F.col("replica_dirs") > 0) & (age > F.lit(limit)))
    return rows(d, "CORDONED_LOG_DIR_HOLDS_REPLICAS", _values(ctx, d, {
        "since": F.col("cordoned_since"),
        "details": details(directory_id=F.col("directory_id"), replica_dirs=F.col("replica_dirs"),
                           partitions=F.col("assigned_partitions"), listing=_listing(ctx),
                           age_h=F.floor(age / F.lit(3_600_000)).cast("long")),
    }))


BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER


def cordon_configs(ctx: CheckContext) -> DataFrame:
    """The ``cordoned.log.dirs`` broker configs (KIP-1066) in the metadata at capture: the latest ConfigRecord
    per broker of the authoritative sequence (snapshot first, then the log); a null or empty value is no cordon
    (ConfigRecord with a null value deletes the config)."""
    records = ctx.bronze["bronze_metadata_records"].filter(
        F.coalesce(F.col("in_authoritative_sequence"), F.lit(False)) & (F.col("record_type") == "CONFIG_RECORD")
        & (F.col("config_resource_type") == BROKER_RESOURCE) & (F.col("config_name") == "cordoned.log.dirs")
        & F.col("config_resource_name").rlike("^[0-9]+$"))
    order = F.struct((F.col("section") == "log").alias("_in_log"), F.col("offset"))
    latest = records.groupBy("config_resource_name").agg(F.max_by("config_value", order).alias("_value"),
                                                         F.max_by("offset", order).alias("_offset"),
                                                         F.max_by("append_time", order).alias("_time"))
    return latest.filter(F.col("_value").isNotNull() & (F.col("_value") != "")).select(
        F.col("config_resource_name").cast("int").alias("broker_id"), F.col("_value").alias("cordoned_log_dirs"),
        F.col("_offset").alias("config_offset"), F.col("_time").alias("config_time"))


def cordon_on_unregistered_broker(ctx: CheckContext) -> DataFrame:
    brokers = ctx.silver["silver_brokers"].select("broker_id", F.col("state").alias("broker_state"))
    d = (cordon_configs(ctx).join(brokers, "broker_id", "left")
         .filter(F.col("broker_state").isNull() | F.col("broker_state").isin("unregistered", "absent")))
    state = F.coalesce(F.col("broker_state"), F.lit("never registered"))
    return rows(d, "CORDON_ON_UNREGISTERED_BROKER", {
        "broker_id": F.col("broker_id"), "since": F.col("config_time"),
        "details": details(cordoned_log_dirs=F.col("cordoned_log_dirs"), broker_state=state,
                           config_offset=F.col("config_offset")),
        "evidence": evidence(cordoned_log_dirs=F.col("cordoned_log_dirs"), broker_state=state,
                             config_offset=F.col("config_offset")),
    })


def foreign_log_dirs(ctx: CheckContext) -> DataFrame:
    sizes = ctx.bronze["bronze_dir_entries"].groupBy("log_dir").agg(F.count("*").alias("entries"))
    meta = ctx.bronze["bronze_log_dirs"].select("log_dir", F.col("cluster_id").alias("_meta_cluster"))
    d = (ctx.log_dirs.filter(F.col("state") == "foreign")
         .join(checks_meta_properties.claimed_log_dirs(ctx), "log_dir", "left_anti")
         .join(sizes, "log_dir", "left").join(meta, "log_dir", "left"))
    return rows(d, "FOREIGN_LOG_DIR", {
        "broker_id": F.col("broker_id"), "log_dir": basename(F.col("log_dir")), "log_dir_path": F.col("log_dir"),
        "bytes": F.coalesce(F.col("bytes"), F.lit(0)),
        "details": details(reason=F.col("reason")),
        "evidence": evidence(path=F.col("log_dir"), reason=F.col("reason"),
                             meta_properties_cluster_id=F.col("_meta_cluster"), cluster_id=F.lit(ctx.cluster_id),
                             directory_id=F.col("directory_id"), meta_properties_node_id=F.col("broker_id"),
                             entries=F.col("entries")),
    })


def all_checks(ctx: CheckContext):
    return [offline_log_dirs(ctx), unregistered_log_dirs(ctx), decommissioned_data(ctx), cordoned_holding_replicas(ctx),
            cordon_on_unregistered_broker(ctx), foreign_log_dirs(ctx)]
