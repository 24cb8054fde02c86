"""Gzip streams for the pack reader: concatenated members inflated by ISA-L where installed, read exactly as
``gzip.GzipFile`` reads them; and a raw stream that replays the magic bytes a reader sniffed."""
from __future__ import annotations

import gzip
import io
import zlib
from typing import Any, BinaryIO

try:
    from isal import isal_zlib as _isal_zlib

    InflateError: type = _isal_zlib.error
except ImportError:  # pragma: no cover
    _isal_zlib = None
    InflateError = zlib.error


class Prefixed(io.RawIOBase):
    """A raw stream that first returns ``head`` (the sniffed magic bytes), then the rest of ``raw``."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._raw.read(len(buffer))
        if not data:
            return 0
        n = len(data)
        buffer[:n] = data
        return n


class GzipMembers(io.RawIOBase):
    """The bytes of a gzip stream, inflated by ISA-L (``isal_zlib``, ~2x zlib's speed), with the header,
    trailer and member rules of the stdlib's ``gzip._GzipReader`` done here the same way, so every pack reads
    exactly as through ``gzip.GzipFile``: concatenated members, zero padding between them, data handed out
    before a bad CRC or length is noticed at the member's end, ``EOFError`` on a cut stream, ``BadGzipFile`` on
    a bad header. (ISA-L's own GzipFile reads ahead and loses the entries before a cut or corrupt point.)"""

    _READ = 1 << 17

    def __init__(self, fp: BinaryIO, zmod: Any) -> None:
        super().__init__()
        self._fp, self._z = fp, zmod
        self._pending = b""  # input read but not yet consumed
        self._inflate = None  # the current member's raw-deflate decompressor; None between members
        self._crc = self._size = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def _take(self, n: int) -> bytes:
        """Up to ``n`` bytes of input (fewer only at the end of the stream)."""
        while len(self._pending) < n:
            more = self._fp.read(n - len(self._pending) if self._pending else max(n, self._READ))
            if not more:
                break
            self._pending += more
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    def _exact(self, n: int) -> bytes:
        data = self._take(n)
        if len(data) < n:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        return data

    def _skip_string(self) -> None:
        while True:
            c = self._take(1)
            if not c or c == b"\x00":
                return

    def _start_member(self) -> bool:
        magic = self._take(2)
        if magic == b"":
            return False
        if magic != b"\x1f\x8b":
            raise gzip.BadGzipFile("Not a gzipped file (%r)" % magic)
        method, flag = self._exact(8)[:2]
        if method != 8:
            raise gzip.BadGzipFile("Unknown compression method")
        if flag & 4:  # FEXTRA
            self._exact(int.from_bytes(self._exact(2), "little"))
        if flag & 8:  # FNAME
            self._skip_string()
        if flag & 16:  # FCOMMENT
            self._skip_string()
        if flag & 2:  # FHCRC
            self._exact(2)
        self._inflate = self._z.decompressobj(-15)
        self._crc = self._size = 0
        return True

    def _end_member(self) -> None:
        self._pending = self._inflate.unused_data + self._pending
        self._inflate = None
        crc, size = int.from_bytes(self._exact(4), "little"), int.from_bytes(self._exact(4), "little")
        if crc != self._crc:
            raise gzip.BadGzipFile("CRC check failed %s != %s" % (hex(crc), hex(self._crc)))
        if size != self._size & 0xFFFFFFFF:
            raise gzip.BadGzipFile("Incorrect length of data produced")
        while True:  # zero bytes may pad a member, as gzip._GzipReader allows
            if not self._pending:
                self._pending = self._fp.read(self._READ)
                if not self._pending:
                    return
            self._pending = self._pending.lstrip(b"\x00")
            if self._pending:
                return

    def readinto(self, b: Any) -> int:
        while not self._done:
            if self._inflate is not None and self._inflate.eof:
                self._end_member()
            if self._inflate is None and not self._start_member():
                self._done = True
                break
            if self._inflate.unconsumed_tail:
                data = self._inflate.unconsumed_tail
            elif self._pending:
                data, self._pending = self._pending, b""
            else:
                data = self._fp.read(self._READ)
            out = self._inflate.decompress(data, len(b))
            if out:
                self._crc = self._z.crc32(out, self._crc)
                self._size += len(out)
                b[: len(out)] = out
                return len(out)
            if not data and not self._inflate.eof:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        return 0


def gzip_reader(buffered: BinaryIO) -> BinaryIO:
    if _isal_zlib is None:
        return gzip.GzipFile(filename="", mode="rb", fileobj=buffered)
    return io.BufferedReader(GzipMembers(buffered, _isal_zlib), 1 << 16)
