"""The configuration as typed sections: one frozen dataclass per section of conf/*.yaml.

``jobs.config.load_config`` merges conf/*.yaml < --conf < environment < --set and checks every key a user sets
exists and keeps its type. :class:`Settings` turns that merged mapping, once, at an entry point (nightly, the
notebooks, bench), into typed sections; each stage is handed only the sections it reads, so a stage reads
``ingest.files_per_task``, never the merged dict. The defaults live in conf/*.yaml only: these classes declare
names and types, never values. A section the caller gave only in part (tests passing a small dict) is completed
from the shipped conf/*.yaml.

    settings = Settings.load(args.conf, args.set)      # nightly: conf/*.yaml < --conf < env < --set
    spark = get_spark(settings.spark)
    settings.spark.driver_memory          # '6g'
"""
from __future__ import annotations

import typing
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, Mapping, Optional, Tuple, Type, TypeVar

from .config import ENUMS, MINIMUM, NON_EMPTY, ConfigError, default_conf_dir, load_config

if TYPE_CHECKING:
    from .reconcile.catalogue import Catalogue
    from .report.settings import ReportSettings

S = TypeVar("S")


@dataclass(frozen=True)
class SparkSettings:
    """``spark``: the session the job uses (jobs/spark_session.py: a running one as it is, else one it builds)."""

    SECTION = "spark"
    app_name: str
    master: str
    remote: str
    driver_memory: str
    jvm_options: str
    small_capture_jvm_options: str
    small_capture_jvm_below_bytes: int
    shuffle_partitions: int
    interpreted_below_rows: int
    small_capture_actions_at_once: int
    class_archive: bool
    class_archive_dir: str
    fewer_gateway_calls: bool
    preload_python_workers: bool
    log_level: str
    extra_conf: Dict[str, str]


@dataclass(frozen=True)
class StorageSettings:
    """``storage``: where the Delta tables live and how they are committed."""

    SECTION = "storage"
    backend: str
    root: str
    catalog: str
    schema: str
    commit_retries: int
    write_parallelism: int
    staging_max_age_hours: float
    vacuum_retention_hours: float


@dataclass(frozen=True)
class IngestSettings:
    """``ingest``: what the decoding tasks read, how far, and how the bronze files are cut."""

    SECTION = "ingest"
    max_embedded_file_bytes: int
    max_metadata_file_bytes: int
    decompression_limit_bytes: int
    files_per_task: int
    read_data_segment_headers: bool
    max_segment_scan_bytes: int
    segment_summary_bytes: int
    metadata_chunk_bytes: int
    output_rows_per_file: int
    direct_records_write: bool
    direct_first_pass_write: bool
    direct_first_pass_min_bytes: int
    direct_tasks_per_core: int


@dataclass(frozen=True)
class RunSettings:
    """``run``: what makes a run green, partial or failed, and how it reports progress."""

    SECTION = "run"
    output_dir: str
    fail_on: str
    allow_partial: bool
    min_capture_ratio: float
    progress_seconds: float
    future_capture_time_slack_seconds: float


@dataclass(frozen=True)
class QualitySettings:
    """``quality``: the Great Expectations suites run after reconcile."""

    SECTION = "quality"
    enabled: bool
    result_format: str
    details: str  # failed: GX runs only what the screen (screen.py) did not pass, with result_format | all
    partial_unexpected_count: int
    sample_max_chars: int
    check_ids: Tuple[str, ...]


@dataclass(frozen=True)
class Thresholds:
    """``reconcile`` (conf/checks.yaml): the ages and sizes the checks compare with."""

    SECTION = "reconcile"
    file_delete_delay_ms: int
    delete_grace_ms: int
    zk_delete_stuck_after_ms: int
    producer_id_block_size: int
    kip253_report_partition_changes: bool
    evidence_max_items: int
    future_move_stuck_ms: int
    transaction_max_timeout_ms: int
    reassignment_stuck_ms: int
    cordoned_dir_max_ms: int

    def __post_init__(self) -> None:
        if self.producer_id_block_size <= 0:
            raise ConfigError(f"reconcile.producer_id_block_size: expected a number > 0, got {self.producer_id_block_size}")

    @property
    def delete_limit_ms(self) -> int:
        """How old a delete may be before its leftovers are findings."""
        return self.file_delete_delay_ms + self.delete_grace_ms


SECTIONS: Tuple[type, ...] = (SparkSettings, StorageSettings, IngestSettings, RunSettings, QualitySettings,
                              Thresholds)


@lru_cache(maxsize=4)
def _shipped(conf_dir: str) -> Mapping[str, Any]:
    """conf/*.yaml of the folder named ``conf_dir`` (its text: the cache key), read from :func:`default_conf_dir`."""
    folder = default_conf_dir()
    return load_config(env={}, conf_dir=folder if str(folder) == conf_dir else Path(conf_dir))


def shipped_section(name: str) -> Dict[str, Any]:
    """One section of conf/*.yaml as shipped (no --conf, environment or --set)."""
    return dict(_shipped(str(default_conf_dir())).get(name) or {})


def _convert(value: Any, kind: Any, where: str) -> Any:
    origin = typing.get_origin(kind)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        return tuple(value)
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return {str(k): str(v) for k, v in value.items()}
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if value is None:  # str(None) would be the text "None" (a folder of that name, say)
        raise ConfigError(f"{where}: expected {kind.__name__}, got null")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected {kind.__name__}, got {value!r}") from None


def _allowed(where: str) -> Optional[Tuple[str, ...]]:
    if where == "run.fail_on":  # the report owns the exit-code thresholds
        from jobs.report.summary import FAIL_ON

        return tuple(FAIL_ON)
    return ENUMS.get(where)


def section(cfg: Optional[Mapping[str, Any]], cls: Type[S], **extra: Any) -> S:
    """``cls`` built from ``cfg``'s section (completed from the shipped conf/*.yaml), every field converted to its
    declared type and checked against the enums and bounds :mod:`jobs.config` declares. ``extra``: fields that
    come from elsewhere than the section (the report's fail_on, say)."""
    name = cls.SECTION
    given = (cfg or {}).get(name) if cfg is not None else None
    values = {**shipped_section(name), **dict(given or {})}
    hints = typing.get_type_hints(cls)
    kwargs = dict(extra)
    for f in fields(cls):
        if f.name in extra:
            continue
        where = f"{name}.{f.name}"
        if f.name not in values:
            raise ConfigError(f"{where} is missing from conf/*.yaml")
        value = _convert(values[f.name], hints[f.name], where)
        allowed = _allowed(where)
        if allowed is not None and value not in allowed:
            raise ConfigError(f"{where}: expected one of {', '.join(allowed)}, got {value!r}")
        low = MINIMUM.get(where)
        if low is not None and value < low:
            raise ConfigError(f"{where}: expected a number >= {low}, got {value!r}")
        if where in NON_EMPTY and not value.strip():
            raise ConfigError(f"{where}: expected a non-empty value, got {value!r}")
        kwargs[f.name] = value
    return cls(**kwargs)


@dataclass(frozen=True)
class Settings:
    """The whole configuration, built and checked once by an entry point; stages get only their sections."""

    spark: SparkSettings
    storage: StorageSettings
    ingest: IngestSettings
    run: RunSettings
    quality: QualitySettings
    catalogue: "Catalogue"  # conf/checks.yaml: every check and the reconcile Thresholds
    report: "ReportSettings"  # with run.fail_on and the catalogue's reclaimable checks

    @property
    def thresholds(self) -> Thresholds:
        return self.catalogue.thresholds

    @classmethod
    def from_config(cls, cfg: Optional[Mapping[str, Any]]) -> "Settings":
        """Every section of ``cfg`` (merged or partial: what it lacks comes from conf/*.yaml), typed and checked;
        raises :class:`ConfigError` naming the first bad key, before Spark starts."""
        from .reconcile.catalogue import build_catalogue
        from .report.settings import ReportSettings

        spark, storage, ingest, run, quality, thresholds = (section(cfg, kind) for kind in SECTIONS)
        checks = (cfg or {}).get("checks") or shipped_section("checks")
        if not isinstance(checks, Mapping):
            raise ConfigError(f"checks: expected a mapping of check ids, got {type(checks).__name__}")
        catalogue = build_catalogue(checks, thresholds)
        report = section(cfg, ReportSettings, reclaimable_checks=catalogue.reclaimable(), fail_on=run.fail_on)
        return cls(spark, storage, ingest, run, quality, catalogue, report)

    @classmethod
    def load(cls, conf_file: Optional[str] = None, overrides: Iterable[str] = (),
             env: Optional[Mapping[str, str]] = None) -> "Settings":
        """:func:`jobs.config.load_config`'s merge (conf/*.yaml < ``conf_file`` < ``env`` < ``overrides``), typed."""
        return cls.from_config(load_config(conf_file, overrides, env))

    @classmethod
    def shipped(cls) -> "Settings":
        """conf/*.yaml as shipped (no --conf, environment or --set): for callers without a configuration."""
        return _shipped_settings(str(default_conf_dir()))


@lru_cache(maxsize=4)
def _shipped_settings(conf_dir: str) -> Settings:
    return Settings.from_config(_shipped(conf_dir))
