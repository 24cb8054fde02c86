# Databricks notebook source
# MAGIC %md
# MAGIC # kafka-recon: investigate a broker
# MAGIC A broker's registration and state at capture time, its log dirs, every replica dir it holds and its open
# MAGIC findings with bytes per check.

# COMMAND ----------

from jobs import notebook_support as nb

broker_id = int(nb.widget(globals(), "broker_id", "4", "Broker id"))
spark = nb.session(globals())
store = nb.store(globals(), spark)

# COMMAND ----------

from jobs.investigate import broker_view

for title, frame in broker_view(store, broker_id).items():
    nb.show(globals(), frame, title)
