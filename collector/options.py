"""What a collection embeds and how far it reads (``CollectOptions``), and the embedding cap of each file."""
from __future__ import annotations

from typing import NamedTuple, Optional

from .pack_format import (
    _METADATA_SEGMENT,
    _METADATA_SNAPSHOT,
    _PARTITION_EMBED,
    _PRODUCER_SNAPSHOT,
    _TOP_LEVEL_EMBED,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_METADATA_FILE_BYTES,
    DEFAULT_SEGMENT_SCAN_BYTES,
    LOCK_FILE,
    METADATA_DIR,
)


class CollectOptions(NamedTuple):
    """What the walk embeds. Recorded in the pack header (``options``)."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    include_metadata_log: bool = False
    max_metadata_file_bytes: int = DEFAULT_MAX_METADATA_FILE_BYTES
    # how far into one data segment the summary's header scan reads (0: no segment summaries)
    segment_scan_bytes: int = DEFAULT_SEGMENT_SCAN_BYTES

    def checked(self) -> "CollectOptions":
        for name in ("max_file_bytes", "max_metadata_file_bytes", "segment_scan_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError("%s must be an int >= 0, got %r (%s)" % (name, value, type(value).__name__))
        if not isinstance(self.include_metadata_log, bool):
            raise ValueError("include_metadata_log must be a bool, got %r" % (self.include_metadata_log,))
        return self


def embed_cap(parent: Optional[str], name: str, options: CollectOptions) -> Optional[int]:
    """Size cap for a file whose bytes are embedded, or None when the file is only listed.

    ``parent`` is None for a file directly in the log dir, else the name of the directory holding it.
    """
    if name == LOCK_FILE:
        return None
    if parent is None:
        if name in _TOP_LEVEL_EMBED or name.endswith("-checkpoint"):
            return options.max_file_bytes
        return None
    if name in _PARTITION_EMBED or _PRODUCER_SNAPSHOT.match(name):
        return options.max_file_bytes
    if (
        options.include_metadata_log
        and parent == METADATA_DIR
        and (_METADATA_SEGMENT.match(name) or _METADATA_SNAPSHOT.match(name))
    ):
        return options.max_metadata_file_bytes
    return None
