"""docs/kafka-versions.md lists exactly the record versions the schema files describe, each with its release.

The release column is the documented fact (taken from apache/kafka's release tags); this test keeps the page and
``udfs/schemas/*.json`` from drifting apart: a version added to a schema without its release (or the reverse)
fails here."""
from __future__ import annotations

import re
from pathlib import Path

from udfs.message_spec import load_schema

PAGE = Path(__file__).resolve().parents[2] / "docs" / "kafka-versions.md"
ROW = re.compile(r"^\| (\w+) \| (\d+|control|file) \| (\d+) \| ([^|]+?) \|")


def _table() -> dict:
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m and m.group(1) != "Record":
            key = (m.group(1), int(m.group(3)))
            assert key not in rows, f"{key} listed twice"
            rows[key] = (m.group(2), m.group(4).strip())
    return rows


def _schema_versions() -> dict:
    out = {}
    for name in ("metadata_records", "control_records", "producer_snapshot"):
        for m in load_schema(name).messages:
            where = str(m.api_key) if m.api_key is not None else ("control" if m.kind == "control" else "file")
            for v in range(m.valid_versions.lowest, m.valid_versions.highest + 1):
                out[(m.name, v)] = where
    return out


def test_the_table_lists_every_schema_version_and_nothing_else():
    table, schema = _table(), _schema_versions()
    assert set(table) == set(schema)
    assert {k: where for k, (where, _release) in table.items()} == schema
    assert all(re.match(r"^\d+\.\d+", release) for _where, release in table.values())


def test_the_page_names_the_release_the_schemas_come_from():
    release = load_schema("metadata_records").upstream_release
    assert release and f"**{release}**" in PAGE.read_text(encoding="utf-8")
    newest = max((tuple(int(p) for p in r.split()[0].split(".")) for _w, r in _table().values()))
    assert ".".join(map(str, newest)) == release
