"""Data quality with Great Expectations 1.x: suites on bronze/silver/gold DataFrames, results flattened into
``gold_dq_results``, Data Docs built offline beside the report.

Entry points: :func:`run_quality` and :func:`dq_results_frame` (``runner.py``); suites are data in
``suites.py``; ``deferred_imports.py`` keeps two modules GX imports but the suites never use out of its import;
``offline_docs.py`` serves the Data Docs' CSS/JS from local copies.
"""
from .deferred_imports import defer_imports
from .gx_context import spark_connect_import_fails_instead_of_exiting
from .runner import DqRun, dq_results_frame, run_quality, summarize
from .suites import Rule, Suite, build_suite

# before any module of this package imports Great Expectations (they all do so inside functions)
spark_connect_import_fails_instead_of_exiting()
defer_imports()  # what GX imports for expectations the suites never use: imported on first use

__all__ = ["DqRun", "Rule", "Suite", "build_suite", "dq_results_frame", "run_quality", "summarize"]
