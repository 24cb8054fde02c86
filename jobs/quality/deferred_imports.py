"""Modules Great Expectations imports at its own import but kafka-recon's suites never use, imported on first use.

Why: importing GX is ~2.4 s of single-threaded Python, run on a preload thread while ingest and reconcile plan their
queries, so its CPU is taken from a small nightly's critical path on two cores. About 0.9 s of it is two modules
only GX's distribution expectations need (``expect_column_kl_divergence_to_be_less_than`` and the KS-test
metrics import ``scipy.stats`` and ``altair`` for their statistics and charts), none of which ``suites.py`` uses
(docs/benchmarks.md, session 43). Each is replaced in ``sys.modules`` by a stand-in that imports the real module
the first time one of its attributes is read, and from then on hands out the real module's attributes: whoever
does use them (a user's own expectation, a notebook) gets the same objects, later.

A module already imported is left alone, and so is one that is not installed (its import fails where it is used,
as it would have failed at GX's import).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Iterable, List

# scipy.stats: KL divergence and KS tests; altair: the charts of the KL-divergence expectation's renderer
GX_UNUSED_MODULES = ("scipy.stats", "altair")

_lock = threading.RLock()


class DeferredModule(types.ModuleType):
    """Stands in ``sys.modules`` for ``name`` until an attribute is read; then the real module is imported, put in
    its place in ``sys.modules`` and its attributes copied here, so references taken earlier see them too."""

    def __init__(self, name: str):
        super().__init__(name, f"{name}, imported on first use (jobs.quality.deferred_imports)")
        self.__dict__["_deferred_real"] = None

    def __getattr__(self, attr: str):  # only for attributes this stand-in does not have (yet): any of them loads
        return getattr(self.deferred_real(), attr)

    def deferred_real(self) -> types.ModuleType:
        """The real module, imported now if it was not yet."""
        real = self.__dict__["_deferred_real"]
        if real is not None:
            return real
        with _lock:
            real = self.__dict__["_deferred_real"]
            if real is None:
                if sys.modules.get(self.__name__) is self:
                    del sys.modules[self.__name__]
                try:
                    real = importlib.import_module(self.__name__)
                except BaseException:
                    sys.modules.setdefault(self.__name__, self)
                    raise
                self.__dict__.update({k: v for k, v in vars(real).items() if k not in ("__name__", "__spec__")})
                self.__dict__["_deferred_real"] = real
        return real


def defer_imports(names: Iterable[str] = GX_UNUSED_MODULES) -> List[str]:
    """Put a :class:`DeferredModule` in ``sys.modules`` for each of ``names`` not imported yet and installed;
    returns the names deferred."""
    deferred = []
    with _lock:
        for name in names:
            if name in sys.modules:
                continue
            try:
                if importlib.util.find_spec(name) is None:  # imports the parent package (scipy: ~0.1 s)
                    continue
            except (ImportError, ValueError):
                continue
            sys.modules[name] = DeferredModule(name)
            deferred.append(name)
    return deferred
