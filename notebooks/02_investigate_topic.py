# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: investigate a topic
# MAGIC Every incarnation of a topic (by name or topic id), its assignments, every replica dir on every broker,
# MAGIC its findings and the metadata records that prove them.

# COMMAND ----------

# MAGIC %pip install -q -r ../requirements-databricks.txt

# COMMAND ----------

# Databricks: the project's source sits one folder up (bundle deploy or Git folder) and the notebook's folder is
# the working directory (Runtime 14+); put the project root on sys.path as Databricks documents for workspace
# modules (the %pip cell above installed its dependencies). Where the package is installed this changes nothing.
import os
import sys

if os.path.isdir(os.path.abspath(os.path.join("..", "jobs"))) and os.path.abspath("..") not in sys.path:
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
