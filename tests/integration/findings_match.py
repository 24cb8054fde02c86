"""Match actual findings against a scenario's expected_findings.json (docs/CONTRACTS.md): an expected finding
names check_id plus any subset of the match keys; the matching must be a bijection."""
from __future__ import annotations

from typing import List, Tuple

MATCH_KEYS = ("broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition")


def _norm(key: str, value):
    if value is None or value == "":
        return None
    if key in ("broker_id", "partition"):
        return int(value)
    if key == "log_dir":
        return str(value).rstrip("/").rsplit("/", 1)[-1]
    return str(value)


def matches(expected: dict, actual: dict) -> bool:
    if expected["check_id"] != actual["check_id"]:
        return False
    return all(_norm(k, expected[k]) == _norm(k, actual.get(k)) for k in MATCH_KEYS if k in expected)


def compare(expected: List[dict], actual: List[dict]) -> Tuple[List[dict], List[dict]]:
    """(unmatched expected, unmatched actual) — both empty when precision = recall = 1 for every check."""
    free = list(range(len(actual)))
    missing = []
    # most specific expectations first, so a wildcard does not take a specific one's finding
    for exp in sorted(expected, key=lambda e: -len(e)):
        hit = next((i for i in free if matches(exp, actual[i])), None)
        if hit is None:
            missing.append(exp)
        else:
            free.remove(hit)
    return missing, [actual[i] for i in free]
