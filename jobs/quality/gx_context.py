"""An offline Great Expectations 1.x context: suites in memory, validation results on disk, analytics off.

Suites are built in code each run (``suites.py``), so the context needs no ``gx/`` project. Validation results
are kept in ``<docs_dir>/validations_store`` (a filesystem store), so the Data Docs site built into ``docs_dir``
shows every run that used the same output folder, not only the current one.
Analytics are disabled both by ``GX_ANALYTICS_ENABLED=false`` (read at import) and in the context config, so
nothing is sent anywhere even on a machine with network.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Optional

DATA_DOCS_SITE = "kafka_recon_dq"
VALIDATIONS_STORE = "validations_store"   # under docs_dir: every run's validation results, for the Data Docs


def _disable_analytics_env() -> None:
    os.environ["GX_ANALYTICS_ENABLED"] = "false"


def spark_connect_import_fails_instead_of_exiting() -> None:
    """Make importing ``pyspark.sql.connect`` raise ImportError, not exit the process, where PySpark would exit.

    PySpark takes a process whose ``__main__`` has no file and no spec (``python -c``, an embedded interpreter,
    pytest-xdist's workers) for its own doctest run, and when Spark Connect's client (grpc) is missing it calls
    ``sys.exit(0)`` while ``pyspark.sql.connect`` is imported. Great Expectations imports that module while it is
    imported itself, so such a nightly ended with exit 0 in the quality stage, with no summary and no report. Here
    the import fails as it does in any script without grpc (GX expects that ImportError and does without Spark
    Connect). Nothing changes where ``__main__`` is a file or where the Connect client is installed.
    """
    if "pyspark.sql.connect" in sys.modules:
        return
    main = sys.modules.get("__main__")
    if getattr(main, "__spec__", None) is not None or hasattr(main, "__file__") or hasattr(sys, "ps1"):
        return  # PySpark does not take this process for a doctest run: without grpc it raises ImportError itself
    if importlib.util.find_spec("grpc") is None:
        sys.modules["pyspark.sql.connect"] = None  # importing it now raises ImportError, printing nothing
        return
    try:
        importlib.import_module("pyspark.sql.connect")
    except ImportError:
        pass
    except SystemExit:  # another part of the Connect client is missing
        sys.modules["pyspark.sql.connect"] = None


# what the quality stage imports: Great Expectations itself and its expectation classes
PRELOADED_MODULES = ("great_expectations", "great_expectations.expectations",
                     "great_expectations.core.run_identifier")


def preload_in_background() -> threading.Thread:
    """Import Great Expectations on a daemon thread while the run does other work.

    The import is ~3 s of single-threaded Python (pandas, pydantic, GX's own modules) that the quality stage
    would otherwise wait for after reconcile; started before the Spark session, it overlaps the JVM's start and
    the ingest, during which the driver's Python mostly waits on the JVM. A failure is left for the quality
    stage's own import to report (a thread's traceback would reach the user's stderr).
    """
    def run() -> None:
        _disable_analytics_env()  # before the import: GX reads it then
        try:
            for name in PRELOADED_MODULES:
                importlib.import_module(name)
        except Exception:  # noqa: BLE001 - reported by the stage's own import, once, as the stage's error
            return

    thread = threading.Thread(target=run, name="kafka-recon-gx-preload", daemon=True)
    thread.start()
    return thread


def offline_context(docs_dir: Optional[Path] = None):
    """A new ``EphemeralDataContext``; with ``docs_dir`` it has one local Data Docs site there, built from the
    validation results of every run stored under it."""
    _disable_analytics_env()
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    sites = {}
    defaults = InMemoryStoreBackendDefaults(init_temp_docs_sites=False)
    stores = dict(defaults.stores)
    if docs_dir is not None:
        stores[defaults.validation_results_store_name] = {
            "class_name": "ValidationResultsStore",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                              "base_directory": str(Path(docs_dir) / VALIDATIONS_STORE)},
        }
        sites[DATA_DOCS_SITE] = {
            "class_name": "SiteBuilder",
            "show_how_to_buttons": False,
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        }
    config = DataContextConfig(
        store_backend_defaults=defaults,
        stores=stores,
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
        data_docs_sites=sites,
    )
    return gx.get_context(project_config=config, mode="ephemeral")
