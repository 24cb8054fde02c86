"""The writer of the generic codec: ``encode`` a decoded-dict shaped message at a version.

Per-field writers compiled once per (struct, version), as the reader's are; the wire rules (tagged fields
written only when they differ from their default, in tag order, unknown tags interleaved) are in
:mod:`udfs.message_codec`'s docstring. Separate from reading (:mod:`udfs.message_reader`): they share only the
value helpers of :mod:`udfs.message_values`, and decoding never needs this module.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from . import wire
from .message_spec import FieldSpec, MessageSpec
from .message_values import FIXED_FORMATS, _bytes_json, _bytes_raw, _uuid_raw, is_flexible_field, uuid_text

ValueWriter = Callable[[bytearray, Any], None]


def _primitive_writer(type_name: str, flexible: bool, nullable: bool, what: str) -> ValueWriter:
    if type_name == "bool":
        return wire.write_bool
    if type_name == "uuid":
        return lambda out, value: wire.write_uuid(out, _uuid_raw(value))
    if type_name in FIXED_FORMATS:
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
    flexible = is_flexible_field(field, version, message_flexible)
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
