"""Spark-free parts of the table layer: partition folder decoding, footer stats, SQL text, merge clauses."""
import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.tables import merge_clauses as mc
from jobs.tables.parquet_files import (
    FileStats,
    file_schema_problems,
    footer_stats,
    partition_dir,
    partition_values_from_dir,
    unescape_path_name,
)
from jobs.tables.spec import TableSpec, cols, ddl_arrow_schema, ddl_fields
from jobs.tables.table_predicates import key_condition, partition_value_text, slice_predicate, sql_literal

UTC = dt.timezone.utc
SPEC = TableSpec(
    name="t_pure", layer="bronze", keys=("capture_id", "k"), partition_by=("capture_id",),
    columns=cols(("capture_id", "string"), ("k", "long"), ("name", "string"), ("ts", "timestamp"),
                 ("ratio", "double"), ("flag", "boolean"), ("ids", "array<int>")),
)


# --------------------------------------------------------------------------- partition folders

@pytest.mark.parametrize("folder, value", [
    ("capture_id=plain", "plain"),
    ("capture_id=a%3Ab%2Fc d%25e", "a:b/c d%e"),            # what Spark wrote for 'a:b/c d%e' (measured)
    ("capture_id=x%7By}%2A%3F%5Bz%5D", "x{y}*?[z]"),        # '}' is not escaped by Spark, '{' is
    ("capture_id=ünï", "ünï"),                              # non-ASCII stays raw
    ("capture_id=__HIVE_DEFAULT_PARTITION__", None),
])
def test_spark_partition_folders_decode_to_the_value(folder, value):
    assert partition_values_from_dir(folder, ("capture_id",)) == {"capture_id": value}


def test_partition_folder_round_trips_through_sparks_escaping():
    for value in ["a:b/c d%e", "x{y}*?[z]", "q'\"#^=\\", "tab\there"]:
        folder = partition_dir({"capture_id": value}, ("capture_id",))
        assert "/" not in folder.split("=", 1)[1]
        assert partition_values_from_dir(folder, ("capture_id",)) == {"capture_id": value}


def test_unescape_only_touches_percent_hex_pairs():
    assert unescape_path_name("100%25 %zz %4") == "100% %zz %4"


@pytest.mark.parametrize("folder", ["", "other=1", "capture_id", "capture_id=a/extra=b"])
def test_folders_that_are_not_the_partitions_are_rejected(folder):
    with pytest.raises(ValueError, match="partition"):
        partition_values_from_dir(folder, ("capture_id",))


def test_unpartitioned_files_sit_at_the_root():
    assert partition_values_from_dir("", ()) == {}
    with pytest.raises(ValueError):
        partition_values_from_dir("capture_id=x", ())


# --------------------------------------------------------------------------- footer stats

def _write_file(path, row_group_size=None):
    table = pa.table({
        "k": pa.array([5, 1, None, 9], pa.int64()),
        "name": pa.array(["b", "a" * 40, None, "c"], pa.string()),
        "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1500, tzinfo=UTC), None,
                        dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), None], pa.timestamp("us", tz="UTC")),
        "ratio": pa.array([1.0, float("nan"), None, 2.0], pa.float64()),
        "flag": pa.array([True, None, False, True]),
        "ids": pa.array([[1], None, [], [2, None]], pa.list_(pa.int32())),
    })
    pq.write_table(table, path, row_group_size=row_group_size)
    return pq.read_metadata(path)


def test_footer_stats_cover_plain_columns_and_skip_nested_and_partition_columns(tmp_path):
    stats = footer_stats(_write_file(tmp_path / "f.parquet", row_group_size=2), SPEC)
    assert stats.num_records == 4
    assert stats.min_values == {"k": 1, "name": "a" * 40, "ts": dt.datetime(2024, 1, 1, 0, 0, 0, 1500, tzinfo=UTC)}
    assert stats.max_values == {"k": 9, "name": "c", "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)}
    assert stats.null_counts == {"k": 1, "name": 1, "ts": 2, "ratio": 1, "flag": 1}


def test_delta_stats_widen_bounds_and_never_narrow_them(tmp_path):
    stats = footer_stats(_write_file(tmp_path / "f.parquet"), SPEC)
    assert json.loads(stats.delta_json()) == {
        "numRecords": 4,
        # timestamps: min floored, max ceiled to whole milliseconds
        "minValues": {"k": 1, "name": "a" * 32, "ts": "2024-01-01T00:00:00.001Z"},
        "maxValues": {"k": 9, "name": "c", "ts": "2024-01-02T03:04:05.124Z"},
        "nullCount": {"k": 1, "name": 1, "ts": 2, "ratio": 1, "flag": 1},
    }


def test_long_text_max_is_dropped_rather_than_cut():
    stats = FileStats(1, {"name": "z" * 33}, {"name": "z" * 33}, {"name": 0}, {"name": "string"})
    assert json.loads(stats.delta_json())["maxValues"] == {}
    assert json.loads(stats.delta_json())["minValues"] == {"name": "z" * 32}


def test_all_null_row_group_does_not_hide_the_others_bounds(tmp_path):
    table = pa.table({"k": pa.array([None, None, 3, 4], pa.int64())})
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=2)
    spec = TableSpec(name="t_k", layer="bronze", keys=("k",), columns=cols(("k", "long")))
    stats = footer_stats(pq.read_metadata(tmp_path / "f.parquet"), spec)
    assert (stats.min_values, stats.max_values, stats.null_counts) == ({"k": 3}, {"k": 4}, {"k": 2})


def test_file_schema_check_catches_int96_style_nanosecond_timestamps():
    spec = TableSpec(name="t_ts", layer="bronze", keys=("k",), columns=cols(("k", "long"), ("ts", "timestamp")))
    good = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC"))])
    bad = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("ns"))])
    assert file_schema_problems(good, spec) == []
    assert file_schema_problems(bad, spec) == [
        "column 'ts': file has timestamp[ns], table needs timestamp[us, tz=UTC]"]


# --------------------------------------------------------------------------- SQL text

@pytest.mark.parametrize("value, literal", [
    ("c-1", "'c-1'"), ("it's", "'it\\'s'"), ("back\\slash", "'back\\\\slash'"),
    (7, "7"), (True, "true"), (None, "NULL"),
])
def test_sql_literals_are_escaped(value, literal):
    assert sql_literal(value) == literal


def test_sql_literal_refuses_other_types():
    with pytest.raises(TypeError, match="float"):
        sql_literal(1.5)


def test_slice_predicate_and_key_condition():
    assert slice_predicate({"capture_id": "c'1", "broker_id": None}) == \
        "`capture_id` = 'c\\'1' AND `broker_id` IS NULL"
    assert key_condition(["capture_id", "k"]) == "t.`capture_id` <=> s.`capture_id` AND t.`k` <=> s.`k`"
    with pytest.raises(ValueError, match="plain identifier"):
        slice_predicate({"a` OR 1=1 --": "x"})
    with pytest.raises(ValueError):
        slice_predicate({})


def test_partition_values_are_spelled_like_the_delta_log():
    assert [partition_value_text(v) for v in ("x", 3, True, None)] == ["x", "3", "true", None]


# --------------------------------------------------------------------------- merge clauses

def test_only_the_last_clause_of_a_kind_may_omit_its_condition():
    first = mc.MergeClause(mc.MATCHED, mc.UPDATE)
    second = mc.MergeClause(mc.MATCHED, mc.DELETE, "t.k > 1")
    with pytest.raises(ValueError, match="only the last matched clause"):
        mc.check_clauses([first, second], ["k"])
    assert mc.check_clauses([second, first], ["k"]) == (second, first)


def test_clause_validation_names_the_problem():
    with pytest.raises(ValueError, match="no clauses"):
        mc.check_clauses([], ["k"])
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['nope'\]"):
        mc.check_clauses([mc.MergeClause(mc.MATCHED, mc.UPDATE, None, {"nope": "1"})], ["k"])
    with pytest.raises(ValueError, match="needs set="):
        mc.MergeClause(mc.NOT_MATCHED_BY_SOURCE, mc.UPDATE)
    with pytest.raises(ValueError, match="not 'delete'"):
        mc.MergeClause(mc.NOT_MATCHED, mc.DELETE)
    with pytest.raises(TypeError, match="condition"):
        mc.MergeClause(mc.MATCHED, mc.DELETE, condition=True)


# --------------------------------------------------------------------------- stale staging folders

def test_staging_folder_names_give_the_time_their_write_began():
    from jobs.tables.backend_embedded import _write_id, staging_for, staging_started

    assert staging_started("20261127T171034-9ef47dac3585") == dt.datetime(2026, 11, 27, 17, 10, 34, tzinfo=UTC)
    assert staging_started("direct-20200101T000000-abc") == dt.datetime(2020, 1, 1, tzinfo=UTC)
    before = dt.datetime.now(UTC).replace(microsecond=0)
    assert before <= staging_started(_write_id()) <= dt.datetime.now(UTC)
    direct = staging_for(SPEC, "/tables/t_pure", "capture_id=c").staging.rsplit("/", 1)[1]
    assert before <= staging_started(direct) <= dt.datetime.now(UTC)
    for foreign in ("notes", "20261127T171034", "2026-11-27T17:10:34-x", "20261327T171034-x", "direct-", ""):
        assert staging_started(foreign) is None, foreign


def test_sweep_deletes_only_our_staging_folders_older_than_the_cutoff(tmp_path):
    from jobs.tables.backend_embedded import sweep_staging

    staging = tmp_path / "t_pure" / "_kr_staging"
    names = {"old": "20200101T000000-aaaaaaaaaaaa", "old_direct": "direct-20200102T000000-bbbbbbbbbbbb",
             "new": "20300101T000000-cccccccccccc", "foreign": "keep-me"}
    for name in names.values():
        (staging / name / "capture_id=c").mkdir(parents=True)
        (staging / name / "capture_id=c" / "part-00000.parquet").write_bytes(b"x")
    (staging / "20200101T000000-dddddddddddd").write_bytes(b"a file, not a folder")
    cutoff = dt.datetime(2026, 1, 1, tzinfo=UTC)
    assert sorted(sweep_staging(str(tmp_path / "t_pure"), cutoff)) == sorted([names["old"], names["old_direct"]])
    assert sorted(p.name for p in staging.iterdir()) == sorted(
        [names["new"], names["foreign"], "20200101T000000-dddddddddddd"])
    assert sweep_staging(str(tmp_path / "missing_table"), cutoff) == []


def test_store_sweeps_every_table_and_zero_hours_never_sweeps(tmp_path):
    from jobs.tables.backend_embedded import EmbeddedBackend
    from jobs.tables.delta_store import DeltaStore, TableLocator

    other = TableSpec(name="t_other", layer="bronze", keys=("k",), columns=cols(("k", "long")))
    store = DeltaStore(None, EmbeddedBackend(None), TableLocator(str(tmp_path)), {"t_pure": SPEC, "t_other": other})
    stale = dt.datetime.now(UTC) - dt.timedelta(hours=30)
    fresh = dt.datetime.now(UTC) - dt.timedelta(hours=1)
    for table, moment in (("t_pure", stale), ("t_pure", fresh), ("t_other", stale)):
        (tmp_path / table / "_kr_staging" / f"{moment:%Y%m%dT%H%M%S}-{table}").mkdir(parents=True)
    assert store.sweep_staging(0) == {}
    assert len(list((tmp_path / "t_pure" / "_kr_staging").iterdir())) == 2
    swept = store.sweep_staging(24)
    assert swept == {"t_pure": [f"{stale:%Y%m%dT%H%M%S}-t_pure"], "t_other": [f"{stale:%Y%m%dT%H%M%S}-t_other"]}
    assert [p.name for p in (tmp_path / "t_pure" / "_kr_staging").iterdir()] == [f"{fresh:%Y%m%dT%H%M%S}-t_pure"]


def test_a_short_ddl_text_reads_as_names_and_types_and_as_the_arrow_schema_spark_expects():
    import pyarrow as pa

    ddl = "copy_id string, ends array<long>,  broker int"
    assert ddl_fields(ddl) == (("copy_id", "string"), ("ends", "array<long>"), ("broker", "int"))
    assert ddl_arrow_schema(ddl) == pa.schema([("copy_id", pa.string()), ("ends", pa.list_(pa.int64())),
                                               ("broker", pa.int32())])
    with pytest.raises(ValueError, match="unknown column type 'float'"):
        ddl_arrow_schema("x float")
