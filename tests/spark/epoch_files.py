"""The oracle for bronze_leader_epochs on real captures: every leader-epoch-checkpoint read as plain text,
independently of udfs (version line, count line, then one ``epoch startOffset`` line per entry)."""
from __future__ import annotations

from pathlib import Path


def epoch_files_as_written(root: Path) -> set:
    """(log dir relative to ``root``, replica dir, position, epoch, start offset) of every entry under ``root``."""
    entries = set()
    for path in root.rglob("leader-epoch-checkpoint"):
        lines = path.read_text().splitlines()
        if not lines:
            continue  # Kafka creates the file empty (an empty file reads as no entries)
        assert lines[0] == "0" and len(lines) == 2 + int(lines[1]), path  # version 0, count matches
        log_dir = str(path.parent.parent.relative_to(root))
        for position, line in enumerate(lines[2:]):
            epoch, start = line.split()
            entries.add((log_dir, path.parent.name, position, int(epoch), int(start)))
    return entries


def epoch_rows(rows) -> set:
    return {(r["log_dir"], r["entry_name"], r["position"], r["epoch"], r["start_offset"]) for r in rows}
