"""``kafka-recon migrate``: bring existing Delta tables to this release's table specs, without Spark.

The nightly job adds the nullable columns a newer release brings on its own (``DeltaStore.prepare_tables``)
and stops, before committing anything, at a difference it cannot fix. This command shows every table's
state (``--check``: change nothing), adds what can be added, and with an explicit ``--rewrite TABLE``
rewrites that table to the spec's schema: columns the spec no longer has are dropped (their data is gone from
the new version; time travel still reads the old ones until VACUUM), columns of another type are cast (a value
that does not cast stops the rewrite, naming the column) and missing ones are null. Path-based tables of the
embedded backend only; a catalog table is migrated with ``ALTER TABLE`` where Delta's jars run.

Example::

    kafka-recon migrate --set storage.root=/data/kafka-recon --check
    kafka-recon migrate --set storage.root=/data/kafka-recon --rewrite gold_findings

Exit codes: 0 every table matches its spec (or is absent: the next run creates it), 1 a problem remains,
2 usage or configuration error.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from .spec import SCHEMA_VERSION_PROPERTY, TableSpec


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="kafka-recon migrate", description=__doc__.split("\n\n")[0])
    p.add_argument("--conf", help="YAML file overriding conf/*.yaml (as given to the nightly)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override one setting")
    p.add_argument("--check", action="store_true", help="report only: change no table")
    p.add_argument("--rewrite", action="append", default=[], metavar="TABLE",
                   help="rewrite TABLE to the spec's schema (drops unknown columns, casts retyped ones)")
    return p.parse_args(argv)


def rewrite_table(spec: TableSpec, uri: str) -> int:
    """Rewrite the table at ``uri`` with exactly ``spec``'s columns (one overwrite commit); returns its version."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import CommitProperties, DeltaTable, write_deltalake

    data = DeltaTable(uri).to_pyarrow_table()
    arrays = []
    for field in spec.arrow_schema():
        if field.name not in data.column_names:
            arrays.append(pa.nulls(data.num_rows, field.type))
            continue
        try:
            arrays.append(pc.cast(data[field.name], field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueError(f"table {spec.name}: column {field.name!r} ({data.schema.field(field.name).type}) "
                             f"does not cast to {field.type}: {exc}") from None
    table = pa.Table.from_arrays(arrays, schema=spec.arrow_schema())
    write_deltalake(uri, table, mode="overwrite", schema_mode="overwrite",
                    partition_by=list(spec.partition_by) or None,
                    commit_properties=CommitProperties(
                        custom_metadata={"userMetadata": json.dumps({"operation": "MIGRATE", "run_id": None})}))
    DeltaTable(uri).alter.set_table_properties({SCHEMA_VERSION_PROPERTY: str(spec.version)},
                                               raise_if_not_exists=False)
    return DeltaTable(uri).version()


def main(argv: Optional[List[str]] = None) -> int:
    from . import registry
    from .command_setup import path_tables
    from .embedded_log import evolve_table, schema_plan, table_paths, unfixable_problems

    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    found = path_tables("migrate", args.conf, args.set, "migrate catalog tables with ALTER TABLE where Delta's jars "
                        "run", args.rewrite, "--rewrite")
    if isinstance(found, int):
        return found
    storage, locator = found
    from deltalake import DeltaTable

    remaining = 0
    for name, spec in registry.TABLES.items():
        uri = table_paths(locator.locate(name)).delta_uri
        if not DeltaTable.is_deltatable(uri):
            print(f"{name}: absent (the next run creates it at schema version {spec.version})")
            continue
        table = DeltaTable(uri)
        problems = unfixable_problems(spec, table)
        additions, _ = schema_plan(spec, table)
        if problems and name in args.rewrite and not args.check:
            try:
                version = rewrite_table(spec, uri)
            except ValueError as exc:
                print(f"{name}: not rewritten: {exc}")
                remaining += 1
                continue
            print(f"{name}: rewritten to schema version {spec.version} (table version {version}): "
                  f"{'; '.join(problems)}")
        elif problems:
            remaining += 1
            print(f"{name}: cannot be fixed without a rewrite: {'; '.join(problems)}; "
                  f"fix: kafka-recon migrate --rewrite {name}")
        elif args.check:
            print(f"{name}: " + (f"would add {[f.name for f in additions]}" if additions else "up to date"))
        elif evolve_table(spec, table):
            print(f"{name}: now schema version {spec.version}" +
                  (f", added {[f.name for f in additions]}" if additions else ""))
        else:
            print(f"{name}: up to date (schema version {spec.version})")
    return 1 if remaining else 0


if __name__ == "__main__":
    sys.exit(main())
