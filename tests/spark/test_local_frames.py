"""local_frame: driver-held rows as a JVM local relation, read without a Spark job, values exactly as given."""
from __future__ import annotations

import pytest

from jobs.engine import local_frames
from jobs.engine.local_frames import local_frame

pytestmark = pytest.mark.spark

DDL = "log_dir string, broker_id int, offset long, ok boolean, tags map<string,string>"
AWKWARD = ["it's", "back\\slash", "two\nlines", "tab\there", "üñí €", "'; DROP TABLE x; --", "\\'", ""]


def _jobs(spark) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


def test_rows_come_back_exactly_and_reading_them_runs_no_job(spark):
    rows = [(text, i, 2**40 + i, i % 2 == 0, None) for i, text in enumerate(AWKWARD)] + [(None, None, None, None, None)]
    df = local_frame(spark, rows, DDL)
    assert df.schema.simpleString() == "struct<log_dir:string,broker_id:int,offset:bigint,ok:boolean," \
                                       "tags:map<string,string>>"
    before = _jobs(spark)
    got = [tuple(r) for r in df.collect()]
    assert _jobs(spark) == before  # a local relation: no task unpickles the rows again
    assert got == rows


def test_an_empty_frame_has_the_schema_and_no_rows_and_prunes_what_it_feeds(spark):
    empty = local_frame(spark, [], DDL)
    assert [f.name for f in empty.schema.fields] == ["log_dir", "broker_id", "offset", "ok", "tags"]
    other = local_frame(spark, [("a", 1, 1, True, None)], DDL)
    joined = other.join(empty, "log_dir")
    before = _jobs(spark)
    assert joined.collect() == [] and empty.collect() == []
    assert _jobs(spark) == before
    assert "LocalRelation <empty>" in joined._jdf.queryExecution().optimizedPlan().toString()


def test_timestamps_and_doubles_come_back_as_create_dataframe_gives_them_in_any_session_time_zone(spark):
    """Datetimes (aware in any offset, naive as local time, before 1970) and finite doubles are rendered as text
    the column's cast reads back exactly: the rows equal createDataFrame's, whatever the session's time zone."""
    import datetime as dt

    utc = dt.timezone.utc
    rows = [(dt.datetime(2026, 11, 27, 10, 0, 0, 123456, tzinfo=utc), 1.5),
            (dt.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=utc), -2.5e-300),
            (dt.datetime(2026, 3, 29, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))), 0.1 + 0.2),
            (dt.datetime(2024, 2, 29, 12, 0, 0), 2.0 ** 60),
            (None, None)]
    ddl = "at timestamp, ratio double"
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        for tz in ("UTC", "America/New_York", "Asia/Kolkata"):
            spark.conf.set("spark.sql.session.timeZone", tz)
            df = local_frame(spark, rows, ddl)
            before = _jobs(spark)
            got = [tuple(r) for r in df.collect()]
            assert _jobs(spark) == before, tz  # a local relation, as for text and integers
            assert got == [tuple(r) for r in spark.createDataFrame(rows, ddl).collect()], tz
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_rows_it_cannot_render_or_too_many_go_through_create_dataframe(spark, monkeypatch):
    df = local_frame(spark, [("a", float("nan"))], "name string, ratio double")  # NaN: no literal casts to it
    before = _jobs(spark)
    got = [tuple(r) for r in df.collect()]
    assert got[0][0] == "a" and got[0][1] != got[0][1]
    assert _jobs(spark) > before  # parallelized rows, read by a job
    monkeypatch.setattr(local_frames, "LOCAL_ROWS_LIMIT", 3)
    many = [(f"d{i}", i, i, True, None) for i in range(5)]
    df = local_frame(spark, many, DDL)
    before = _jobs(spark)
    assert sorted(tuple(r) for r in df.collect()) == many
    assert _jobs(spark) > before


def test_a_row_of_the_wrong_width_is_refused(spark):
    with pytest.raises(ValueError, match="every row needs 5 values"):
        local_frame(spark, [("a", 1)], DDL)


def test_is_empty_local_knows_what_the_optimizer_knows(spark):
    """An empty local frame, and what it feeds, are known empty while planning; what Spark would have to run
    to know (a filter over a range) is not."""
    empty = local_frame(spark, [], DDL)
    other = local_frame(spark, [("a", 1, 1, True, None)], DDL)
    before = _jobs(spark)
    assert local_frames.is_empty_local(empty)
    assert local_frames.is_empty_local(other.join(empty, "log_dir").select("log_dir"))
    assert not local_frames.is_empty_local(other)
    assert local_frames.is_empty_local(other.where("broker_id = 2"))  # local rows are filtered while planning
    assert not local_frames.is_empty_local(spark.range(3).where("id > 5"))  # empty, but only a job can tell
    assert _jobs(spark) == before  # planning only
