"""The source of a message version's generated JSON writers, and the writers made per key sequence.

:class:`_JsonWriters` writes the f-string writers of a version's structs and, for a version with tagged
fields, a dispatcher; :class:`_ShapeWriters` holds (and generates on first sight) one writer per key sequence
the decoder can produce. Separate from the decoders' source (:mod:`udfs.message_codegen_decoders`): the two
only share the module they write into.
"""
from __future__ import annotations

from .message_codegen_runtime import JsonShapeMismatch
from .message_codegen_source import _Function, _is_tagged, _item, _local, _Module, _present, _return_fstring
from .message_spec import FieldSpec, MessageSpec

_INT_TYPES = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})


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
