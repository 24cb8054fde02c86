# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: nightly run
# MAGIC Runs ingest -> reconcile -> data quality -> report on the captures below, exactly like the scheduled job
# MAGIC (`jobs/nightly.py`). Findings land in the gold tables; the report in the output folder.

# COMMAND ----------

# MAGIC %pip install -q -r ../requirements-databricks.txt

# COMMAND ----------

# The installed wheel (a cluster or job library, a serverless environment's dependency) is imported as it is. Only
# where it is not installed (a Git folder or bundle source) does the project root one folder up go on sys.path,
# as Databricks documents for workspace modules (the notebook's folder is the working directory, Runtime 14+).
import importlib.util
import os
import sys

if importlib.util.find_spec("jobs") is None:
    sys.path.insert(0, os.path.abspath(".."))

# COMMAND ----------

from jobs import notebook_support as nb

captures = nb.widget(globals(), "captures", "demo-out/capture", "Capture folders (comma-separated)")
output_dir = nb.widget(globals(), "output_dir", "demo-out/notebook-report", "Report folder")
conf_file = nb.widget(globals(), "conf", "", "Extra conf YAML (optional)")
fail_on = nb.widget(globals(), "fail_on", "never", "Fail on severity (info/warning/critical/never)")
capture_time = nb.widget(globals(), "capture_time", "", "Capture time, ISO-8601 (empty: the capture's own)")

# COMMAND ----------

from jobs import nightly

args = ["--capture", captures, "--out", output_dir, "--fail-on", fail_on]
if conf_file:
    args += ["--conf", conf_file]
if capture_time:
    args += ["--capture-time", capture_time]
args += nb.storage_overrides(globals())
exit_code = nightly.main(args)
print(f"exit code {exit_code} (0: nothing at or above {fail_on}; 10: findings; 1: job error)")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Summary of this run

# COMMAND ----------

import json
from pathlib import Path

summary = json.loads(Path(output_dir, "summary.json").read_text())
print(json.dumps({k: summary[k] for k in ("status", "exit_code", "counts", "findings_open")}, indent=2))
assert exit_code in (0, 10), "the nightly job failed: see the log above"
