"""The walk of a broker's log dirs: every entry a pack holds, in the pack's order, streamed (bounded memory)."""
from __future__ import annotations

import errno
from typing import Any, Dict, Iterable, Iterator, List, Optional

from .filesystem import LocalFileSystem, NotRegularFile, Stat, _flag_of, default_fs, oserror_text
from .options import CollectOptions, embed_cap
from .pack_format import (
    FLAG_CHANGED,
    FLAG_INCOMPLETE,
    FLAG_NON_UTF8,
    FLAG_OVER_CAP,
    FLAG_UNREADABLE,
    FLAG_VANISHED,
    KIND_DIR,
    KIND_FILE,
    KIND_SYMLINK,
    METADATA_DIR,
)
from .segments import segment_summary, summary_targets


def _entry(
    log_dir: str,
    path: str,
    kind: str,
    size: Optional[int] = None,
    alloc: Optional[int] = None,
    mtime_ms: Optional[int] = None,
    mode: Optional[int] = None,
    target: Optional[str] = None,
    content: Optional[bytes] = None,
    flags: Optional[List[str]] = None,
    error: Optional[str] = None,
) -> Dict[str, Any]:
    return {
        "log_dir": log_dir,
        "path": path,
        "kind": kind,
        "size": size,
        "alloc": alloc,
        "mtime_ms": mtime_ms,
        "mode": mode,
        "target": target,
        "content": content,
        "flags": flags if flags is not None else [],
        "error": error,
        "segment": None,
    }


def _display_name(name: str, flags: List[str]) -> str:
    """The name as valid UTF-8 text; undecodable bytes become ``\\xNN`` and the entry is flagged."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        flags.append(FLAG_NON_UTF8)
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class _Walker:
    def __init__(self, fs: LocalFileSystem, options: CollectOptions) -> None:
        self.fs = fs
        self.options = options

    def log_dir(self, log_dir: str) -> Iterator[Dict[str, Any]]:
        fs = self.fs
        try:
            root = fs.open_root(log_dir)
        except OSError as exc:
            yield _entry(log_dir, "", KIND_DIR, flags=[_flag_of(exc)], error=oserror_text(exc))
            return
        try:
            flags: List[str] = []
            error = None
            try:
                info: Optional[Stat] = fs.root_stat(root)
            except OSError as exc:
                info, error = None, oserror_text(exc)
                flags.append(_flag_of(exc))
            # Two listings: the log dir's own files (checkpoints) first, then its directories. A running broker
            # only moves checkpoint offsets and log ends forward, so a checkpoint read before the segments it
            # describes is never ahead of them because of the walk itself (restart-hazard checks rely on it).
            files_seen = set()
            try:
                for st in fs.scan(root):
                    if st.flag is not None or st.kind != KIND_DIR:
                        files_seen.add(st.name)
                        yield from self._child(root, log_dir, st)
                for st in fs.scan(root):
                    if st.name not in files_seen:  # a directory (or what replaced one since the first listing)
                        yield from self._child(root, log_dir, st)
            except OSError as exc:
                flags.append(FLAG_INCOMPLETE)
                error = oserror_text(exc)
            if info is None:
                yield _entry(log_dir, "", KIND_DIR, flags=flags, error=error)
            else:
                yield _entry(log_dir, "", KIND_DIR, info.size, info.alloc, info.mtime_ms, info.mode,
                             flags=flags, error=error)
        finally:
            fs.close(root)

    def _child(self, root: Any, log_dir: str, st: Stat) -> Iterator[Dict[str, Any]]:
        flags: List[str] = []
        path = _display_name(st.name, flags)
        if st.flag is not None or st.kind != KIND_DIR:
            yield self._leaf(root, log_dir, None, path, st, flags)
            return
        fs = self.fs
        error = None
        try:
            handle = fs.open_dir(root, st.name)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                flags.append(FLAG_VANISHED)
            elif exc.errno in (errno.ELOOP, errno.ENOTDIR):  # replaced by a symlink or a file since listing
                flags.append(FLAG_CHANGED)
            else:
                flags.append(FLAG_UNREADABLE)
            yield _entry(log_dir, path, KIND_DIR, st.size, st.alloc, st.mtime_ms, st.mode,
                         flags=flags, error=oserror_text(exc))
            return
        try:
            try:
                children = list(fs.scan(handle))  # a replica dir holds a few files per segment
            except OSError as exc:
                children = []
                flags.append(FLAG_INCOMPLETE)
                error = oserror_text(exc)
            summarize = self._summaries_for(st.name, children)
            for sub in children:
                sub_flags: List[str] = []
                sub_path = path + "/" + _display_name(sub.name, sub_flags)
                entry = self._leaf(handle, log_dir, st.name, sub_path, sub, sub_flags)
                if sub.name in summarize and entry["kind"] == KIND_FILE and not entry["flags"]:
                    entry["segment"] = segment_summary(fs, handle, sub.name, sub.size, summarize[sub.name],
                                                       self.options.segment_scan_bytes)
                yield entry
        finally:
            fs.close(handle)
        yield _entry(log_dir, path, KIND_DIR, st.size, st.alloc, st.mtime_ms, st.mode, flags=flags, error=error)

    def _summaries_for(self, dir_name: str, children: List[Stat]) -> Dict[str, Optional[int]]:
        """Data segments of a replica dir that get a summary -> the size of their ``.index`` (None: none)."""
        if dir_name == METADATA_DIR or self.options.segment_scan_bytes <= 0:
            return {}
        files = {c.name: c for c in children if c.kind == KIND_FILE and c.flag is None}
        out: Dict[str, Optional[int]] = {}
        for base in summary_targets(files):
            name = "%020d.log" % base
            index = files.get("%020d.index" % base)
            out[name] = index.size if index is not None else None
        return out

    def _leaf(
        self, handle: Any, log_dir: str, parent: Optional[str], path: str, st: Stat, flags: List[str]
    ) -> Dict[str, Any]:
        """Entry for anything not descended into: files, symlinks, others, and directories at depth 2."""
        if st.flag is not None:
            flags.append(st.flag)
            return _entry(log_dir, path, st.kind, flags=flags, error=st.error)
        if st.kind == KIND_SYMLINK:
            try:
                target = _display_name(self.fs.readlink(handle, st.name), [])
            except OSError as exc:
                flags.append(_flag_of(exc))
                return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode,
                              flags=flags, error=oserror_text(exc))
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode, target, flags=flags)
        cap = embed_cap(parent, st.name, self.options) if st.kind == KIND_FILE else None
        if cap is None:
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode, flags=flags)
        if st.size is not None and st.size > cap:
            flags.append(FLAG_OVER_CAP)
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode, flags=flags)
        try:
            content, now = self.fs.read(handle, st.name, cap)
        except NotRegularFile as exc:
            flags.append(FLAG_CHANGED)
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode,
                          flags=flags, error=str(exc))
        except OSError as exc:
            flags.append(_flag_of(exc))
            return _entry(log_dir, path, st.kind, st.size, st.alloc, st.mtime_ms, st.mode,
                          flags=flags, error=oserror_text(exc))
        changed = now.size != st.size or now.mtime_ms != st.mtime_ms
        if content is None:  # over the cap when opened, or grew past it while being read
            changed = changed or (now.size is not None and now.size <= cap)
        elif len(content) != now.size:
            changed = True
        if changed:
            flags.append(FLAG_CHANGED)
        if content is None:
            flags.append(FLAG_OVER_CAP)
        return _entry(log_dir, path, st.kind, now.size, now.alloc, now.mtime_ms, now.mode, None, content, flags)


def walk_log_dirs(
    log_dirs: Iterable[str], options: Optional[CollectOptions] = None, fs: Optional[LocalFileSystem] = None
) -> Iterator[Dict[str, Any]]:
    """Yield one entry dict (keys ``ENTRY_FIELDS``) per entry of each log dir, exactly as a pack would hold it.

    Entries are produced lazily in post-order (children before their directory, the log dir last), so memory
    does not grow with the number of partitions. Filesystem trouble becomes entry flags, never an exception.

    Example::

        for e in walk_log_dirs(["/var/lib/kafka/data"]):
            if e["path"].endswith("/partition.metadata"):
                print(e["path"], e["content"])

    :param log_dirs: log dir paths (as the adapter understands them); each is recorded as given.
    :param options: what to embed; defaults to ``CollectOptions()``.
    :param fs: filesystem adapter (see ``LocalFileSystem``); defaults to ``default_fs()``.
    """
    walker = _Walker(fs if fs is not None else default_fs(), (options or CollectOptions()).checked())
    for log_dir in log_dirs:
        yield from walker.log_dir(log_dir)
