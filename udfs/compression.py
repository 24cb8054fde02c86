"""Record-batch compression codecs, with a hard limit on decompressed size.

Codec ids are the low 3 attribute bits of a batch (clients/.../record/CompressionType.java @1eb7644):
0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd. What Kafka writes (clients/.../common/compress/*.java):

- gzip: a gzip stream (``GzipOutputStream``, deflate level 6 by default). Concatenated members are read.
- snappy: xerial-snappy's ``SnappyOutputStream`` framing: magic ``82 'SNAPPY' 00``, int32 version (1),
  int32 min-compatible version (1), then blocks of ``int32 compressed length, raw snappy block`` (32 KiB of
  input per block). Other clients (e.g. librdkafka on old versions) wrote a bare raw snappy block, so both
  are read: the magic decides.
- lz4: ``Lz4BlockOutputStream`` writes the standard LZ4 frame format (magic 0x184D2204, independent 64 KiB
  blocks, no block or content checksum). Magic 0 batches used a broken header checksum; they are legacy and
  never decompressed here.
- zstd: a zstd frame (``ZstdOutputStreamNoFinalizer``, level 3), without a content size.

:func:`decompress` raises :class:`udfs.errors.CorruptInput` with kind ``decompression_bomb`` when the output
would pass ``max_bytes``, ``decompression_failed`` when the codec rejects the input, and
``unsupported_compression`` for ids 5-7.
"""
from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from .errors import CorruptInput

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
IDS = {name: codec for codec, name in NAMES.items()}
DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # far above Kafka's default max.message.bytes (1 MiB)

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, min compatible version
_XERIAL_BLOCK_INPUT = 32 * 1024  # SnappyOutputStream.DEFAULT_BLOCK_SIZE
_INT32 = struct.Struct(">i")
_ZSTD_SLICE = 256


def codec_id(codec) -> int:
    """Accept an id (0-4) or a name (``"gzip"``) and return the id."""
    if isinstance(codec, str):
        try:
            return IDS[codec.lower()]
        except KeyError:
            raise ValueError(f"unknown compression {codec!r}; expected one of {sorted(IDS)}") from None
    if codec not in NAMES:
        raise ValueError(f"unknown compression id {codec!r}; expected one of {sorted(NAMES)}")
    return codec


def _bomb(codec: int, max_bytes: int, offset) -> CorruptInput:
    return CorruptInput("decompression_bomb",
                        f"{NAMES[codec]} batch decompresses to more than {max_bytes} bytes", offset)


def decompress(codec: int, data, max_bytes: int = DEFAULT_MAX_BYTES, offset=None) -> bytes:
    """Decompress one batch's records section. ``offset`` (file position) is only used in errors."""
    if codec == NONE:
        if len(data) > max_bytes:
            raise _bomb(codec, max_bytes, offset)
        return bytes(data)
    if codec not in NAMES:
        raise CorruptInput("unsupported_compression", f"Unknown compression type id: {codec}", offset)
    try:
        if codec == GZIP:
            out = _gunzip(data, max_bytes)
        elif codec == SNAPPY:
            out = _unsnappy(data, max_bytes)
        elif codec == LZ4:
            out = _unlz4(data, max_bytes)
        else:
            out = _unzstd(data, max_bytes)
    except CorruptInput as exc:
        raise CorruptInput(exc.error.kind, exc.error.message, offset) from None
    except Exception as exc:  # every codec library has its own error types; all mean "corrupt"
        raise CorruptInput("decompression_failed", f"{NAMES[codec]}: {exc}", offset) from None
    if len(out) > max_bytes:
        raise _bomb(codec, max_bytes, offset)
    return out


def _gunzip(data, max_bytes: int) -> bytes:
    data = bytes(data)
    out = bytearray()
    while True:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        out += inflater.decompress(data, max_bytes + 1 - len(out))
        if len(out) > max_bytes:
            raise _bomb(GZIP, max_bytes, None)
        if not inflater.eof:
            if inflater.unconsumed_tail:
                raise _bomb(GZIP, max_bytes, None)
            raise CorruptInput("decompression_failed", "gzip: Unexpected end of ZLIB input stream", None)
        data = inflater.unused_data
        if not data:
            return bytes(out)


def _unsnappy(data, max_bytes: int) -> bytes:
    data = bytes(data)
    if not data.startswith(XERIAL_MAGIC):
        return _raw_snappy_block(data, max_bytes, 0)
    if len(data) < _XERIAL_HEADER.size:
        raise CorruptInput("decompression_failed", "snappy: truncated xerial header", None)
    pos = _XERIAL_HEADER.size
    out = bytearray()
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptInput("decompression_failed", "snappy: truncated xerial block length", None)
        (length,) = _INT32.unpack_from(data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise CorruptInput("decompression_failed", f"snappy: xerial block of {length} bytes runs past the end",
                               None)
        out += _raw_snappy_block(data[pos:pos + length], max_bytes, len(out))
        pos += length
    return bytes(out)


def _raw_snappy_block(block: bytes, max_bytes: int, already: int) -> bytes:
    # The raw format starts with the uncompressed length, so a bomb is caught before decompressing.
    if already + cramjam.snappy.decompress_raw_len(block) > max_bytes:
        raise _bomb(SNAPPY, max_bytes, None)
    return bytes(cramjam.snappy.decompress_raw(block))


def _unlz4(data, max_bytes: int) -> bytes:
    out = bytearray()
    rest = bytes(data)
    while rest:
        inflater = lz4.frame.LZ4FrameDecompressor()
        out += inflater.decompress(rest, max_length=max_bytes + 1 - len(out))
        if len(out) > max_bytes:
            raise _bomb(LZ4, max_bytes, None)
        if not inflater.eof:
            if inflater.needs_input:
                raise CorruptInput("decompression_failed", "lz4: truncated frame", None)
            raise _bomb(LZ4, max_bytes, None)
        rest = inflater.unused_data
    return bytes(out)


def _unzstd(data, max_bytes: int) -> bytes:
    # decompressobj() has no output cap, so input goes in small slices and the output is checked after
    # each: one input byte can at most describe ~32 KiB of output (an RLE block of 128 KiB per 4-byte
    # header), which bounds the overshoot past ``max_bytes`` to a few MiB. ``eof`` tells a complete frame
    # from a truncated one (stream_reader() silently returns the partial output).
    data = bytes(data)
    out = bytearray()
    pos = 0
    while pos < len(data):
        inflater = zstandard.ZstdDecompressor().decompressobj()
        while pos < len(data) and not inflater.eof:
            out += inflater.decompress(data[pos:pos + _ZSTD_SLICE])
            pos += _ZSTD_SLICE
            if len(out) > max_bytes:
                raise _bomb(ZSTD, max_bytes, None)
        if not inflater.eof:
            raise CorruptInput("decompression_failed", "zstd: truncated frame", None)
        rest = inflater.unused_data
        if rest:
            data, pos = rest + data[pos:], 0
    return bytes(out)


# ---- compression (the simulator writes batches like a producer would) -------------------------------------

def compress(codec, data: bytes) -> bytes:
    """Compress a records section the way Kafka's default codec settings do."""
    codec = codec_id(codec)
    data = bytes(data)
    if codec == NONE:
        return data
    if codec == GZIP:
        return _gzip_like_java(data)
    if codec == SNAPPY:
        return _xerial_snappy(data)
    if codec == LZ4:
        return lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                  content_checksum=False, store_size=False)
    return zstandard.ZstdCompressor(level=3, write_content_size=False).compress(data)


def _gzip_like_java(data: bytes) -> bytes:
    """Kafka's GzipOutputStream layout: 10-byte header (no mtime, OS 255), raw deflate level 6, CRC32, ISIZE.

    Byte-equal to the gzip batches in the devsample fixture (tests/unit/test_record_batch.py re-encodes them).
    """
    deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(data) + deflater.flush()
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    return header + body + trailer


def _xerial_snappy(data: bytes) -> bytes:
    out = bytearray(_XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1))
    for start in range(0, len(data), _XERIAL_BLOCK_INPUT):
        block = bytes(cramjam.snappy.compress_raw(data[start:start + _XERIAL_BLOCK_INPUT]))
        out += _INT32.pack(len(block))
        out += block
    return bytes(out)
