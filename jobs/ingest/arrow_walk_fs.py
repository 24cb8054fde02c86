"""The collector's tiny filesystem protocol over pyarrow.fs, so ``walk_log_dirs`` walks s3://, gs://, hdfs://...

``collector.walk_log_dirs`` yields the very entries a packed snapshot holds; plugging this adapter in
makes a raw tree in object storage give the same rows as its pack. A handle is a path inside the pyarrow
filesystem. Object stores have no symlinks, devices or allocated sizes: ``alloc``/``mode`` stay None.
Every failure is raised as ``OSError`` (the walker turns it into an entry flag).
"""
from __future__ import annotations

import errno
import os
from typing import Iterator, Optional, Tuple

from pyarrow import fs as pafs

from collector import KIND_DIR, KIND_FILE, KIND_OTHER, NotRegularFile, Stat

from .filesystems import join


def _kind(info: pafs.FileInfo) -> str:
    if info.type == pafs.FileType.Directory:
        return KIND_DIR
    if info.type == pafs.FileType.File:
        return KIND_FILE
    return KIND_OTHER


def _stat(name: str, info: pafs.FileInfo) -> Stat:
    mtime_ns = info.mtime_ns
    return Stat(name, _kind(info), info.size, None, mtime_ns // 1_000_000 if mtime_ns is not None else None, None)


def _os_error(exc: BaseException, path: str) -> OSError:
    if isinstance(exc, OSError):
        return exc
    return OSError(errno.EIO, f"{type(exc).__name__}: {exc}", path)


class ArrowWalkFs:
    """``open_root``/``root_stat``/``scan``/``open_dir``/``readlink``/``read``/``close`` over a pyarrow FileSystem."""

    def __init__(self, filesystem: pafs.FileSystem) -> None:
        self.fs = filesystem

    def _info(self, path: str) -> pafs.FileInfo:
        try:
            info = self.fs.get_file_info(path)
        except Exception as exc:  # pyarrow raises OSError subclasses or ArrowException
            raise _os_error(exc, path) from None
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return info

    def open_root(self, path: str) -> str:
        if self._info(path).type != pafs.FileType.Directory:
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
        return path

    def root_stat(self, handle: str) -> Stat:
        return _stat("", self._info(handle))

    def scan(self, handle: str) -> Iterator[Stat]:
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(handle, recursive=False))
        except Exception as exc:
            raise _os_error(exc, handle) from None
        for info in infos:
            yield _stat(info.base_name, info)

    def open_dir(self, handle: str, name: str) -> str:
        path = join(handle, name)
        if self._info(path).type != pafs.FileType.Directory:
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
        return path

    def readlink(self, handle: str, name: str) -> str:
        raise OSError(errno.EINVAL, "object stores have no symlinks", join(handle, name))

    def read(self, handle: str, name: str, cap: int) -> Tuple[Optional[bytes], Stat]:
        path = join(handle, name)
        info = self._info(path)
        if info.type != pafs.FileType.File:
            raise NotRegularFile(f"not a regular file when opened ({_kind(info)})")
        st = _stat(name, info)
        if info.size is not None and info.size > cap:
            return None, st
        try:
            with self.fs.open_input_stream(path) as stream:
                data = stream.read(cap + 1)
        except Exception as exc:
            raise _os_error(exc, path) from None
        return (None if len(data) > cap else data), st

    def close(self, handle: str) -> None:
        return None

    def open_random(self, handle: str, name: str) -> "ArrowRandomReader":
        path = join(handle, name)
        try:
            return ArrowRandomReader(self.fs.open_input_file(path))
        except Exception as exc:
            raise _os_error(exc, path) from None


class ArrowRandomReader:
    """``read_at``/``size``/``close`` (the collector's random-read protocol) over a pyarrow RandomAccessFile."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.size = handle.size()

    def read_at(self, offset: int, n: int) -> bytes:
        try:
            return self.handle.read_at(n, offset)
        except Exception as exc:
            raise _os_error(exc, "") from None

    def close(self) -> None:
        self.handle.close()
