"""``kafka-recon demo --out DIR`` never deletes what it did not write (issue #65): a non-empty folder without
the demo's marker is refused with one line and exit 2, before anything is simulated; ``--force`` and the
demo's own folders replace only the demo's entries."""
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.demo import MARKER, OWNED, DemoRefused, prepare_out

REPO = Path(__file__).resolve().parents[2]


def _users_folder(root: Path) -> Path:
    out = root / "mine"
    (out / "sub").mkdir(parents=True)
    (out / "notes.txt").write_text("my notes\n")
    (out / "sub" / "keep.txt").write_text("keep me\n")
    return out


def _tree(root: Path):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_demo_refuses_a_users_non_empty_folder_in_one_line_and_deletes_nothing(tmp_path):
    out = _users_folder(tmp_path)
    before = _tree(out)
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "demo", "--out", str(out)], capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "not empty" in lines[0] and "--force" in lines[0]
    assert "notes.txt" in lines[0] and "sub/" in lines[0]
    assert "Traceback" not in proc.stderr
    assert _tree(out) == before and (out / "notes.txt").read_text() == "my notes\n"
    assert not (out / MARKER).exists() and not (out / "capture").exists()


def test_demo_refuses_a_file_as_out(tmp_path):
    target = tmp_path / "a-file"
    target.write_text("x")
    with pytest.raises(DemoRefused, match="not a directory"):
        prepare_out(target, keep=False, force=False)
    assert target.read_text() == "x"


def test_a_new_or_empty_folder_is_taken_and_marked(tmp_path):
    for out in (tmp_path / "new" / "demo", tmp_path / "empty"):
        if out.name == "empty":
            out.mkdir()
        prepare_out(out, keep=False, force=False)
        assert [p.name for p in out.iterdir()] == [MARKER]


def test_a_demo_folder_is_refilled_but_the_users_files_in_it_survive(tmp_path):
    out = tmp_path / "demo"
    prepare_out(out, keep=False, force=False)
    for name in OWNED:
        (out / name).mkdir()
        (out / name / "old.parquet").write_text("old")
    (out / "notes.txt").write_text("mine")
    prepare_out(out, keep=False, force=False)  # a re-run: no --force needed, the marker says it is ours
    assert sorted(p.name for p in out.iterdir()) == sorted([MARKER, "notes.txt"])
    assert (out / "notes.txt").read_text() == "mine"


def test_keep_keeps_the_demo_entries(tmp_path):
    out = tmp_path / "demo"
    prepare_out(out, keep=False, force=False)
    (out / "tables").mkdir()
    (out / "tables" / "history").write_text("runs")
    prepare_out(out, keep=True, force=False)
    assert (out / "tables" / "history").read_text() == "runs"


def test_force_replaces_only_the_demo_entries_of_a_users_folder(tmp_path):
    out = _users_folder(tmp_path)
    (out / "report").mkdir()
    (out / "report" / "stale.html").write_text("old")
    prepare_out(out, keep=False, force=True)
    assert (out / "notes.txt").read_text() == "my notes\n" and (out / "sub" / "keep.txt").exists()
    assert not (out / "report").exists() and (out / MARKER).exists()


def test_a_symlinked_demo_entry_is_unlinked_never_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("x")
    out = tmp_path / "demo"
    prepare_out(out, keep=False, force=False)
    (out / "tables").symlink_to(elsewhere, target_is_directory=True)
    prepare_out(out, keep=False, force=False)
    assert not (out / "tables").exists() and (elsewhere / "precious").read_text() == "x"
