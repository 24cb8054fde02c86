# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: investigate a broker
# MAGIC A broker's registration and state at capture time, its log dirs, every replica dir it holds and its open
# MAGIC findings with bytes per check.

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

broker_id = int(nb.widget(globals(), "broker_id", "4", "Broker id"))
settings = nb.settings(globals())  # the typed configuration, built once
spark = nb.session(globals(), settings.spark)
store = nb.store(spark, settings.storage)

# COMMAND ----------

from jobs.investigate import broker_view

for title, frame in broker_view(store, broker_id).items():
    nb.show(globals(), frame, title)
