"""The meta.properties ensemble across the whole capture: what Kafka verifies before a node starts.

MetaPropertiesEnsemble.verify (run by KafkaRaftServer.initializeLogDirs and the ZooKeeper KafkaServer.startup)
throws, so the node does not start, when its log dirs disagree on cluster.id or node.id, when a directory.id is
reserved (DirectoryId.reserved: MSB 0 and LSB < 100) or when two of its dirs share a directory.id; a ZooKeeper
broker that is not migrating also refuses a v1 file (REQUIRE_V0). Across nodes, the KRaft controller rejects a
registration naming a directory.id another broker registered (ClusterControlManager.registerBroker, "Broker N
is already registered with directory ...").

DUPLICATE_DIRECTORY_ID   one per directory.id held by two or more log dirs of the capture;
RESERVED_DIRECTORY_ID    one per log dir whose directory.id is reserved;
NODE_CLUSTER_ID_MISMATCH one per node whose dirs name two or more cluster.ids;
NODE_ID_MISMATCH         one per node whose dirs name two or more node.ids (same cluster.id);
META_VERSION_MIXED       one per node and node.id whose dirs mix meta.properties version 0 and 1.

"One node" is the set of log dirs one Kafka process reads. A capture does not say it, so the job takes the
collector pack (one ``collect`` run on one host: the part of the path before ``!``) or, for raw trees, the
folder holding the log dirs (``broker-2/`` for ``broker-2/kafka-logs-a``); a log dir at the top of the capture
is a node of its own. A folder holding several nodes' dirs side by side is recognised when each of its dirs
is in the latest registration of the active broker its meta.properties names: Kafka verified them at their
nodes' start, so they cannot be one node's dirs.

Precedence: these findings name the cause of a dir the controller does not know, so FOREIGN_LOG_DIR leaves
out the dirs they claim (:func:`claimed_log_dirs`); a reserved id is never also a duplicate; a node whose dirs
name other clusters is NODE_CLUSTER_ID_MISMATCH, not also NODE_ID_MISMATCH.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window

from . import sql_functions as F
from .check_rows import details, evidence, rows
from .context import CheckContext
from .frames import basename

MIXED_VERSION_SEVERITY = {"zookeeper": "critical", "migration": "warning", "kraft": "info"}


def node_key(log_dir: Column) -> Column:
    """The node a log dir belongs to (module docstring): ``pack:<pack>``, ``folder:<parent>``, or the dir."""
    pack = F.substring_index(log_dir, "!", 1)
    parent = F.regexp_extract(log_dir, r"^(.*)[/\\][^/\\]+[/\\]*$", 1)
    return (F.when(F.instr(log_dir, "!") > 0, F.concat(F.lit("pack:"), pack))
            .when(parent != "", F.concat(F.lit("folder:"), parent))
            .otherwise(F.concat(F.lit("dir:"), log_dir)))


def reserved_directory_id(dir_id: Column) -> Column:
    """DirectoryId.reserved on the base64 text: the 16 bytes' MSB is 0 and their LSB, a signed long, is < 100
    (MIGRATING AAAAAAAAAAAAAAAAAAAAAA, UNASSIGNED ...AQ, LOST ...Ag and 97 more). Oracle:
    udfs.kafka_uuid.is_reserved_directory_id."""
    raw = F.unbase64(F.concat(F.translate(dir_id, "-_", "+/"), F.lit("==")))
    h = F.hex(raw)  # upper case; not lower(): Spark's lower() loads ICU's case tables (~1 s of a cold JVM)
    lsb = F.substring(h, 17, 16)
    negative = F.substring(lsb, 1, 1).isin("8", "9", "A", "B", "C", "D", "E", "F")
    small = (F.substring(lsb, 1, 14) == F.lit("0" * 14)) & (F.conv(F.substring(lsb, 15, 2), 16, 10).cast("int") < 100)
    ok = dir_id.isNotNull() & (F.length(dir_id) == 22) & (F.length(h) == 32)
    return F.coalesce(ok & (F.substring(h, 1, 16) == F.lit("0" * 16)) & (negative | small), F.lit(False))


def ensemble(ctx: CheckContext) -> DataFrame:
    """Every captured log dir with a readable meta.properties value, its node key and silver state."""
    b = ctx.bronze["bronze_log_dirs"].filter(
        F.col("cluster_id").isNotNull() | F.col("broker_id").isNotNull() | F.col("directory_id").isNotNull())
    states = ctx.log_dirs.filter(F.col("log_dir").isNotNull()).select(
        "log_dir", "state", F.col("broker_state").alias("_node_state"), F.col("bytes").alias("_bytes"))
    return (b.select("log_dir", "cluster_id", "broker_id", "directory_id", "meta_version", "host")
            .withColumn("node", node_key(F.col("log_dir")))
            .withColumn("node_label", F.when(F.col("node").startswith("pack:") & F.col("host").isNotNull(),
                                             F.concat(F.lit("host "), F.col("host")))
                        .otherwise(F.regexp_replace("node", "^(pack|folder|dir):", "")))
            .join(states, "log_dir", "left")
            .withColumn("bytes", F.coalesce("_bytes", F.lit(0)).cast("long"))
            .withColumn("reserved", reserved_directory_id(F.col("directory_id"))))


def _dir_struct() -> Column:
    return F.struct(F.col("log_dir").alias("path"), F.col("broker_id").alias("node_id"), "cluster_id",
                    "directory_id", F.col("meta_version").alias("version"), "host", "state")


def _listing(values: Column) -> Column:
    """``path (what)`` items joined for a message, sorted."""
    return F.array_join(F.array_sort(values), ", ")


def _nodes(ens: DataFrame) -> DataFrame:
    """Per node: the distinct cluster ids, node ids, and whether it is several registered nodes side by side."""
    own = ((F.col("state").isin("registered", "cordoned")) & (F.col("_node_state") == "active")) | (F.col("state") == "controller_metadata")
    return ens.groupBy("node").agg(
        F.first("node_label").alias("node_label"),
        F.array_sort(F.collect_set("cluster_id")).alias("cluster_ids"),
        F.array_sort(F.collect_set("broker_id")).alias("node_ids"),
        F.min(F.coalesce(own, F.lit(False)).cast("int")).alias("_all_own"),
        F.count("*").alias("dirs"))


def _node_values(ctx: CheckContext, d: DataFrame, what: Column, extra: dict) -> dict:
    n = ctx.thresholds.evidence_max_items
    base = {
        "broker_id": F.col("node_broker"), "bytes": F.col("bytes"),
        "key_extra": F.concat(F.lit("node="), F.col("node")),
        "evidence": evidence(node=F.col("node"), node_label=F.col("node_label"), dirs=F.slice("dir_list", 1, n)),
    }
    base["details"] = details(node=F.col("node_label"), dirs=_listing(F.col("described")), what=what,
                              **extra.pop("details", {}))
    base.update(extra)
    return base


def _majority(ens: DataFrame, key: str) -> DataFrame:
    """node -> the ``key`` value most of its dirs hold; ties go to the value with more dirs the controller
    knows (not foreign), then to the number ending the node's folder name (``broker-4``), then the smallest."""
    known = F.sum(F.when(F.coalesce(F.col("state"), F.lit("")) != "foreign", 1).otherwise(0))
    counts = ens.filter(F.col(key).isNotNull()).groupBy("node", key).agg(
        F.count("*").alias("_n"), known.alias("_known"), F.first("node_label").alias("_label"))
    named = F.regexp_extract("_label", r"(\d+)[/\\]*$", 1) == F.col(key).cast("string")
    first = Window.partitionBy("node").orderBy(F.col("_n").desc(), F.col("_known").desc(), named.desc(), F.col(key))
    return (counts.withColumn("_rn", F.row_number().over(first)).filter("_rn = 1")
            .select("node", F.col(key).alias(f"majority_{key}")))


def _node_rows(ens: DataFrame, key: str, label: Column, odd: Column) -> DataFrame:
    """Per node: the distinct ``key`` values, the majority node.id, the dirs described for a message and the
    bytes of the odd dirs (``odd``, evaluated with ``majority_broker_id`` known)."""
    e = ens.join(_majority(ens, "broker_id"), "node", "left")
    return e.groupBy("node").agg(
        F.first("node_label").alias("node_label"),
        F.first("majority_broker_id").alias("node_broker"),
        F.array_sort(F.collect_set(key)).alias("values"),
        F.collect_list(F.concat(F.col("log_dir"), F.lit(" ("), label, F.lit(")"))).alias("described"),
        F.array_sort(F.collect_list(_dir_struct())).alias("dir_list"),
        F.sum(F.when(odd, F.col("bytes")).otherwise(F.lit(0))).cast("long").alias("bytes"))


def cluster_id_mismatch_nodes(ens: DataFrame) -> DataFrame:
    nodes = _nodes(ens)
    return nodes.filter((F.size("cluster_ids") > 1) & (F.col("_all_own") == 0)).select("node", "node_label")


def node_id_mismatch_nodes(ens: DataFrame) -> DataFrame:
    nodes = _nodes(ens)
    return nodes.filter((F.size("cluster_ids") <= 1) & (F.size("node_ids") > 1) & (F.col("_all_own") == 0)).select(
        "node", "node_label")


def _ids_listing(values: Column) -> Column:
    return F.array_join(values.cast("array<string>"), ", ")


def cluster_id_mismatch(ctx: CheckContext, ens: DataFrame) -> DataFrame:
    hit = cluster_id_mismatch_nodes(ens).select("node")
    label = F.concat(F.lit("cluster.id "), F.coalesce("cluster_id", F.lit("?")), F.lit(", node.id "),
                     F.coalesce(F.col("broker_id").cast("string"), F.lit("?")))
    theirs = F.coalesce(F.col("cluster_id") != F.lit(ctx.cluster_id), F.lit(False)) if ctx.cluster_id else F.lit(False)
    d = _node_rows(ens.join(hit, "node"), "cluster_id", label, theirs)
    return rows(d, "NODE_CLUSTER_ID_MISMATCH", _node_values(ctx, d, F.lit("cluster.id"), {
        "details": {"cluster_ids": _ids_listing(F.col("values")), "cluster_id": F.lit(ctx.cluster_id)},
    }))


def node_id_mismatch(ctx: CheckContext, ens: DataFrame) -> DataFrame:
    hit = node_id_mismatch_nodes(ens).select("node")
    label = F.concat(F.lit("node.id "), F.coalesce(F.col("broker_id").cast("string"), F.lit("?")))
    d = _node_rows(ens.join(hit, "node"), "broker_id", label,
                   F.coalesce(F.col("broker_id") != F.col("majority_broker_id"), F.lit(False)))
    return rows(d, "NODE_ID_MISMATCH", _node_values(ctx, d, F.lit("node.id"), {
        "details": {"node_ids": _ids_listing(F.col("values")), "majority": F.col("node_broker")},
    }))


def mixed_versions(ctx: CheckContext, ens: DataFrame) -> DataFrame:
    """Per node and node.id: both meta.properties versions (a v1 file on a ZooKeeper broker that is not
    migrating stops it; KRaft reads v0 files of a migrated broker as long as they name node and cluster)."""
    e = (ens.filter(F.col("meta_version").isNotNull())
         .withColumn("node", F.concat_ws("#", "node", F.col("broker_id").cast("string"))))
    hit = (e.groupBy("node").agg(F.countDistinct("meta_version").alias("_v")).filter(F.col("_v") > 1)
           .select("node"))
    d = _node_rows(e.join(hit, "node"), "meta_version", F.concat(F.lit("version "), F.col("meta_version").cast("string")),
                   F.lit(False))
    mode = ctx.view.mode
    consequence = {
        "zookeeper": "a ZooKeeper broker that is not migrating refuses to start (\"Found unexpected version in "
                     "... ZK-based brokers that are not migrating only support version 0\")",
        "migration": "Kafka accepts both while zookeeper.metadata.migration.enable is set; rolling this broker "
                     "back to ZooKeeper mode without it fails (\"Found unexpected version in ...\")",
        "kraft": "KRaft reads both (a v0 file is valid while it names node and cluster): nothing fails today",
    }.get(mode, "a ZooKeeper broker that is not migrating refuses to start")
    return rows(d, "META_VERSION_MIXED", _node_values(ctx, d, F.lit("version"), {
        "severity_override": F.lit(MIXED_VERSION_SEVERITY.get(mode)),
        "details": {"versions": F.array_join(F.col("values").cast("array<string>"), " and "),
                    "consequence": F.lit(consequence), "mode": F.lit(mode)},
    }))


def duplicate_directory_ids(ctx: CheckContext, ens: DataFrame) -> DataFrame:
    n = ctx.thresholds.evidence_max_items
    e = ens.filter(F.col("directory_id").isNotNull() & ~F.col("reserved"))
    dup = e.groupBy("directory_id").agg(
        F.countDistinct("log_dir").alias("copies"),
        F.array_sort(F.collect_set("broker_id")).alias("node_ids"),
        F.collect_set("node").alias("nodes"),
        F.collect_list(F.concat(F.col("log_dir"), F.lit(" (node.id "), F.coalesce(F.col("broker_id").cast("string"),
                                                                               F.lit("?")), F.lit(")"))).alias("described"),
        F.array_sort(F.collect_list(_dir_struct())).alias("dir_list"),
        F.sum("bytes").alias("bytes")).filter(F.col("copies") > 1)
    one_node = (F.size("nodes") == 1) & (F.size("node_ids") <= 1)
    one_id = F.size("node_ids") == 1
    where = (F.when(one_node, F.lit("on one node: it refuses to start (\"Duplicate directory ID ... found. It was "
                                    "the ID of ..., but also of ...\")"))
             .when(one_id, F.concat(F.lit("in "), F.size("nodes").cast("string"), F.lit(" capture folders that all say "
                                    "node.id "), F.element_at("node_ids", 1).cast("string"),
                                    F.lit(": a cloned host (the controller keeps one registration per node and "
                                          "directory), or one node captured twice")))
             .otherwise(F.concat(F.lit("on nodes "), F.array_join(F.col("node_ids").cast("array<string>"), ", "),
                                 F.lit(": the controller rejects the second registration (\"Broker N is already "
                                       "registered with directory ...\") and that broker never unfences"))))
    return rows(dup, "DUPLICATE_DIRECTORY_ID", {
        "broker_id": F.when(F.size("node_ids") == 1, F.element_at("node_ids", 1)), "bytes": F.col("bytes"),
        "key_extra": F.concat(F.lit("dir="), F.col("directory_id")),
        "details": details(directory_id=F.col("directory_id"), copies=F.col("copies"),
                           dirs=_listing(F.col("described")), where=where),
        "evidence": evidence(directory_id=F.col("directory_id"), dirs=F.slice("dir_list", 1, n)),
    })


def reserved_directory_ids(ctx: CheckContext, ens: DataFrame) -> DataFrame:
    d = ens.filter(F.col("reserved"))
    name = (F.when(F.col("directory_id") == "AAAAAAAAAAAAAAAAAAAAAA", F.lit("MIGRATING"))
            .when(F.col("directory_id") == "AAAAAAAAAAAAAAAAAAAAAQ", F.lit("UNASSIGNED"))
            .when(F.col("directory_id") == "AAAAAAAAAAAAAAAAAAAAAg", F.lit("LOST"))
            .otherwise(F.lit("one of the first 100 ids DirectoryId reserves")))
    return rows(d, "RESERVED_DIRECTORY_ID", {
        "broker_id": F.col("broker_id"), "log_dir": basename(F.col("log_dir")), "log_dir_path": F.col("log_dir"),
        "bytes": F.col("bytes"), "key_extra": F.concat(F.lit("dir="), F.col("directory_id")),
        "details": details(directory_id=F.col("directory_id"), reserved_as=name),
        "evidence": evidence(path=F.col("log_dir"), directory_id=F.col("directory_id"), reserved_as=name,
                             node_id=F.col("broker_id"), cluster_id=F.col("cluster_id"), state=F.col("state")),
    })


def claimed_log_dirs(ctx: CheckContext) -> DataFrame:
    """log_dir of every dir a finding of this family explains (FOREIGN_LOG_DIR leaves them out)."""
    ens = ensemble(ctx)
    dup_ids = (ens.filter(F.col("directory_id").isNotNull() & ~F.col("reserved")).groupBy("directory_id")
               .agg(F.countDistinct("log_dir").alias("_n")).filter(F.col("_n") > 1).select("directory_id"))
    nodes = cluster_id_mismatch_nodes(ens).unionByName(node_id_mismatch_nodes(ens)).select("node")
    return (ens.filter("reserved").select("log_dir")
            .unionByName(ens.join(dup_ids, "directory_id").select("log_dir"))
            .unionByName(ens.join(nodes, "node").select("log_dir")).distinct())


def all_checks(ctx: CheckContext):
    ens = ensemble(ctx)
    return [duplicate_directory_ids(ctx, ens), reserved_directory_ids(ctx, ens), cluster_id_mismatch(ctx, ens),
            node_id_mismatch(ctx, ens), mixed_versions(ctx, ens)]
