"""The generated module as it is written: its functions' lines, its global names, and small spec helpers.

:class:`_Module` collects the generated functions and the constants they name (sharing a name per value),
:class:`_Function` the lines of one function; the helpers turn field specs into the locals, dict displays and
f-strings the decoder and JSON writer sources (:mod:`udfs.message_codegen_decoders`,
:mod:`udfs.message_codegen_json`) both use. Separate so the two writers share them without importing each
other.
"""
from __future__ import annotations

from .message_codegen_runtime import _BASE_NAMESPACE
from .message_spec import FieldSpec


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
