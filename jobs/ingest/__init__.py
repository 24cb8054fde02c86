"""Ingest (bronze): captures -> bronze Delta tables. See :mod:`jobs.ingest.stage`."""
from .stage import IngestResult, run_ingest, write_ingest

__all__ = ["IngestResult", "run_ingest", "write_ingest"]
