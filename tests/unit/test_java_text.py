"""udfs.java_text against the JDK 17 vectors in tests/fixtures/jdk-oracle (Integer.parseInt, Pattern.split, readLine)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs.java_text import (
    decode_utf8_like_java,
    java_split,
    java_trim,
    number_format_message,
    parse_int,
    parse_long,
    read_lines,
)

ORACLE = json.loads((Path(__file__).parents[1] / "fixtures/jdk-oracle/jdk17-vectors.json").read_text())


@pytest.mark.parametrize("text,expected", ORACLE["numbers"], ids=range(len(ORACLE["numbers"])))
def test_parse_int_and_long_match_the_jdk(text, expected):
    for parse, key in ((parse_int, "int"), (parse_long, "long")):
        want = expected[key]
        if isinstance(want, dict):
            assert parse(text) is None
            assert number_format_message(text) == want["error"]
        else:
            assert parse(text) == int(want)


@pytest.mark.parametrize("regex,text,expected", ORACLE["split"], ids=range(len(ORACLE["split"])))
def test_java_split_matches_pattern_split(regex, text, expected):
    assert java_split(regex, text) == expected


@pytest.mark.parametrize("hex_bytes,expected", ORACLE["read_lines"], ids=range(len(ORACLE["read_lines"])))
def test_strict_utf8_readline_matches_buffered_reader(hex_bytes, expected):
    text, error = decode_utf8_like_java(bytes.fromhex(hex_bytes))
    if "error" in expected:
        assert text is None and "MalformedInputException: " + error == expected["error"]
    else:
        assert read_lines(text) == expected["lines"]


def test_bad_bytes_after_the_lines_needed_in_a_big_file_go_unnoticed():
    data = b"version: 0\ntopic_id: x\n" + b"a" * 9000 + b"\xff"
    assert decode_utf8_like_java(data, lines_needed=2)[1] is None
    assert decode_utf8_like_java(data)[1] == "Input length = 1"


def test_java_trim_strips_control_chars_not_unicode_spaces():
    assert java_trim("\x00\t 1 \x1f") == "1"
    assert java_trim("\u00a01\u00a0") == "\u00a01\u00a0"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_parse_int_never_raises_and_agrees_with_int_for_ascii(text):
    value = parse_int(text)
    if value is not None and text.isascii():
        assert value == int(text)
