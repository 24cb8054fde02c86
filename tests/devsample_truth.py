"""What Kafka itself says about the real kafka-devsample capture (tests/fixtures/kafka-devsample, from its
expected.json and the shared fixtures' README): the five findings any reconcile of it must give, no more. One
copy for every test that runs the devsample, whatever route (in-process, nightly, local-cluster) it takes."""
from __future__ import annotations

from typing import Iterable, Mapping, Optional, Set, Tuple

Finding = Tuple[str, Optional[int], Optional[str], Optional[str]]  # check_id, broker_id, dir_name, topic_id

FINDINGS: Set[Finding] = {
    ("STALE_TOPIC_ID", 103, "clicks-0", "A4HaLNH_zheTrtxgg-IBNA"),  # 103 was fenced while clicks was recreated
    ("MISSING_PARTITION_METADATA", 102, "clicks-0", None),
    ("CORRUPT_PARTITION_METADATA", 104, "inventory-1", None),
    ("STRAY_DIR", 104, "inventory-2.89dae8f0999baf24f653d531c05f9ed6-stray", "xWt6cg-LDx4r6BAz2rYsCg"),
    ("PID_OUTSIDE_BLOCKS", None, None, "7G5NPAb1tNLhoqkWDdmzGg"),  # producer id 9999 in events-1
}


def from_rows(rows: Iterable[Mapping]) -> Set[Finding]:
    """The truth's key of each finding row: a findings.csv row (text, empty for null) or a findings DataFrame row."""
    def value(row: Mapping, key: str):
        v = row[key]
        return None if v in ("", None) else v

    return {(r["check_id"], None if value(r, "broker_id") is None else int(r["broker_id"]), value(r, "dir_name"),
             value(r, "topic_id")) for r in rows}
