"""The README is a product page that cannot drift: its checks table is the catalogue, its exit-code table is
the code's, and every link into docs/ resolves."""
import re
from pathlib import Path

from jobs.reconcile.catalogue import CHECK_IDS, default_catalogue
from jobs.report import summary

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _table_rows(first_header: str):
    lines = README.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            return
        yield [cell.strip() for cell in line.strip("|").split(" | ")]


def test_readme_is_a_short_product_page():
    assert len(README.splitlines()) <= 300
    assert "make demo" in README and "make test" in README
    assert README.count("## Benchmarks") == 1 and not re.search(r"\bsession \d", README, re.I)  # history: docs/


def test_checks_table_is_the_catalogue():
    catalogue = default_catalogue()
    rows = {r[0].strip("`"): r[1:] for r in _table_rows("check")}
    assert list(rows) == list(CHECK_IDS)
    for check_id, (severity, family, reclaimable, title) in rows.items():
        spec = catalogue.checks[check_id]
        assert (severity, family, title) == (spec.severity, spec.family, spec.title), check_id
        assert reclaimable == ("yes" if spec.reclaimable else "no"), check_id


def test_exit_code_table_is_the_codes_the_job_uses():
    rows = {int(r[0].strip("`")): r[1] for r in _table_rows("exit")}
    assert set(rows) == set(summary.EXIT_CODES)
    for code, status in rows.items():
        expected = {summary.EXIT_USAGE: "error"}.get(code, summary.EXIT_CODES[code])
        assert status.startswith(f"`{expected}`"), (code, status)


def test_links_into_the_repository_resolve():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_ci_runs_both_test_tiers_the_readme_names():
    """`make test` is the loop (slow tests deselected), `make test-slow` the rest, and CI runs both: a test
    marked slow can never silently drop out of every run."""
    ci = (ROOT / ".ci" / "run").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "make test-all" in ci and "make test-all" in README
    recipes = {m.group(1): m.group(2) for m in re.finditer(r"^([\w-]+):[^\n]*\n((?:\t[^\n]*\n)*)", makefile, re.M)}
    assert re.search(r"^test-all: test test-slow$", makefile, re.M)
    assert '-m "not slow"' in recipes["test"] and "-m slow" in recipes["test-slow"]
