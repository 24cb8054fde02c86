"""findings.csv: every finding of the run, streamed from Spark (``toLocalIterator``), never collected whole.

Columns (CONTRACTS.md): check_id, severity, broker_id, log_dir, dir_name, topic_name, topic_id, partition,
bytes, first_seen, status, message. RFC 4180 quoting, UTF-8, ``\\n`` line ends, ``first_seen`` as ISO-8601 UTC.
Cells that a spreadsheet would run as a formula (text starting with ``=``, ``+``, ``@``, a tab or CR, or ``-``
followed by anything but a plain name) get a leading ``'`` (OWASP CSV injection advice); Kafka names
(``[A-Za-z0-9._-]``) are never changed.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from .aggregates import iso_from_micros, ordered_findings

CSV_COLUMNS = ("check_id", "severity", "broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition",
               "bytes", "first_seen", "status", "message")
_PLAIN_NAME = re.compile(r"^-[A-Za-z0-9._-]*$")


def neutralize(value: Any) -> Any:
    """Keep a text cell from being evaluated as a spreadsheet formula."""
    if not isinstance(value, str) or not value:
        return value
    first = value[0]
    if first in "=+@\t\r" or (first == "-" and not _PLAIN_NAME.match(value)):
        return "'" + value
    return value


def csv_records(scope_df) -> Iterator[tuple]:
    """The CSV body rows in report order, one Spark partition at a time on the driver."""
    from pyspark.sql import functions as F

    cols = [F.col(c) if c in scope_df.columns else F.lit(None).alias(c) for c in CSV_COLUMNS if c != "first_seen"]
    cols.append(F.unix_micros("first_seen").alias("first_seen_us"))
    for row in ordered_findings(scope_df).select(*cols).toLocalIterator():
        d = row.asDict()
        d["first_seen"] = iso_from_micros(d.pop("first_seen_us"))
        yield tuple(neutralize(d[c]) for c in CSV_COLUMNS)


def write_csv(path: Path, records: Iterable[tuple]) -> int:
    """Write header + records to ``path``; returns the number of records."""
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for record in records:
            writer.writerow(["" if v is None else v for v in record])
            n += 1
    return n
