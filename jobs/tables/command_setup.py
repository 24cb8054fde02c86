"""What the table commands (``kafka-recon migrate``, ``kafka-recon maintain``) share before they touch a table: the
typed ``storage`` settings, and the refusal of catalog tables (those are altered where Delta's jars run)."""
from __future__ import annotations

import sys
from typing import Optional, Sequence, Tuple, Union


def path_tables(command: str, conf: Optional[str], sets: Sequence[str], catalog_hint: str,
                tables: Sequence[str], flag: str) -> Union[int, Tuple[object, object]]:
    """``(storage settings, TableLocator)`` for path-based tables, or exit code 2 after one line on stderr: a bad
    configuration, ``storage.catalog`` set (``catalog_hint`` says what to do instead), or ``tables`` (given with
    ``flag``) naming tables the registry does not hold."""
    from jobs.config import ConfigError
    from jobs.settings import Settings

    from . import registry
    from .delta_store import TableLocator

    try:
        storage = Settings.load(conf, sets).storage
        locator = TableLocator(storage.root, storage.catalog, storage.schema)
    except (ConfigError, ValueError) as exc:
        print(f"kafka-recon {command}: {exc}", file=sys.stderr)
        return 2
    if locator.uses_catalog:
        print(f"kafka-recon {command}: storage.catalog is set; {catalog_hint}", file=sys.stderr)
        return 2
    unknown = sorted(set(tables) - set(registry.TABLES))
    if unknown:
        print(f"kafka-recon {command}: {flag} {unknown}: not tables of the registry {sorted(registry.TABLES)}",
              file=sys.stderr)
        return 2
    return storage, locator
