"""Which master the job's session uses (jobs.spark_session.resolve_master): never one over a master Spark was given.

The oracle is Spark's own launcher contract: spark-submit starts the driver's Python with PYSPARK_GATEWAY_PORT set
(PythonRunner), ``pyspark`` reads PYSPARK_SUBMIT_ARGS and MASTER, and spark-defaults.conf holds ``spark.master``."""
from __future__ import annotations

import dataclasses

from jobs.settings import Settings
from jobs.spark_session import resolve_master

SPARK = Settings.shipped().spark


def choice(env, **settings):
    sp = dataclasses.replace(SPARK, **settings) if settings else SPARK
    c = resolve_master(sp, environ=env)
    return c.kind, c.url, c.source


def test_conf_master_only_when_nothing_else_names_one():
    assert choice({}) == ("master", "local[*]", "spark.master (conf)")
    assert choice({}, master="spark://h:7077")[:2] == ("master", "spark://h:7077")


def test_spark_submit_running_jvm_wins_over_conf():
    kind, url, source = choice({"PYSPARK_GATEWAY_PORT": "41234"}, master="local[4]")
    assert (kind, url) == ("given", None) and "spark-submit" in source


def test_spark_connect_from_environment_or_conf():
    assert choice({"SPARK_REMOTE": "sc://h:15002"})[:2] == ("remote", "sc://h:15002")
    assert choice({}, remote="sc://x:15002")[:2] == ("remote", "sc://x:15002")
    assert choice({"SPARK_REMOTE": "sc://env:1"}, remote="sc://conf:2")[1] == "sc://env:1"


def test_sparks_own_launcher_settings_are_left_to_spark(tmp_path):
    assert choice({"PYSPARK_SUBMIT_ARGS": "--master spark://a:7077 pyspark-shell"})[:2] == \
        ("configured", "spark://a:7077")
    assert choice({"MASTER": "yarn"})[:2] == ("configured", "yarn")
    (tmp_path / "spark-defaults.conf").write_text("# comment\nspark.master   spark://d:7077\n")
    assert choice({"SPARK_CONF_DIR": str(tmp_path)})[:2] == ("configured", "spark://d:7077")


def test_explicit_test_override_comes_first():
    assert choice({"KAFKA_RECON_SPARK_MASTER": "local-cluster[2,1,1024]", "PYSPARK_GATEWAY_PORT": "1"})[:2] == \
        ("master", "local-cluster[2,1,1024]")


def test_only_local_masters_run_executors_with_this_interpreter():
    sp = SPARK
    assert resolve_master(sp, environ={}).local
    assert not resolve_master(sp, environ={"MASTER": "spark://h:7077"}).local
    assert not resolve_master(sp, environ={"SPARK_REMOTE": "local[2]"}).local
