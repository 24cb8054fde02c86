"""Open a capture root, local or behind a pyarrow.fs URI (s3://, gs://, hdfs://, abfs://, file://).

Executors get the root as a string and rebuild the filesystem themselves (one per root per Python worker),
so nothing but text crosses from the driver.
"""
from __future__ import annotations

import os
import posixpath
import re
from functools import lru_cache
from typing import Tuple

from pyarrow import fs as pafs

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def normalize_root(root: str) -> str:
    """A local path becomes absolute (executors may run elsewhere); a URI is kept, minus a trailing slash."""
    text = str(root).strip()
    if _SCHEME.match(text):
        return text.rstrip("/") if not text.endswith("://") else text
    return os.path.abspath(os.path.expanduser(text))


@lru_cache(maxsize=64)
def open_root(root: str) -> Tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a normalized root."""
    if _SCHEME.match(root):
        return pafs.FileSystem.from_uri(root)
    return pafs.LocalFileSystem(), root


def join(path: str, *names: str) -> str:
    return posixpath.join(path, *names) if path else posixpath.join(*names)


def relative(path: str, base: str) -> str:
    """``path`` relative to ``base`` ("" when equal); both are paths inside the same filesystem."""
    if path == base:
        return ""
    prefix = base.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def read_bytes(fs: pafs.FileSystem, path: str, limit: int = -1) -> bytes:
    """Read a whole file, or at most ``limit`` bytes."""
    with fs.open_input_stream(path) as stream:
        return stream.read() if limit < 0 else stream.read(limit)
