"""An offline Great Expectations 1.x context: in memory, analytics off, progress bars off.

Why ephemeral: the nightly job must not leave a ``gx/`` project behind or depend on one; suites are built in
code each run (``suites.py``). The only thing written to disk is the Data Docs site, into ``docs_dir``.
Analytics are disabled both by ``GX_ANALYTICS_ENABLED=false`` (read at import) and in the context config, so
nothing is sent anywhere even on a machine with network.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

DATA_DOCS_SITE = "kafka_recon_dq"


def _disable_analytics_env() -> None:
    os.environ["GX_ANALYTICS_ENABLED"] = "false"


def offline_context(docs_dir: Optional[Path] = None):
    """A new ``EphemeralDataContext``; with ``docs_dir`` it has one local Data Docs site there."""
    _disable_analytics_env()
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    sites = {}
    if docs_dir is not None:
        sites[DATA_DOCS_SITE] = {
            "class_name": "SiteBuilder",
            "show_how_to_buttons": False,
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        }
    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
        data_docs_sites=sites,
    )
    return gx.get_context(project_config=config, mode="ephemeral")
