"""Code generator for the generic codec: one specialised Python decoder and JSON writer per (message, version).

:mod:`udfs.message_codec` interprets a :class:`MessageSpec` with a tuple of per-field closures: exact, but
every field costs a few Python calls. Kafka generates code from its JSON specs
(generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java, JsonConverterGenerator.java);
this module does the same from our schema data. It writes the source of straight-line functions (one
``struct.unpack_from`` per run of fixed-width fields, the one-byte uvarint case inline, one check per known
tag only where the version has tagged fields) and of JSON writers (pre-built key text, per-type value
formatting), compiles it once with ``compile``/``exec`` and caches it (:func:`udfs.message_codec.generated`).
Nothing from the input ever reaches the source: names come from the schema files, whose field names
:mod:`udfs.message_spec` restricts to ``[A-Za-z][A-Za-z0-9]*``.

Why (timeit and ``time.process_time`` on the 1M-record perf segment, docs/decode-performance.md): the closure
decoder took ~2.1 us for a PartitionChangeRecord v1 body and the C JSON encoder ~1.0 us for its JSON; the
generated pair takes ~0.75 us and ~0.3-0.45 us.

The generated decoder is a *fast path*. It handles the shapes real metadata logs contain (one-byte lengths,
counts, tags and sizes; known tags in ascending order) and raises one of :data:`MISSES` on anything else,
malformed input included. Callers then run the reference closures, which decide the exact result or error,
so the generated code never has to reproduce an error message, and the two cannot disagree on bad input.

See what is generated for a message with::

    python -m udfs.message_codec --show PartitionChangeRecord 1
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable, Optional

from . import message_codec as mc
from .errors import CorruptInput
from .message_spec import FieldSpec, MessageSpec


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


@dataclass(frozen=True)
class Generated:
    """The generator's output for one (message, version): the source text and its compiled functions."""

    name: str
    source: str
    fast_decoder: Callable  # (buf, pos) -> (dict, pos, its JSON writer); raises one of MISSES off the fast path
    json_writer: Callable  # (dict) -> str; raises one of JSON_MISSES for a dict of another shape


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


_INT_LIST_TEXT: dict[tuple, str] = {}
int_list_text_get = _INT_LIST_TEXT.get


def int_list_text(values) -> str:
    """JSON of a list of ints, memoized by value: replica sets and ISRs repeat on nearly every record, and a
    cache hit (``tuple`` + ``dict.get``, ~0.08 us) is cheaper than formatting (~0.2 us for [1, 2, 3] with
    ``repr(values).replace(" ", "")``, itself cheaper than ``",".join(map(str, values))``)."""
    text = repr(values).replace(" ", "")
    if len(_INT_LIST_TEXT) >= 4096:
        _INT_LIST_TEXT.clear()
    _INT_LIST_TEXT[tuple(values)] = text
    return text


_QUOTED_LIST_TEXT: dict[tuple, str] = {}
quoted_list_text_get = _QUOTED_LIST_TEXT.get


def quoted_list_text(values) -> str:
    """JSON of a list of uuid or base64 texts (their alphabets never need escaping), memoized like
    :func:`int_list_text`: a partition's directory ids repeat on every PartitionRecord."""
    text = '["' + '","'.join(values) + '"]' if values else "[]"
    if len(_QUOTED_LIST_TEXT) >= 4096:
        _QUOTED_LIST_TEXT.clear()
    _QUOTED_LIST_TEXT[tuple(values)] = text
    return text


_UUID_LISTS: dict[bytes, tuple] = {}
uuid_list_get = _UUID_LISTS.get


def uuid_list(raw: bytes, n: int) -> list:
    """The texts of the ``n - 1`` uuids in ``raw``, memoized by the raw bytes (directory lists repeat; timeit:
    ~0.13 us for a hit against ~0.35 us for a list comprehension over three ids)."""
    texts = tuple(mc.uuid_text(r) for r in _array_unpackers("16s")[n](raw, 0))
    if len(_UUID_LISTS) >= 4096:
        _UUID_LISTS.clear()
    _UUID_LISTS[raw] = texts
    return list(texts)


def _json_string_list(values) -> str:
    return "[" + ",".join(map(mc.json_escape, values)) + "]"


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
    "_uuid_get": mc.uuid_cache_get,
    "_uuid_text": mc.uuid_text,
    "_escape": mc.json_escape,
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
}
_INT_TYPES = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})


# ---- shared pieces ----------------------------------------------------------------------------------------------

class _Module:
    """The generated module: functions in the order they were finished, and the constants they name."""

    def __init__(self) -> None:
        self.functions: list[list[str]] = []
        self.namespace: dict = dict(_BASE_NAMESPACE)
        self.described: dict[str, str] = {}  # constant name -> what it is, for the source header

    def name(self, wanted: str, value=None, what: str = "") -> str:
        """A global name based on ``wanted`` bound to ``value`` (``what`` describes a constant); a constant
        already bound under that name is shared."""
        if value is not None and self.namespace.get(wanted) is value:
            return wanted
        candidate, n = wanted, 1
        while candidate in self.namespace:
            n += 1
            candidate = f"{wanted}_{n}"
        self.namespace[candidate] = value
        if what:
            self.described[candidate] = what
        return candidate

    def source(self) -> str:
        return "\n\n".join("\n".join(lines) for lines in self.functions) + "\n"

    def child(self) -> "_Module":
        """A module for functions generated later (shape writers) that shares this one's names."""
        child = _Module()
        child.namespace, child.described = self.namespace, self.described
        return child


class _Function:
    """Lines of one generated function."""

    def __init__(self, header: str, doc: str) -> None:
        self.lines = [header, f'    """{doc}"""']

    def __call__(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)


def _is_tagged(f: FieldSpec, version: int, flexible: bool) -> bool:
    return flexible and f.tagged_versions.contains(version)


def _present(fields, version: int) -> list[FieldSpec]:
    return [f for f in fields if f.versions.contains(version)]


def _local(f: FieldSpec) -> str:
    return f"f_{f.json_name}"


def _tag_local(f: FieldSpec) -> str:
    return f"t_{f.json_name}"


def _item(f: FieldSpec) -> str:
    return f'd["{f.json_name}"]'


def _dict_display(fields: list[FieldSpec]) -> str:
    return "{" + ", ".join(f'"{f.json_name}": {_local(f)}' for f in fields) + "}"


def _return_fstring(emit: _Function, pieces: list[str]) -> None:
    """``return`` the JSON object of ``pieces`` (``"key":{value}`` f-string parts), one per line: adjacent
    f-strings compile to one string build, so this costs nothing over a single long f-string."""
    if not pieces:
        emit(1, "return '{}'")
        return
    emit(1, "return (")
    for i, piece in enumerate(pieces):
        emit(2, "f'" + ("{{" if i == 0 else "") + piece + ("}}" if i == len(pieces) - 1 else "") + "'")
    emit(1, ")")


def _field_list(fields: list[FieldSpec]) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in fields) or "no fields"


# ---- decoders ---------------------------------------------------------------------------------------------------

class _Decoders:
    """Writes the decode functions of one message version: one for the body and one per struct type."""

    def __init__(self, module: _Module, version: int, flexible: bool):
        self.module = module
        self.version = version
        self.flexible = flexible
        self.structs: dict[int, str] = {}  # id(fields tuple) -> function name
        self.returns = "d, pos"
        self.shapes: Optional[tuple[str, str]] = None

    def struct(self, type_name: str, fields: tuple) -> str:
        name = self.structs.get(id(fields))
        if name is None:
            name = self.structs[id(fields)] = self.module.name(f"decode_{type_name}")
            saved = self.returns, self.shapes
            self.write(name, fields, f"struct {type_name}")
            self.returns, self.shapes = saved
        return name

    def write(self, name: str, fields: tuple, what: str, writer: Optional[str] = None,
              shapes: Optional[tuple[str, str]] = None) -> None:
        """Write one decode function. Nested structs return ``(dict, pos)``; the message body (``writer`` or
        ``shapes`` given) returns ``(dict, pos, JSON writer)``: the version's one writer, or with tagged fields
        the writer of the key sequence it produced, picked by a bit mask of the tagged fields found
        (``shapes`` = names of the mask-indexed list and of the :class:`_ShapeWriters`). That spares
        ``payload_json`` a dispatch on ``tuple(d)`` per record (timeit: ~0.18 us)."""
        version, flexible = self.version, self.flexible
        present = _present(fields, version)
        untagged = [f for f in present if not _is_tagged(f, version, flexible)]
        tagged = [f for f in present if _is_tagged(f, version, flexible)]
        if writer is not None or (shapes is not None and not tagged):
            self.returns = f"d, pos, {writer}"
        elif shapes is not None:
            self.returns = "d, pos, w"
        else:
            self.returns = "d, pos"
        self.shapes = shapes if tagged else None
        signature = f"def {name}(buf, pos):"
        emit = _Function(signature, f"{what} v{version}: {_field_list(present)}.")
        run: list[FieldSpec] = []
        for f in untagged + [None]:
            if f is not None and f.type in mc.FIXED_FORMATS and not f.is_array:
                run.append(f)
                continue
            if run:
                self._fixed_run(emit, run)
                run = []
            if f is not None:
                self._value(emit, f, _local(f), 1, tagged=False)
        if flexible:
            self._tag_section(emit, present, untagged, tagged)
        else:
            emit(1, f"d = {_dict_display(untagged)}")
        if self.shapes is not None:
            by_mask, shape_writers = self.shapes
            emit(1, f"w = {by_mask}[m]")
            emit(1, "if w is None:")
            emit(2, f"w = {shape_writers}.for_mask(m)")
        emit(1, f"return {self.returns}")
        self.module.functions.append(emit.lines)

    def _fixed_run(self, emit: _Function, run: list[FieldSpec]) -> None:
        layout = _layout(">" + "".join(mc.FIXED_FORMATS[f.type] for f in run))
        unpack = self.module.name(f"_unpack_{run[0].json_name}", layout.unpack_from,
                                  f"struct.Struct({layout.format!r}).unpack_from")
        names = [_local(f) for f in run]
        emit(1, f"# {_field_list(run)}: {layout.size} bytes, one unpack")
        emit(1, f"{', '.join(names)}{',' if len(names) == 1 else ''} = {unpack}(buf, pos)")
        for f, name in zip(run, names, strict=True):
            self._convert(emit, f.type, name, 1)
        emit(1, f"pos += {layout.size}")

    @staticmethod
    def _convert(emit: _Function, type_name: str, var: str, indent: int) -> None:
        if type_name == "bool":
            emit(indent, f"{var} = {var} != 0")
        elif type_name == "uuid":
            # ids repeat on every record: their text comes from message_codec's cache
            emit(indent, f"{var} = _uuid_get({var}) or _uuid_text({var})")

    def _value(self, emit: _Function, f: FieldSpec, var: str, indent: int, tagged: bool) -> None:
        """Read one value of ``f`` into ``var`` (tagged values always use the compact encodings)."""
        version = self.version
        flexible = mc.is_flexible_field(f, version, True if tagged else self.flexible)
        nullable = f.nullable_versions.contains(version)
        if f.type in mc.FIXED_FORMATS and not f.is_array:
            layout = _layout(">" + mc.FIXED_FORMATS[f.type])
            unpack = self.module.name(f"_unpack_{f.type}", layout.unpack_from,
                                      f"struct.Struct({layout.format!r}).unpack_from")
            emit(indent, f"{var}, = {unpack}(buf, pos)")
            self._convert(emit, f.type, var, indent)
            emit(indent, f"pos += {layout.size}")
        elif f.type == "string" and flexible:
            emit(indent, "c = buf[pos]")
            emit(indent, f"if 0 < c < {_ONE_BYTE:#x}:  # uvarint(length + 1) in one byte")
            emit(indent + 1, f'{var} = str(buf[pos + 1:pos + c], "utf-8")')
            emit(indent + 1, "pos += c")
            self._other_counts(emit, f, var, indent, nullable, tagged)
        elif f.is_array and flexible and f.element_type in mc.FIXED_FORMATS:
            code = mc.FIXED_FORMATS[f.element_type]
            width = struct.calcsize(">" + code)
            table = self.module.name(f"_unpack_{f.element_type}_array", _array_unpackers(code),
                                     f"[struct.Struct('>' + (n - 1) * {code!r}).unpack_from for n in 0..127]")
            values = f"{table}[c](buf, pos + 1)"
            emit(indent, "c = buf[pos]")
            emit(indent, "if c == 1:")
            emit(indent + 1, f"{var} = []")
            emit(indent + 1, "pos += 1")
            emit(indent, f"elif 1 < c < {_ONE_BYTE:#x}:  # c - 1 elements, one unpack")
            if f.element_type == "uuid":
                emit(indent + 1, "raw = buf[pos + 1:pos + 1 + (c - 1) * 16]")
                emit(indent + 1, f"{var} = _uuid_list_get(raw)")
                emit(indent + 1, f"{var} = list({var}) if {var} is not None else _uuid_list(raw, c)")
            elif f.element_type == "bool":
                emit(indent + 1, f"{var} = [raw != 0 for raw in {values}]")
            else:
                emit(indent + 1, f"{var} = list({values})")
            emit(indent + 1, f"pos += 1 + (c - 1) * {width}")
            self._other_counts(emit, f, var, indent, nullable, tagged)
        elif f.is_struct_array and flexible:
            element = self.struct(f.element_type, f.fields)
            emit(indent, "c = buf[pos]")
            emit(indent, f"if 0 < c < {_ONE_BYTE:#x}:")
            emit(indent + 1, "pos += 1")
            emit(indent + 1, f"{var} = []")
            emit(indent + 1, "for _ in range(c - 1):")
            emit(indent + 2, f"element, pos = {element}(buf, pos)")
            emit(indent + 2, f"{var}.append(element)")
            self._other_counts(emit, f, var, indent, nullable, tagged)
        elif f.is_struct and not nullable:
            emit(indent, f"{var}, pos = {self.struct(f.type, f.fields)}(buf, pos)")
        else:
            # classic encodings, bytes, string arrays, nullable structs: rare, so the reference reader does it
            emit(indent, f"{var}, pos = {self._reference(f, tagged)}(buf, pos)")

    def _reference(self, f: FieldSpec, tagged: bool) -> str:
        reader = (mc.tagged_value_reader(f, self.version) if tagged
                  else mc.value_reader(f, self.version, self.flexible))
        what = "tagged_value_reader" if tagged else "value_reader"
        return self.module.name(f"_reference_{f.json_name}", reader,
                                f"message_codec.{what}({f.name}, {self.version}) (the closure path)")

    def _other_counts(self, emit: _Function, f: FieldSpec, var: str, indent: int, nullable: bool,
                      tagged: bool) -> None:
        """After the one-byte case: null when allowed, else the reference reader (long value or an error)."""
        if nullable:
            emit(indent, "elif c == 0:")
            emit(indent + 1, f"{var} = None")
            emit(indent + 1, "pos += 1")
        emit(indent, "else:")
        emit(indent + 1, f"{var}, pos = {self._reference(f, tagged)}(buf, pos)")

    def _tag_section(self, emit: _Function, present: list[FieldSpec], untagged: list[FieldSpec],
                     tagged: list[FieldSpec]) -> None:
        if not tagged:
            emit(1, f"d = {_dict_display(untagged)}")
            emit(1, "if buf[pos]:  # tags this version does not know: the reference decoder keeps them")
            emit(2, "raise FastPathMiss")
            emit(1, "pos += 1")
            return
        by_tag = sorted(tagged, key=lambda f: f.tag)
        # Tags arrive in ascending order. When that is also spec order and every tagged field comes after the
        # untagged ones, each value goes straight into the dict; otherwise (PartitionRecord's
        # LeaderRecoveryState, PartitionChangeRecord v2's Directories) values wait in locals and the dict is
        # built in spec order afterwards.
        direct = by_tag == tagged and present[len(untagged):] == tagged
        masks = self.shapes is not None
        bit = {id(f): 1 << k for k, f in enumerate(tagged)}  # the shape writers' mask: spec order
        if direct:
            emit(1, f"d = {_dict_display(untagged)}")
            if masks:
                emit(1, "m = 0  # which tagged fields are in d, for the JSON writer")
        emit(1, "n = buf[pos]")
        emit(1, "pos += 1")
        if direct:
            emit(1, "if n:")
            i = 2
        else:
            emit(1, "if n == 0:")
            emit(2, f"d = {_dict_display(untagged)}")
            emit(2, "return " + self.returns.replace(", w", f", {self.shapes[0]}[0]") if masks
                 else f"return {self.returns}")
            emit(1, " = ".join(_tag_local(f) for f in tagged) + " = _ABSENT")
            i = 1
        # Tags arrive in ascending order, so one check per known tag in that order, no loop: per record this
        # is ~0.2 us cheaper than a for loop over an if/elif chain (timeit, PartitionChangeRecord with 2 tags).
        for k, f in enumerate(by_tag):
            more = "" if k == 0 else "n and "
            emit(i, f"if {more}buf[pos] == {f.tag} and buf[pos + 1] < {_ONE_BYTE:#x}:  # {f.name} {f.type}")
            emit(i + 1, "pos += 2  # a known tag's size is not checked (neither do Kafka's generated readers)")
            self._value(emit, f, "v", i + 1, tagged=True)
            default = f.default_value()
            check = "v is not None" if default is None else f"v != {default!r}"
            emit(i + 1, f"if {check}:  # a tagged field equal to its default is left out")
            emit(i + 2, f'd["{f.json_name}"] = v' if direct else f"{_tag_local(f)} = v")
            if direct and masks:
                emit(i + 2, f"m |= {bit[id(f)]}")
            emit(i + 1, "n -= 1")
        emit(i, "if n:  # unknown (kept as raw bytes), repeated, out of order, not valid in this version, or a")
        emit(i + 1, "raise FastPathMiss  # multi-byte count, tag or size: the reference decoder decides")
        if direct:
            return
        group: list[FieldSpec] = []
        started = False
        if masks:
            emit(1, "m = 0  # which tagged fields are in d, for the JSON writer")
        for f in present + [None]:
            if f is not None and f not in tagged:
                group.append(f)
                continue
            if not started:
                emit(1, f"d = {_dict_display(group)}")
                started = True
            else:
                for g in group:
                    emit(1, f'd["{g.json_name}"] = {_local(g)}')
            group = []
            if f is not None:
                emit(1, f"if {_tag_local(f)} is not _ABSENT:")
                emit(2, f'd["{f.json_name}"] = {_tag_local(f)}')
                if masks:
                    emit(2, f"m |= {bit[id(f)]}")


# ---- JSON writers -----------------------------------------------------------------------------------------------

class _JsonWriters:
    """Writes ``json_<Message>(d) -> str``: the JSON text of a decoded dict, byte-equal to
    ``json.dumps(d, separators=(",", ":"), ensure_ascii=False)`` and so to Kafka's JSON, with the key text
    pre-built and each value formatted by its schema type.

    A message version without tagged fields gets one f-string. One with tagged fields gets a dispatcher on
    the dict's key sequence (``tuple(d)``) to a writer generated, on first sight, for exactly those keys: one
    f-string again, no per-field presence checks (timeit, PartitionChangeRecord with 2 of its 7 tags:
    ~0.45 us against ~0.8 us for a ``d.get`` per tagged field). Key sequences the version cannot produce go
    to the generic encoder. Nested structs use ``d.get`` for their tagged fields.

    The writers trust the value types (they are attached to what the decoders produce); they check only the
    keys: none missing (``KeyError``), none extra (``len`` or the key sequence).
    """

    def __init__(self, module: _Module, version: int, flexible: bool):
        self.module = module
        self.version = version
        self.flexible = flexible
        self.structs: dict[int, str] = {}

    def struct(self, type_name: str, fields: tuple) -> str:
        name = self.structs.get(id(fields))
        if name is None:
            name = self.structs[id(fields)] = self.module.name(f"json_{type_name}")
            self.write(name, fields, f"struct {type_name}")
        return name

    def write(self, name: str, fields: tuple, what: str) -> None:
        version, flexible = self.version, self.flexible
        present = _present(fields, version)
        emit = _Function(f"def {name}(d):", f"{what} v{version} as JSON text.")
        if not present:
            emit(1, "if d:")
            emit(2, "raise JsonShapeMismatch")
            emit(1, 'return "{}"')
        else:
            # Untagged keys are always there: consecutive ones become one f-string. A tagged first field may
            # be absent, so then every piece starts with "," and the first one is cut at the end.
            tagged_any = any(_is_tagged(f, version, flexible) for f in present)
            opening = not _is_tagged(present[0], version, flexible)
            if not tagged_any:
                emit(1, f"if len(d) != {len(present)}:  # a key this version does not have")
                emit(2, "raise JsonShapeMismatch")
            else:
                emit(1, f"n = {sum(1 for f in present if not _is_tagged(f, version, flexible))}")
            pieces: list[str] = []
            started = False
            for i, f in enumerate(present + [None]):
                if f is not None and not _is_tagged(f, version, flexible):
                    comma = "" if i == 0 else ","
                    pieces.append(f'{comma}"{f.json_name}":{self._slot(f, self._inline(emit, f, _item(f)))}')
                    continue
                if pieces or not started:
                    text = ("{{" if opening and not started else "") + "".join(pieces)
                    if f is None and not tagged_any:
                        _return_fstring(emit, pieces)
                        break
                    emit(1, f"{'s +=' if started else 's ='} f'{text}'" if text else "s = ''")
                    started, pieces = True, []
                if f is None:
                    break
                emit(1, f'v = d.get("{f.json_name}", _ABSENT)')
                emit(1, "if v is not _ABSENT:")
                emit(2, f"s += f',\"{f.json_name}\":{self._slot(f, self._inline(emit, f, 'v', 2))}'")
                emit(2, "n += 1")
            if tagged_any:
                emit(1, "if len(d) != n:  # a key this version does not have")
                emit(2, "raise JsonShapeMismatch")
                emit(1, "return s + '}'" if opening else "return '{' + s[1:] + '}'")
        self.module.functions.append(emit.lines)

    def write_dispatcher(self, name: str, spec: MessageSpec, shapes: str) -> None:
        emit = _Function(f"def {name}(d):", f"{spec.name} v{self.version} as JSON text: the writer generated for "
                                            f"the dict's key sequence.")
        emit(1, "keys = tuple(d)")
        emit(1, f"write = {shapes}.get(keys)")
        emit(1, "if write is None:")
        emit(2, f"write = {shapes}.new(keys)  # generates it, or raises JsonShapeMismatch")
        emit(1, "return write(d)")
        self.module.functions.append(emit.lines)

    def write_shape(self, name: str, spec: MessageSpec, keys: tuple) -> None:
        """One f-string for a dict whose keys are exactly ``keys`` (checked by the dispatcher)."""
        by_name = {f.json_name: f for f in _present(spec.fields, self.version)}
        emit = _Function(f"def {name}(d):", f"{spec.name} v{self.version} with keys {', '.join(keys)}.")
        emit(1, f"if len(d) != {len(keys)}:  # the decoder picked this writer; the dict has changed since")
        emit(2, "raise JsonShapeMismatch")
        pieces = []
        for i, key in enumerate(keys):
            f = by_name[key]
            pieces.append(f'{"," if i else ""}"{key}":{self._slot(f, self._inline(emit, f, _item(f)))}')
        _return_fstring(emit, pieces)
        self.module.functions.append(emit.lines)

    def _inline(self, emit: _Function, f: FieldSpec, value: str, indent: int = 1) -> str:
        """The JSON text expression of ``value``, or a local holding it when it cannot sit in an f-string."""
        text = self._text(f, value)
        if "'" not in text and "\\" not in text:
            return text
        var = "v" if value == "v" else _local(f)
        emit(indent, f"{var} = {text}")
        return var

    @staticmethod
    def _slot(f: FieldSpec, var: str) -> str:
        """The f-string piece for a value: ints and uuid text go in as they are (uuid between quotes)."""
        if not f.is_array and f.type == "uuid":
            return '"{' + var + '}"'
        return "{" + var + "}"

    def _text(self, f: FieldSpec, value: str) -> str:
        """An expression for the JSON text of ``value`` (for ints and uuids: the value, see ``_slot``)."""
        nullable = f.nullable_versions.contains(self.version)
        if f.is_array:
            element = f.element_type
            if f.is_struct_array:
                text = '"[" + ",".join(map(' + self.struct(element, f.fields) + ", {v})) + \"]\""
            elif element in _INT_TYPES:
                text = "(_int_list_text_get(tuple({v})) or _int_list_text({v}))"
            elif element in ("uuid", "bytes", "records"):
                text = "(_quoted_list_text_get(tuple({v})) or _quoted_list_text({v}))"
            elif element == "string":
                text = "_json_string_list({v})"
            elif element == "bool":
                text = "_json_bool_list({v})"
            else:
                text = "_json_float_list({v})"
        elif f.is_struct:
            text = self.struct(f.type, f.fields) + "({v})"
        elif f.type in _INT_TYPES or f.type == "uuid":
            return value  # formatted by the f-string; decoded ids are base64url text, never escaped
        elif f.type == "bool":
            text = '("true" if {v} else "false")'
        elif f.type == "float64":
            text = "_json_float({v})"
        elif f.type == "string":
            text = "_escape({v})"
        else:  # bytes, records: base64 text, which needs no escaping
            text = "'\"' + {v} + '\"'"
        text = text.format(v=value)
        return f'("null" if {value} is None else {text})' if nullable else text


# ---- entry points -----------------------------------------------------------------------------------------------

def generate(spec: MessageSpec, version: int) -> Generated:
    """Generate, compile and return the decoder and JSON writer of ``spec`` at ``version`` (not cached here:
    :func:`udfs.message_codec.generated` caches)."""
    if not spec.valid_versions.contains(version):
        raise ValueError(f"{spec.name} has no version {version} (valid versions {spec.valid_versions})")
    flexible = spec.is_flexible(version)
    module = _Module()
    decode_name = module.name(f"decode_{spec.name}_v{version}")
    json_name = module.name(f"json_{spec.name}_v{version}")
    kind = f"{spec.name} ({'flexible' if flexible else 'classic'} encodings)"
    decoders = _Decoders(module, version, flexible)
    writers = _JsonWriters(module, version, flexible)
    present = _present(spec.fields, version)
    shapes = None
    tagged = [f for f in present if _is_tagged(f, version, flexible)]
    if tagged:
        shapes = _ShapeWriters(spec, version, writers)
        shapes_name = module.name("_shape_writers", shapes, "JSON writer per key sequence, generated on first use")
        if len(tagged) <= _ShapeWriters.MASK_FIELDS:
            by_mask_name = module.name("_writers_by_mask", shapes.by_mask, "the same, by bit mask of tagged fields")
            decoders.write(decode_name, spec.fields, kind, shapes=(by_mask_name, shapes_name))
        else:  # too many combinations for a mask table: the decoder hands out the dispatcher
            decoders.write(decode_name, spec.fields, kind, writer=json_name)
        writers.write_dispatcher(json_name, spec, shapes_name)
        # generated now: the shape of no tags (and a full one, so --show has an example of each)
        shapes.add(shapes.keys_of_mask(0), module)
        shapes.add(tuple(f.json_name for f in present), module)
    else:
        decoders.write(decode_name, spec.fields, kind, writer=json_name)
        writers.write(json_name, spec.fields, spec.name)
    source = (f"# Generated by udfs.message_codegen from udfs/schemas: {spec.name} v{version}. Do not edit.\n"
              + "".join(f"# {name} = {what}\n" for name, what in module.described.items()) + "\n"
              + module.source())
    namespace = module.namespace
    exec(compile(source, f"<generated {spec.name} v{version}>", "exec"), namespace)  # noqa: S102 - our own text
    if shapes is not None:
        shapes.bind_pending()
    return Generated(f"{spec.name} v{version}", source, namespace[decode_name], namespace[json_name])


class _ShapeWriters(dict):
    """Key sequence -> generated writer, for one message version with tagged fields (see :class:`_JsonWriters`);
    ``by_mask[m]`` is the same writer by bit mask of the tagged fields present (bit k: k-th tagged field in
    spec order), filled as the decoder meets each combination.

    A key sequence gets a writer only when the decoder could have produced it: the version's keys in spec
    order, all untagged ones included. Nothing from the data reaches the source: it is written from the specs.
    """

    MASK_FIELDS = 10  # up to 2**10 combinations get a mask table (PartitionChangeRecord v2 has 9 tagged fields)
    MAX_SHAPES = 1 << MASK_FIELDS  # writers generated per version at most

    def __init__(self, spec: MessageSpec, version: int, writers: _JsonWriters):
        super().__init__()
        self.spec, self.version, self.writers = spec, version, writers
        present = _present(spec.fields, version)
        self.names = tuple(f.json_name for f in present)
        self.tagged = tuple(f.json_name for f in present if _is_tagged(f, version, writers.flexible))
        self.by_mask: list = [None] * (1 << min(len(self.tagged), self.MASK_FIELDS))
        self.pending: dict[tuple, str] = {}

    def keys_of_mask(self, mask: int) -> tuple:
        chosen = {name for k, name in enumerate(self.tagged) if mask >> k & 1}
        return tuple(n for n in self.names if n not in self.tagged or n in chosen)

    def add(self, keys: tuple, module: _Module) -> str:
        """Write the shape writer's source into ``module``; :meth:`bind_pending` picks it up once compiled."""
        present = [k for k in keys if k in self.tagged]
        name = module.name(f"json_{self.spec.name}_v{self.version}__" + ("_".join(present) or "no_tags"))
        saved, self.writers.module = self.writers.module, module
        try:
            self.writers.write_shape(name, self.spec, keys)
        finally:
            self.writers.module = saved
        self.pending[keys] = name
        return name

    def bind_pending(self) -> None:
        for keys, name in self.pending.items():
            writer = self[keys] = self.writers.module.namespace[name]
            mask = sum(1 << k for k, n in enumerate(self.tagged) if n in keys)
            if mask < len(self.by_mask):
                self.by_mask[mask] = writer
        self.pending.clear()

    def new(self, keys):
        """The writer for ``keys``, generated now; raises JsonShapeMismatch for a sequence the version cannot
        produce (then the caller uses the generic encoder)."""
        if len(self) >= self.MAX_SHAPES or not all(k.__class__ is str for k in keys):
            raise JsonShapeMismatch("no generated writer for this key sequence")
        chosen = set(keys)
        if keys != tuple(n for n in self.names if n not in self.tagged or n in chosen):
            raise JsonShapeMismatch("keys the decoder would not produce")
        return self._generate(keys)

    def _generate(self, keys: tuple):
        module = self.writers.module.child()
        self.add(keys, module)
        exec(compile(module.source(), f"<generated {self.spec.name} v{self.version} shape>", "exec"),  # noqa: S102
             module.namespace)
        self.bind_pending()
        return self[keys]

    def for_mask(self, mask: int):
        """The writer for the tagged fields in ``mask`` (the decoder calls this once per new combination; the
        mask table bounds how many, so this never refuses)."""
        keys = self.keys_of_mask(mask)
        writer = self.get(keys)
        return writer if writer is not None else self._generate(keys)


def find_spec(name: str) -> Optional[MessageSpec]:
    """A message of any schema file by name (``PartitionChangeRecord``) or dump-log type name."""
    from .message_spec import SCHEMA_DIR, load_schema

    for path in sorted(SCHEMA_DIR.glob("*.json")):
        try:
            return load_schema(path.stem).by_name(name)
        except KeyError:
            continue
    return None
