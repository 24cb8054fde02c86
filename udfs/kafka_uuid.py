"""Kafka's ``Uuid``: 16 bytes shown as 22 characters of unpadded URL-safe base64.

Rules from clients/src/main/java/org/apache/kafka/common/Uuid.java (apache/kafka@1eb7644) and the JDK
``Base64.getUrlDecoder()`` it calls (OpenJDK 17, checked with tests/fixtures/jdk-oracle/):

- ``toString``: ``Base64.getUrlEncoder().withoutPadding()`` of MSB then LSB, big-endian: always 22 chars.
- ``fromString`` raises ``IllegalArgumentException`` when the string is longer than 24 UTF-16 units, when the
  JDK decoder rejects it, or when it does not decode to exactly 16 bytes. The decoder works on
  ``getBytes(ISO_8859_1)``, so a char above U+00FF is seen as ``?``; "Illegal base64 character" prints the
  offending *signed* byte in hex (``-3d`` for U+00C3). Padding is accepted only where it completes a 4-char
  unit (``...==`` at length 24); the unused low 4 bits of the 22nd char are ignored, so
  ``AAAAAAAAAAAAAAAAAAAAAB`` decodes to ZERO.
- ``randomUuid`` draws a type-4 UUID again while it is ZERO/ONE or its string starts with ``-``.
"""
from __future__ import annotations

import base64
import re
import uuid as _std_uuid
from dataclasses import dataclass
from typing import Optional

from .java_text import latin1_bytes, utf16_len, utf16_prefix

ZERO = bytes(16)
ONE = bytes(15) + b"\x01"
METADATA_TOPIC_ID = ONE
ZERO_STR = "AAAAAAAAAAAAAAAAAAAAAA"
ONE_STR = "AAAAAAAAAAAAAAAAAAAAAQ"
METADATA_TOPIC_ID_STR = ONE_STR
RESERVED = frozenset({ZERO, ONE})

_URL_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_PAD = -2
_FROM_URL_BASE64 = [-1] * 256
for _i, _c in enumerate(_URL_ALPHABET):
    _FROM_URL_BASE64[_c] = _i
_FROM_URL_BASE64[ord("=")] = _PAD


class _Base64Error(ValueError):
    """The JDK decoder's ``IllegalArgumentException`` (message kept verbatim)."""


def _signed_hex(byte: int) -> str:
    return format(byte - 256 if byte > 127 else byte, "x")


def _jdk_url_decode(src: bytes) -> bytes:
    """``Base64.getUrlDecoder().decode(byte[])``: same result, same error text, for every input."""
    if len(src) == 0:
        return b""
    if len(src) < 2:
        raise _Base64Error("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits = 0
    shiftto = 18
    sp, sl = 0, len(src)
    while sp < sl:
        b = _FROM_URL_BASE64[src[sp]]
        sp += 1
        if b < 0:
            if b == _PAD:
                # "=" is legal only as the 3rd/4th char of a unit ("xx==" or "xxx=") and must end the input.
                if shiftto == 6 and (sp == sl or src[sp] != ord("=")) or shiftto == 18:
                    raise _Base64Error("Input byte array has wrong 4-byte ending unit")
                if shiftto == 6:
                    sp += 1
                break
            raise _Base64Error("Illegal base64 character " + _signed_hex(src[sp - 1]))
        bits |= b << shiftto
        shiftto -= 6
        if shiftto < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            shiftto = 18
            bits = 0
    if shiftto == 6:
        out.append((bits >> 16) & 0xFF)
    elif shiftto == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shiftto == 12:
        raise _Base64Error("Last unit does not have enough valid bits")
    if sp < sl:
        raise _Base64Error(f"Input byte array has incorrect ending byte at {sp}")
    return bytes(out)


def to_string(raw: bytes) -> str:
    """16 bytes -> Kafka's 22-character form. ``ValueError`` if ``raw`` is not 16 bytes (a caller bug)."""
    if len(raw) != 16:
        raise ValueError(f"a Kafka Uuid has 16 bytes, got {len(raw)}")
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class UuidParse:
    """Outcome of parsing a Kafka Uuid string: ``raw`` is set when ok, else ``reason`` is Java's message."""

    raw: Optional[bytes]
    reason: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.raw is not None

    @property
    def text(self) -> Optional[str]:
        """The canonical 22-char form of the parsed value (may differ from the input, e.g. padded input)."""
        return to_string(self.raw) if self.raw is not None else None


def parse(text: str) -> UuidParse:
    """Kafka's ``Uuid.fromString`` rules; never raises. A reserved id parses fine (callers decide)."""
    if not isinstance(text, str):
        return UuidParse(None, f"expected a string, got {type(text).__name__}")
    if utf16_len(text) > 24:
        return UuidParse(
            None,
            f"Input string with prefix `{utf16_prefix(text, 24)}` is too long to be decoded as a base64 UUID",
        )
    try:
        raw = _jdk_url_decode(latin1_bytes(text))
    except _Base64Error as exc:
        return UuidParse(None, str(exc))
    if len(raw) != 16:
        return UuidParse(
            None,
            f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the expected 16 bytes "
            "of a base64-encoded UUID",
        )
    return UuidParse(raw)


def from_string(text: str) -> bytes:
    """Like ``Uuid.fromString``: the 16 bytes, or ``ValueError`` carrying Kafka's reason."""
    result = parse(text)
    if not result.ok:
        raise ValueError(result.reason)
    return result.raw  # type: ignore[return-value]


_UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", re.ASCII)


def to_uuid_text(raw: bytes) -> str:
    """16 bytes -> the 36-character ``java.util.UUID`` text form (8-4-4-4-12 lowercase hex)."""
    return str(_std_uuid.UUID(bytes=bytes(raw)))


def parse_uuid_text(text: str) -> UuidParse:
    """Strict 36-char ``8-4-4-4-12`` hex -> 16 bytes; never raises (Python's ``uuid.UUID`` accepts more forms)."""
    if not isinstance(text, str) or not _UUID_TEXT.fullmatch(text):
        return UuidParse(None, f"not a 36-character 8-4-4-4-12 hex UUID: {text!r}")
    return UuidParse(_std_uuid.UUID(text).bytes)


def from_uuid_text(text: str) -> bytes:
    """36-character UUID text -> 16 bytes; ``ValueError`` otherwise."""
    result = parse_uuid_text(text)
    if not result.ok:
        raise ValueError(result.reason)
    return result.raw  # type: ignore[return-value]


def random_uuid(rng) -> bytes:
    """``Uuid.randomUuid``: a type-4 UUID, redrawn while reserved or while its string starts with ``-``.

    ``rng`` is a ``random.Random`` so simulations are deterministic for a seed.
    """
    while True:
        raw = bytearray(rng.getrandbits(128).to_bytes(16, "big"))
        raw[6] = (raw[6] & 0x0F) | 0x40  # version 4, as java.util.UUID.randomUUID
        raw[8] = (raw[8] & 0x3F) | 0x80  # IETF variant
        raw = bytes(raw)
        if raw not in RESERVED and not to_string(raw).startswith("-"):
            return raw


def is_reserved(raw: bytes) -> bool:
    """ZERO or ONE (``Uuid.RESERVED``); METADATA_TOPIC_ID is ONE."""
    return raw in RESERVED


def is_reserved_directory_id(raw: bytes) -> bool:
    """``DirectoryId.reserved``: MSB == 0 and LSB < 100 as a *signed* long (MIGRATING=0, UNASSIGNED=1, LOST=2)."""
    if len(raw) != 16:
        return False
    msb = int.from_bytes(raw[:8], "big", signed=True)
    lsb = int.from_bytes(raw[8:], "big", signed=True)
    return msb == 0 and lsb < 100
