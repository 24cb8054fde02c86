# kafka-recon: `make demo` runs the job on the demo fleet, `make test` runs the tests.
# Both create .venv and install what they need from a fresh clone (Python 3.11, Java 17, make).

PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: demo test test-slow test-all test-fast bench fuzz lint clean venv java chromium local-cluster collector compiled dist matrix

$(PY):
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required (python3.11 not found; set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

venv: $(STAMP)

# The project's modules compiled once, as pip compiles an installed wheel's: an editable checkout run where
# PYTHONDONTWRITEBYTECODE is set (here, and in many container images) otherwise compiles every module it imports in
# every process, ~0.3 CPU s of each nightly's driver (docs/benchmarks.md, session 44). Up to date: ~0.1 s.
compiled: $(STAMP)
	@$(PY) -m compileall -q jobs udfs collector && $(PY) -m compileall -q -l bench

java:
	@$(PY) -c "from jobs.spark_session import check_java; check_java()" >/dev/null || exit 1

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the report browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	  (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null); }

demo: $(STAMP) compiled java
	$(VENV)/bin/kafka-recon demo --out demo-out

# Two tiers: `make test` (the loop, <= 10 min) skips tests marked slow (the scenario matrix, crash safety,
# concurrency, local-cluster, whole-job re-runs); `make test-slow` runs only those; `make test-all` (CI) runs both.
PYTEST := $(VENV)/bin/pytest -q -p no:cacheprovider --durations=15

test: $(STAMP) compiled java chromium
	$(PYTEST) -m "not slow"

test-slow: $(STAMP) compiled java
	$(PYTEST) -m slow

test-all: test test-slow

test-fast: $(STAMP) compiled
	$(VENV)/bin/pytest -q -p no:cacheprovider tests/unit

bench: $(STAMP) compiled java
	$(PIP) install -q -e '.[dev,bench]'
	$(PY) -m bench.run_all

fuzz: $(STAMP)
	$(PIP) install -q -e '.[dev,fuzz]'
	$(PY) -m tests.fuzz.run_fuzz --executions 1000000

# The real captures' truth and the demo nightly on the versions users run besides the pinned ones: Spark 3.5 on
# Python 3.11 with Databricks 15.4 LTS's pandas/pyarrow/numpy, Spark 4.0 on Python 3.12 with pandas 2.2 (17.3 LTS); CI runs it
MATRIX ?= 3.11:3.5.9:pandas==1.5.3,pyarrow==14.0.1,numpy==1.23.5 3.12:4.0.1:pandas==2.2.3
matrix: $(STAMP) java
	bash tests/matrix/run.sh $(MATRIX)

local-cluster: $(STAMP) java
	KAFKA_RECON_LOCAL_CLUSTER=1 $(VENV)/bin/pytest -q -p no:cacheprovider tests/integration/test_local_cluster.py

# the collector as one stdlib-only file to copy to brokers and controllers
collector: $(STAMP)
	$(PY) -m collector.build dist/kafka-recon-collector.py

# what a cluster installs: the wheel (pip install on every node, Databricks libraries) and the same code as one zip
# for spark-submit --py-files
dist: $(STAMP)
	rm -f dist/kafka_recon-*.whl
	$(PIP) wheel -q --no-deps -w dist .
	$(PY) -m jobs.pyfiles dist/kafka_recon.zip

lint: $(STAMP)
	$(VENV)/bin/ruff check jobs udfs collector tests

clean:
	rm -rf $(VENV) demo-out kafka-recon-tables kafka-recon-out .pytest_cache
