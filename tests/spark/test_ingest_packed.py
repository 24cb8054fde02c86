"""A raw tree and its packed snapshots give identical bronze rows.

The raw tree is read through pyarrow.fs (a ``file://`` URI, as s3:// would be); the packs are written by
the collector from the same tree. Differences allowed by design: paths inside a pack are shown as
``<pack>!<member>``, and only the collector knows the host.
"""
from __future__ import annotations

import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from collector import CollectOptions, collect
from jobs.ingest import run_ingest
from tests.settings_from import settings_from

pytestmark = pytest.mark.spark

CAPTURE_TIME = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
PATH_COLUMNS = ("path", "log_dir", "source_file", "copy_id")
NOT_COMPARED = {"host", "run_id"}
_PACK_PREFIX = re.compile(r"^[^!]*!")


def _normalized(rows):
    out = []
    for row in rows:
        r = {k: v for k, v in row.items() if k not in NOT_COMPARED}
        for column in PATH_COLUMNS:
            if isinstance(r.get(column), str):
                r[column] = _PACK_PREFIX.sub("", r[column])
        out.append(tuple(sorted((k, repr(v)) for k, v in r.items())))
    return sorted(out)


@pytest.fixture(scope="module")
def raw_and_packed(spark, tmp_path_factory, devsample_dir: Path):
    base = tmp_path_factory.mktemp("packed")
    raw = base / "raw"
    for broker in sorted(devsample_dir.glob("broker-*")):
        shutil.copytree(broker, raw / broker.name)
    packs = base / "packs"
    packs.mkdir()
    cwd = Path.cwd()
    try:
        import os

        os.chdir(raw)  # the collector records log dirs as given: relative to the capture root, like raw ingest
        for broker in sorted(raw.glob("broker-*")):
            log_dirs = sorted(str(p.relative_to(raw)) for p in broker.iterdir())
            collect(log_dirs, str(packs / f"{broker.name}.jsonl.gz"), CollectOptions(include_metadata_log=True),
                    capture_time="2026-11-22T09:00:00Z", host=f"host-{broker.name}")
    finally:
        os.chdir(cwd)
    base_conf = ["ingest.read_data_segment_headers=false"]  # a pack holds no data segments
    results = {}
    for name, root, extra in (("raw", raw.as_uri(), []), ("packed", str(packs), []),
                              ("packed_cut", str(packs), ["ingest.metadata_chunk_bytes=600"])):
        s = settings_from(*base_conf, *extra)
        result = run_ingest(spark, s.ingest, None, [root], "cap", name, CAPTURE_TIME, execution=s.spark)
        results[name] = {t: [r.asDict() for r in df.collect()] for t, df in result.tables.items()}
        result.release()
    return results


@pytest.mark.parametrize("table", ["bronze_log_dirs", "bronze_dir_entries", "bronze_metadata_records",
                                   "bronze_metadata_copies", "bronze_producer_states", "bronze_ingest_files",
                                   "bronze_leader_epochs"])
def test_raw_tree_and_packs_give_identical_rows(raw_and_packed, table):
    raw = raw_and_packed["raw"][table]
    packed = raw_and_packed["packed"][table]
    if table == "bronze_ingest_files":  # the packs themselves are input files too
        pack_rows = [r for r in packed if r["file_kind"] == "packed_snapshot"]
        assert len(pack_rows) == 4 and all(r["status"] == "ok" and r["rows_produced"] > 0 for r in pack_rows)
        packed = [r for r in packed if r["file_kind"] != "packed_snapshot"]
    assert raw, table
    assert _normalized(packed) == _normalized(raw)


@pytest.mark.parametrize("table", ["bronze_metadata_records", "bronze_metadata_batches", "bronze_ingest_files"])
def test_pack_members_decoded_in_parts_give_the_same_rows(raw_and_packed, table):
    """Cut into 600-byte parts, each part's task streams the pack for its member: nothing lost or doubled."""
    cut, whole = raw_and_packed["packed_cut"][table], raw_and_packed["packed"][table]
    assert whole and _normalized(cut) == _normalized(whole)


def test_pack_rows_name_the_pack_and_the_host(raw_and_packed):
    log_dirs = raw_and_packed["packed"]["bronze_log_dirs"]
    assert sorted(r["log_dir"] for r in log_dirs)[0] == "broker-101.jsonl.gz!broker-101/kafka-logs"
    assert {r["host"] for r in log_dirs} == {"host-broker-101", "host-broker-102", "host-broker-103", "host-broker-104"}
    assert {r["host"] for r in raw_and_packed["raw"]["bronze_log_dirs"]} == {None}
