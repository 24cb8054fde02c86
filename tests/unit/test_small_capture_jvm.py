"""A small capture's JVM flags are chosen before the JVM starts, from what discovery can size cheaply."""
from __future__ import annotations

import os

import pytest

from jobs.config import ConfigError
from jobs.ingest.discover import WorkUnit, capture_bytes_below, discover
from jobs.spark_session import jvm_options_for
from tests.settings_from import settings_from

DEVSAMPLE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "kafka-devsample")


def _spark(**values):
    return settings_from(spark={"jvm_options": "-XX:+UseParallelGC", "small_capture_jvm_options": "-XX:Small",
                                "small_capture_jvm_below_bytes": 1000, **values}).spark


def test_the_small_flags_are_added_only_below_the_limit_and_never_for_an_unknown_size():
    sp = _spark()
    assert jvm_options_for(sp, 999) == "-XX:+UseParallelGC -XX:Small"
    assert jvm_options_for(sp, 0) == "-XX:+UseParallelGC -XX:Small"
    assert jvm_options_for(sp, 1000) == "-XX:+UseParallelGC"
    assert jvm_options_for(sp, None) == "-XX:+UseParallelGC"
    assert jvm_options_for(_spark(small_capture_jvm_options=" "), 1) == "-XX:+UseParallelGC"
    assert jvm_options_for(_spark(small_capture_jvm_below_bytes=0), 0) == "-XX:+UseParallelGC"


def test_the_shipped_flags_give_a_small_capture_the_client_compiler_only():
    sp = settings_from().spark
    assert "-XX:TieredStopAtLevel=1" in jvm_options_for(sp, 10 * 2**20).split()
    assert "-XX:TieredStopAtLevel=1" not in jvm_options_for(sp, 6 * 2**30).split()


def test_a_negative_limit_is_a_configuration_error():
    with pytest.raises(ConfigError, match="small_capture_jvm_below_bytes"):
        _spark(small_capture_jvm_below_bytes=-1)


def _tree(root, files):
    for rel, size in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"x" * size)


def test_packs_files_and_a_log_dirs_metadata_log_count_their_size_data_segments_do_not(tmp_path):
    _tree(tmp_path / "b1", {"meta.properties": 10, "__cluster_metadata-0/00000000000000000000.log": 300,
                            "__cluster_metadata-0/00000000000000000000.index": 90})
    with open(tmp_path / "b1" / "meta.properties", "w") as f:
        f.write("node.id=1\n")
    os.makedirs(tmp_path / "b1" / "t-0")
    with open(tmp_path / "b1" / "t-0" / "00000000000000000000.log", "wb") as f:
        f.truncate(5 * 2**30)  # a sparse 5 GiB segment: read for batch headers only, so not counted
    _tree(tmp_path, {"b2.jsonl.gz": 400, "dump.txt": 50})
    units = discover([str(tmp_path)])
    assert sorted(u.kind for u in units) == ["file", "log_dir", "pack"]
    assert capture_bytes_below(units, 10_000) == 300 + 90 + 400 + 50
    assert capture_bytes_below(units, 840) is None  # the limit reached: large
    assert capture_bytes_below(units, 841) == 840
    assert capture_bytes_below(units, 10_000, max_entries=3) is None  # too many entries to count: large


def test_links_inside_a_log_dir_are_not_followed(tmp_path):
    _tree(tmp_path / "outside", {"big.log": 5000})
    _tree(tmp_path / "cap" / "b1", {"meta.properties": 10, "__cluster_metadata-0/0.log": 20})
    os.symlink(tmp_path / "outside", tmp_path / "cap" / "b1" / "__cluster_metadata-0" / "elsewhere")
    units = discover([str(tmp_path / "cap")])
    assert capture_bytes_below(units, 10_000) == 20


def test_a_remote_log_dir_is_not_walked_and_counts_as_large():
    units = [WorkUnit("pack", "s3://b/cap", "b/cap/p.jsonl.gz", "p.jsonl.gz", size=10),
             WorkUnit("log_dir", "s3://b/cap", "b/cap/b1", "b1")]
    assert capture_bytes_below(units[:1], 1000) == 10
    assert capture_bytes_below(units, 1000) is None


def test_the_real_devsample_is_a_small_capture():
    size = capture_bytes_below(discover([DEVSAMPLE]), settings_from().spark.small_capture_jvm_below_bytes)
    assert size is not None and size > 100_000  # its metadata-log copies were counted
