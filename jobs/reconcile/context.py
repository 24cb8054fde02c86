"""What every check function receives: silver tables, bronze inputs, the controller view and thresholds."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Dict, Optional

from pyspark.sql import Column, DataFrame, SparkSession

from . import sql_functions as F
from .catalogue import Catalogue, Thresholds
from .silver_build import ControllerView


@dataclass
class CheckContext:
    spark: SparkSession
    catalogue: Catalogue
    capture_id: str
    run_id: str
    capture_time: datetime
    cluster_id: Optional[str]
    view: ControllerView
    bronze: Dict[str, DataFrame]
    silver: Dict[str, DataFrame]
    replicas: DataFrame  # silver_replicas with the extra ``replicas`` column
    log_dirs: DataFrame  # silver_log_dirs: every log dir's state (registered, offline, foreign, ...)

    @property
    def thresholds(self) -> Thresholds:
        return self.catalogue.thresholds

    def capture_ts(self) -> Column:
        return F.lit(self.capture_time).cast("timestamp")

    def age_ms(self, since: Column) -> Column:
        """Milliseconds from ``since`` to the capture."""
        return F.unix_millis(self.capture_ts()) - F.unix_millis(since)
