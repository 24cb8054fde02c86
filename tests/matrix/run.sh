#!/usr/bin/env bash
# The job on the Spark and Python versions users run besides the pinned ones (README: Databricks 15.4/16.4 LTS are
# Spark 3.5, 17.3 LTS is Spark 4.0 on Python 3.12). Each argument PYTHON:PYSPARK[:PIN,PIN...] gets a venv of its own
# (.venv-matrix/) with the project, that pyspark and the pins (a runtime's preinstalled pandas/pyarrow/numpy), and
# runs the tests that hold the real Kafka captures to their truth, then the demo nightly against the simulator's truth.
set -euo pipefail
cd "$(dirname "$0")/../.."
TESTS=(tests/spark/test_reconcile_devsample.py tests/spark/test_reconcile_real_prod.py
       tests/spark/test_reconcile_zk_checks.py tests/spark/test_ingest_zk.py tests/integration/test_nightly_devsample.py)
for combo in "$@"; do
  IFS=: read -r py spark pins <<<"$combo"
  # pyenv's versions first: its shim for a version that is not global answers "command not found"
  base="$(pyenv prefix "$py" 2>/dev/null)/bin/python$py"
  [ -x "$base" ] || base=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$py"*/bin/"python$py" 2>/dev/null | tail -n 1)
  [ -x "$base" ] || base=$(command -v "python$py")
  "$base" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$py'.split('.')))" \
    || { echo "matrix: no Python $py found (pyenv install $py)"; exit 1; }
  venv=".venv-matrix/py$py-spark$spark"
  echo "== matrix: Python $py, Spark $spark ${pins:+(pins: $pins)}"
  [ -x "$venv/bin/python" ] || "$base" -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install -q -e . "pyspark==$spark" "pytest>=8,<10" pytest-timeout==2.4.0 "hypothesis>=6.100" ${pins//,/ }
  "$venv/bin/python" -c "import sys, pyspark, pandas, pyarrow; print('python', sys.version.split()[0], 'pyspark', pyspark.__version__, 'pandas', pandas.__version__, 'pyarrow', pyarrow.__version__)"
  "$venv/bin/pytest" -q -p no:cacheprovider -m "not slow" "${TESTS[@]}"
  out=$(mktemp -d /tmp/kafka-recon-matrix.XXXXXX)
  "$venv/bin/kafka-recon" demo --out "$out/demo" >"$out/demo.log" 2>&1 || { tail -40 "$out/demo.log"; exit 1; }
  "$venv/bin/python" - "$out/demo" <<'PY'
import json, sys
from pathlib import Path
demo = Path(sys.argv[1])
expected = len(json.loads((demo / "capture" / "expected_findings.json").read_text())["findings"])
summary = json.loads((demo / "report" / "summary.json").read_text())
assert summary["status"] in ("ok", "findings") and summary["findings_open"] == expected > 0, (summary["status"], summary["findings_open"], expected)
print(f"demo nightly: {summary['findings_open']} open findings, as the simulator's truth lists")
PY
  rm -rf "$out"
done
