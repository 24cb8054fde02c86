"""The typed configuration (jobs.settings): every conf/*.yaml key has exactly one typed field and its one default
in the YAML, partial sections are completed from it, and bad values fail naming the key."""
from __future__ import annotations

import dataclasses
import typing

import pytest
import yaml

from jobs.config import ConfigError, default_conf_dir, load_config, validate_config
from jobs.report.settings import ReportSettings
from jobs.settings import (
    SECTIONS,
    IngestSettings,
    RunSettings,
    SparkSettings,
    StorageSettings,
    Thresholds,
    section,
)

TYPED = (*SECTIONS, ReportSettings)


def _yaml_sections() -> dict:
    out = {}
    for path in default_conf_dir().glob("*.yaml"):
        out.update(yaml.safe_load(path.read_text()) or {})
    return out


@pytest.mark.parametrize("cls", TYPED, ids=lambda c: c.__name__)
def test_each_yaml_key_is_one_typed_field_without_a_default_in_code(cls):
    """The YAML is the one place defaults live: the fields read from a section are exactly its keys, and none of
    them carries a default of its own; each YAML value already has its field's type."""
    shipped = _yaml_sections()[cls.SECTION]
    elsewhere = ("reclaimable_checks", "fail_on") if cls is ReportSettings else ()  # the catalogue's, the run's
    from_yaml = [f for f in dataclasses.fields(cls) if f.name not in elsewhere]
    assert sorted(f.name for f in from_yaml) == sorted(shipped)
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in from_yaml)
    hints = typing.get_type_hints(cls)
    built = section(load_config(env={}), cls) if cls is not ReportSettings else ReportSettings.from_config(None)
    for f in from_yaml:
        kind = typing.get_origin(hints[f.name]) or hints[f.name]
        assert isinstance(getattr(built, f.name), kind), f.name
        if kind in (int, str, bool):
            assert getattr(built, f.name) == shipped[f.name]


def test_a_partial_section_is_completed_from_the_yaml_and_overrides_win():
    spark = section({"spark": {"master": "local[1]", "shuffle_partitions": "3"}}, SparkSettings)
    assert spark.master == "local[1]" and spark.shuffle_partitions == 3
    assert spark.driver_memory == _yaml_sections()["spark"]["driver_memory"]
    cfg = load_config(env={"KAFKA_RECON__INGEST__FILES_PER_TASK": "7"}, overrides=["run.fail_on=warning"])
    assert section(cfg, IngestSettings).files_per_task == 7 and section(cfg, RunSettings).fail_on == "warning"
    assert section(None, StorageSettings).backend == "auto"


@pytest.mark.parametrize("cfg, message", [
    ({"storage": {"backend": "hdfs"}}, "storage.backend: expected one of auto, embedded, delta-spark"),
    ({"run": {"fail_on": "sometimes"}}, "run.fail_on: expected one of"),
    ({"run": {"min_capture_ratio": -0.5}}, "run.min_capture_ratio: expected a number >= 0"),
    ({"reconcile": {"delete_grace_ms": -1}}, "reconcile.delete_grace_ms: expected a number >= 0"),
    ({"reconcile": {"producer_id_block_size": 0}}, "reconcile.producer_id_block_size: expected a number > 0"),
    ({"ingest": {"direct_records_write": "sometimes"}}, "ingest.direct_records_write: expected true or false"),
    ({"quality": {"check_ids": "X"}}, "quality.check_ids: expected a list"),
])
def test_bad_values_fail_naming_the_key(cfg, message):
    cls = next(c for c in SECTIONS if c.SECTION == next(iter(cfg)))
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        section(cfg, cls)


def test_validate_config_builds_every_section_before_spark_starts():
    cfg = load_config(env={})
    cfg["storage"]["backend"] = "s3"
    with pytest.raises(ConfigError, match="storage.backend"):
        validate_config(cfg)
    assert section(load_config(env={}), Thresholds).delete_limit_ms == 60000 + 300000
