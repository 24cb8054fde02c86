"""Kafka's ``Uuid``: 16 bytes shown as 22 characters of unpadded URL-safe base64.

Rules from clients/src/main/java/org/apache/kafka/common/Uuid.java (apache/kafka@1eb7644):
``toString`` is ``Base64.getUrlEncoder().withoutPadding()`` of MSB then LSB, big-endian;
``fromString`` rejects input longer than 24 characters, characters outside the URL-safe alphabet, and a
decoded length other than 16; padded ``==`` input of length 24 is accepted; like the JDK decoder, the
4 unused low bits of the 22nd character are ignored.
"""
from __future__ import annotations

import base64
import binascii
import re
import uuid as _std_uuid
from dataclasses import dataclass
from typing import Optional

ZERO = bytes(16)
ONE = bytes(15) + b"\x01"
METADATA_TOPIC_ID = ONE
ZERO_STR = "AAAAAAAAAAAAAAAAAAAAAA"
ONE_STR = "AAAAAAAAAAAAAAAAAAAAAQ"
METADATA_TOPIC_ID_STR = ONE_STR
RESERVED = frozenset({ZERO, ONE})

_ALPHABET = re.compile(r"^[A-Za-z0-9_-]*={0,2}$")


def to_string(raw: bytes) -> str:
    """16 bytes -> Kafka's 22-character form."""
    if len(raw) != 16:
        raise ValueError(f"a Kafka Uuid has 16 bytes, got {len(raw)}")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class UuidParse:
    """Outcome of parsing a Kafka Uuid string: ``raw`` is set when ok, else ``reason`` says why not."""

    raw: Optional[bytes]
    reason: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.raw is not None


def parse(text: str) -> UuidParse:
    """Kafka's ``Uuid.fromString`` rules; never raises. A reserved id parses fine (callers decide)."""
    if len(text) > 24:
        return UuidParse(None, f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    if not _ALPHABET.match(text):
        bad = next((c for c in text if not (c.isascii() and (c.isalnum() or c in "-_="))), "=")
        return UuidParse(None, f"Illegal base64 character {format(ord(bad), 'x')}")
    body = text.rstrip("=")
    if len(body) % 4 == 1:
        return UuidParse(None, "Last unit does not have enough valid bits")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - alphabet check above catches these
        return UuidParse(None, str(exc))
    if len(raw) != 16:
        return UuidParse(None, f"Unable to parse UUID string: {text}: decoded length is {len(raw)}, expected 16")
    return UuidParse(raw)


def from_string(text: str) -> bytes:
    """Like ``Uuid.fromString``: the 16 bytes, or ``ValueError`` with Kafka's reason."""
    result = parse(text)
    if not result.ok:
        raise ValueError(result.reason)
    return result.raw  # type: ignore[return-value]


def to_uuid_text(raw: bytes) -> str:
    """16 bytes -> the 36-character ``java.util.UUID`` text form (8-4-4-4-12 hex)."""
    return str(_std_uuid.UUID(bytes=bytes(raw)))


def from_uuid_text(text: str) -> bytes:
    """36-character UUID text -> 16 bytes."""
    return _std_uuid.UUID(text).bytes


def random_uuid(rng) -> bytes:
    """``Uuid.randomUuid``: a type-4 UUID, redrawn while reserved or while its string starts with ``-``.

    ``rng`` is a ``random.Random`` so simulations are deterministic for a seed.
    """
    while True:
        raw = bytearray(rng.getrandbits(128).to_bytes(16, "big"))
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        raw = bytes(raw)
        if raw not in RESERVED and not to_string(raw).startswith("-"):
            return raw


def is_reserved(raw: bytes) -> bool:
    return raw in RESERVED
