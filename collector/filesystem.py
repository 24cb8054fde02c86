"""The filesystem protocol the walker talks to: the local, descriptor-relative, read-only implementation
(``LocalFileSystem``) and a path-based one; ingest plugs in a pyarrow.fs adapter the same way."""
from __future__ import annotations

import errno
import os
import stat
from typing import Iterator, List, NamedTuple, Optional, Tuple

from .pack_format import (
    _O_BINARY,
    _O_CLOEXEC,
    _O_DIRECTORY,
    _O_NOATIME,
    _O_NOFOLLOW,
    _O_NONBLOCK,
    FLAG_UNREADABLE,
    FLAG_VANISHED,
    KIND_DIR,
    KIND_FILE,
    KIND_OTHER,
    KIND_SYMLINK,
)


class Stat(NamedTuple):
    """One directory entry as a filesystem adapter reports it (never following symlinks).

    ``flag``/``error`` are set when the entry was listed but could not be stat'ed (``vanished`` or
    ``unreadable``); ``kind`` then comes from the directory listing alone.
    """

    name: str
    kind: str
    size: Optional[int] = None
    alloc: Optional[int] = None
    mtime_ms: Optional[int] = None
    mode: Optional[int] = None
    flag: Optional[str] = None
    error: Optional[str] = None


class NotRegularFile(OSError):
    """The name no longer refers to a regular file when it is opened (swapped for a FIFO, device, dir ...)."""


def _kind_of_mode(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return KIND_DIR
    if stat.S_ISREG(mode):
        return KIND_FILE
    if stat.S_ISLNK(mode):
        return KIND_SYMLINK
    return KIND_OTHER


def _stat_from_os(name: str, st: os.stat_result) -> Stat:
    blocks = getattr(st, "st_blocks", None)
    return Stat(
        name,
        _kind_of_mode(st.st_mode),
        st.st_size,
        blocks * 512 if blocks is not None else None,
        st.st_mtime_ns // 1000000,
        st.st_mode,
    )


def oserror_text(exc: BaseException) -> str:
    """Short, path-free description of an OS error: ``Permission denied (EACCES)``."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return "%s (%s)" % (exc.strerror or os.strerror(exc.errno), errno.errorcode.get(exc.errno, exc.errno))
    return str(exc) or type(exc).__name__


def _flag_of(exc: BaseException) -> str:
    return FLAG_VANISHED if isinstance(exc, FileNotFoundError) else FLAG_UNREADABLE


def _scandir_stat(entry: "os.DirEntry[str]") -> Stat:
    try:
        return _stat_from_os(entry.name, entry.stat(follow_symlinks=False))
    except OSError as exc:
        # Listed, then gone or unreadable: the kind comes from d_type (is_* never raise).
        if entry.is_symlink():
            kind = KIND_SYMLINK
        elif entry.is_dir(follow_symlinks=False):
            kind = KIND_DIR
        elif entry.is_file(follow_symlinks=False):
            kind = KIND_FILE
        else:
            kind = KIND_OTHER
        return Stat(entry.name, kind, flag=_flag_of(exc), error=oserror_text(exc))


def _read_capped(fd: int, size_hint: int, cap: int) -> Optional[bytes]:
    """Read a whole file up to ``cap`` bytes; None when it holds more than ``cap``."""
    limit = cap + 1
    chunks: List[bytes] = []
    total = 0
    want = min(limit, max(size_hint, 0) + 1)  # +1 sees growth (and EOF) without a second call for most files
    while total < limit:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total == size_hint < want:  # exactly fstat's size and a short read: EOF, no confirming read
            break
        want = min(limit - total, max(4096, total))
    if total > cap:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class LocalFileSystem:
    """Default adapter: descriptor-relative walk on POSIX (``openat``/``fstatat``), read-only, no symlink followed.

    A handle is an open directory descriptor. Every method raises ``OSError`` on failure; the walker turns
    those into flags.
    """

    def __init__(self) -> None:
        self._noatime = _O_NOATIME

    def _open(self, name: str, flags: int, dir_fd: Optional[int]) -> int:
        if self._noatime:
            try:
                return os.open(name, flags | self._noatime, dir_fd=dir_fd)
            except PermissionError as exc:  # O_NOATIME needs file ownership or CAP_FOWNER: drop it for good
                if exc.errno != errno.EPERM:
                    raise
                self._noatime = 0
        return os.open(name, flags, dir_fd=dir_fd)

    def open_root(self, path: str) -> int:
        return self._open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC, None)

    def root_stat(self, handle: int) -> Stat:
        return _stat_from_os("", os.fstat(handle))

    def scan(self, handle: int) -> Iterator[Stat]:
        with os.scandir(handle) as entries:
            for entry in entries:
                yield _scandir_stat(entry)

    def open_dir(self, handle: int, name: str) -> int:
        return self._open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, handle)

    def readlink(self, handle: int, name: str) -> str:
        return os.readlink(name, dir_fd=handle)

    def read(self, handle: int, name: str, cap: int) -> Tuple[Optional[bytes], Stat]:
        """Bytes of a regular file (None when over ``cap``) and its stat taken on the open descriptor."""
        fd = self._open(name, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, handle)
        try:
            return _read_open_file(fd, name, cap)
        finally:
            os.close(fd)

    def open_random(self, handle: int, name: str) -> "RandomReader":
        """A regular file opened for reads at offsets (segment summaries)."""
        fd = self._open(name, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, handle)
        return RandomReader(fd)

    def close(self, handle: int) -> None:
        os.close(handle)


class RandomReader:
    """``read_at(offset, n)`` over an open descriptor of a regular file; ``size`` from fstat at open."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFile("not a regular file when opened (%s)" % _kind_of_mode(st.st_mode))
        except BaseException:
            os.close(fd)
            raise
        self.size = st.st_size

    def read_at(self, offset: int, n: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self.fd, n, offset)
        os.lseek(self.fd, offset, os.SEEK_SET)
        return os.read(self.fd, n)

    def close(self) -> None:
        os.close(self.fd)


def _read_open_file(fd: int, name: str, cap: int) -> Tuple[Optional[bytes], Stat]:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile("not a regular file when opened (%s)" % _kind_of_mode(st.st_mode))
    info = _stat_from_os(name, st)
    if st.st_size > cap:
        return None, info
    return _read_capped(fd, st.st_size, cap), info


class PathFileSystem(LocalFileSystem):
    """Path-based adapter for platforms without ``openat`` (and the template for remote adapters).

    A handle is the directory path. Symlinks are still never followed (``lstat`` before descending,
    ``O_NOFOLLOW`` on open), but a swap between the check and the use is not excluded as on POSIX.
    """

    def open_root(self, path: str) -> str:  # type: ignore[override]
        if not stat.S_ISDIR(os.stat(path).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        return path

    def root_stat(self, handle: str) -> Stat:  # type: ignore[override]
        return _stat_from_os("", os.stat(handle))

    def scan(self, handle: str) -> Iterator[Stat]:  # type: ignore[override]
        with os.scandir(handle) as entries:
            for entry in entries:
                yield _scandir_stat(entry)

    def open_dir(self, handle: str, name: str) -> str:  # type: ignore[override]
        path = os.path.join(handle, name)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        return path

    def readlink(self, handle: str, name: str) -> str:  # type: ignore[override]
        return os.readlink(os.path.join(handle, name))

    def read(self, handle: str, name: str, cap: int) -> Tuple[Optional[bytes], Stat]:  # type: ignore[override]
        path = os.path.join(handle, name)
        fd = self._open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, None)
        try:
            return _read_open_file(fd, name, cap)
        finally:
            os.close(fd)

    def open_random(self, handle: str, name: str) -> RandomReader:  # type: ignore[override]
        path = os.path.join(handle, name)
        return RandomReader(self._open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, None))

    def close(self, handle: str) -> None:  # type: ignore[override]
        return None


def default_fs() -> LocalFileSystem:
    """The descriptor-relative adapter where the platform supports it, else the path-based one."""
    if (
        os.open in os.supports_dir_fd
        and os.readlink in os.supports_dir_fd
        and os.scandir in os.supports_fd
        and _O_DIRECTORY
        and _O_NOFOLLOW
    ):
        return LocalFileSystem()
    return PathFileSystem()
