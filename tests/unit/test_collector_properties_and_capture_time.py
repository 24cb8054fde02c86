"""Broker-side collector, header inputs: meta.properties parsing, capture-time normalisation, identity
conflicts between log dirs and ZooKeeper-mode broker ids.
"""
from __future__ import annotations

import pytest

import collector
from collector import parse_properties

# ----------------------------------------------------------------------------------- meta.properties


def test_parse_properties_handles_comments_separators_and_continuations():
    text = (
        "#\n#Sun Nov 22 08:32:56 UTC 2026\n  ! another comment\n\n"
        "node.id=101\ncluster.id : EKJ41Lv86vWjqGSh58Dg2w\ndirectory.id dY8vSxKUoccnQSccqw4OyQ\n"
        "long=a\\\n    b\\\n  c\nescaped\\=key=v\\u0041\\tz\nempty=\nversion=1"
    )
    assert parse_properties(text) == {
        "node.id": "101",
        "cluster.id": "EKJ41Lv86vWjqGSh58Dg2w",
        "directory.id": "dY8vSxKUoccnQSccqw4OyQ",
        "long": "abc",
        "escaped=key": "vA\tz",
        "empty": "",
        "version": "1",
    }


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-11-22T08:32:56Z", "2026-11-22T08:32:56.000Z"),
        ("2026-11-22T08:32:56.5Z", "2026-11-22T08:32:56.500Z"),
        ("2026-11-22 08:32:56.123456789", "2026-11-22T08:32:56.123Z"),
        ("2026-11-22T10:32:56+02:00", "2026-11-22T08:32:56.000Z"),
        ("2026-11-22T03:02-0530", "2026-11-22T08:32:00.000Z"),
    ],
)
def test_capture_time_is_normalised_to_utc_milliseconds(text, expected):
    assert collector.parse_capture_time(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01T00:00:00Z", "2026-11-22", "2026-11-22T08:32:56+25:00"])
def test_bad_capture_times_are_refused(text):
    with pytest.raises(ValueError, match="capture time"):
        collector.parse_capture_time(text)


def test_identity_conflicts_and_zk_broker_id(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d, body in ((a, "node.id=1\ncluster.id=X\n"), (b, "node.id=2\ncluster.id=X\n"),
                    (c, "version=0\nbroker.id=3\ncluster.id=Y\n")):
        d.mkdir()
        (d / "meta.properties").write_text(body)
    conflict = collector.make_header([str(a), str(b)])
    assert conflict["broker_id"] is None and conflict["cluster_id"] == "X"
    assert any("differ" in w for w in conflict["warnings"])
    zk = collector.make_header([str(c)])
    assert (zk["broker_id"], zk["cluster_id"], zk["warnings"]) == (3, "Y", [])
