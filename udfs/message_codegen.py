"""Code generator for the generic codec: one specialised Python decoder and JSON writer per (message, version).

:mod:`udfs.message_reader` interprets a :class:`MessageSpec` with a tuple of per-field closures: exact, but
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
counts, tags and sizes; known tags in ascending order) and raises one of
:data:`udfs.message_codegen_runtime.MISSES` on anything else, malformed input included. Callers then run the
reference closures, which decide the exact result or error, so the generated code never has to reproduce an
error message, and the two cannot disagree on bad input.

The generator's modules: :mod:`udfs.message_codegen_runtime` (what the generated code calls and raises per
record), :mod:`udfs.message_codegen_source` (the generated module's lines and names),
:mod:`udfs.message_codegen_decoders` and :mod:`udfs.message_codegen_json` (the decoder and JSON writer
sources) and this one, which puts a version's source together and compiles it (:func:`generate`).

See what is generated for a message with::

    python -m udfs.message_codec --show PartitionChangeRecord 1
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from .message_codegen_decoders import _Decoders
from .message_codegen_json import _JsonWriters, _ShapeWriters
from .message_codegen_source import _is_tagged, _Module, _present
from .message_spec import MessageSpec


@dataclass(frozen=True)
class Generated:
    """The generator's output for one (message, version): the source text and its compiled functions."""

    name: str
    source: str
    fast_decoder: Callable  # (buf, pos) -> (dict, pos, its JSON writer); raises one of MISSES off the fast path
    json_writer: Callable  # (dict) -> str; raises one of JSON_MISSES for a dict of another shape


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


def find_spec(name: str) -> Optional[MessageSpec]:
    """A message of any schema file by name (``PartitionChangeRecord``) or dump-log type name."""
    from .message_spec import SCHEMA_DIR, load_schema

    for path in sorted((p for p in SCHEMA_DIR.iterdir() if p.name.endswith(".json")), key=lambda p: p.name):
        try:
            return load_schema(path.name[: -len(".json")]).by_name(name)
        except KeyError:
            continue
    return None
