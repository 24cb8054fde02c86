"""The table registry: table name -> TableSpec (explicit schema, partition columns, natural keys, layer)."""
from __future__ import annotations

from typing import Dict

from . import bronze, gold, silver
from .spec import TableSpec

TABLES: Dict[str, TableSpec] = {t.name: t for t in (*bronze.TABLES, *silver.TABLES, *gold.TABLES)}


def spec(name: str) -> TableSpec:
    try:
        return TABLES[name]
    except KeyError:
        raise KeyError(f"no table {name!r} in the registry; known tables: {sorted(TABLES)}") from None
