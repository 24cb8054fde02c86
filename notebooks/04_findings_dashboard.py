# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: findings dashboard
# MAGIC The dashboard queries kept in `notebooks/sql/` (the same SQL feeds Databricks SQL, Grafana or Superset),
# MAGIC run over the gold tables, with charts.

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
from jobs.dashboards import DASHBOARD_QUERIES, run_query

settings = nb.settings(globals())  # the typed configuration, built once
spark = nb.session(globals(), settings.spark)
store = nb.store(spark, settings.storage)

# COMMAND ----------

results = {name: run_query(spark, store, name) for name in DASHBOARD_QUERIES}
for name, frame in results.items():
    nb.show(globals(), frame, name)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Charts (rendered locally as PNG-free text bars; on Databricks use the display() chart picker)

# COMMAND ----------

from jobs.dashboards import text_bars

print(text_bars(results["open_findings_by_severity_over_time"], "severity", "open_findings"))
print(text_bars(results["bytes_reclaimable_by_broker"], "broker_id", "bytes_reclaimable"))
