"""delta-spark backend: Delta's own JVM writer (Databricks, or clusters started with the Delta jars).

A thin adapter: every operation maps onto delta-spark's public API, so Delta's own optimistic concurrency,
NOT NULL checks and Unity Catalog support apply. The embedded backend mirrors these semantics.

- append          -> ``df.write.format("delta").mode("append")``
- replace_slice   -> ``mode("overwrite").option("replaceWhere", <slice predicate>)`` (one atomic commit)
- merge           -> ``DeltaTable.alias("t").merge(source.alias("s"), <keys>)`` + the recorded clauses
- read at version -> ``option("versionAsOf", n)``

Locations are ``catalog.schema.table`` names (Unity Catalog) or paths. Run id and operation go into the
commit's ``userMetadata`` (JSON), as the embedded backend does, so ``history`` looks the same on both.
Not runnable here (no Delta jars): tested with a fake ``DeltaTable`` and fake DataFrames.
"""
from __future__ import annotations

import json
import logging
import random
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from . import merge_clauses as mc
from .spec import SCHEMA_VERSION_PROPERTY, TableSpec
from .store_errors import ConcurrentTableUpdateError, TableMissingError
from .table_predicates import SOURCE, TARGET, SliceValue, key_condition, slice_predicate

log = logging.getLogger(__name__)

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
_CONFLICTS = {
    "DeltaConcurrentModificationException", "ConcurrentWriteException", "MetadataChangedException",
    "ProtocolChangedException", "ConcurrentAppendException", "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException", "ConcurrentTransactionException",
}


def is_conflict(exc: BaseException) -> bool:
    """True for delta-spark's commit-conflict exceptions (matched by class name: no import needed)."""
    return any(cls.__name__ in _CONFLICTS for cls in type(exc).__mro__)


def is_catalog_name(location: str) -> bool:
    """``catalog.schema.table`` (no slash, no scheme) vs a path or URI."""
    return "/" not in location and ":" not in location and location.count(".") == 2


class DeltaSparkBackend:
    """Delta tables through delta-spark (``delta.tables.DeltaTable``)."""

    name = "delta-spark"

    def __init__(self, spark, commit_retries: int = 3, delta_table_cls: Any = None,
                 retry_wait_seconds: float = 0.5) -> None:
        if delta_table_cls is None:
            from delta.tables import DeltaTable as delta_table_cls
        self.spark = spark
        self.commit_retries = commit_retries
        self.delta_table = delta_table_cls
        self.retry_wait_seconds = retry_wait_seconds

    # ------------------------------------------------------------------ handles

    def _table(self, location: str):
        if is_catalog_name(location):
            return self.delta_table.forName(self.spark, location)
        return self.delta_table.forPath(self.spark, location)

    def exists(self, location: str) -> bool:
        if is_catalog_name(location):
            return bool(self.spark.catalog.tableExists(location))
        return bool(self.delta_table.isDeltaTable(self.spark, location))

    def create(self, spec: TableSpec, location: str) -> int:
        self._ensure(spec, location)
        return self.version(location)

    def _ensure(self, spec: TableSpec, location: str) -> None:
        """CREATE TABLE IF NOT EXISTS with the registry's schema, partitioning and comments."""
        if self.exists(location):
            return
        if is_catalog_name(location):
            self._ensure_schema(location)
        builder = self.delta_table.createIfNotExists(self.spark)
        builder = builder.tableName(location) if is_catalog_name(location) else builder.location(location)
        for field, column in zip(spec.spark_schema().fields, spec.columns, strict=True):
            builder = builder.addColumn(field.name, field.dataType, nullable=field.nullable,
                                        comment=column.doc or None)
        if spec.partition_by:
            builder = builder.partitionedBy(*spec.partition_by)
        if spec.description:
            builder = builder.comment(spec.description)
        builder = builder.property(SCHEMA_VERSION_PROPERTY, str(spec.version))  # as the embedded backend records it
        builder.execute()

    def _ensure_schema(self, location: str) -> None:
        """``CREATE SCHEMA IF NOT EXISTS`` for a ``catalog.schema.table`` name's schema, once per schema: a first
        run into a new Unity Catalog schema creates it (the bundle also declares it: databricks.yml)."""
        parts = location.split(".")
        if len(parts) < 2:
            return
        schema = ".".join("`" + p.strip("`").replace("`", "``") + "`" for p in parts[:-1])
        done = self.__dict__.setdefault("_schemas_ensured", set())
        if schema not in done:
            self.spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            done.add(schema)

    # ------------------------------------------------------------------ reads

    def version(self, location: str) -> int:
        if not self.exists(location):
            raise TableMissingError(f"no Delta table {location}")
        return int(self._table(location).history(1).select("version").collect()[0][0])

    def history(self, location: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        if not self.exists(location):
            raise TableMissingError(f"no Delta table {location}")
        table = self._table(location)
        frame = table.history(limit) if limit else table.history()
        rows = frame.select("version", "timestamp", "operation", "userMetadata", "readVersion",
                            "operationMetrics").collect()
        return [_normalise_row(r.asDict()) for r in rows]

    def read(self, spec: TableSpec, location: str, version: Optional[int] = None):
        reader = self.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", int(version))
        frame = reader.table(location) if is_catalog_name(location) else reader.load(location)
        return frame.select(*spec.column_names)

    # ------------------------------------------------------------------ writes

    def append(self, spec: TableSpec, location: str, df, run_id: Optional[str]) -> int:
        self._ensure(spec, location)
        meta = _user_metadata("APPEND", run_id)
        return self._run(spec, location, "append",
                         lambda: self._save(df.write.format("delta").mode("append").option("userMetadata", meta),
                                            location))

    def replace_slice(self, spec: TableSpec, location: str, df, slice_values: Mapping[str, SliceValue],
                      run_id: Optional[str]) -> int:
        self._ensure(spec, location)
        writer = (df.write.format("delta").mode("overwrite")
                  .option("replaceWhere", slice_predicate(slice_values))
                  .option("userMetadata", _user_metadata("REPLACE SLICE", run_id)))
        return self._run(spec, location, "replace_slice", lambda: self._save(writer, location))

    def merge(self, spec: TableSpec, location: str, source, on: Sequence[str],
              clauses: Sequence[mc.MergeClause], run_id: Optional[str]) -> int:
        self._ensure(spec, location)

        def attempt() -> None:
            builder = self._table(location).alias(TARGET).merge(source.alias(SOURCE), key_condition(on))
            for clause in clauses:
                builder = _add_clause(builder, clause)
            previous = self.spark.conf.get(USER_METADATA_CONF, None)
            self.spark.conf.set(USER_METADATA_CONF, _user_metadata("MERGE", run_id))
            try:
                builder.execute()
            finally:
                if previous is None:
                    self.spark.conf.unset(USER_METADATA_CONF)
                else:
                    self.spark.conf.set(USER_METADATA_CONF, previous)

        return self._run(spec, location, "merge", attempt)

    def _save(self, writer, location: str) -> None:
        if is_catalog_name(location):
            writer.saveAsTable(location)
        else:
            writer.save(location)

    def _run(self, spec: TableSpec, location: str, operation: str, attempt: Callable[[], Any]) -> int:
        """Delta resolves compatible commits itself; a real conflict re-runs the operation from a fresh read."""
        for number in range(self.commit_retries + 1):
            try:
                attempt()
                return self.version(location)
            except Exception as exc:  # noqa: BLE001 - only conflicts are retried, the rest re-raised
                if not is_conflict(exc):
                    raise
                last = exc
                log.info("%s on %s lost a commit race (%s); retry %d of %d", operation, spec.name,
                         type(exc).__name__, number + 1, self.commit_retries)
                if number < self.commit_retries:
                    time.sleep(self.retry_wait_seconds * (2 ** number) * random.uniform(0.5, 1.5))
        raise ConcurrentTableUpdateError(spec.name, operation, self.commit_retries + 1, cause=last)


def _add_clause(builder, clause: mc.MergeClause):
    """Map one recorded clause onto delta-spark's ``DeltaMergeBuilder`` method."""
    condition = clause.condition
    assignments = dict(clause.assignments) if clause.assignments is not None else None
    if clause.kind == mc.MATCHED:
        if clause.action == mc.DELETE:
            return builder.whenMatchedDelete(condition=condition)
        if assignments is None:
            return builder.whenMatchedUpdateAll(condition=condition)
        return builder.whenMatchedUpdate(condition=condition, set=assignments)
    if clause.kind == mc.NOT_MATCHED:
        if assignments is None:
            return builder.whenNotMatchedInsertAll(condition=condition)
        return builder.whenNotMatchedInsert(condition=condition, values=assignments)
    if clause.action == mc.DELETE:
        return builder.whenNotMatchedBySourceDelete(condition=condition)
    return builder.whenNotMatchedBySourceUpdate(condition=condition, set=assignments)


def _user_metadata(operation: str, run_id: Optional[str]) -> str:
    return json.dumps({"operation": operation, "run_id": run_id})


def _normalise_row(row: Mapping[str, Any]) -> Dict[str, Any]:
    try:
        user = json.loads(row.get("userMetadata") or "{}")
    except (TypeError, ValueError):
        user = {}
    return {
        "version": row.get("version"),
        "timestamp": row.get("timestamp"),
        "operation": user.get("operation") or row.get("operation"),
        "run_id": user.get("run_id"),
        "read_version": row.get("readVersion"),
        "metrics": dict(row.get("operationMetrics") or {}),
    }
