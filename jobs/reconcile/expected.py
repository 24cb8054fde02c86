"""Compare findings with a scenario's ``expected_findings.json`` (docs/CONTRACTS.md).

An actual finding matches an expected one when every key the expected one names is equal; a scenario passes
when the matching is a bijection (precision = recall = 1 per check). The matching is a small bipartite
problem solved with augmenting paths, so an expectation naming few keys cannot steal the only finding a
more specific one could match.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Sequence

MATCH_KEYS = ("broker_id", "log_dir", "dir_name", "topic_name", "topic_id", "partition")


@dataclass
class Comparison:
    matched: List[tuple] = field(default_factory=list)      # (expected, actual)
    missing: List[dict] = field(default_factory=list)       # expected with no finding (recall < 1)
    unexpected: List[dict] = field(default_factory=list)    # findings nobody expected (precision < 1)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unexpected

    def per_check(self) -> Dict[str, Dict[str, float]]:
        checks = {e["check_id"] for e, _ in self.matched} | {e["check_id"] for e in self.missing} | \
            {a["check_id"] for a in self.unexpected}
        out = {}
        for c in sorted(checks):
            tp = sum(1 for e, _ in self.matched if e["check_id"] == c)
            fn = sum(1 for e in self.missing if e["check_id"] == c)
            fp = sum(1 for a in self.unexpected if a["check_id"] == c)
            out[c] = {"precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0}
        return out


def _matches(expected: Mapping, actual: Mapping) -> bool:
    if expected.get("check_id") != actual.get("check_id"):
        return False
    return all(actual.get(k) == v for k, v in expected.items() if k in MATCH_KEYS)


def compare(expected: Sequence[Mapping], actual: Sequence[Mapping]) -> Comparison:
    """Maximum bipartite matching of expected to actual findings (both as dicts with the match keys)."""
    candidates = [[j for j, a in enumerate(actual) if _matches(e, a)] for e in expected]
    owner: Dict[int, int] = {}

    def assign(i: int, seen: set) -> bool:
        for j in candidates[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or assign(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        assign(i, set())
    result = Comparison()
    got = {i: j for j, i in owner.items()}
    for i, e in enumerate(expected):
        if i in got:
            result.matched.append((dict(e), dict(actual[got[i]])))
        else:
            result.missing.append(dict(e))
    result.unexpected = [dict(a) for j, a in enumerate(actual) if j not in owner]
    return result
