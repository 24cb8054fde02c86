"""The reference reader of the generic codec: per-field closures compiled once per (struct, version).

:func:`reference_decoder` is exact on every input, malformed included (it raises :class:`CorruptInput` with
Kafka's wording); the generated decoders (:mod:`udfs.message_codegen`) are tested against it and hand it every
shape they do not handle (:func:`udfs.message_codec.decoder` picks between the two). The wire rules it follows
are in :mod:`udfs.message_codec`'s docstring. Separate from writing (:mod:`udfs.message_writer`), which shares
nothing with it but the value helpers of :mod:`udfs.message_values`.
"""
from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any, Callable, Optional

from . import wire
from .errors import CorruptInput
from .message_spec import FieldSpec, MessageSpec
from .message_values import FIXED_FORMATS, MessageData, _bytes_json, is_flexible_field, uuid_text

Step = Callable[[Any, int, dict], int]  # (buf, pos, out) -> new pos
ValueReader = Callable[[Any, int], tuple]  # (buf, pos) -> (value, new pos)


# ---- per-field value readers ------------------------------------------------------------------------------

_FIXED_CONVERT: dict[str, Optional[Callable]] = {"bool": lambda v: v != 0, "uuid": uuid_text}


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
    code = FIXED_FORMATS[type_name]
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
    if type_name in FIXED_FORMATS:
        layout = struct.Struct(">" + FIXED_FORMATS[type_name])
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


def value_reader(field: FieldSpec, version: int, message_flexible: bool) -> ValueReader:
    """Reader for one field's value at ``version`` (array, struct or primitive)."""
    flexible = is_flexible_field(field, version, message_flexible)
    nullable = field.nullable_versions.contains(version)
    what = field.json_name
    if field.is_array:
        if field.element_type in FIXED_FORMATS:
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


def tagged_value_reader(field: FieldSpec, version: int) -> ValueReader:
    """Tagged fields always use the flexible encodings; a nullable struct is prefixed by uvarint (0 = null)."""
    if field.is_struct and field.nullable_versions.contains(version):
        inner = _struct_reader(field.fields, version, True)

        def read_tagged_struct(buf, pos):
            marker, body = wire.read_uvarint(buf, pos)
            if wire.as_int32(marker) <= 0:
                return None, body
            return inner(buf, body)

        return read_tagged_struct
    return value_reader(field, version, True)


# ---- struct readers -----------------------------------------------------------------------------------------

def _fixed_run_step(fields: list[FieldSpec]) -> Step:
    """Consecutive fixed-width fields read with one ``struct.unpack_from`` (fewer calls per record)."""
    layout = struct.Struct(">" + "".join(FIXED_FORMATS[f.type] for f in fields))
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
    code = FIXED_FORMATS[type_name]
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
            reader = tagged_value_reader(f, version) if valid else None
            tags[f.tag] = _Tagged(f.json_name, reader, f.default_value(), valid, index)
        if not present:
            continue
        order.append(f.json_name)
        if flexible and f.tagged_versions.contains(version):
            tagged_names.add(f.json_name)
            continue
        if f.type in FIXED_FORMATS and not f.is_array:
            run.append(f)
            continue
        if run:
            steps.append(_fixed_run_step(run))
            run = []
        if f.is_array and f.element_type in FIXED_FORMATS:
            steps.append(_fixed_array_step(f.json_name, f.element_type, is_flexible_field(f, version, flexible),
                                           f.nullable_versions.contains(version)))
        else:
            steps.append(_field_step(f.json_name, value_reader(f, version, flexible)))
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
