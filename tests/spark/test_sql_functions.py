"""jobs.reconcile.sql_functions against PySpark's own functions (the oracle): every construct the reconcile
modules build as SQL text must give the same values and the same types as the Column it replaces."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import Window
from pyspark.sql import functions as R

from jobs.reconcile import sql_functions as S

ROWS = [
    (1, "a", "x.y", 10, None, 2.5, True, ["p", None, "q"], {"k": "v"}, datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
     '{"a": {"b": 7}}'),
    (2, "b'c\\d", None, None, 4, -1.0, False, ["z"], {}, None, None),
    (3, None, "%_é", 3000000000, 0, None, None, None, None, datetime(2025, 6, 1, tzinfo=timezone.utc), "[1,2]"),
]
SCHEMA = ("id int, s string, t string, n long, m int, d double, b boolean, arr array<string>, mp map<string,string>, "
          "ts timestamp, js string")


def _expressions(F):
    """(label, Column) pairs built with module F: either PySpark's functions or sql_functions."""
    c = F.col
    return [
        ("col", c("s")), ("lit int", F.lit(5)), ("lit big", F.lit(1 << 40)), ("lit neg", F.lit(-7)),
        ("lit float", F.lit(1.5)), ("lit neg float", F.lit(-2.25)), ("lit str", F.lit("it's \\ a 'q' %_")),
        ("lit none", F.lit(None).cast("string")), ("lit bool", F.lit(True)), ("lit ts", F.lit(datetime(2026, 1, 1, tzinfo=timezone.utc))),
        ("eq", c("id") == 2), ("eq str", c("s") == "a"), ("ne", c("id") != 2), ("lt", c("n") < 100),
        ("le", c("id") <= 2), ("gt", c("d") > 0), ("ge", c("m") >= 0), ("and", (c("id") > 1) & c("b")),
        ("or", (c("id") == 1) | c("b").isNull()), ("not", ~c("b")), ("rand", True & c("b")),
        ("add", c("id") + 1), ("radd", 1 + c("id")), ("sub", c("n") - c("id")), ("rsub", 10 - c("id")),
        ("mul", c("d") * 2), ("div", c("n") / 7), ("rdiv", 1 / c("d")), ("mod", c("n") % 7), ("neg", -c("d")),
        ("eq null safe", c("m").eqNullSafe(F.lit(None))), ("is null", c("s").isNull()),
        ("is not null", c("t").isNotNull()), ("isin", c("id").isin(1, 3)), ("isin list", c("s").isin(["a", "z"])),
        ("isin empty", c("s").isin([])), ("rlike", c("t").rlike(r"^x\.")), ("startswith", c("t").startswith("x")),
        ("endswith", c("t").endswith("_é")), ("contains", c("t").contains(".")), ("getItem", c("arr").getItem(0)),
        ("getItem map", c("mp").getItem("k")), ("cast", c("n").cast("string")), ("cast type", c("id").cast("long")),
        ("cast map", F.create_map().cast("map<string,string>")), ("alias", (c("id") + 1).alias("x")),
        ("when", F.when(c("id") == 1, "one").when(c("id") == 2, F.lit("two")).otherwise(c("s"))),
        ("when no else", F.when(c("b"), F.lit(1))), ("when null", F.when(c("b"), None).otherwise(3)),
        ("coalesce", F.coalesce("t", c("s"), F.lit("-"))), ("greatest", F.greatest("id", "m")),
        ("least", F.least(c("id"), F.lit(2))), ("concat", F.concat(F.lit("["), c("s"), F.lit("]"))),
        ("concat_ws", F.concat_ws("|", c("id").cast("string"), "s", "t")),
        ("format_string", F.format_string("%dd %s", c("id"), c("s"))),
        ("format_number", F.format_number(c("d"), 1)), ("array", F.array(c("s"), F.lit("z"))),
        ("array list", F.array([c("s"), c("t")])), ("size", F.size("arr")), ("array_join", F.array_join("arr", ", ")),
        ("array_join null", F.array_join(c("arr"), ",", "?")), ("sort_array", F.sort_array(c("arr"), False)),
        ("slice", F.slice(c("arr"), 1, 2)), ("array_contains", F.array_contains(c("arr"), "q")),
        ("element_at", F.element_at(c("mp"), "k")), ("try_element_at", F.try_element_at(c("arr"), F.lit(5))),
        ("array_position", F.array_position(c("arr"), "q")), ("array_sort", F.array_sort(c("arr"))),
        ("array_distinct", F.array_distinct(c("arr"))), ("array_except", F.array_except(c("arr"), F.array(F.lit("p")))),
        ("flatten", F.flatten(F.array(c("arr"), c("arr")))), ("sequence", F.sequence(F.lit(1), c("id"))),
        ("regexp_extract", F.regexp_extract(c("t"), r"([^/\\.]+)[/\\]*$", 1)),
        ("regexp_replace", F.regexp_replace(c("t"), r"\.", "-")), ("get_json_object", F.get_json_object("js", "$.a.b")),
        ("date_format", F.date_format(c("ts"), "yyyy-MM-dd'T'HH:mm:ss'Z'")), ("unix_millis", F.unix_millis(c("ts"))),
        ("floor", F.floor(c("d"))), ("substring", F.substring(c("t"), 1, 2)),
        ("substring_index", F.substring_index(c("t"), ".", 1)), ("split", F.split(c("t"), r"\.")),
        ("lower", F.lower(c("s"))), ("length", F.length("t")), ("translate", F.translate(c("t"), ".", "/")),
        ("instr", F.instr(c("t"), ".")), ("hex", F.hex(c("id"))), ("conv", F.conv(F.lit("ff"), 16, 10)),
        ("sha2", F.sha2(F.concat_ws("|", c("s"), c("t")), 256)), ("unbase64", F.unbase64(F.lit("YWJj"))),
        ("create_map", F.create_map(F.lit("a"), c("s"), F.lit("b"), c("t").cast("string"))),
        ("struct", F.to_json(F.struct(c("id").alias("i"), c("s"), "t", (c("d") * 2).alias("dd")))),
        ("struct unnamed", F.to_json(F.struct(c("id") + 1))),
        ("transform", F.transform(c("arr"), lambda x: F.concat(x, F.lit("!")))),
        ("when mixed", F.when(c("id") == 1, "one").when(F.lit(datetime(2026, 1, 1)).isNotNull() & c("b"), "ts")
         .when(R.col("id") == 3, F.lit("real")).otherwise("else")),
        ("lit naive ts", F.lit(datetime(2026, 1, 1, 12, 30))),
        ("nested mix", F.when(c("s").isNull(), F.concat(F.lit("none "), c("id").cast("string")))
         .otherwise(F.coalesce(F.concat_ws("/", c("t"), c("s")), F.lit("")))),
    ]


@pytest.fixture(scope="module")
def frame(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def test_every_expression_gives_what_pyspark_gives(frame):
    real, text = _expressions(R), _expressions(S)
    assert [label for label, _ in real] == [label for label, _ in text]
    expected = frame.select(*[col.alias(f"c{i}") for i, (_, col) in enumerate(real)])
    got = frame.select(*[col.alias(f"c{i}") for i, (_, col) in enumerate(text)])
    labels = [label for label, _ in real]
    for i, (e, g) in enumerate(zip(expected.schema.fields, got.schema.fields, strict=True)):
        assert e.dataType == g.dataType, f"{labels[i]}: {e.dataType} != {g.dataType}"
    assert expected.collect() == got.collect()


def test_most_expressions_stay_sql_text():
    """The fast path is taken: only what has no SQL form here (an empty IN, an unnamed struct field, lambdas,
    a real Column in a CASE) builds a real Column."""
    real_columns = [label for label, col in _expressions(S) if not isinstance(col, S.SqlColumn)]
    assert real_columns == ["isin empty", "struct unnamed", "transform", "when mixed"]


def test_aggregates_windows_and_generators_give_what_pyspark_gives(frame):
    def agg(F):
        return frame.groupBy((F.col("id") > 1).alias("g")).agg(
            F.max("n").alias("max"), F.min(F.col("d")).alias("min"), F.sum("id").alias("sum"),
            F.count(F.lit(1)).alias("n"), F.count("*").alias("star"), F.max_by("s", "id").alias("max_by"),
            F.min_by(F.col("t"), F.col("id")).alias("min_by"), F.first("t", True).alias("first"), F.last("s").alias("last"),
            F.sort_array(F.collect_list("id")).alias("list"), F.size(F.collect_set("b")).alias("set"),
        ).orderBy("g")

    def win(F):
        w = Window.partitionBy(F.col("b").isNull()).orderBy(F.col("id").desc())
        return frame.select("id", F.row_number().over(w).alias("rn"), F.lag("s", 1).over(w).alias("lag"),
                            F.lead(F.col("id"), 1).over(w).alias("lead")).orderBy("id")

    def generate(F):
        return frame.select("id", F.explode(F.col("arr")).alias("e")).unionByName(
            frame.select("id", F.explode_outer("arr").alias("e"))).orderBy("id", "e")

    for build in (agg, win, generate):
        expected, got = build(R), build(S)
        assert expected.schema == got.schema
        assert expected.collect() == got.collect()


def test_joins_filters_and_when_chains_take_sql_text_columns(frame):
    other = frame.select(S.col("id").alias("oid"), (S.col("id") * 10).alias("ten"))
    joined = frame.join(other, S.col("id") == S.col("oid"), "left").filter(S.col("ten") > 10).select("id", "ten")
    assert sorted(r.id for r in joined.collect()) == [2, 3]
    for F in (R, S):   # as PySpark: no when() after otherwise()
        with pytest.raises(IllegalArgumentException, match="when"):
            F.when(F.col("b"), 1).otherwise(2).when(F.col("b"), 3)


def test_one_text_is_one_jvm_column_resolved_against_each_frame_that_reads_it(spark):
    """A text is parsed into a JVM Column once (``_parse`` caches it), and each DataFrame still resolves it
    against its own columns: the same ``id + 1`` is an int over an int column and a bigint over a bigint one."""
    text = "(`id` + 1) AS `next`"
    assert S._parse(text) is S._parse(text)
    ints = spark.createDataFrame([(1,), (2,)], "id int").select((S.col("id") + 1).alias("next"))
    longs = spark.createDataFrame([(10,)], "id bigint").select((S.col("id") + 1).alias("next"))
    assert (S.col("id") + 1).alias("next").sql == text
    assert ints.schema["next"].dataType.simpleString() == "int"
    assert longs.schema["next"].dataType.simpleString() == "bigint"
    assert [r.next for r in ints.collect()] == [2, 3] and [r.next for r in longs.collect()] == [11]
