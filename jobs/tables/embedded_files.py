"""Which data files an embedded-backend operation touches, judged from their stats alone (no Spark, no
delta-rs): may a file hold a slice's rows, does a staged file surely hold only them, which files a pass named."""
from __future__ import annotations

from typing import List, Mapping, Sequence

from .embedded_log import ActiveFile
from .parquet_files import FileStats
from .table_predicates import SliceValue


def may_hold(f: ActiveFile, by_rows: Mapping[str, SliceValue]) -> bool:
    """False only when the file's stats prove it holds no row with these column values."""
    for column, value in by_rows.items():
        nulls = f.null_counts.get(column)
        if value is None:
            if nulls == 0:
                return False
            continue
        if nulls is not None and f.num_records is not None and nulls == f.num_records:
            return False
        low, high = f.min_values.get(column), f.max_values.get(column)
        try:
            if low is not None and value < low or high is not None and value > high:
                return False
        except TypeError:
            continue
    return True


def surely_within(stats: FileStats, by_rows: Mapping[str, SliceValue]) -> bool:
    """True when the footer stats prove every row has these column values (else Spark checks)."""
    for column, value in by_rows.items():
        nulls = stats.null_counts.get(column)
        if value is None:
            if nulls != stats.num_records:
                return False
        elif nulls != 0 or stats.min_values.get(column) != value or stats.max_values.get(column) != value \
                or type(stats.min_values.get(column)) is not type(value):
            return False
    return True


def files_named(files: Sequence[ActiveFile], names: set) -> List[ActiveFile]:
    if not names:
        return []
    if len({f.name for f in files}) != len(files):
        return list(files)  # cannot tell same-named files apart: rewrite them all (correct, slower)
    return [f for f in files if f.name in names]
