"""The source of a message version's generated decoders: one function for the body and one per struct type.

Straight-line reads: one ``struct.unpack_from`` per run of fixed-width fields, the one-byte uvarint case
inline, one check per known tag in ascending tag order; anything else is a fast-path miss or a call to the
reference reader (:mod:`udfs.message_reader`). Separate from the JSON writers' source
(:mod:`udfs.message_codegen_json`): the two only share the module they write into.
"""
from __future__ import annotations

import struct
from typing import Optional

from . import message_reader as mr
from . import message_values as mv
from .message_codegen_runtime import _ONE_BYTE, _array_unpackers, _layout
from .message_codegen_source import (
    _dict_display,
    _field_list,
    _Function,
    _is_tagged,
    _local,
    _Module,
    _present,
    _tag_local,
)
from .message_spec import FieldSpec


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
        self.read_untagged(emit, untagged)
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

    def read_untagged(self, emit: _Function, fields: list[FieldSpec], read=None) -> None:
        """Each untagged field into its local: runs of fixed-width fields unpacked at once, any other field by
        ``read(emit, field, local, indent, tagged)`` (default :meth:`_value`; the row functions pass theirs)."""
        read = read or self._value
        run: list[FieldSpec] = []
        for f in fields + [None]:
            if f is not None and f.type in mv.FIXED_FORMATS and not f.is_array:
                run.append(f)
                continue
            if run:
                self._fixed_run(emit, run)
                run = []
            if f is not None:
                read(emit, f, _local(f), 1, False)

    def _fixed_run(self, emit: _Function, run: list[FieldSpec]) -> None:
        layout = _layout(">" + "".join(mv.FIXED_FORMATS[f.type] for f in run))
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
            # ids repeat on every record: their text comes from message_values' cache
            emit(indent, f"{var} = _uuid_get({var}) or _uuid_text({var})")

    def _value(self, emit: _Function, f: FieldSpec, var: str, indent: int, tagged: bool) -> None:
        """Read one value of ``f`` into ``var`` (tagged values always use the compact encodings)."""
        version = self.version
        flexible = mv.is_flexible_field(f, version, True if tagged else self.flexible)
        nullable = f.nullable_versions.contains(version)
        if f.type in mv.FIXED_FORMATS and not f.is_array:
            layout = _layout(">" + mv.FIXED_FORMATS[f.type])
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
        elif f.is_array and flexible and f.element_type in mv.FIXED_FORMATS:
            code = mv.FIXED_FORMATS[f.element_type]
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
        reader = (mr.tagged_value_reader(f, self.version) if tagged
                  else mr.value_reader(f, self.version, self.flexible))
        what = "tagged_value_reader" if tagged else "value_reader"
        return self.module.name(f"_reference_{f.json_name}", reader,
                                f"message_reader.{what}({f.name}, {self.version}) (the closure path)")

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
