"""What notebooks need to run both on Databricks and locally: widgets with defaults, display, a session.

On Databricks ``dbutils`` and ``display`` exist in the notebook's globals; locally they do not, so widget
defaults apply and DataFrames are shown with ``show()``. Notebooks hold no logic beyond calling ``jobs``.
"""
from __future__ import annotations

from typing import Any, Dict, Optional


def widget(namespace: Dict[str, Any], name: str, default: str, label: Optional[str] = None) -> str:
    """Declare a text widget on Databricks and return its value; locally return ``default``."""
    dbutils = namespace.get("dbutils")
    if dbutils is None:
        return namespace.get("_widget_values", {}).get(name, default)
    dbutils.widgets.text(name, default, label or name)
    return dbutils.widgets.get(name)


def show(namespace: Dict[str, Any], df, title: str = "", limit: int = 50) -> None:
    """``display(df)`` on Databricks, ``df.show()`` locally."""
    if title:
        print(f"## {title}")
    display = namespace.get("display")
    if display is not None:
        display(df)
    else:
        df.show(limit, truncate=80)


def settings(namespace: Dict[str, Any]):
    """The notebook's typed configuration, built once: conf/*.yaml, the environment, the storage widgets."""
    from jobs.settings import Settings

    return Settings.load(overrides=storage_overrides(namespace)[1::2])


def session(namespace: Dict[str, Any], spark_settings=None):
    """The notebook's ``spark`` when present, else the project's local session (``settings(...).spark``)."""
    spark = namespace.get("spark")
    if spark is not None:
        return spark
    from jobs.spark_session import get_spark

    return get_spark(spark_settings)


def storage_overrides(namespace: Dict[str, Any]) -> list:
    """``--set`` flags that point the job at Unity Catalog when the notebook runs on Databricks."""
    dbutils = namespace.get("dbutils")
    if dbutils is None:  # local run: tests may point the notebook at their own table root
        root = namespace.get("_widget_values", {}).get("storage_root")
        return ["--set", f"storage.root={root}"] if root else []
    catalog = widget(namespace, "catalog", "main", "Unity Catalog catalog")
    schema = widget(namespace, "schema", "kafka_recon", "Unity Catalog schema")
    return ["--set", f"storage.catalog={catalog}", "--set", f"storage.schema={schema}"]


def store(spark, storage):
    """The project's table store from ``settings(...).storage`` (Unity Catalog names on Databricks, the conf root
    locally)."""
    from jobs.tables.delta_store import DeltaStore

    return DeltaStore.from_settings(spark, storage)
