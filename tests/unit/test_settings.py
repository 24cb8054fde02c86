"""The typed configuration (jobs.settings): every conf/*.yaml key has exactly one typed field and its one default
in the YAML, partial sections are completed from it, bad values fail naming the key, and the whole Settings is
built once by the entry points, the stages being handed only their typed sections."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import typing
from pathlib import Path

import pytest
import yaml

from jobs.config import ConfigError, default_conf_dir, load_config
from jobs.report.settings import ReportSettings
from jobs.settings import (
    SECTIONS,
    IngestSettings,
    RunSettings,
    Settings,
    SparkSettings,
    StorageSettings,
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
    built = section(load_config(env={}), cls) if cls is not ReportSettings else Settings.shipped().report
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
    # session 36: these were accepted (a negative limit, a zero count, the text "None" for a null, an empty path)
    ({"ingest": {"files_per_task": 0}}, "ingest.files_per_task: expected a number >= 1"),
    ({"ingest": {"decompression_limit_bytes": -1}}, "ingest.decompression_limit_bytes: expected a number >= 1"),
    ({"spark": {"shuffle_partitions": 0}}, "spark.shuffle_partitions: expected a number >= 1"),
    ({"storage": {"commit_retries": -1}}, "storage.commit_retries: expected a number >= 0"),
    ({"storage": {"root": None}}, "storage.root: expected str, got null"),
    ({"storage": {"root": " "}}, "storage.root: expected a non-empty value"),
    ({"run": {"output_dir": ""}}, "run.output_dir: expected a non-empty value"),
    ({"spark": {"master": None}}, "spark.master: expected str, got null"),
])
def test_bad_values_fail_naming_the_key(cfg, message):
    cls = next(c for c in SECTIONS if c.SECTION == next(iter(cfg)))
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        section(cfg, cls)


def test_bad_report_values_fail_naming_the_key():
    with pytest.raises(ConfigError, match=r"report\.quarantine_days: expected a number >= 0"):
        Settings.load(None, ["report.quarantine_days=-7"])


def test_settings_build_every_section_before_spark_starts():
    cfg = load_config(env={})
    cfg["storage"]["backend"] = "s3"
    with pytest.raises(ConfigError, match="storage.backend"):
        Settings.from_config(cfg)
    for name, value in (("report", {"max_rows_in_md": -1}), ("checks", ["STALE_TOPIC_ID"])):
        with pytest.raises(ConfigError, match=name):  # the report and the catalogue too: exit 2, not a late failure
            Settings.from_config({**load_config(env={}), name: value})
    settings = Settings.from_config(load_config(env={}, overrides=["run.fail_on=warning"]))
    assert settings.thresholds.delete_limit_ms == 60000 + 300000 and settings.report.fail_on == "warning"
    assert settings.report.reclaimable_checks == settings.catalogue.reclaimable()
    assert Settings.from_config({"spark": {"master": "local[1]"}}).catalogue == Settings.shipped().catalogue


def test_nightly_builds_the_settings_once_and_hands_them_to_the_pipeline(monkeypatch, tmp_path, devsample_dir):
    from jobs import nightly, pipeline

    built, handed = [], []
    build = Settings.from_config.__func__
    monkeypatch.setattr(Settings, "from_config", classmethod(lambda cls, cfg: built.append(cfg) or build(cls, cfg)))

    def pipeline_stub(settings, **kwargs):
        handed.append(settings)
        return pipeline.PipelineResult(kwargs["run_id"], "cap", None, {}, None, {"status": "ok"})

    monkeypatch.setattr(pipeline, "run_pipeline", pipeline_stub)
    argv = ["--capture", str(devsample_dir), "--out", str(tmp_path / "out"), "--quiet", "--set", "run.fail_on=info"]
    assert nightly.main(argv) == 0
    assert len(built) == 1 and len(handed) == 1 and handed[0].run.fail_on == "info"


JOBS = Path(__file__).resolve().parents[2] / "jobs"
ENTRY_POINTS = {"nightly.py", "notebook_support.py", "spark_session.py",  # get_spark(None): conf/*.yaml + environment
                "engine/class_archive_build.py", "tables/command_setup.py"}


def _modules():
    return {str(p.relative_to(JOBS)): p.read_text() for p in sorted(JOBS.rglob("*.py"))}


def test_only_the_settings_builder_reads_the_merged_configuration():
    """``section(`` is called by jobs/settings.py alone; only entry points build a Settings; no function below
    them takes the merged mapping (a ``cfg``/``config`` parameter)."""
    modules = _modules()
    assert [name for name, text in modules.items() if re.search(r"\bsection\(", text)] == ["settings.py"]
    assert {name for name, text in modules.items() if "load_config" in text} == {"config.py", "settings.py"}
    builders = {name for name, text in modules.items() if re.search(r"Settings\.(load|from_config)\(", text)}
    assert builders <= ENTRY_POINTS | {"settings.py"}, builders
    for name, text in modules.items():
        if name == "settings.py":
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                assert not {a.arg for a in args} & {"cfg", "config"}, f"{name}: {node.name}"


@pytest.mark.parametrize("where, params", [
    ("jobs.spark_session:get_spark", {"settings": "Optional[SparkSettings]"}),
    ("jobs.spark_session:fit_execution_to_size", {"settings": "SparkSettings"}),
    ("jobs.tables.delta_store:DeltaStore.from_settings", {"storage": "StorageSettings"}),
    ("jobs.ingest.stage:run_ingest", {"settings": "IngestSettings", "execution": "SparkSettings"}),
    ("jobs.reconcile.run:run_reconcile", {"catalogue": "Catalogue"}),
    ("jobs.quality.runner:run_quality", {"settings": "QualitySettings"}),
    ("jobs.report.writer:write_reports", {"report": "ReportSettings", "catalogue": "Catalogue"}),
    ("jobs.pipeline:run_pipeline", {"settings": "Settings"}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_stages_take_typed_sections(where, params):
    module, _, attr = where.partition(":")
    fn = importlib.import_module(module)
    for part in attr.split("."):
        fn = getattr(fn, part)
    signature = inspect.signature(fn).parameters
    assert {name: signature[name].annotation for name in params} == params


def test_what_executors_decode_comes_from_the_ingest_settings_with_no_default_in_code():
    """DecodeOptions carries ingest settings to the executors: each such field is required (its value lives in
    conf/default.yaml) and from_settings copies every one of them."""
    from jobs.ingest.log_dir_rows import DecodeOptions

    ingest = section(None, IngestSettings)
    shared = [f for f in dataclasses.fields(DecodeOptions) if f.name in {g.name for g in dataclasses.fields(ingest)}]
    assert len(shared) == 7
    assert all(f.default is dataclasses.MISSING for f in shared), [f.name for f in shared]
    options = DecodeOptions.from_settings(ingest, metadata_chunk_bytes=1)
    assert {f.name: getattr(options, f.name) for f in shared} == {
        **{f.name: getattr(ingest, f.name) for f in shared}, "metadata_chunk_bytes": 1}
