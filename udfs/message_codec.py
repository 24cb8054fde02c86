"""One generic codec for every Kafka message described in ``udfs/schemas`` (flexible and non-flexible versions).

How Kafka's generated code reads and writes a message (generator/src/main/java/org/apache/kafka/message/
MessageDataGenerator.java and JsonConverterGenerator.java, apache/kafka@1eb7644):

- Fields are read in spec order; fields not present in the version are skipped (they keep their default).
- In flexible versions strings, bytes and arrays use the compact encodings (uvarint length + 1, 0 = null)
  and every struct (the message itself and each struct element) ends with a tagged-field section:
  ``uvarint count, then per field uvarint tag, uvarint size, data``. A known tag is read with the field's
  own reader (the size is not checked); an unknown tag is kept as raw bytes. A tag known to the struct
  but not valid for the version fails ("Tag N is not valid for version V").
- A tagged field is written only when its value differs from its default, in ascending tag order, with
  unknown (raw) tags interleaved as ``RawTaggedFieldWriter`` does.
- Non-flexible versions: int16-length strings, int32-length bytes and arrays (-1 = null), no tag section.
- JSON (``<Record>JsonConverter.write``): keys are the field names with the first letter lowercased, in spec
  order; tagged fields equal to their default are omitted; uuid as Kafka's base64 text, bytes as standard
  base64, int8/int16 as numbers.

Decoding has two paths that give the same result. The reference path compiles a tuple of per-field closures
once per ``(spec, version)`` (``functools.lru_cache``; :func:`reference_decoder`). The generated path
(:mod:`udfs.message_codegen`, :func:`generated`) writes and compiles straight-line Python for the version,
plus a JSON writer; it handles the common shapes and hands anything else, every malformed input included, to
the reference path (:func:`decoder` does both). Decoding returns a plain ``dict`` in JSON order (a
:class:`MessageData` when unknown tags were found, so they survive a decode -> encode round trip without
showing up in the JSON). Encoding takes the same dict shape: missing keys mean "default", as Kafka's
one-data-object-for-all-versions rule.

Show the generated source of a message version::

    python -m udfs.message_codec --show PartitionChangeRecord 1
"""
from __future__ import annotations

import argparse
import base64
import binascii
import struct
import sys
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any, Callable, Optional

from . import wire
from .errors import CorruptInput
from .kafka_uuid import from_string as _uuid_from_string
from .message_spec import FieldSpec, MessageSpec

Step = Callable[[Any, int, dict], int]  # (buf, pos, out) -> new pos
ValueReader = Callable[[Any, int], tuple]  # (buf, pos) -> (value, new pos)
ValueWriter = Callable[[bytearray, Any], None]

_B64 = base64.b64encode
_UUID_CACHE: dict[bytes, str] = {}
_UUID_CACHE_MAX = 1 << 16


class MessageData(dict):
    """A decoded struct that also carries the tagged fields its spec does not know.

    ``unknown_tagged_fields`` is a list of ``(tag, raw bytes)`` in wire order. It is not part of the dict, so
    JSON output matches Kafka's (which never prints unknown tags), and :func:`encode` writes them back.
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


# ---- per-field value readers ------------------------------------------------------------------------------

_FIXED_FORMATS = {"bool": "b", "int8": "b", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
                  "int64": "q", "float64": "d", "uuid": "16s"}
_FIXED_CONVERT: dict[str, Optional[Callable]] = {"bool": lambda v: v != 0, "uuid": uuid_text}


def _is_flexible_field(field: FieldSpec, version: int, message_flexible: bool) -> bool:
    """A string/bytes field may override the message's flexible versions (FieldSpec.flexibleVersions)."""
    if field.flexible_versions is not None:
        return field.flexible_versions.contains(version)
    return message_flexible


def _short_read(buf, pos: int, what: str) -> CorruptInput:
    return CorruptInput("length_out_of_buffer",
                        f"Error reading {what}: only {max(0, len(buf) - pos)} byte(s) available", pos)


def _compact_count(buf, pos: int, what: str):
    """uvarint(n + 1) -> (n as a Java int, new pos); the one-byte case inline (it is nearly every length)."""
    try:
        b = buf[pos]
    except IndexError:
        raise _short_read(buf, pos, what) from None
    if b < 0x80:
        return b - 1, pos + 1
    n, pos = wire.read_uvarint(buf, pos)
    return wire.as_int32(n - 1), pos


def _classic_count(layout: struct.Struct):
    def read_count(buf, pos: int, what: str):
        try:
            return layout.unpack_from(buf, pos)[0], pos + layout.size
        except struct.error:
            raise _short_read(buf, pos, what) from None

    return read_count


_ARRAY_LAYOUTS: dict[tuple, struct.Struct] = {}


def _array_layout(code: str, count: int) -> struct.Struct:
    layout = _ARRAY_LAYOUTS.get((code, count))
    if layout is None:
        layout = struct.Struct(f">{code * count}" if code == "16s" else f">{count}{code}")
        if len(_ARRAY_LAYOUTS) < 4096:
            _ARRAY_LAYOUTS[(code, count)] = layout
    return layout


def _fixed_array_reader(type_name: str, flexible: bool, nullable: bool, what: str) -> ValueReader:
    """An array of fixed-width elements (``[]int32``, ``[]uuid``, ...) read with one ``unpack_from``.

    Replicas, ISR and directory lists are most of a PartitionRecord / PartitionChangeRecord; cProfile on
    the 1M-record perf segment showed per-element reader calls at ~20% of decode time before this.
    """
    code = _FIXED_FORMATS[type_name]
    width = struct.calcsize(">" + code)
    convert = _FIXED_CONVERT.get(type_name)
    read_count = _compact_count if flexible else _classic_count(wire.INT32)

    layouts = _ARRAY_LAYOUTS

    def read_fixed_array(buf, pos):
        if flexible and pos < len(buf) and 0 < buf[pos] < 0x80:  # one-byte count, not null: the usual case
            count, body = buf[pos] - 1, pos + 1
        else:
            count, body = read_count(buf, pos, what)
        if count < 0:
            if nullable:
                return None, body
            raise CorruptInput("negative_length", f"non-nullable field {what} was serialized as null", pos)
        end = body + count * width
        if count > len(buf) - body or end > len(buf):
            raise CorruptInput("length_out_of_buffer", f"Tried to allocate a collection of size {count}, but "
                               f"there are only {len(buf) - body} bytes remaining.", pos)
        values = (layouts.get((code, count)) or _array_layout(code, count)).unpack_from(buf, body)
        return ([convert(v) for v in values] if convert else list(values)), end

    return read_fixed_array


def _compact_string_reader(nullable: bool, what: str) -> ValueReader:
    """Compact string with the short, valid case inline; anything unusual goes to ``wire``'s checked reader."""
    slow = wire.read_compact_string

    def read_compact_string(buf, pos):
        try:
            b = buf[pos]
        except IndexError:
            raise _short_read(buf, pos, what) from None
        if 0 < b < 0x80:
            end = pos + b
            if end <= len(buf):
                try:
                    return str(buf[pos + 1:end], "utf-8"), end
                except UnicodeDecodeError:
                    pass
        return slow(buf, pos, nullable, what)

    return read_compact_string


def _primitive_reader(type_name: str, flexible: bool, nullable: bool, what: str) -> ValueReader:
    if type_name in _FIXED_FORMATS:
        layout = struct.Struct(">" + _FIXED_FORMATS[type_name])
        unpack_from, size, convert = layout.unpack_from, layout.size, _FIXED_CONVERT.get(type_name)

        def read_fixed(buf, pos):
            try:
                value = unpack_from(buf, pos)[0]
            except struct.error:
                raise _short_read(buf, pos, f"{type_name} {what}") from None
            return (convert(value) if convert else value), pos + size

        return read_fixed
    if type_name == "string":
        if flexible:
            return _compact_string_reader(nullable, what)
        return lambda buf, pos: wire.read_string(buf, pos, nullable, what)
    if type_name in ("bytes", "records"):
        read = wire.read_compact_bytes if flexible else wire.read_bytes

        def read_bytes_json(buf, pos):
            raw, pos = read(buf, pos, nullable, what)
            return _bytes_json(raw), pos

        return read_bytes_json
    raise ValueError(f"unsupported type {type_name}")


def _value_reader(field: FieldSpec, version: int, message_flexible: bool) -> ValueReader:
    """Reader for one field's value at ``version`` (array, struct or primitive)."""
    flexible = _is_flexible_field(field, version, message_flexible)
    nullable = field.nullable_versions.contains(version)
    what = field.json_name
    if field.is_array:
        if field.element_type in _FIXED_FORMATS:
            return _fixed_array_reader(field.element_type, flexible, nullable, what)
        if field.is_struct_array:
            element = _struct_reader(field.fields, version, message_flexible)
        else:
            element = _primitive_reader(field.element_type, flexible, False, what + " element")
        read_array = wire.read_compact_array if flexible else wire.read_array
        return lambda buf, pos: read_array(buf, pos, element, nullable, what)
    if field.is_struct:
        inner = _struct_reader(field.fields, version, message_flexible)
        if not nullable:
            return inner

        def read_nullable_struct(buf, pos):
            marker, body = wire.read_int8(buf, pos)
            if marker < 0:
                return None, body
            return inner(buf, body)

        return read_nullable_struct
    return _primitive_reader(field.type, flexible, nullable, what)


def _tagged_value_reader(field: FieldSpec, version: int) -> ValueReader:
    """Tagged fields always use the flexible encodings; a nullable struct is prefixed by uvarint (0 = null)."""
    if field.is_struct and field.nullable_versions.contains(version):
        inner = _struct_reader(field.fields, version, True)

        def read_tagged_struct(buf, pos):
            marker, body = wire.read_uvarint(buf, pos)
            if wire.as_int32(marker) <= 0:
                return None, body
            return inner(buf, body)

        return read_tagged_struct
    return _value_reader(field, version, True)


# ---- struct readers -----------------------------------------------------------------------------------------

def _fixed_run_step(fields: list[FieldSpec]) -> Step:
    """Consecutive fixed-width fields read with one ``struct.unpack_from`` (fewer calls per record)."""
    layout = struct.Struct(">" + "".join(_FIXED_FORMATS[f.type] for f in fields))
    unpack_from, size = layout.unpack_from, layout.size
    names = tuple(f.json_name for f in fields)
    converts = tuple((i, _FIXED_CONVERT[f.type]) for i, f in enumerate(fields) if f.type in _FIXED_CONVERT)
    what = ", ".join(names)

    def read_run(buf, pos, out):
        try:
            values = unpack_from(buf, pos)
        except struct.error:
            raise CorruptInput("length_out_of_buffer",
                               f"Error reading {what}: needed {size} byte(s) but only "
                               f"{max(0, len(buf) - pos)} available", pos) from None
        if converts:
            values = list(values)
            for i, convert in converts:
                values[i] = convert(values[i])
        out.update(zip(names, values, strict=True))
        return pos + size

    return read_run


def _field_step(name: str, reader: ValueReader) -> Step:
    def read_field(buf, pos, out):
        out[name], pos = reader(buf, pos)
        return pos

    return read_field


def _fixed_array_step(name: str, type_name: str, flexible: bool, nullable: bool) -> Step:
    """Like ``_field_step(name, _fixed_array_reader(...))`` without the extra call and tuple per field:
    arrays are four to six of a PartitionRecord's fields (timeit: -0.3 us per record)."""
    if not flexible:
        return _field_step(name, _fixed_array_reader(type_name, flexible, nullable, name))
    code = _FIXED_FORMATS[type_name]
    width = struct.calcsize(">" + code)
    convert = _FIXED_CONVERT.get(type_name)
    slow = _fixed_array_reader(type_name, flexible, nullable, name)
    layouts = _ARRAY_LAYOUTS

    def read_array_field(buf, pos, out):
        if pos < len(buf):
            b = buf[pos]
            if 0 < b < 0x80:  # one-byte count, not null
                count = b - 1
                body = pos + 1
                end = body + count * width
                if end <= len(buf):
                    layout = layouts.get((code, count)) or _array_layout(code, count)
                    values = layout.unpack_from(buf, body)
                    out[name] = [convert(v) for v in values] if convert else list(values)
                    return end
        out[name], pos = slow(buf, pos)
        return pos

    return read_array_field


class _Tagged:
    """What the tag-section reader needs to know about one known tag."""

    __slots__ = ("name", "reader", "default", "valid", "index")

    def __init__(self, name, reader, default, valid, index):
        self.name, self.reader, self.default, self.valid = name, reader, default, valid
        self.index = index  # position among the struct's fields (spec order = JSON order)


@lru_cache(maxsize=None)
def _struct_reader(fields: tuple[FieldSpec, ...], version: int, flexible: bool) -> ValueReader:
    """Compile the reader of one struct (or message body) at ``version``: a tuple of steps, run in order."""
    steps: list[Step] = []
    run: list[FieldSpec] = []
    tags: dict[int, _Tagged] = {}
    order: list[str] = []  # JSON order of the fields present in this version
    tagged_names: set[str] = set()
    for index, f in enumerate(fields):
        present = f.versions.contains(version)
        if f.tag is not None and flexible:
            # Known tag: decodable when tagged in this version, otherwise Kafka fails on it.
            valid = f.tagged_versions.contains(version) and present
            reader = _tagged_value_reader(f, version) if valid else None
            tags[f.tag] = _Tagged(f.json_name, reader, f.default_value(), valid, index)
        if not present:
            continue
        order.append(f.json_name)
        if flexible and f.tagged_versions.contains(version):
            tagged_names.add(f.json_name)
            continue
        if f.type in _FIXED_FORMATS and not f.is_array:
            run.append(f)
            continue
        if run:
            steps.append(_fixed_run_step(run))
            run = []
        if f.is_array and f.element_type in _FIXED_FORMATS:
            steps.append(_fixed_array_step(f.json_name, f.element_type, _is_flexible_field(f, version, flexible),
                                           f.nullable_versions.contains(version)))
        else:
            steps.append(_field_step(f.json_name, _value_reader(f, version, flexible)))
    if run:
        steps.append(_fixed_run_step(run))
    steps_t = tuple(steps)
    # Tagged values are appended after the untagged ones, in wire order. The dict is rebuilt in spec order
    # only when that differs: a tagged field declared between untagged ones (PartitionRecord's
    # LeaderRecoveryState), or tags arriving out of spec order (PartitionChangeRecord's Directories is tag 8
    # but declared before tags 6 and 7).
    untagged_order = [n for n in order if n not in tagged_names]
    interleaved = order[: len(untagged_order)] != untagged_order
    order_t = tuple(order)

    if not flexible:
        def read_plain(buf, pos):
            out: dict = {}
            for step in steps_t:
                pos = step(buf, pos, out)
            return out, pos

        return read_plain

    read_uvarint = wire.read_uvarint

    def read_flexible(buf, pos):
        out: dict = {}
        for step in steps_t:
            pos = step(buf, pos, out)
        count, pos = read_uvarint(buf, pos)
        if count == 0:
            return out, pos
        unknown = None
        found = False
        reorder = interleaved
        last_index = -1
        for _ in range(count):
            tag_pos = pos
            # tag and size are nearly always one byte each
            if pos + 1 < len(buf) and buf[pos] < 0x80 and buf[pos + 1] < 0x80:
                tag, size = buf[pos], buf[pos + 1]
                pos += 2
            else:
                tag, pos = read_uvarint(buf, pos)
                size, pos = read_uvarint(buf, pos)
            known = tags.get(tag)
            if known is None:
                raw, pos = wire.read_raw(buf, pos, wire.as_int32(size), "unknown tagged field")
                if unknown is None:
                    unknown = []
                unknown.append((wire.as_int32(tag), raw))
                continue
            if not known.valid:
                raise CorruptInput("invalid_tag", f"Tag {tag} is not valid for version {version}", tag_pos)
            value, pos = known.reader(buf, pos)
            default = known.default
            # Kafka's non-default check: null differs from an empty default, otherwise plain equality
            if value != default or (value is None) != (default is None):
                out[known.name] = value
                found = True
                if known.index < last_index:
                    reorder = True
                last_index = known.index
            else:
                out.pop(known.name, None)
        if found and reorder:
            out = {name: out[name] for name in order_t if name in out}
        if unknown is not None:
            out = MessageData(out, unknown_tagged_fields=unknown)
        return out, pos

    return read_flexible


def reference_decoder(spec: MessageSpec, version: int) -> ValueReader:
    """The closure-compiled ``(buf, pos) -> (dict, pos)`` reader of ``spec`` at ``version``: the reference the
    generated decoders are tested against, and what they hand unusual or malformed input to."""
    return _struct_reader(spec.fields, version, spec.is_flexible(version))


@lru_cache(maxsize=None)
def generated(spec: MessageSpec, version: int):
    """The generated decoder and JSON writer of ``spec`` at ``version`` (:class:`message_codegen.Generated`),
    compiled on first use and cached."""
    from . import message_codegen

    return message_codegen.generate(spec, version)


@lru_cache(maxsize=None)
def decoder(spec: MessageSpec, version: int) -> ValueReader:
    """The ``(buf, pos) -> (dict, pos)`` reader of ``spec`` at ``version``: the generated fast path, and the
    reference decoder whenever the fast path does not apply (its result or its ``CorruptInput`` is final)."""
    from .message_codegen import MISSES

    fast = generated(spec, version).fast_decoder
    reference = reference_decoder(spec, version)

    def decode_message(buf, pos):
        if buf.__class__ is not bytes:
            buf = bytes(buf)  # bytearray, memoryview: the generated code keys caches by slices of the buffer
        try:
            data, end, _ = fast(buf, pos)
        except MISSES:
            return reference(buf, pos)
        if end > len(buf):  # the fast path does not bound slices by the buffer: let the reference fail
            return reference(buf, pos)
        return data, end

    decode_message.__name__ = decode_message.__qualname__ = f"decode_{spec.name}_v{version}"
    return decode_message


def json_writer(spec: MessageSpec, version: int) -> Callable[[dict], str]:
    """The generated ``dict -> JSON text`` writer of ``spec`` at ``version``, for dicts its decoders produce.

    Same text as ``json.dumps(data, separators=(",", ":"), ensure_ascii=False)`` (Kafka's JSON); raises one of
    ``message_codegen.JSON_MISSES`` when the dict has keys the version does not have or lacks required ones.
    """
    return generated(spec, version).json_writer


def decode(spec: MessageSpec, version: int, buf, pos: int = 0) -> tuple[dict, int]:
    """Decode one message body at ``version`` starting at ``pos``; returns ``(data, end position)``.

    Raises :class:`CorruptInput` on malformed bytes (callers turn it into a ``DecodeError``).
    """
    if not spec.valid_versions.contains(version):
        raise CorruptInput("unknown_version", f"{spec.name} has no version {version} "
                                              f"(valid versions {spec.valid_versions})", pos)
    return decoder(spec, version)(buf, pos)


# ---- writers ---------------------------------------------------------------------------------------------------

def _primitive_writer(type_name: str, flexible: bool, nullable: bool, what: str) -> ValueWriter:
    if type_name == "bool":
        return wire.write_bool
    if type_name == "uuid":
        return lambda out, value: wire.write_uuid(out, _uuid_raw(value))
    if type_name in _FIXED_FORMATS:
        return getattr(wire, f"write_{type_name}")
    if type_name == "string":
        write = wire.write_compact_string if flexible else wire.write_string

        def write_string(out, value):
            if value is None and not nullable:
                raise ValueError(f"non-nullable field {what} cannot be null")
            write(out, value)

        return write_string
    if type_name in ("bytes", "records"):
        write = wire.write_compact_bytes if flexible else wire.write_bytes

        def write_bytes(out, value):
            raw = _bytes_raw(value)
            if raw is None and not nullable:
                raise ValueError(f"non-nullable field {what} cannot be null")
            write(out, raw)

        return write_bytes
    raise ValueError(f"unsupported type {type_name}")


def _value_writer(field: FieldSpec, version: int, message_flexible: bool) -> ValueWriter:
    flexible = _is_flexible_field(field, version, message_flexible)
    nullable = field.nullable_versions.contains(version)
    what = field.json_name
    if field.is_array:
        if field.is_struct_array:
            element = _struct_writer(field.fields, version, message_flexible)
        else:
            element = _primitive_writer(field.element_type, flexible, False, what + " element")
        write_array = wire.write_compact_array if flexible else wire.write_array

        def write_list(out, items):
            if items is None and not nullable:
                raise ValueError(f"non-nullable field {what} cannot be null")
            write_array(out, items, element)

        return write_list
    if field.is_struct:
        inner = _struct_writer(field.fields, version, message_flexible)
        if not nullable:
            return lambda out, value: inner(out, value if value is not None else {})

        def write_nullable_struct(out, value):
            if value is None:
                out.append(0xFF)
            else:
                out.append(1)
                inner(out, value)

        return write_nullable_struct
    return _primitive_writer(field.type, flexible, nullable, what)


def _tagged_value_writer(field: FieldSpec, version: int) -> ValueWriter:
    if field.is_struct and field.nullable_versions.contains(version):
        inner = _struct_writer(field.fields, version, True)

        def write_tagged_struct(out, value):
            if value is None:
                out.append(0)
            else:
                body = bytearray()
                inner(body, value)
                wire.write_uvarint(out, 1)
                out += body

        return write_tagged_struct
    return _value_writer(field, version, True)


def _normalise_for_compare(field: FieldSpec, value):
    """Bring a caller's value into decoded form so it compares with the default (uuid bytes -> text)."""
    if field.type == "uuid" and isinstance(value, (bytes, bytearray, memoryview)):
        return uuid_text(value)
    if field.type in ("bytes", "records") and isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_json(bytes(value))
    return value


def _differs_from_default(field: FieldSpec, value) -> bool:
    default = field.default_value()
    value = _normalise_for_compare(field, value)
    if field.is_struct and default is None and not field.has_default:
        return bool(value)
    if field.type in ("bytes", "records") and default == "":
        return value is None or value != ""
    return not (value == default and (value is None) == (default is None))


@lru_cache(maxsize=None)
def _struct_writer(fields: tuple[FieldSpec, ...], version: int, flexible: bool) -> ValueWriter:
    """Compile the writer of one struct at ``version``."""
    plain: list[tuple[FieldSpec, ValueWriter]] = []
    tagged: list[tuple[int, FieldSpec, ValueWriter]] = []
    absent: list[FieldSpec] = []
    for f in fields:
        if not f.versions.contains(version):
            absent.append(f)
        elif flexible and f.tagged_versions.contains(version):
            tagged.append((f.tag, f, _tagged_value_writer(f, version)))
        else:
            plain.append((f, _value_writer(f, version, flexible)))
    tagged.sort(key=lambda item: item[0])
    plain_t, tagged_t, absent_t = tuple(plain), tuple(tagged), tuple(absent)

    def write_struct(out: bytearray, data) -> None:
        if not isinstance(data, dict):
            raise ValueError(f"a struct value must be a dict, got {type(data).__name__}")
        for f in absent_t:
            value = data.get(f.json_name)
            if value is not None and _differs_from_default(f, value) and not f.ignorable:
                raise ValueError(f"Attempted to write a non-default {f.json_name} at version {version}")
        for f, write in plain_t:
            value = data[f.json_name] if f.json_name in data else f.default_value()
            try:
                write(out, value)
            except (ValueError, TypeError, OverflowError) as exc:
                raise ValueError(f"field {f.json_name}: {exc}") from None
        unknown = list(getattr(data, "unknown_tagged_fields", ()) or ())
        if not flexible:
            if unknown:
                raise ValueError(f"Tagged fields were set, but version {version} of this message does not "
                                 f"support them.")
            return
        chunks: list[tuple[int, bytes]] = []
        for tag, f, write in tagged_t:
            if f.json_name not in data:
                continue
            value = data[f.json_name]
            if not _differs_from_default(f, value):
                continue
            # Raw (unknown) tags are interleaved before the next known tag, as RawTaggedFieldWriter does.
            while unknown and unknown[0][0] < tag:
                chunks.append(unknown.pop(0))
            body = bytearray()
            try:
                write(body, value)
            except (ValueError, TypeError, OverflowError) as exc:
                raise ValueError(f"field {f.json_name}: {exc}") from None
            chunks.append((tag, bytes(body)))
        chunks.extend(unknown)
        wire.write_uvarint(out, len(chunks))
        for tag, body in chunks:
            wire.write_uvarint(out, tag & 0xFFFFFFFF)  # a negative (Java int) unknown tag: its 32 bits
            wire.write_uvarint(out, len(body))
            out += body

    return write_struct


def encoder(spec: MessageSpec, version: int) -> ValueWriter:
    return _struct_writer(spec.fields, version, spec.is_flexible(version))


def encode(spec: MessageSpec, version: int, data: dict) -> bytes:
    """Serialize ``data`` (decoded-dict shape; missing keys = defaults) as ``spec`` at ``version``.

    Raises ``ValueError`` for a version the spec does not have or a value the field cannot hold.
    """
    if not spec.valid_versions.contains(version):
        raise ValueError(f"{spec.name} has no version {version} (valid versions {spec.valid_versions})")
    out = bytearray()
    encoder(spec, version)(out, data)
    return bytes(out)


# ---- names the generator uses ------------------------------------------------------------------------------------

FIXED_FORMATS = _FIXED_FORMATS
is_flexible_field = _is_flexible_field
value_reader = _value_reader
tagged_value_reader = _tagged_value_reader


def main(argv=None) -> int:
    """``python -m udfs.message_codec --show PartitionChangeRecord 1``: print the generated source."""
    parser = argparse.ArgumentParser(prog="python -m udfs.message_codec", description=main.__doc__)
    parser.add_argument("--show", nargs=2, metavar=("MESSAGE", "VERSION"), required=True,
                        help="message name (PartitionChangeRecord or PARTITION_CHANGE_RECORD) and version")
    args = parser.parse_args(argv)
    from . import message_codegen

    name, version_text = args.show
    spec = message_codegen.find_spec(name)
    if spec is None:
        print(f"unknown message {name!r}", file=sys.stderr)
        return 2
    try:
        version = int(version_text)
        source = generated(spec, version).source
    except ValueError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
