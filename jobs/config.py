"""Configuration: conf/*.yaml merged, then --conf FILE, then KAFKA_RECON__SECTION__KEY env vars, then --set.

Typed by example: every key a user sets must exist in the packaged defaults and keep its type, so a typo
or a wrong type fails at start-up with a message naming the key, not in the middle of a Spark job.
"""
from __future__ import annotations

import copy
import os
from importlib import resources
from pathlib import Path
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

import yaml

ENV_PREFIX = "KAFKA_RECON__"

# Keys whose value must be one of a fixed set (checked by jobs.settings when a section is built, before Spark
# starts); run.fail_on's set is owned by the report (jobs/report/summary.py FAIL_ON), severities by the catalogue.
ENUMS: Dict[str, Tuple[str, ...]] = {
    "storage.backend": ("auto", "embedded", "delta-spark"),
    "quality.result_format": ("BOOLEAN_ONLY", "BASIC", "SUMMARY", "COMPLETE"),
    "quality.details": ("failed", "all"),
}
# the smallest value a number key takes, checked by jobs.settings when a section is built: 0 for limits, delays
# and ratios (0 means none or off where it means anything); 1 for counts and sizes that work is divided into or made
# of (a task, a partition, a part, a file). Two thread counts take 0 as one at a time, like 1.
MINIMUM: Dict[str, int] = {
    **dict.fromkeys(("run.progress_seconds", "run.min_capture_ratio", "reconcile.file_delete_delay_ms",
                     "reconcile.delete_grace_ms", "reconcile.zk_delete_stuck_after_ms",
                     "reconcile.future_move_stuck_ms", "reconcile.transaction_max_timeout_ms",
                     "reconcile.reassignment_stuck_ms", "reconcile.evidence_max_items",
                     "reconcile.cordoned_dir_max_ms",
                     "spark.small_capture_jvm_below_bytes", "spark.interpreted_below_rows",
                     "spark.small_capture_actions_at_once", "storage.staging_max_age_hours", "storage.commit_retries",
                     "storage.vacuum_retention_hours",
                     "storage.write_parallelism", "ingest.max_embedded_file_bytes", "ingest.max_segment_scan_bytes",
                     "ingest.segment_summary_bytes", "ingest.direct_first_pass_min_bytes", "report.max_rows_in_html",
                     "report.max_rows_in_md", "report.max_pid_blocks", "report.max_evidence_chars",
                     "report.trend_runs", "report.quarantine_days", "quality.partial_unexpected_count",
                     "quality.sample_max_chars"), 0),
    **dict.fromkeys(("spark.shuffle_partitions", "ingest.max_metadata_file_bytes", "ingest.decompression_limit_bytes",
                     "ingest.files_per_task", "ingest.metadata_chunk_bytes", "ingest.output_rows_per_file",
                     "ingest.direct_tasks_per_core"), 1),
}
# text that names something: empty (or null) would quietly mean "the current folder" or Spark's own default
# (storage.schema may be empty: it names something only with a catalog)
NON_EMPTY = ("spark.app_name", "spark.master", "spark.driver_memory", "spark.log_level", "storage.root",
             "run.output_dir")


class ConfigError(ValueError):
    """A configuration value is unknown or has the wrong type."""


def default_conf_dir():
    """The conf/ folder (a Path, or an importlib.resources Traversable inside a wheel or zip): $KAFKA_RECON_CONF_DIR,
    else the source tree's conf/ next to jobs/, else the packaged copy ``jobs/conf`` (the build copies conf/*.yaml
    there: setup.py), read through importlib.resources so it works from a ``--py-files`` zip too."""
    env = os.environ.get("KAFKA_RECON_CONF_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    repo = here.parent / "conf"
    if repo.is_dir() and (repo / "default.yaml").is_file():
        return repo
    return resources.files("jobs").joinpath("conf")


class Config(dict):
    """A nested dict with attribute access (``cfg.spark.master``) and dotted lookup (``cfg.get_path``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(f"no config key {name!r}; known: {sorted(self)}") from None
        return Config(value) if isinstance(value, dict) else value

    def get_path(self, dotted: str, default: Any = None) -> Any:
        node: Any = self
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def _merge(base: dict, override: Mapping, source: str, strict: bool, path: str = "") -> None:
    """Merge ``override`` into ``base``; errors name the source (file, env var, --set) and the dotted key."""
    for key, value in override.items():
        dotted = f"{path}{key}"
        if strict and key not in base:
            raise ConfigError(f"{source}: unknown key {dotted!r}; known keys here: {sorted(base)}")
        if key in base and isinstance(base[key], dict):  # a section, or the free-form spark.extra_conf
            if value is None:
                continue  # an empty section (a YAML "spark:" whose keys are all commented out) changes nothing
            if isinstance(value, Mapping):
                # a free-form map takes new keys from every source, however many it already has
                free = tuple(dotted.split(".")) in FREE_FORM_MAPS
                _merge(base[key], value, source, strict and not free, f"{dotted}.")
                continue
            if strict:
                raise ConfigError(f"{source}: {dotted} is a section; set its keys one by one ({dotted}.KEY=VALUE), "
                                  f"got {value!r}")
        if strict and key in base and base[key] is not None and value is not None:
            value = _coerce(value, base[key], f"{source}: {dotted}")
        base[key] = copy.deepcopy(value)


def _coerce(value: Any, like: Any, where: str) -> Any:
    if isinstance(like, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ConfigError(f"{where}: expected true/false, got {value!r}")
    if isinstance(like, int) and not isinstance(like, bool):
        if isinstance(value, float) and not value.is_integer():  # int(2.7) would quietly make it 2
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: expected an integer, got {value!r}") from None
    if isinstance(like, float):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: expected a number, got {value!r}") from None
    if isinstance(like, str):
        if isinstance(value, (dict, list)):
            raise ConfigError(f"{where}: expected text, got {type(value).__name__}")
        return str(value)
    if isinstance(like, list) and not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list, got {value!r}")
    return value


def _parse_scalar(text: str) -> Any:
    return yaml.safe_load(text) if text.strip() else ""


def load_config(
    conf_file: Optional[str] = None,
    overrides: Iterable[str] = (),
    env: Optional[Mapping[str, str]] = None,
    conf_dir: Optional[Path] = None,
) -> Config:
    """Load the merged configuration.

    :param conf_file: a user YAML file (``--conf``); keys must exist in the defaults.
    :param overrides: ``section.key=value`` strings (``--set``), applied last.
    :param env: environment (defaults to ``os.environ``); ``KAFKA_RECON__STORAGE__ROOT=/x`` sets storage.root.
    """
    folder = conf_dir or default_conf_dir()
    try:
        files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml") and f.is_file()),
                       key=lambda p: (p.name != "default.yaml", p.name))
    except (FileNotFoundError, NotADirectoryError):
        files = []
    if not files:
        raise ConfigError(f"no conf/*.yaml found in {folder}")
    merged: dict = {}
    for path in files:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        _merge(merged, data, path.name, strict=False)
    if conf_file:
        try:
            data = yaml.safe_load(Path(conf_file).read_bytes().decode("utf-8")) or {}
        except UnicodeDecodeError as exc:
            raise ConfigError(f"--conf {conf_file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                              f"{exc.start}); save it as UTF-8 YAML") from None
        except OSError as exc:
            raise ConfigError(f"--conf {conf_file}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"--conf {conf_file}: not valid YAML ({str(exc).splitlines()[0]})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{conf_file}: expected a mapping at the top level")
        _merge(merged, data, str(conf_file), strict=True)
    for key, value in (os.environ if env is None else env).items():
        if key.startswith(ENV_PREFIX):
            path = [p.lower() for p in key[len(ENV_PREFIX):].split("__")]
            _merge(merged, _nest(path, _parse_scalar(value)), f"env {key}", strict=True)
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set expects section.key=value, got {item!r}")
        dotted, value = item.split("=", 1)
        if not all(part.strip() for part in dotted.split(".")):
            raise ConfigError(f"--set expects section.key=value, got {item!r} (an empty key name)")
        _merge(merged, _nest(dotted.strip().split("."), _parse_scalar(value)), "--set", strict=True)
    return Config(merged)


FREE_FORM_MAPS = (("spark", "extra_conf"),)  # their keys contain dots themselves (spark.executor.memory)


def _nest(path: list, value: Any) -> dict:
    for prefix in FREE_FORM_MAPS:
        if tuple(path[: len(prefix)]) == prefix and len(path) > len(prefix) + 1:
            path = [*prefix, ".".join(path[len(prefix):])]
    out: Any = value
    for part in reversed(path):
        out = {part: out}
    return out
