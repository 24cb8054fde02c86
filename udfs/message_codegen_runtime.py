"""What generated decoders and JSON writers use at run time: their exceptions, helpers and namespace.

The code :mod:`udfs.message_codegen` writes runs in a namespace built from :data:`_BASE_NAMESPACE` (a few
builtins, the memoized list and uuid texts, the JSON formatters) and raises one of :data:`MISSES` (decoders)
or :data:`JSON_MISSES` (JSON writers) off its fast path, which callers catch to fall back to the reference
decoder or the generic JSON encoder. Separate from the source writers because this is what runs per record
(and what callers catch), while they run once per message version.
"""
from __future__ import annotations

import math
import struct

from . import message_values as mv
from .errors import CorruptInput


class FastPathMiss(Exception):
    """The generated decoder met a shape it does not handle; the reference decoder takes over."""


class JsonShapeMismatch(ValueError):
    """A dict handed to a generated JSON writer has keys the decoded record would not have."""


# What a generated decoder may raise on input outside its fast path. IndexError and struct.error: the buffer
# ends early (buf[i], unpack_from); UnicodeDecodeError: a one-byte-length string that is not UTF-8;
# CorruptInput: a reference reader it delegates an unusual field to.
MISSES = (FastPathMiss, IndexError, struct.error, UnicodeDecodeError, CorruptInput)
# What a generated JSON writer raises for a dict of another shape (callers fall back to the generic encoder).
JSON_MISSES = (JsonShapeMismatch, KeyError, TypeError, AttributeError)

_ONE_BYTE = 0x80  # uvarints below this take one byte: nearly every length, count, tag and size


# ---- helpers the generated code calls ---------------------------------------------------------------------------

_ARRAY_UNPACKERS: dict[str, tuple] = {}
_STRUCTS: dict[str, struct.Struct] = {}


def _layout(fmt: str) -> struct.Struct:
    """One Struct per format, so generated functions share their unpack constants."""
    layout = _STRUCTS.get(fmt)
    if layout is None:
        layout = _STRUCTS[fmt] = struct.Struct(fmt)
    return layout


def _array_unpackers(code: str) -> tuple:
    """``table[n]`` unpacks the ``n - 1`` elements of a compact array whose one-byte count is ``n`` (1..127)."""
    table = _ARRAY_UNPACKERS.get(code)
    if table is None:
        table = (None,) + tuple(
            struct.Struct(">" + code * (n - 1) if code == "16s" else f">{n - 1}{code}").unpack_from
            for n in range(1, _ONE_BYTE))
        _ARRAY_UNPACKERS[code] = table
    return table


def json_float(value: float) -> str:
    """float64 as ``json.dumps`` writes it: repr, and NaN / Infinity / -Infinity by their JavaScript names."""
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


_MEMO_ENTRIES = 4096  # per memo; a full one starts over (a log's ids and replica sets are far fewer)


def _remember(memo: dict, key, value):
    """Store ``value`` under ``key`` in a bounded memo (cleared when full) and return it."""
    if len(memo) >= _MEMO_ENTRIES:
        memo.clear()
    memo[key] = value
    return value


_INT_LIST_TEXT: dict[tuple, str] = {}
int_list_text_get = _INT_LIST_TEXT.get


def int_list_text(values) -> str:
    """JSON of a list of ints, memoized by value: replica sets and ISRs repeat on nearly every record, and a
    cache hit (``tuple`` + ``dict.get``, ~0.08 us) is cheaper than formatting (~0.2 us for [1, 2, 3] with
    ``repr(values).replace(" ", "")``, itself cheaper than ``",".join(map(str, values))``)."""
    text = repr(values).replace(" ", "")
    return _remember(_INT_LIST_TEXT, tuple(values), text)


_QUOTED_LIST_TEXT: dict[tuple, str] = {}
quoted_list_text_get = _QUOTED_LIST_TEXT.get


def quoted_list_text(values) -> str:
    """JSON of a list of uuid or base64 texts (their alphabets never need escaping), memoized like
    :func:`int_list_text`: a partition's directory ids repeat on every PartitionRecord."""
    text = '["' + '","'.join(values) + '"]' if values else "[]"
    return _remember(_QUOTED_LIST_TEXT, tuple(values), text)


_UUID_LISTS: dict[bytes, tuple] = {}
uuid_list_get = _UUID_LISTS.get


def uuid_list(raw: bytes, n: int) -> list:
    """The texts of the ``n - 1`` uuids in ``raw``, memoized by the raw bytes (directory lists repeat; timeit:
    ~0.13 us for a hit against ~0.35 us for a list comprehension over three ids)."""
    texts = tuple(mv.uuid_text(r) for r in _array_unpackers("16s")[n](raw, 0))
    return list(_remember(_UUID_LISTS, raw, texts))


_INT32_ARRAYS: dict[bytes, tuple] = {}
int32_array_get = _INT32_ARRAYS.get
_UUID_ARRAYS: dict[bytes, tuple] = {}
uuid_array_get = _UUID_ARRAYS.get


def int32_array(raw: bytes, n: int) -> tuple:
    """``(values, JSON text)`` of the ``n - 1`` int32s in ``raw``, memoized by the raw bytes: what the fused row
    functions (:mod:`udfs.message_codegen_rows`) read an ISR or replica set as. One dict lookup of the bytes
    replaces building the list, a tuple of it and the text lookup per record. The list is shared by every record
    holding those bytes: its readers must not change it."""
    values = list(_array_unpackers("i")[n](raw, 0))
    entry = (values, int_list_text(values))
    return _remember(_INT32_ARRAYS, raw, entry)


def uuid_array(raw: bytes, n: int) -> tuple:
    """:func:`int32_array` of a uuid array: ``(texts, JSON text)``, memoized by the raw bytes."""
    values = [mv.uuid_text(r) for r in _array_unpackers("16s")[n](raw, 0)]
    entry = (values, quoted_list_text(values))
    return _remember(_UUID_ARRAYS, raw, entry)


def _json_string_list(values) -> str:
    return "[" + ",".join(map(mv.json_escape, values)) + "]"


def _json_bool_list(values) -> str:
    return "[" + ",".join("true" if v else "false" for v in values) + "]"


def _json_float_list(values) -> str:
    return "[" + ",".join(map(json_float, values)) + "]"


_ABSENT = object()
_BASE_NAMESPACE = {
    "__builtins__": {"str": str, "list": list, "range": range, "len": len, "map": map, "repr": repr,
                     "tuple": tuple},
    "FastPathMiss": FastPathMiss,
    "JsonShapeMismatch": JsonShapeMismatch,
    "_ABSENT": _ABSENT,
    "_uuid_get": mv.uuid_cache_get,
    "_uuid_text": mv.uuid_text,
    "_escape": mv.json_escape,
    "_json_float": json_float,
    "_quoted_list_text_get": quoted_list_text_get,
    "_quoted_list_text": quoted_list_text,
    "_uuid_list_get": uuid_list_get,
    "_uuid_list": uuid_list,
    "_int_list_text_get": int_list_text_get,
    "_int_list_text": int_list_text,
    "_json_string_list": _json_string_list,
    "_json_bool_list": _json_bool_list,
    "_json_float_list": _json_float_list,
    "_int32_array_get": int32_array_get,
    "_int32_array": int32_array,
    "_uuid_array_get": uuid_array_get,
    "_uuid_array": uuid_array,
    "_EMPTY_ARRAY": ([], "[]"),
    "_NULL_ARRAY": (None, "null"),
}
