# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: investigate a topic
# MAGIC Every incarnation of a topic (by name or topic id), its assignments, every replica dir on every broker,
# MAGIC its findings and the metadata records that prove them.

# COMMAND ----------

from jobs import notebook_support as nb

topic = nb.widget(globals(), "topic", "clicks", "Topic name or topic id")
spark = nb.session(globals())
store = nb.store(globals(), spark)

# COMMAND ----------

from jobs.investigate import topic_view

views = topic_view(store, topic)
for title, frame in views.items():
    nb.show(globals(), frame, title)
