"""Silver tables: the controller's view (incarnations, assignments, producer-id blocks) and every replica dir
joined to it by topic id. Owned by the reconciliation stage (jobs/reconcile)."""
from __future__ import annotations

from .spec import TableSpec, cols

TABLES: tuple = ()
