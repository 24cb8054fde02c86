"""The few JDK text rules Kafka's file readers lean on, so our parsers accept and reject exactly what Kafka does.

Kafka reads its small files with ``BufferedReader.readLine`` (strict UTF-8), splits lines with
``Pattern.split`` and parses numbers with ``Integer.parseInt`` / ``Long.parseLong``. Python's look-alikes
differ in ways that matter for corrupt input (``int(" 1")`` works, ``str.splitlines`` splits on ``\\x0b``,
``re`` ``\\s`` is Unicode-aware), so each rule is spelled out here once. Checked against OpenJDK 17
(vectors in tests/fixtures/jdk-oracle/).
"""
from __future__ import annotations

import codecs
import re
import unicodedata
from typing import List, Optional, Pattern, Tuple, Union

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

# java.util.regex's \s without UNICODE_CHARACTER_CLASS is [ \t\n\x0B\f\r]; Python's re.ASCII \s is the same set.
JAVA_WHITESPACE = " \t\n\x0b\f\r"


def java_regex(pattern: str) -> Pattern[str]:
    """Compile a pattern with Java's default (ASCII) meaning of ``\\s``, ``\\S``, ``\\d``, ``\\w``."""
    return re.compile(pattern, re.ASCII)


def _java_digit(ch: str) -> int:
    """``Character.digit(char, 10)``: a BMP decimal digit (category Nd) or -1; astral digits are two chars in Java."""
    if ord(ch) > 0xFFFF:
        return -1
    return unicodedata.decimal(ch, -1)


def _parse_java_integer(text: str, lo: int, hi: int) -> Optional[int]:
    if text is None or text == "":
        return None
    sign = 1
    body = text
    if text[0] in "+-":
        if len(text) == 1:
            return None
        sign = -1 if text[0] == "-" else 1
        body = text[1:]
    value = 0
    for ch in body:
        digit = _java_digit(ch)
        if digit < 0:
            return None
        value = value * 10 + digit
        if value > hi + 1:  # stop early on absurdly long input; exact bound checked below
            return None
    value *= sign
    if value < lo or value > hi:
        return None
    return value


def parse_int(text: Optional[str]) -> Optional[int]:
    """``Integer.parseInt(text)``: the value, or None where Java throws ``NumberFormatException``.

    Accepts an optional ``+``/``-`` and any BMP Unicode decimal digits; no whitespace, no underscores.
    """
    return _parse_java_integer(text, INT_MIN, INT_MAX)


def parse_long(text: Optional[str]) -> Optional[int]:
    """``Long.parseLong(text)``: like :func:`parse_int` with the 64-bit range."""
    return _parse_java_integer(text, LONG_MIN, LONG_MAX)


def number_format_message(text: Optional[str]) -> str:
    """The message of the ``NumberFormatException`` that ``parseInt``/``parseLong`` throw for ``text``."""
    if text is None:
        return "Cannot parse null string"
    return f'For input string: "{text}"'


def java_split(pattern: Union[str, Pattern[str]], text: str) -> List[str]:
    """``Pattern.split(text)`` (limit 0): like ``re.split`` but trailing empty strings are dropped and no
    match means ``[text]``. A leading empty string is kept unless the match at 0 is zero-width."""
    regex = java_regex(pattern) if isinstance(pattern, str) else pattern
    parts: List[str] = []
    index = 0
    matched = False
    for m in regex.finditer(text):
        if index == 0 and m.start() == 0 and m.end() == 0:
            continue
        matched = True
        parts.append(text[index:m.start()])
        index = m.end()
    if not matched:
        return [text]
    parts.append(text[index:])
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_trim(text: str) -> str:
    """``String.trim()``: strips every char <= U+0020 at both ends (not Unicode spaces)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def read_lines(text: str) -> List[str]:
    """All lines as ``BufferedReader.readLine`` returns them: split on ``\\n``, ``\\r`` or ``\\r\\n`` only; a
    final terminator does not start an empty line."""
    if text == "":
        return []
    lines = _LINE_BREAK.split(text)
    if text.endswith(("\n", "\r")):
        lines.pop()
    return lines


def utf16_len(text: str) -> int:
    """``String.length()``: UTF-16 code units (astral characters count 2)."""
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def utf16_prefix(text: str, units: int) -> str:
    """``text.substring(0, units)`` counted in UTF-16 units (may end in a lone high surrogate, as in Java)."""
    raw = text.encode("utf-16-le", "surrogatepass")[: 2 * units]
    return raw.decode("utf-16-le", "surrogatepass")


def latin1_bytes(text: str) -> bytes:
    """``text.getBytes(ISO_8859_1)``: chars above U+00FF become ``?`` (one per code point)."""
    return bytes(ord(c) if ord(c) <= 0xFF else 0x3F for c in text)


# InputStreamReader decodes in 8 KiB byte chunks; a bad byte is reported when the chunk holding it is decoded.
_DECODER_CHUNK = 8192


def _malformed_length(exc: UnicodeDecodeError) -> int:
    """Java's malformed-input length: as Python's, except an encoded surrogate (ED A0..BF xx) counts 3."""
    bad = exc.object[exc.start:exc.start + 3]
    if len(bad) == 3 and bad[0] == 0xED and 0xA0 <= bad[1] <= 0xBF and 0x80 <= bad[2] <= 0xBF:
        return 3
    return max(exc.end - exc.start, 1)


def decode_utf8_like_java(data: bytes, lines_needed: Optional[int] = None) -> Tuple[Optional[str], Optional[str]]:
    """Decode bytes the way ``Files.newBufferedReader(path, UTF_8)`` does: strictly, chunk by chunk.

    Returns ``(text, None)`` or ``(None, "Input length = N")`` - the ``MalformedInputException`` message Java
    raises. With ``lines_needed`` set, decoding stops (like the reader) once that many lines are complete, so a
    bad byte beyond the first chunks of a big file goes unnoticed, as it does in Kafka.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    out: List[str] = []
    for start in range(0, max(len(data), 1), _DECODER_CHUNK):
        chunk = data[start:start + _DECODER_CHUNK]
        final = start + _DECODER_CHUNK >= len(data)
        try:
            out.append(decoder.decode(chunk, final=final))
        except UnicodeDecodeError as exc:
            return None, f"Input length = {_malformed_length(exc)}"
        if lines_needed is not None and not final:
            text = "".join(out)
            if len(_LINE_BREAK.findall(text)) >= lines_needed:
                return text, None
    return "".join(out), None
