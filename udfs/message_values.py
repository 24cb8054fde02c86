"""Field values of the generic codec, as decoded and as written: uuid text, base64 bytes, ``MessageData``.

Reading (:mod:`udfs.message_reader`), writing (:mod:`udfs.message_writer`) and the generated decoders and
JSON writers (:mod:`udfs.message_codegen`) share these: a uuid is Kafka's 22-character base64 text (memoized),
bytes are standard base64, tagged fields a spec does not know ride on :class:`MessageData`; which types are
fixed-width, and whether a field uses the compact encodings at a version. Separate so the three share one
definition without depending on each other.
"""
from __future__ import annotations

import base64
import binascii
from json.encoder import encode_basestring
from typing import Optional

from .kafka_uuid import from_string as _uuid_from_string
from .message_spec import FieldSpec

_B64 = base64.b64encode
_UUID_CACHE: dict[bytes, str] = {}
_UUID_CACHE_MAX = 1 << 16


class MessageData(dict):
    """A decoded struct that also carries the tagged fields its spec does not know.

    ``unknown_tagged_fields`` is a list of ``(tag, raw bytes)`` in wire order. It is not part of the dict, so
    JSON output matches Kafka's (which never prints unknown tags), and
    :func:`udfs.message_writer.encode` writes them back.
    """

    __slots__ = ("unknown_tagged_fields",)

    def __init__(self, *args, unknown_tagged_fields=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.unknown_tagged_fields = list(unknown_tagged_fields)


uuid_cache_get = _UUID_CACHE.get  # generated decoders look ids up directly (uuid_text fills the cache)
json_escape = encode_basestring  # json.dumps' own C string escaper (ensure_ascii=False): generated JSON writers


def uuid_text(raw) -> str:
    """16 bytes -> Kafka's 22-character text. Memoized: topic and directory ids repeat on every record
    (cProfile on the 1M-record perf segment: base64 of ids was ~9% of decode time before the cache)."""
    raw = bytes(raw)
    text = _UUID_CACHE.get(raw)
    if text is None:
        text = base64.urlsafe_b64encode(raw)[:22].decode("ascii")
        if len(_UUID_CACHE) >= _UUID_CACHE_MAX:
            _UUID_CACHE.clear()
        _UUID_CACHE[raw] = text
    return text


def _uuid_raw(value) -> bytes:
    if isinstance(value, str):
        return _uuid_from_string(value)
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value) == 16:
        return bytes(value)
    raise ValueError(f"a uuid must be Kafka's base64 text or 16 bytes, got {value!r}")


def _bytes_raw(value) -> Optional[bytes]:
    if value is None or isinstance(value, (bytes, bytearray, memoryview)):
        return None if value is None else bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"bytes value is not base64: {exc}") from None
    raise ValueError(f"a bytes field takes bytes or base64 text, got {type(value).__name__}")


def _bytes_json(raw: Optional[bytes]) -> Optional[str]:
    return None if raw is None else _B64(raw).decode("ascii")


# ---- encodings by type and version -----------------------------------------------------------------------

FIXED_FORMATS = {"bool": "b", "int8": "b", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
                  "int64": "q", "float64": "d", "uuid": "16s"}


def is_flexible_field(field: FieldSpec, version: int, message_flexible: bool) -> bool:
    """A string/bytes field may override the message's flexible versions (FieldSpec.flexibleVersions)."""
    if field.flexible_versions is not None:
        return field.flexible_versions.contains(version)
    return message_flexible
