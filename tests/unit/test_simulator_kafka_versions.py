"""The simulator's ``kafka_version`` knob: the brokers write the record versions of that release.

Kafka writes each record at the newest version its finalized ``metadata.version`` allows
(MetadataVersion.registerBrokerRecordVersion and friends): RegisterBrokerRecord v3 from 3.7-IV2 (LogDirs), v4
from 4.3-IV0 (feature level 30, KIP-1066 CordonedLogDirs); a LogDirs change of BrokerRegistrationChangeRecord
v2 from 3.7, v3 from 4.3. The versions are read back with the project's decoders, not taken from the simulator.
"""
from __future__ import annotations

import os

import pytest
import simulator_helpers
from sim_replay import METADATA_DIR, capture_doc, expected_doc, log_dirs

from jobs.simulate import command
from jobs.simulate.command import SimulateError
from jobs.simulate.simulation import SimParams
from udfs import metadata_log

capture = simulator_helpers.capture


def _versions(root: str) -> dict:
    """(record type -> set of versions) over every segment and snapshot of every copy of the metadata log."""
    out: dict = {}
    for view in log_dirs(root):
        folder = os.path.join(view.path, METADATA_DIR)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith((".log", ".checkpoint")):  # segments and snapshots
                for r in metadata_log.iter_metadata_records(os.path.join(folder, name)):
                    assert r.error is None, r.error
                    if not r.is_control:
                        out.setdefault(r.type, set()).add(r.version)
    return out


@pytest.mark.parametrize("release,register,change", [((3, 9), {3}, {2}), ((4, 3), {4}, {3})])
def test_each_release_writes_its_record_versions(capture, release, register, change):
    root = capture("jbod-dir-failure", kafka_version=release)
    versions = _versions(root)
    assert versions["REGISTER_BROKER_RECORD"] == register
    assert change <= versions["BROKER_REGISTRATION_CHANGE_RECORD"]  # the LogDirs change after the dir failed
    assert capture_doc(root)["kafka_version"] == "%d.%d" % release


def test_the_ground_truth_does_not_depend_on_the_release(capture):
    """The same cluster history on 3.9 and 4.3: what is wrong with it is the same."""
    for name in ("jbod-dir-failure", "topic-recreated-while-down", "decommissioned-broker"):
        assert expected_doc(capture(name, kafka_version=(4, 3)))["findings"] == \
            expected_doc(capture(name, kafka_version=(3, 9)))["findings"], name


def test_kafka_4_has_no_zookeeper_mode(tmp_path):
    with pytest.raises(SimulateError, match="4.0 is KRaft only"):
        command.run("zk-healthy", str(tmp_path / "out"), SimParams(kafka_version=(4, 3)))


def test_the_command_line_knob(tmp_path, capsys):
    assert command.main(["--scenario", "healthy", "--out", str(tmp_path / "c"), "--kafka-version", "4.3",
                         "--partitions-per-broker", "1"]) == 0
    assert _versions(str(tmp_path / "c"))["REGISTER_BROKER_RECORD"] == {4}
    with pytest.raises(SystemExit):
        command.main(["--scenario", "healthy", "--out", str(tmp_path / "d"), "--kafka-version", "5.7"])
    assert "not a release the simulator models" in capsys.readouterr().err
