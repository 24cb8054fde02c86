# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: findings dashboard
# MAGIC The dashboard queries kept in `notebooks/sql/` (the same SQL feeds Databricks SQL, Grafana or Superset),
# MAGIC run over the gold tables, with charts.

# COMMAND ----------

from jobs import notebook_support as nb
from jobs.dashboards import DASHBOARD_QUERIES, run_query

spark = nb.session(globals())
store = nb.store(globals(), spark)

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
