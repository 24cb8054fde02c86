"""MERGE clauses as data: what ``MergeBuilder`` records and each backend executes.

Semantics follow Delta's MERGE: clauses of one kind are tried in the order given and the first whose
condition holds acts; a row no clause acts on is left alone (target rows) or not inserted (source rows).
Only the last clause of a kind may omit its condition (an earlier unconditional clause would hide the later
ones). Expressions are Spark SQL text; the target is aliased ``t`` and the source ``s``.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Sequence, Tuple

MATCHED = "matched"
NOT_MATCHED = "not_matched"
NOT_MATCHED_BY_SOURCE = "not_matched_by_source"

UPDATE = "update"
DELETE = "delete"
INSERT = "insert"

_ALLOWED = {
    MATCHED: (UPDATE, DELETE),
    NOT_MATCHED: (INSERT,),
    NOT_MATCHED_BY_SOURCE: (UPDATE, DELETE),
}


@dataclass(frozen=True)
class MergeClause:
    """One WHEN clause.

    :param kind: ``matched``, ``not_matched`` (source rows with no target row) or ``not_matched_by_source``.
    :param action: ``update``, ``delete`` or ``insert``.
    :param condition: Spark SQL boolean text, or None (always).
    :param assignments: column -> SQL expression; None means "all columns from the source" (``*_all``).
    """

    kind: str
    action: str
    condition: Optional[str] = None
    assignments: Optional[Mapping[str, str]] = None

    def __post_init__(self) -> None:
        if self.kind not in _ALLOWED:
            raise ValueError(f"merge clause kind {self.kind!r} not in {sorted(_ALLOWED)}")
        if self.action not in _ALLOWED[self.kind]:
            raise ValueError(f"a {self.kind} clause can {list(_ALLOWED[self.kind])}, not {self.action!r}")
        if self.condition is not None and (not isinstance(self.condition, str) or not self.condition.strip()):
            raise TypeError(f"merge condition must be non-empty SQL text or None, got {self.condition!r} "
                            f"({type(self.condition).__name__})")
        if self.assignments is not None:
            if self.action == DELETE:
                raise ValueError("a delete clause takes no assignments")
            if not isinstance(self.assignments, Mapping) or not self.assignments:
                raise TypeError(f"set/values must be a non-empty dict column -> SQL text, got {self.assignments!r}")
            for column, expr in self.assignments.items():
                if not isinstance(column, str) or not isinstance(expr, str) or not expr.strip():
                    raise TypeError(f"set/values entry {column!r}: {expr!r} must map a column name to SQL text")
            object.__setattr__(self, "assignments", MappingProxyType(dict(self.assignments)))
        if self.kind == NOT_MATCHED_BY_SOURCE and self.action == UPDATE and self.assignments is None:
            raise ValueError("when_not_matched_by_source_update needs set={...}: there is no source row to copy")

    @property
    def copies_source(self) -> bool:
        """True for ``update_all`` / ``insert_all``: every column takes the source's value."""
        return self.assignments is None and self.action in (UPDATE, INSERT)


def check_clauses(clauses: Sequence[MergeClause], columns: Sequence[str]) -> Tuple[MergeClause, ...]:
    """Validate a clause list against the table's columns; return it as a tuple."""
    if not clauses:
        raise ValueError("merge has no clauses: add when_matched_* / when_not_matched_* before execute()")
    known = set(columns)
    for kind in _ALLOWED:
        of_kind = [c for c in clauses if c.kind == kind]
        for clause in of_kind[:-1]:
            if clause.condition is None:
                raise ValueError(f"only the last {kind} clause may omit its condition; "
                                 f"{clause.action} without a condition comes before another {kind} clause")
    for clause in clauses:
        unknown = sorted(set(clause.assignments or ()) - known)
        if unknown:
            raise ValueError(f"{clause.kind} {clause.action}: unknown column(s) {unknown}; table columns: {list(columns)}")
    return tuple(clauses)


def of_kind(clauses: Sequence[MergeClause], kind: str) -> Tuple[MergeClause, ...]:
    return tuple(c for c in clauses if c.kind == kind)
