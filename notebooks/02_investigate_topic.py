# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: investigate a topic
# MAGIC Every incarnation of a topic (by name or topic id), its assignments, every replica dir on every broker,
# MAGIC its findings and the metadata records that prove them.

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

topic = nb.widget(globals(), "topic", "clicks", "Topic name or topic id")
settings = nb.settings(globals())  # the typed configuration, built once
spark = nb.session(globals(), settings.spark)
store = nb.store(spark, settings.storage)

# COMMAND ----------

from jobs.investigate import topic_view

views = topic_view(store, topic)
for title, frame in views.items():
    nb.show(globals(), frame, title)
