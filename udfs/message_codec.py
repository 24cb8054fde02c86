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
once per ``(spec, version)`` (``functools.lru_cache``; :func:`udfs.message_reader.reference_decoder`). The
generated path (:mod:`udfs.message_codegen`, :func:`generated`) writes and compiles straight-line Python for
the version, plus a JSON writer; it handles the common shapes and hands anything else, every malformed input
included, to the reference path (:func:`decoder` does both). Decoding returns a plain ``dict`` in JSON order
(a :class:`udfs.message_values.MessageData` when unknown tags were found, so they survive a decode -> encode
round trip without showing up in the JSON). Encoding (:func:`udfs.message_writer.encode`) takes the same dict
shape: missing keys mean "default", as Kafka's one-data-object-for-all-versions rule.

The codec's modules: :mod:`udfs.message_values` (value forms shared by all), :mod:`udfs.message_reader` (the
reference reader), :mod:`udfs.message_writer` (encoding), :mod:`udfs.message_codegen` (the generated path) and
this one, the decoding entry point: which path decodes a message version, cached, and the ``--show`` command.

Show the generated source of a message version::

    python -m udfs.message_codec --show PartitionChangeRecord 1
"""
from __future__ import annotations

import argparse
import sys
from functools import lru_cache
from typing import Callable

from . import message_codegen, message_codegen_rows
from .errors import CorruptInput
from .message_codegen_runtime import MISSES
from .message_reader import ValueReader, reference_decoder
from .message_spec import MessageSpec


@lru_cache(maxsize=None)
def generated(spec: MessageSpec, version: int):
    """The generated decoder and JSON writer of ``spec`` at ``version`` (:class:`message_codegen.Generated`),
    compiled on first use and cached."""
    return message_codegen.generate(spec, version)


@lru_cache(maxsize=None)
def row_decoder(spec: MessageSpec, version: int, extract: tuple) -> Callable:
    """The fused ``(buf, pos) -> (JSON text, end, values)`` of ``spec`` at a flexible ``version``
    (:mod:`udfs.message_codegen_rows`): the record's JSON and the fields ``extract`` names, without a dict. A fast
    path only: it raises one of ``MISSES`` where the generated decoder would, and does not bound slices by the
    buffer (callers check the end, as :func:`decoder` does)."""
    return message_codegen_rows.generate_row(spec, version, extract)[1]


@lru_cache(maxsize=None)
def decoder(spec: MessageSpec, version: int) -> ValueReader:
    """The ``(buf, pos) -> (dict, pos)`` reader of ``spec`` at ``version``: the generated fast path, and the
    reference decoder whenever the fast path does not apply (its result or its ``CorruptInput`` is final)."""
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
    ``message_codegen_runtime.JSON_MISSES`` when the dict has keys the version does not have or lacks required
    ones.
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


def main(argv=None) -> int:
    """``python -m udfs.message_codec --show PartitionChangeRecord 1``: print the generated source."""
    parser = argparse.ArgumentParser(prog="python -m udfs.message_codec", description=main.__doc__)
    parser.add_argument("--show", nargs=2, metavar=("MESSAGE", "VERSION"), required=True,
                        help="message name (PartitionChangeRecord or PARTITION_CHANGE_RECORD) and version")
    args = parser.parse_args(argv)
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
