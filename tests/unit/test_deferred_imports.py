"""Modules GX imports but the suites never use (jobs.quality.deferred_imports): not executed by GX's import, the
real module's objects on first use, and nothing deferred that is already imported or not installed."""
import math
import sys

import pytest

from jobs.quality.deferred_imports import DeferredModule, defer_imports
from tests.fresh_interpreter import run_script


def test_gx_imports_without_running_scipy_stats_or_altair_and_they_work_when_used(tmp_path):
    """GX's KL-divergence expectation holds the stand-ins; its ``stats.entropy`` is scipy's own once read (the
    value checked against the formula), and ``sys.modules`` then holds the real modules."""
    lines = run_script(tmp_path, (
        "import sys\n"
        "import jobs.quality\n"
        "from jobs.quality.gx_context import PRELOADED_MODULES, preload_in_background\n"
        "preload_in_background().join(300)\n"
        "print(all(m in sys.modules for m in PRELOADED_MODULES))\n"
        "print('scipy.stats._stats_py' in sys.modules, 'altair.vegalite' in sys.modules)\n"
        "from great_expectations.expectations.core import expect_column_kl_divergence_to_be_less_than as kl\n"
        "print(float(kl.stats.entropy([0.5, 0.5], [0.25, 0.75])))\n"
        "import scipy.stats, altair\n"
        "print(scipy.stats.entropy is kl.stats.entropy, type(sys.modules['scipy.stats']).__name__,"
        " kl.alt.Chart is altair.Chart, type(sys.modules['altair']).__name__)\n"
    ))
    assert lines[-4:-2] == ["True", "False False"]
    assert math.isclose(float(lines[-2]), 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75))
    assert lines[-1] == "True module True module"


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """``kr_deferred_probe``: a package whose import appends to a log file, with a submodule."""
    pkg = tmp_path / "kr_deferred_probe"
    pkg.mkdir()
    log = tmp_path / "imported.log"
    (pkg / "__init__.py").write_text(f"open({str(log)!r}, 'a').write('pkg\\n')\nANSWER = 42\n")
    (pkg / "sub.py").write_text(f"open({str(log)!r}, 'a').write('sub\\n')\nVALUE = 'sub'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield log
    for name in ("kr_deferred_probe", "kr_deferred_probe.sub"):
        sys.modules.pop(name, None)


def test_a_deferred_module_runs_on_its_first_attribute_only(fake_package):
    assert defer_imports(["kr_deferred_probe"]) == ["kr_deferred_probe"]
    import kr_deferred_probe as probe  # the import statement returns the stand-in: nothing runs

    assert isinstance(probe, DeferredModule) and not fake_package.exists()
    assert probe.ANSWER == 42
    assert fake_package.read_text() == "pkg\n"
    assert sys.modules["kr_deferred_probe"] is not probe and sys.modules["kr_deferred_probe"].ANSWER == 42
    import kr_deferred_probe.sub  # a submodule of a package the stand-in stood for

    assert kr_deferred_probe.sub.VALUE == "sub" and fake_package.read_text() == "pkg\nsub\n"


def test_a_submodule_import_loads_the_deferred_package_first(fake_package):
    defer_imports(["kr_deferred_probe"])
    from kr_deferred_probe import sub

    assert sub.VALUE == "sub" and fake_package.read_text() == "pkg\nsub\n"


def test_nothing_is_deferred_that_is_imported_already_or_not_installed(fake_package):
    import kr_deferred_probe

    assert defer_imports(["kr_deferred_probe", "kr_no_such_module", "kr_no_such_package.sub"]) == []
    assert sys.modules["kr_deferred_probe"] is kr_deferred_probe
    assert "kr_no_such_module" not in sys.modules


def test_a_failing_import_fails_where_the_module_is_used_and_again_next_time(tmp_path, monkeypatch):
    (tmp_path / "kr_deferred_broken.py").write_text("raise RuntimeError('broken at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        defer_imports(["kr_deferred_broken"])
        stand_in = sys.modules["kr_deferred_broken"]
        for _ in range(2):
            with pytest.raises(RuntimeError, match="broken at import"):
                stand_in.anything  # noqa: B018 - reading an attribute is what imports it
            assert sys.modules["kr_deferred_broken"] is stand_in
    finally:
        sys.modules.pop("kr_deferred_broken", None)
