"""Kafka message schemas as data: ``Versions``, ``FieldSpec``, ``MessageSpec``, loaded from ``udfs/schemas/*.json``.

The schema files describe Kafka's records once, in our own format (facts transcribed from Kafka's JSON specs;
the upstream commit is recorded in each file). This module turns them into frozen dataclasses and checks the
same invariants as Kafka's generator (generator/src/main/java/org/apache/kafka/message/{Versions,FieldSpec,
StructSpec,MessageSpec}.java at apache/kafka@1eb7644) when a spec loads, so a bad schema fails at import
time, never in the middle of a job. :mod:`udfs.message_codec` interprets these specs.

Our schema format (one file holds several messages)::

    {"format": "kafka-recon-message-schemas/1",
     "upstream": {"repository": "apache/kafka", "release": "4.3", "commit": "<sha>", "additions": "..."},
     "messages": [
       {"name": "TopicRecord", "api_key": 2, "kind": "metadata", "source": "<path in upstream>",
        "valid_versions": "0", "flexible_versions": "0+",
        "fields": [
          {"name": "Name", "type": "string", "versions": "0+", "about": "..."},
          {"name": "Isr", "type": "[]int32", "versions": "0+", "nullable_versions": "0+",
           "tagged_versions": "0+", "tag": 0, "default": null, "about": "..."},
          {"name": "EndPoints", "type": "[]BrokerEndpoint", "versions": "0+", "fields": [...]}]}]}

``default`` is a JSON value of the field's type (number, boolean, string, ``null``); absent means the type's
zero value (Kafka's README: 0, false, "", all-zero uuid, empty array).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from typing import Any, Optional

MAX_VERSION = 0x7FFF  # Short.MAX_VALUE: the "+" in "3+"
_FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")  # FieldSpec.VALID_FIELD_NAMES

FIXED_WIDTH = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
               "float64": 8, "uuid": 16}
PRIMITIVE_TYPES = frozenset(FIXED_WIDTH) | {"string", "bytes", "records"}
INTEGER_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
SCHEMA_FORMAT = "kafka-recon-message-schemas/1"
# importlib.resources, not __file__: executors may import udfs from a zip (spark-submit --py-files)
SCHEMA_DIR = resources.files("udfs").joinpath("schemas")


class SpecError(ValueError):
    """A schema file breaks one of the spec invariants; the message names the field and the rule."""


@dataclass(frozen=True)
class Versions:
    """An inclusive version range, parsed from ``"3"``, ``"0-2"``, ``"3+"`` or ``"none"`` (Versions.parse).

    ``"3+"`` is open-ended: its highest version is ``MAX_VERSION``. ``"none"`` is the empty range.
    """

    lowest: int
    highest: int

    @classmethod
    def parse(cls, text: Optional[str], default: Optional["Versions"] = None) -> "Versions":
        if text is None:
            if default is None:
                raise SpecError("a version range is required")
            return default
        text = text.strip()
        if text == "none":
            return NONE
        try:
            if text.endswith("+"):
                return cls(int(text[:-1]), MAX_VERSION)
            if "-" in text:
                low, high = text.split("-", 1)
                return cls(int(low), int(high))
            return cls(int(text), int(text))
        except ValueError:
            raise SpecError(f"invalid version range {text!r}; expected 'N', 'N-M', 'N+' or 'none'") from None

    def __post_init__(self) -> None:
        empty = (self.lowest, self.highest) == (MAX_VERSION + 1, -1)
        if not empty and not (0 <= self.lowest <= self.highest <= MAX_VERSION):
            raise SpecError(f"invalid version range {self.lowest}-{self.highest}")

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    @property
    def open_ended(self) -> bool:
        return not self.empty and self.highest == MAX_VERSION

    def contains(self, version: int) -> bool:
        return self.lowest <= version <= self.highest

    def contains_range(self, other: "Versions") -> bool:
        """True when every version of ``other`` is in this range (an empty ``other`` is always contained)."""
        return other.empty or (self.lowest <= other.lowest and other.highest <= self.highest)

    def intersect(self, other: "Versions") -> "Versions":
        low, high = max(self.lowest, other.lowest), min(self.highest, other.highest)
        return Versions(low, high) if low <= high else NONE

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.highest == MAX_VERSION:
            return f"{self.lowest}+"
        if self.lowest == self.highest:
            return str(self.lowest)
        return f"{self.lowest}-{self.highest}"


NONE = Versions(MAX_VERSION + 1, -1)


def first_lower(name: str) -> str:
    """Kafka's camelCaseName: the JSON key is the field name with its first letter lowercased."""
    return name[:1].lower() + name[1:]


def upper_snake(name: str) -> str:
    """MessageGenerator.toSnakeCase, upper-cased: ``PartitionChangeRecord`` -> ``PARTITION_CHANGE_RECORD``.

    An underscore goes before a capital only when the previous character was not a capital.
    """
    out = []
    prev_capital = True
    for ch in name:
        if ch.isupper():
            if not prev_capital:
                out.append("_")
            prev_capital = True
        else:
            prev_capital = False
        out.append(ch.upper())
    return "".join(out)


@dataclass(frozen=True, eq=False)
class FieldSpec:
    """One field of a message or struct. Invariants are checked in ``__post_init__`` (see FieldSpec.java)."""

    name: str
    type: str  # "int32", "string", "[]int32", "[]BrokerEndpoint", "KRaftVersionFeature", ...
    versions: Versions
    nullable_versions: Versions = NONE
    tagged_versions: Versions = NONE
    tag: Optional[int] = None
    default: Any = None  # normalised Python value; see default_value
    has_default: bool = False  # True when the schema gave "default" explicitly
    flexible_versions: Optional[Versions] = None  # per-field override (string/bytes only)
    ignorable: bool = False
    map_key: bool = False
    about: str = ""
    fields: tuple["FieldSpec", ...] = ()

    # -- type helpers ---------------------------------------------------------------------------------------
    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """A single struct (not an array of structs)."""
        return not self.is_array and self.type not in PRIMITIVE_TYPES

    @property
    def is_struct_array(self) -> bool:
        return self.is_array and self.element_type not in PRIMITIVE_TYPES

    @property
    def can_be_nullable(self) -> bool:
        """FieldType.canBeNullable: strings, bytes, records, arrays and structs."""
        return self.is_array or self.is_struct or self.type in ("string", "bytes", "records")

    @property
    def json_name(self) -> str:
        return first_lower(self.name)

    @property
    def is_tagged_somewhere(self) -> bool:
        return not self.tagged_versions.empty

    def default_value(self) -> Any:
        """The value a reader assumes when the field is absent (FieldSpec.fieldDefault)."""
        if self.has_default:
            return self.default
        if self.is_array:
            return []
        if self.is_struct:
            return None  # the codec builds the empty struct
        return {"bool": False, "string": "", "bytes": "", "uuid": "AAAAAAAAAAAAAAAAAAAAAA", "float64": 0.0,
                "records": None}.get(self.type, 0)

    def __post_init__(self) -> None:
        where = f"field {self.name!r}"
        if not _FIELD_NAME.match(self.name or ""):
            raise SpecError(f"Invalid field name {self.name!r}: must match [A-Za-z][A-Za-z0-9]*")
        base = self.element_type
        if not base:
            raise SpecError(f"{where}: empty type")
        if self.is_array and base.startswith("[]"):
            raise SpecError(f"{where}: nested arrays are not supported; use an array of structs")
        if base not in PRIMITIVE_TYPES and not base[0].isupper():
            raise SpecError(f"{where}: unknown type {self.type!r}")
        if self.fields and not (self.is_struct or self.is_struct_array):
            raise SpecError(f"{where}: non-array or struct field cannot have fields")
        if (self.is_struct or self.is_struct_array) and not self.fields:
            raise SpecError(f"{where}: struct type {base!r} has no fields")
        if not self.nullable_versions.empty and not self.can_be_nullable:
            raise SpecError(f"{where}: type {self.type} cannot be nullable")
        if self.flexible_versions is not None and self.type not in ("string", "bytes"):
            raise SpecError(f"{where}: only string and bytes fields may override flexible_versions")
        self._check_tag()
        self._check_default()
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise SpecError(f"{where}: duplicate field names in struct {base}")
        _check_unique_tags(self.fields, f"struct {base}")

    def _check_tag(self) -> None:
        where = f"field {self.name!r}"
        if self.tag is None:
            if not self.tagged_versions.empty:
                raise SpecError(f"{where} has tagged_versions {self.tagged_versions} but no tag")
            return
        if self.tag < 0:
            raise SpecError(f"{where} specifies a tag of {self.tag}. Tags cannot be negative.")
        if self.tagged_versions.empty:
            raise SpecError(f"{where} specifies a tag of {self.tag}, but has no tagged versions")
        if not self.tagged_versions.open_ended:
            raise SpecError(f"{where} specifies tagged_versions {self.tagged_versions}, which is not open-ended")
        if not self.versions.contains_range(self.tagged_versions):
            raise SpecError(f"{where}: tagged_versions {self.tagged_versions} must be a subset of versions "
                            f"{self.versions}")
        nullable_tagged = self.nullable_versions.intersect(self.tagged_versions)
        if not (nullable_tagged.empty or nullable_tagged == self.tagged_versions):
            raise SpecError(f"{where}: either all tagged versions must be nullable, or none")
        if self.map_key:
            raise SpecError(f"{where}: tagged fields cannot be used as keys")

    def _check_default(self) -> None:
        if not self.has_default:
            return
        where = f"field {self.name!r}"
        value = self.default
        if value is None:
            if not self.can_be_nullable or not self.nullable_versions.contains_range(self.versions):
                raise SpecError(f"{where}: null cannot be the default, because not all versions of this field "
                                f"are nullable")
            return
        if self.is_array or self.is_struct:
            if value != []:
                raise SpecError(f"{where}: the only valid defaults for an array or struct are empty or null")
        elif self.type == "bool":
            if not isinstance(value, bool):
                raise SpecError(f"{where}: invalid default {value!r} for bool")
        elif self.type in INTEGER_RANGES:
            low, high = INTEGER_RANGES[self.type]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise SpecError(f"{where}: invalid default {value!r} for {self.type}: out of range {low}..{high}")
        elif self.type == "float64":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SpecError(f"{where}: invalid default {value!r} for float64")
        elif self.type == "string":
            if not isinstance(value, str):
                raise SpecError(f"{where}: invalid default {value!r} for string")
        elif self.type == "uuid":
            from .kafka_uuid import parse

            if not isinstance(value, str) or not parse(value).ok:
                raise SpecError(f"{where}: invalid default {value!r} for uuid")
        elif self.type == "bytes":
            if value != "":
                raise SpecError(f"{where}: the only valid defaults for bytes are empty or null")
        else:
            raise SpecError(f"{where}: type {self.type} cannot have a default")


def _check_unique_tags(fields: tuple[FieldSpec, ...], where: str) -> None:
    seen: dict[int, str] = {}
    for f in fields:
        if f.tag is None:
            continue
        if f.tag in seen:
            raise SpecError(f"field {f.name!r} has tag {f.tag}, but field {seen[f.tag]!r} of {where} already "
                            f"used that tag")
        seen[f.tag] = f.name


@dataclass(frozen=True, eq=False)
class MessageSpec:
    """One message (metadata record, control record, ...) with its versions and ordered fields."""

    name: str
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[FieldSpec, ...]
    api_key: Optional[int] = None
    kind: str = "metadata"
    source: str = ""
    about: str = ""

    @property
    def type_name(self) -> str:
        """The MetadataRecordType enum name as printed by dump-log, e.g. ``PARTITION_CHANGE_RECORD``."""
        return upper_snake(self.name)

    def is_flexible(self, version: int) -> bool:
        return self.flexible_versions.contains(version)

    def __post_init__(self) -> None:
        if self.valid_versions.empty:
            raise SpecError(f"message {self.name}: valid_versions must not be empty")
        if self.valid_versions.open_ended:
            raise SpecError(f"message {self.name} does not specify a maximum version")
        if self.api_key is not None and not 0 <= self.api_key <= MAX_VERSION:
            raise SpecError(f"message {self.name}: api_key {self.api_key} out of range")
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise SpecError(f"message {self.name}: duplicate field names")
        _check_unique_tags(self.fields, f"message {self.name}")
        for f in _walk(self.fields):
            if not self.flexible_versions.contains_range(f.tagged_versions):
                raise SpecError(f"field {f.name!r} of {self.name} specifies tagged versions {f.tagged_versions} "
                                f"that are not a subset of the flexible versions {self.flexible_versions}")


def _walk(fields: tuple[FieldSpec, ...]):
    for f in fields:
        yield f
        yield from _walk(f.fields)


# ---- loading ---------------------------------------------------------------------------------------------------

_FIELD_KEYS = {"name", "type", "versions", "nullable_versions", "tagged_versions", "tag", "default",
               "flexible_versions", "ignorable", "map_key", "about", "fields", "entity_type"}
_MESSAGE_KEYS = {"name", "api_key", "kind", "source", "valid_versions", "flexible_versions", "fields", "about",
                 "comment"}


def field_from_dict(raw: dict) -> FieldSpec:
    unknown = set(raw) - _FIELD_KEYS
    if unknown:
        raise SpecError(f"field {raw.get('name')!r}: unknown keys {sorted(unknown)}")
    tagged = Versions.parse(raw.get("tagged_versions"), NONE)
    versions = Versions.parse(raw.get("versions"), tagged if not tagged.empty else None)
    flexible = raw.get("flexible_versions")
    return FieldSpec(
        name=raw.get("name", ""),
        type=raw.get("type", ""),
        versions=versions,
        nullable_versions=Versions.parse(raw.get("nullable_versions"), NONE),
        tagged_versions=tagged,
        tag=raw.get("tag"),
        default=raw.get("default"),
        has_default="default" in raw,
        flexible_versions=Versions.parse(flexible) if flexible is not None else None,
        ignorable=bool(raw.get("ignorable", False)),
        map_key=bool(raw.get("map_key", False)),
        about=raw.get("about", ""),
        fields=tuple(field_from_dict(f) for f in raw.get("fields", ())),
    )


def message_from_dict(raw: dict) -> MessageSpec:
    unknown = set(raw) - _MESSAGE_KEYS
    if unknown:
        raise SpecError(f"message {raw.get('name')!r}: unknown keys {sorted(unknown)}")
    return MessageSpec(
        name=raw["name"],
        valid_versions=Versions.parse(raw.get("valid_versions")),
        flexible_versions=Versions.parse(raw.get("flexible_versions"), NONE),
        fields=tuple(field_from_dict(f) for f in raw.get("fields", ())),
        api_key=raw.get("api_key"),
        kind=raw.get("kind", "metadata"),
        source=raw.get("source", ""),
        about=raw.get("about", ""),
    )


@dataclass(frozen=True)
class SchemaFile:
    """The messages of one schema file plus where their facts come from."""

    upstream_commit: str
    messages: tuple[MessageSpec, ...] = field(default_factory=tuple)
    upstream_release: str = ""  # the Kafka release whose record versions the file describes

    def by_name(self, name: str) -> MessageSpec:
        for m in self.messages:
            if m.name == name or m.type_name == name:
                return m
        raise KeyError(name)

    @cached_property
    def by_api_key(self) -> dict[int, MessageSpec]:
        return {m.api_key: m for m in self.messages if m.api_key is not None}


def schema_from_dict(raw: dict) -> SchemaFile:
    if raw.get("format") != SCHEMA_FORMAT:
        raise SpecError(f"schema format {raw.get('format')!r} is not {SCHEMA_FORMAT!r}")
    messages = tuple(message_from_dict(m) for m in raw.get("messages", ()))
    keys = [m.api_key for m in messages if m.api_key is not None]
    if len(set(keys)) != len(keys):
        raise SpecError("duplicate api_key in schema file")
    upstream = raw.get("upstream", {})
    return SchemaFile(upstream_commit=upstream.get("commit", ""), messages=messages,
                      upstream_release=upstream.get("release", ""))


_CACHE: dict[str, SchemaFile] = {}


def load_schema(name: str) -> SchemaFile:
    """Load (once) ``udfs/schemas/<name>.json``, e.g. ``metadata_records``."""
    cached = _CACHE.get(name)
    if cached is None:
        text = (SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8")
        cached = _CACHE[name] = schema_from_dict(json.loads(text))
    return cached
