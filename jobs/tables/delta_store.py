"""One module owns every Delta table: ``DeltaStore`` writes, merges and reads the registry's tables.

Every table write in kafka-recon goes through this API (house rules 13-14). It checks the DataFrame
against the registry's schema, finds the table's location (a folder under ``storage.root``, or a
``catalog.schema.table`` name when ``storage.catalog`` is set) and hands the work to one of two
backends with the same guarantees:

- ``delta-spark`` (``backend_delta_spark``) when Delta's classes load in the JVM (Databricks, clusters
  started with the Delta jars);
- ``embedded`` (``backend_embedded``) otherwise: Spark writes Parquet, the driver commits it to the Delta
  log with delta-rs.

Example::

    store = DeltaStore.from_settings(spark, settings.storage)   # settings: jobs.settings.Settings
    store.append("bronze_ingest_files", files_df, run_id="r-42")
    store.replace_slice("bronze_log_dirs", dirs_df, slice={"capture_id": "c-7"}, run_id="r-42")
    (store.merge("gold_findings", findings_df, run_id="r-42")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .when_not_matched_by_source_update(set={"status": "'resolved'"}, condition="t.status = 'open'")
        .execute())
    df = store.read("gold_findings")             # latest
    old = store.read("gold_findings", version=3)  # time travel

.. versionadded:: 0.1
.. note:: Evolving
"""
from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from jobs.settings import StorageSettings

from . import merge_clauses as mc
from . import registry as table_registry
from .parquet_files import StagedParquet
from .schema_check import conform
from .spec import TableSpec
from .store_errors import (  # noqa: F401 - re-exported: callers import errors from here
    BackendUnavailableError,
    ConcurrentTableUpdateError,
    DuplicateSourceRowsError,
    NullConstraintError,
    SchemaMismatchError,
    SliceMismatchError,
    TableMissingError,
)
from .table_predicates import SliceValue, quote_identifier

BACKENDS = ("auto", "embedded", "delta-spark")
DELTA_CLASS = "io.delta.tables.DeltaTable"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SLICE_TYPES = {"string": str, "int": int, "long": int, "boolean": bool}


def delta_classes_load(spark) -> bool:
    """Whether Delta's JVM classes can be loaded in this session.

    On Databricks the runtime always has them. On classic Spark the class is looked up through py4j
    (:func:`jobs.engine.jvm.class_loads`); on Spark Connect the session's ``spark.sql.extensions`` tells.
    """
    from jobs.engine.jvm import class_loads

    if os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        return True
    loads = class_loads(spark, DELTA_CLASS)
    if loads is not None:
        return loads
    try:
        return "DeltaSparkSessionExtension" in (spark.conf.get("spark.sql.extensions", "") or "")
    except Exception:  # noqa: BLE001
        return False


def choose_backend(setting: str, spark, probe: Callable[[Any], bool] = delta_classes_load) -> str:
    """``embedded`` or ``delta-spark`` for ``storage.backend`` (``auto`` asks ``probe``)."""
    if setting not in BACKENDS:
        raise ValueError(f"storage.backend is {setting!r}; allowed values are {list(BACKENDS)}")
    if setting == "embedded":
        return "embedded"
    available = probe(spark)
    if setting == "delta-spark" and not available:
        raise BackendUnavailableError(
            f"storage.backend is 'delta-spark' but {DELTA_CLASS} does not load in this Spark session; start "
            f"Spark with the Delta jars (spark.jars.packages io.delta:delta-spark_2.13) or use 'auto'/'embedded'")
    return "delta-spark" if available else "embedded"


class TableLocator:
    """Where each table lives: ``<root>/<name>`` or ``<catalog>.<schema>.<name>``."""

    def __init__(self, root: str = "", catalog: str = "", schema: str = "") -> None:
        if catalog:
            for part, what in ((catalog, "storage.catalog"), (schema, "storage.schema")):
                if not _NAME.match(part or ""):
                    raise ValueError(f"{what} {part!r} is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)")
        elif not root:
            raise ValueError("storage.root is empty and storage.catalog is not set: nowhere to put tables")
        self.root = root
        self.catalog = catalog
        self.schema = schema

    @property
    def uses_catalog(self) -> bool:
        return bool(self.catalog)

    def locate(self, name: str) -> str:
        if not _NAME.match(name):
            raise ValueError(f"table name {name!r} is not a plain identifier")
        if self.catalog:
            return f"{self.catalog}.{self.schema}.{name}"
        if "://" in self.root:
            return f"{self.root.rstrip('/')}/{name}"
        return os.path.join(os.path.abspath(self.root), name)


class DeltaStore:
    """The table layer: the registry's tables, one backend, one location scheme.

    Build it with :py:meth:`from_settings`; the constructor only wraps its parts.

    :param spark: the SparkSession.
    :param backend: an ``EmbeddedBackend`` or ``DeltaSparkBackend``.
    :param locator: a :py:class:`TableLocator`.
    :param tables: name -> TableSpec (defaults to ``jobs.tables.registry.TABLES``).
    :param write_parallelism: tables written at once by the stages' parallel writes (``storage.write_parallelism``).

    .. versionadded:: 0.1
    """

    def __init__(self, spark, backend, locator: TableLocator, tables: Optional[Mapping[str, TableSpec]] = None,
                 write_parallelism: int = 1):
        self.spark = spark
        self.backend = backend
        self.locator = locator
        self.tables: Mapping[str, TableSpec] = dict(tables) if tables is not None else dict(table_registry.TABLES)
        self.write_parallelism = max(1, write_parallelism)  # tables its callers write at once (parallel_writes)

    @classmethod
    def from_settings(cls, spark, storage: StorageSettings, tables: Optional[Mapping[str, TableSpec]] = None,
                      probe: Callable[[Any], bool] = delta_classes_load) -> "DeltaStore":
        """A store from the ``storage`` section of the configuration.

        Example::

            store = DeltaStore.from_settings(spark, settings.storage)   # settings: jobs.settings.Settings

        :param storage: ``backend``, ``root``, ``catalog``, ``schema``, ``commit_retries``, ``write_parallelism``.
        :param tables: override the registry (tests).
        :param probe: how ``auto`` decides whether delta-spark is usable (tests replace it).
        """
        locator = TableLocator(storage.root, storage.catalog, storage.schema)
        retries = storage.commit_retries
        chosen = choose_backend(storage.backend, spark, probe)
        if chosen == "delta-spark":
            from .backend_delta_spark import DeltaSparkBackend

            backend = DeltaSparkBackend(spark, commit_retries=retries)
        else:
            if locator.uses_catalog:
                raise BackendUnavailableError(
                    f"storage.catalog is {locator.catalog!r} (Unity Catalog names) but the backend is 'embedded', "
                    f"which writes path-based tables only; clear storage.catalog or run where Delta's jars load")
            from .backend_embedded import EmbeddedBackend

            backend = EmbeddedBackend(spark, commit_retries=retries)
        return cls(spark, backend, locator, tables, storage.write_parallelism)

    # ------------------------------------------------------------------ lookups

    @property
    def backend_name(self) -> str:
        """``embedded`` or ``delta-spark``."""
        return self.backend.name

    def spec(self, name: str) -> TableSpec:
        """The registry entry of ``name`` (KeyError listing the known tables otherwise)."""
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"no table {name!r} in the registry; known tables: {sorted(self.tables)}") from None

    def location(self, name: str) -> str:
        """Path/URI or ``catalog.schema.table`` of ``name``."""
        return self.locator.locate(self.spec(name).name)

    def exists(self, name: str) -> bool:
        return self.backend.exists(self.location(name))

    def create(self, name: str) -> int:
        """Create the table if missing (no rows) and check an existing one's schema; return its version."""
        return self.backend.create(self.spec(name), self.location(name))

    def prepare_tables(self) -> Dict[str, List[str]]:
        """Before a run commits anything: check every existing table against its spec, then bring older ones
        up to it. A table that differs in a way the job cannot fix (a retyped, unknown or NOT NULL column,
        other partitioning, a newer schema version) raises ``SchemaMismatchError`` naming every such table,
        column, expected and found type, and the command that fixes it, before any table is changed; then
        the spec's nullable columns that tables lack are added (Delta schema evolution). Returns
        ``{table: [columns added]}``. A backend that cannot inspect tables itself (delta-spark) checks each
        table when it is first written, as before."""
        check = getattr(self.backend, "schema_problems", None)
        if check is None:
            return {}
        problems = {name: check(spec, self.location(name)) for name, spec in self.tables.items()}
        problems = {name: found for name, found in problems.items() if found}
        if problems:
            from .embedded_log import MIGRATE

            lines = [f"{name}: {p}" for name, found in problems.items() for p in found]
            raise SchemaMismatchError(", ".join(problems), lines, what="existing tables",
                                      fix="; ".join(MIGRATE.format(table=name) for name in problems))
        added = {name: list(self.backend.evolve(spec, self.location(name))) for name, spec in self.tables.items()}
        return {name: columns for name, columns in added.items() if columns}

    def version(self, name: str) -> int:
        """Latest committed version (``TableMissingError`` if there is no table)."""
        return self.backend.version(self.location(name))

    def history(self, name: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """Commits, newest first: dicts with version, timestamp, operation, run_id, read_version, metrics."""
        return self.backend.history(self.location(name), limit)

    def sweep_staging(self, max_age_hours: float) -> Dict[str, List[str]]:
        """Delete every table's staging folders whose write began over ``max_age_hours`` ago: files a killed
        run wrote for a commit that never came (invisible to readers, but they take space). A backend without
        staging folders (delta-spark) has nothing to sweep. Returns ``{table: [folders deleted]}``."""
        sweep = getattr(self.backend, "sweep_staging", None)
        if sweep is None or max_age_hours <= 0:
            return {}
        cutoff = datetime.now(timezone.utc) - timedelta(hours=max_age_hours)
        swept = {name: sweep(self.location(name), cutoff) for name in self.tables}
        return {name: folders for name, folders in swept.items() if folders}

    def read(self, name: str, version: Optional[int] = None):
        """The table as a Spark DataFrame in the registry's column order, at ``version`` if given.

        Example::

            store.read("gold_findings", version=3).filter("status = 'open'")
        """
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
            raise TypeError(f"version must be a non-negative int or None, got {version!r} ({type(version).__name__})")
        return self.backend.read(self.spec(name), self.location(name), version)

    # ------------------------------------------------------------------ writes

    def append(self, name: str, df, run_id: Optional[str] = None) -> int:
        """Add ``df``'s rows to the table (created if missing) in one commit; return the new version.

        :param df: a DataFrame with exactly the table's columns and types (any order).
        :param run_id: recorded in the commit (``history()``), not in the rows.
        :raises SchemaMismatchError: naming each missing, unexpected or wrongly typed column.
        """
        spec = self.spec(name)
        return self.backend.append(spec, self.location(name), conform(df, spec), run_id)

    def replace_slice(self, name: str, df, slice: Mapping[str, SliceValue], run_id: Optional[str] = None,
                      staged: Optional[StagedParquet] = None) -> int:
        """Replace every row of one slice (e.g. one capture) with ``df``'s rows, atomically.

        Re-running the same capture leaves exactly one copy of its rows. ``df`` must hold only rows of
        the slice (``SliceMismatchError`` otherwise); an empty ``df`` empties the slice.

        Example::

            store.replace_slice("bronze_dir_entries", df, slice={"capture_id": capture_id}, run_id=run_id)

        :param slice: column -> value (str, int, bool or None); usually the table's ``slice_column``.
        :param staged: files from :py:meth:`staged_parquet`, committed in the same commit (and checked the
            same way: schema, nulls, slice) as ``df``'s rows.
        :return: the new version.
        """
        spec = self.spec(name)
        self._check_slice(spec, slice)
        if staged is None:
            return self.backend.replace_slice(spec, self.location(name), conform(df, spec), dict(slice), run_id)
        if staged.table != name or not getattr(self.backend, "accepts_staged_parquet", False):
            raise ValueError(f"staged files of {staged.table} cannot be committed to {name} on {self.backend_name}")
        return self.backend.replace_slice(spec, self.location(name), conform(df, spec), dict(slice), run_id, staged)

    def staged_parquet(self, name: str, slice: Mapping[str, SliceValue]) -> Optional[StagedParquet]:
        """Where executors may write Parquet files of one slice themselves (pyarrow, no JVM rows), to be
        committed by the next ``replace_slice(name, ..., staged=...)``; None when this backend cannot
        commit such files (delta-spark, catalog tables): write through a DataFrame then.

        Only slices of partition columns are staged (the files' folder names the slice)."""
        spec = self.spec(name)
        self._check_slice(spec, slice)
        if not getattr(self.backend, "accepts_staged_parquet", False) or set(slice) != set(spec.partition_by):
            return None
        from .backend_embedded import staging_for
        from .parquet_files import partition_dir
        from .table_predicates import partition_value_text

        folder = partition_dir({k: partition_value_text(v) for k, v in slice.items()}, spec.partition_by)
        return staging_for(spec, self.location(name), folder)

    def merge(self, name: str, source, on: Optional[Sequence[str]] = None, run_id: Optional[str] = None
              ) -> "MergeBuilder":
        """Start a MERGE of ``source`` into the table, matching rows on ``on`` (default: the natural keys).

        Nothing runs until :py:meth:`MergeBuilder.execute`. In conditions and expressions the target is
        ``t`` and the source ``s`` (``"t.status = 'open'"``, ``{"last_seen": "s.last_seen"}``); keys
        match null-safely.

        Example::

            (store.merge("gold_findings", findings)
                .when_matched_update(set={"last_seen": "s.last_seen", "run_id": "s.run_id"})
                .when_not_matched_insert_all()
                .when_not_matched_by_source_update(set={"status": "'resolved'"}, condition="t.status = 'open'")
                .execute())

        :param source: a DataFrame with exactly the table's columns and types.
        """
        spec = self.spec(name)
        keys = tuple(on) if on is not None else tuple(spec.keys)
        for key in keys:
            quote_identifier(key)
            if key not in spec.column_names:
                raise ValueError(f"merge key {key!r} is not a column of {name}: {list(spec.column_names)}")
        return MergeBuilder(self, spec, conform(source, spec), keys, run_id, ())

    def _check_slice(self, spec: TableSpec, slice_values: Mapping[str, SliceValue]) -> None:
        if not isinstance(slice_values, Mapping) or not slice_values:
            raise ValueError(f"slice must be a non-empty dict column -> value, e.g. {{{spec.slice_column!r}: ...}}; "
                             f"got {slice_values!r}")
        for column, value in slice_values.items():
            if column not in spec.column_names:
                raise ValueError(f"slice column {column!r} is not a column of {spec.name}: {list(spec.column_names)}")
            column_type = spec.columns[spec.column_names.index(column)].type
            wanted = _SLICE_TYPES.get(column_type)
            if wanted is None:
                raise ValueError(f"slice column {column!r} has type {column_type}; slices are on "
                                 f"{sorted(_SLICE_TYPES)} columns")
            if value is not None and (not isinstance(value, wanted) or (wanted is int and isinstance(value, bool))):
                raise TypeError(f"slice value for {column!r} ({column_type}) is {value!r} "
                                f"({type(value).__name__}); expected {wanted.__name__} or None")
            if value == "" and column in spec.partition_by:
                raise ValueError(f"slice value '' for partition column {column!r}: Spark and Delta store an empty "
                                 f"partition value as null, so this slice cannot be told apart from null")


class MergeBuilder:
    """Records MERGE clauses; :py:meth:`execute` runs them in one commit. Each method returns a new builder.

    Legal combinations follow Delta: any number of clauses of each kind, tried in order, first
    matching one acts; only the last clause of a kind may omit its condition.

    .. versionadded:: 0.1
    .. note:: Evolving
    """

    def __init__(self, store: DeltaStore, spec: TableSpec, source, on: Sequence[str], run_id: Optional[str],
                 clauses: Sequence[mc.MergeClause]) -> None:
        self._store = store
        self._spec = spec
        self._source = source
        self._on = tuple(on)
        self._run_id = run_id
        self._clauses = tuple(clauses)

    def _with(self, clause: mc.MergeClause) -> "MergeBuilder":
        return MergeBuilder(self._store, self._spec, self._source, self._on, self._run_id, (*self._clauses, clause))

    @property
    def clauses(self):
        return self._clauses

    def when_matched_update_all(self, condition: Optional[str] = None) -> "MergeBuilder":
        """Matched target rows take every column from the source row."""
        return self._with(mc.MergeClause(mc.MATCHED, mc.UPDATE, condition))

    def when_matched_update(self, set: Mapping[str, str], condition: Optional[str] = None) -> "MergeBuilder":
        """Matched target rows get ``set`` (column -> SQL over ``t``/``s``); other columns keep their value."""
        return self._with(mc.MergeClause(mc.MATCHED, mc.UPDATE, condition, set))

    def when_matched_delete(self, condition: Optional[str] = None) -> "MergeBuilder":
        return self._with(mc.MergeClause(mc.MATCHED, mc.DELETE, condition))

    def when_not_matched_insert_all(self, condition: Optional[str] = None) -> "MergeBuilder":
        """Source rows with no target row are inserted as they are."""
        return self._with(mc.MergeClause(mc.NOT_MATCHED, mc.INSERT, condition))

    def when_not_matched_insert(self, values: Mapping[str, str], condition: Optional[str] = None) -> "MergeBuilder":
        """Source rows with no target row are inserted with ``values`` (column -> SQL over ``s``); others null."""
        return self._with(mc.MergeClause(mc.NOT_MATCHED, mc.INSERT, condition, values))

    def when_not_matched_by_source_update(self, set: Mapping[str, str],
                                          condition: Optional[str] = None) -> "MergeBuilder":
        """Target rows the source no longer has get ``set`` (SQL over the target only), e.g. mark resolved."""
        return self._with(mc.MergeClause(mc.NOT_MATCHED_BY_SOURCE, mc.UPDATE, condition, set))

    def when_not_matched_by_source_delete(self, condition: Optional[str] = None) -> "MergeBuilder":
        return self._with(mc.MergeClause(mc.NOT_MATCHED_BY_SOURCE, mc.DELETE, condition))

    def execute(self) -> int:
        """Run the MERGE as one commit; return the table version after it.

        :raises DuplicateSourceRowsError: several source rows match one target row a clause acts on.
        :raises ConcurrentTableUpdateError: lost the commit race ``storage.commit_retries + 1`` times.
        """
        clauses = mc.check_clauses(self._clauses, self._spec.column_names)
        store = self._store
        return store.backend.merge(self._spec, store.location(self._spec.name), self._source, self._on, clauses,
                                   self._run_id)
