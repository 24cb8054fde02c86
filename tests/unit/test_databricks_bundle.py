"""The Databricks bundle deploys as written: valid against the CLI's published bundle schema, no Spark/Delta
pins for the runtime, notifications, timeout, retries, run_as, AWS and Azure targets, notebooks that install
and import the project the way Databricks documents. No Spark here; the notebooks run in tests/integration."""
import gzip
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BUNDLE_TEXT = (ROOT / "databricks.yml").read_text()
BUNDLE = yaml.safe_load(BUNDLE_TEXT)
# The CLI's schema writes Go (RE2) patterns; Python's re lacks \p{L} / \p{N}: the same classes, spelled for re.
_RE2_CLASSES = ((r"[\\p{L}\\p{N}]", r"[^\\W_]"), (r"\\p{L}", r"[^\\W\\d_]"), (r"\\p{N}", r"\\d"))
_SCHEMA_TEXT = gzip.decompress((ROOT / "tests/fixtures/databricks/bundle-jsonschema.json.gz").read_bytes()).decode()
for _go, _py in _RE2_CLASSES:
    _SCHEMA_TEXT = _SCHEMA_TEXT.replace(_go, _py)
SCHEMA = json.loads(_SCHEMA_TEXT)
RUNTIME_PROVIDED = {"pyspark", "delta-spark"}


def _name(requirement: str) -> str:
    return re.split(r"[ ;<>=!~\[]", requirement.strip(), maxsplit=1)[0].lower()


def test_bundle_is_valid_against_the_published_bundle_schema():
    jsonschema.validate(BUNDLE, SCHEMA)


def test_the_schema_copy_catches_a_wrong_bundle():
    wrong = json.loads(json.dumps(BUNDLE))
    wrong["resources"]["jobs"]["kafka_recon_nightly"]["tasks"][0]["max_retries"] = "twice"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, SCHEMA)


def test_job_fails_loudly_and_notifies():
    job = BUNDLE["resources"]["jobs"]["kafka_recon_nightly"]
    task = job["tasks"][0]
    assert job["email_notifications"]["on_failure"] == ["${var.notify}"]  # exit 1, 2, 3 and 10 all fail the task
    assert job["timeout_seconds"] > 0 and job["health"]["rules"]
    assert task["max_retries"] >= 1 and task["retry_on_timeout"] is False
    assert "/Workspace${" not in BUNDLE_TEXT  # current CLIs prefix /Workspace themselves
    used = set(re.findall(r"\$\{var\.([a-z_]+)\}", BUNDLE_TEXT))
    assert used <= set(BUNDLE["variables"])


def test_targets_cover_aws_and_azure_and_production_runs_as_a_service_principal():
    targets = BUNDLE["targets"]
    assert targets["dev"]["default"] is True and targets["dev"]["mode"] == "development"
    node_types = {name: t["variables"]["node_type"] for name, t in targets.items()}
    assert node_types["prod_aws"].startswith(("i3.", "m5", "r5", "c5")) and node_types["prod_azure"].startswith("Standard_")
    for name in ("prod_aws", "prod_azure"):
        assert targets[name]["mode"] == "production"
        assert targets[name]["run_as"] == {"service_principal_name": "${var.service_principal}"}


VALUES = {"captures": "/c", "output_dir": "/o", "fail_on": "critical", "catalog": "main", "schema": "kr"}


def _params(params):
    return [re.sub(r"\$\{var\.([a-z_]+)\}", lambda m: VALUES[m.group(1)], p) for p in params]


def test_nightly_accepts_exactly_the_flags_the_bundle_passes():
    from jobs.nightly import parse_args

    task = BUNDLE["resources"]["jobs"]["kafka_recon_nightly"]["tasks"][0]
    assert task["spark_python_task"]["python_file"] == "./jobs/nightly.py" and (ROOT / "jobs/nightly.py").is_file()
    args = parse_args(_params(task["spark_python_task"]["parameters"]))
    # findings never fail (and so never retry) the nightly task: the gate after it fails on them
    assert args.fail_on == "never" and args.capture == ["/c"] and task["max_retries"] == 1
    assert task["libraries"] == [{"whl": "./dist/*.whl"}]
    assert BUNDLE["artifacts"]["kafka_recon_wheel"]["type"] == "whl"


@pytest.mark.parametrize("job", ["kafka_recon_nightly", "kafka_recon_nightly_serverless"])
def test_each_job_gates_on_findings_without_retrying(job, tmp_path):
    """The gate task runs the wheel's console script (the entry point pyproject declares) on the nightly's
    summary.json, is never retried, and exits 10 on a summary with an open critical finding."""
    import json

    from jobs import cli

    tasks = {t["task_key"]: t for t in BUNDLE["resources"]["jobs"][job]["tasks"]}
    gate = tasks["gate"]
    assert gate["depends_on"] == [{"task_key": "nightly"}] and gate["max_retries"] == 0
    wheel_task = gate["python_wheel_task"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert wheel_task["package_name"] == "kafka_recon" and wheel_task["entry_point"] in scripts
    params = _params(wheel_task["parameters"])
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"status": "findings", "exit_code": 0,
                                   "counts": {"by_severity": {"critical": 1, "warning": 0, "info": 0}}}))
    params[params.index("/o/summary.json")] = str(summary)
    assert cli.main(params) == 10
    summary.write_text(json.dumps({"status": "findings", "exit_code": 0,
                                   "counts": {"by_severity": {"critical": 0, "warning": 2, "info": 0}}}))
    assert cli.main(params) == 0
    summary.write_text(json.dumps({"status": "incomplete", "exit_code": 3}))
    assert cli.main(params) == 3


def test_serverless_job_installs_the_wheel_through_its_environment():
    from jobs.nightly import parse_args

    job = BUNDLE["resources"]["jobs"]["kafka_recon_nightly_serverless"]
    assert "job_clusters" not in job
    (env,) = job["environments"]
    assert env["spec"]["dependencies"] == ["./dist/*.whl"]
    nightly = {t["task_key"]: t for t in job["tasks"]}["nightly"]
    assert nightly["environment_key"] == env["environment_key"]
    params = _params(nightly["python_wheel_task"]["parameters"])
    assert params[0] == "nightly" and parse_args(params[1:]).fail_on == "never"


def test_the_bundle_creates_the_tables_schema():
    (schema,) = BUNDLE["resources"]["schemas"].values()
    assert schema == {**schema, "catalog_name": "${var.catalog}", "name": "${var.schema}"}


def test_runtime_requirements_leave_spark_and_delta_to_databricks():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = project["dependencies"]
    assert not {_name(r) for r in runtime} & RUNTIME_PROVIDED
    assert {_name(r) for r in project["optional-dependencies"]["local"]} >= RUNTIME_PROVIDED
    listed = [ln for ln in (ROOT / "requirements-databricks.txt").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")]
    assert listed == runtime


def test_built_wheel_requires_no_spark_or_delta_spark(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=300)
    wheel = next(tmp_path.glob("kafka_recon-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        # the executors walk raw trees with the collector's code and read packs with udfs.pack_reader
        assert {"collector/walk.py", "collector/build.py", "udfs/pack_reader.py"} <= set(zf.namelist())
    requires = [ln.split(":", 1)[1].strip() for ln in meta.splitlines() if ln.startswith("Requires-Dist:")]
    unconditional = {_name(r) for r in requires if "extra ==" not in r}
    assert "great-expectations" in unconditional and not unconditional & RUNTIME_PROVIDED
    assert any(_name(r) == "pyspark" and 'extra == "local"' in r for r in requires)


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("0*.py")), ids=lambda p: p.name)
def test_notebooks_install_and_import_the_project_first(notebook):
    cells = notebook.read_text().split("# COMMAND ----------")
    code = [c.strip() for c in cells[1:]]
    assert code[0] == "# MAGIC %pip install -q -r ../requirements-databricks.txt"
    assert "sys.path.insert(0, os.path.abspath(\"..\"))" in code[1]
    assert all("import jobs" not in c and "from jobs" not in c for c in code[:2])
