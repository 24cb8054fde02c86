"""``kafka-recon maintain``: OPTIMIZE (compact small files) and VACUUM (delete files no version within the
retention needs) the path-based tables, which grow every night: each run adds files to every bronze and
silver table and rewrites gold_findings' touched files by MERGE.

Run it from a scheduler after the nightly (not during one: a VACUUM removes only files older than the
retention, so a running nightly's reads of the current version are safe, but keep it out of the nightly's
critical path). ``storage.vacuum_retention_hours`` (conf/default.yaml) is how far back time travel
(``DeltaStore.read(name, version=N)``, ``DESCRIBE HISTORY`` reads) keeps working; Delta's default is 168 h
(delta-spark's ``delta.deletedFileRetentionDuration``), and a retention shorter than the longest nightly
could delete files a running job still reads. Uses delta-rs (no Spark). On Databricks, use the platform's
``OPTIMIZE`` / ``VACUUM`` (predictive optimization) on the catalog tables instead.

Example::

    kafka-recon maintain --set storage.root=/data/kafka-recon            # compact + vacuum every table
    kafka-recon maintain --set storage.root=/data/kafka-recon --dry-run  # list what VACUUM would delete
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Dict, List, Optional


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="kafka-recon maintain", description=__doc__.split("\n\n")[0])
    p.add_argument("--conf", help="YAML file overriding conf/*.yaml (as given to the nightly)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override one setting")
    p.add_argument("--table", action="append", default=[], help="only this table (repeatable; default: all)")
    p.add_argument("--dry-run", action="store_true", help="compact nothing; list the files VACUUM would delete")
    return p.parse_args(argv)


def maintain_table(uri: str, retention_hours: float, dry_run: bool = False) -> Dict[str, object]:
    """Compact, then vacuum, one table; what each did."""
    from deltalake import CommitProperties, DeltaTable

    table = DeltaTable(uri)
    done: Dict[str, object] = {"version_before": table.version()}
    if not dry_run:
        metrics = table.optimize.compact(commit_properties=CommitProperties(
            custom_metadata={"userMetadata": json.dumps({"operation": "OPTIMIZE", "run_id": None})}))
        done["files_added"] = metrics.get("numFilesAdded", 0)
        done["files_removed"] = metrics.get("numFilesRemoved", 0)
        table = DeltaTable(uri)
    deleted = table.vacuum(retention_hours=int(retention_hours), dry_run=dry_run, enforce_retention_duration=False)
    done["vacuum_files" if dry_run else "vacuum_deleted"] = len(deleted)
    done["version_after"] = DeltaTable(uri).version()
    return done


def main(argv: Optional[List[str]] = None) -> int:
    from deltalake import DeltaTable

    from . import registry
    from .command_setup import path_tables
    from .embedded_log import table_paths

    try:
        args = parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    found = path_tables("maintain", args.conf, args.set, "run OPTIMIZE / VACUUM on the catalog tables (or enable "
                        "predictive optimization) where Delta's jars run", args.table, "--table")
    if isinstance(found, int):
        return found
    storage, locator = found
    for name in args.table or list(registry.TABLES):
        uri = table_paths(locator.locate(name)).delta_uri
        if not DeltaTable.is_deltatable(uri):
            continue
        done = maintain_table(uri, storage.vacuum_retention_hours, args.dry_run)
        print(f"{name}: " + " ".join(f"{k}={v}" for k, v in done.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
