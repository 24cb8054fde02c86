"""``java.util.Properties.load`` exactly as the JDK reads it (tested against JDK 17 vectors): the one parser,
used by the collector for meta.properties and by ingest (udfs.properties_files)."""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import Dict, Iterable, Iterator, List, Tuple


def parse_properties(text: str) -> Dict[str, str]:
    """``java.util.Properties.load`` of ``text``: the keys and values up to a malformed ``\\uxxxx`` (where Java
    stops with IllegalArgumentException)."""
    result: Dict[str, str] = {}
    try:
        for _, key, value in java_properties(text):
            result[key] = value
    except MalformedProperty:
        pass
    return result


class MalformedProperty(ValueError):
    """``Malformed \\uxxxx encoding.``: Java's only ``Properties.load`` failure; ``line`` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def java_properties(text: str) -> Iterator[Tuple[int, str, str]]:
    """``Properties.load(Reader)`` as the JDK reads it (tested against JDK 17 vectors in tests/fixtures/jdk-oracle):
    (1-based line, key, value) per logical line; raises :class:`MalformedProperty` where Java throws."""
    for number, logical in _logical_lines(text):
        key_end, value_start = _split_key_value(logical)
        try:
            yield number, _load_convert(logical[:key_end]), _load_convert(logical[value_start:])
        except ValueError as exc:
            raise MalformedProperty(str(exc), number) from None


def _logical_lines(text: str) -> Iterable[Tuple[int, str]]:
    """``Properties.LineReader.readLine``: yields (1-based line of the first char, logical line)."""
    line_starts = [0] + [m.end() for m in _NATURAL_EOL.finditer(text)]
    pos, end = 0, len(text)
    while True:
        buf: List[str] = []
        first_pos = -1
        skip_ws = True
        appended_line_begin = False
        preceding_backslash = False
        while True:
            if pos >= end:
                if buf:
                    yield bisect_right(line_starts, first_pos), "".join(buf[:-1] if preceding_backslash else buf)
                return
            c = text[pos]
            pos += 1
            if skip_ws:
                if c in " \t\f":
                    continue
                if not appended_line_begin and c in "\r\n":
                    continue
                skip_ws = False
                appended_line_begin = False
            if not buf and c in "#!":  # a comment: skip to the end of the natural line
                while pos < end and text[pos] not in "\r\n":
                    pos += 1
                skip_ws = True
                continue
            if c not in "\r\n":
                if not buf:
                    first_pos = pos - 1
                buf.append(c)
                preceding_backslash = (not preceding_backslash) if c == "\\" else False
                continue
            if not buf:  # an empty remainder after a continuation
                skip_ws = True
                continue
            if pos >= end:
                yield bisect_right(line_starts, first_pos), "".join(buf[:-1] if preceding_backslash else buf)
                return
            if preceding_backslash:  # continuation: drop the backslash, skip the next line's indent
                buf.pop()
                skip_ws = True
                appended_line_begin = True
                preceding_backslash = False
                if c == "\r" and text[pos] == "\n":
                    pos += 1
                continue
            yield bisect_right(line_starts, first_pos), "".join(buf)
            break


_NATURAL_EOL = re.compile(r"\r\n|\r|\n")


def _split_key_value(line: str) -> Tuple[int, int]:
    """``Properties.load0``: key ends at the first unescaped ``=``, ``:`` or whitespace; one separator and the
    whitespace around it are skipped before the value."""
    limit = len(line)
    key_len = 0
    value_start = limit
    has_sep = False
    preceding_backslash = False
    while key_len < limit:
        c = line[key_len]
        if c in "=:" and not preceding_backslash:
            value_start = key_len + 1
            has_sep = True
            break
        if c in " \t\f" and not preceding_backslash:
            value_start = key_len + 1
            break
        preceding_backslash = (not preceding_backslash) if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in " \t\f":
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return key_len, value_start


_HEX = "0123456789abcdefABCDEF"
_SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}


def _load_convert(raw: str) -> str:
    if "\\" not in raw:
        return raw
    out: List[str] = []
    i, end = 0, len(raw)
    while i < end:
        c = raw[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        c = raw[i] if i < end else ""  # LineReader never leaves a lone trailing backslash
        i += 1
        if c == "u":
            digits = raw[i:i + 4]
            if len(digits) < 4 or any(d not in _HEX for d in digits):
                raise ValueError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(c, c))
    return "".join(out)
