"""Reconciliation: replay the controller's metadata, join every replica dir to it by topic id, and turn
the differences into findings (check catalogue: conf/checks.yaml, README section: docs/checks.md)."""
from .run import ReconcileResult, run_reconcile  # noqa: F401
