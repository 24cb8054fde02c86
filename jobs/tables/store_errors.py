"""Errors of the table layer (``jobs.tables.delta_store``), shared by both backends.

Input problems subclass ``ValueError`` and name what was expected and what was found; a lost commit race is
``ConcurrentTableUpdateError`` so callers can tell "retry later" from "fix your data".
"""
from __future__ import annotations

from typing import Optional, Sequence


class SchemaMismatchError(ValueError):
    """A DataFrame (or an existing table) does not have the registry's schema.

    ``problems`` holds one line per offending column: missing, unexpected, or expected type vs found type.
    """

    def __init__(self, table: str, problems: Sequence[str], what: str = "DataFrame", fix: str = "") -> None:
        self.table = table
        self.problems = tuple(problems)
        self.fix = fix
        # the first line names every problem (a log line or a one-line error shows only that), then one a line
        lines = "\n  - ".join(self.problems)
        remedy = f"; fix: {fix}" if fix else ""
        super().__init__(f"{what} does not match the schema of table {table!r} ({len(self.problems)} problem(s): "
                         f"{'; '.join(self.problems)}){remedy}\n  - {lines}")


class SliceMismatchError(ValueError):
    """``replace_slice`` got rows that are not in the slice it replaces (they would be lost next time)."""


class NullConstraintError(ValueError):
    """Rows hold nulls in a column the registry declares NOT NULL."""


class DuplicateSourceRowsError(ValueError):
    """A MERGE source has several rows matching the same target row, so the update would be ambiguous."""


class TableMissingError(LookupError):
    """The table (or the requested version of it) does not exist."""


class BackendUnavailableError(RuntimeError):
    """The configured storage backend cannot run in this session (e.g. Delta's jars are not loaded)."""


class ConcurrentTableUpdateError(RuntimeError):
    """Another writer committed to the table between our read and our commit, on every allowed attempt.

    Nothing of ours is visible: the table is exactly what the other writers left.
    """

    def __init__(self, table: str, operation: str, attempts: int, read_version: Optional[int] = None,
                 found_version: Optional[int] = None, cause: Optional[BaseException] = None) -> None:
        self.table = table
        self.operation = operation
        self.attempts = attempts
        self.read_version = read_version
        self.found_version = found_version
        moved = ""
        if read_version is not None and found_version is not None:
            moved = f" (read at version {read_version}, table was at version {found_version} when committing)"
        detail = f": {cause}" if cause is not None else ""
        super().__init__(f"{operation} on table {table!r} lost the commit race {attempts} time(s){moved}; "
                         f"nothing was committed. Re-run it, or raise storage.commit_retries{detail}")
