"""Shared fixtures: one Spark session for the whole run (quinn-style), paths to copied real fixtures."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

os.environ.setdefault("TZ", "UTC")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def devsample_dir() -> Path:
    return FIXTURES / "kafka-devsample"


@pytest.fixture(scope="session")
def spark():
    """One local session, 2 cores, UI off, UTC. It starts with the small-capture profile (interpreted expressions,
    one shuffle partition, no AQE, no broadcast joins), as the job runs every capture this small
    (jobs.spark_session.fit_execution_to_size); tests that need the large profile set it themselves."""
    from jobs.spark_session import SMALL_CAPTURE_CONF, get_spark

    session = get_spark(
        master=os.environ.get("KAFKA_RECON_TEST_MASTER", "local[2]"),
        extra_conf={
            "spark.speculation": "false",
            "spark.driver.memory": "4g",
            "spark.default.parallelism": "2",
            **SMALL_CAPTURE_CONF,
        },
    )
    yield session
    session.stop()


@pytest.fixture
def spark_conf_restored(spark):
    """The execution profile's settings (jobs.spark_session.SMALL_CAPTURE_CONF and the session values kept for
    it) back as they were once the test is done: for tests that switch the profile of the shared session."""
    from jobs.spark_session import (
        _ACTIONS_KEY,
        _SESSION_VALUE,
        _SMALL_KEY,
        _SMALL_SIDES_KEY,
        SMALL_CAPTURE_CONF,
    )

    keys = list(SMALL_CAPTURE_CONF) + [_SESSION_VALUE + k for k in SMALL_CAPTURE_CONF] + [_ACTIONS_KEY, _SMALL_KEY,
                                                                                            _SMALL_SIDES_KEY]
    before = {k: spark.conf.get(k, None) for k in keys}
    yield
    for k, v in before.items():
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)


@pytest.fixture(scope="session")
def migration_fleet(tmp_path_factory) -> str:
    """A simulated ZooKeeper -> KRaft migration capture (observer copies of the log, znodes, dump-log text
    decoded by the first pass, loose files outside any log dir), shared by the tests of the ingest's routes."""
    from jobs.simulate import command
    from jobs.simulate.simulation import SimParams

    out = str(tmp_path_factory.mktemp("migration-fleet") / "capture")
    command.run("pid-migration-reuse", out, SimParams(seed=4, partitions_per_broker=5))
    return out
