"""Run the expectation suites on Spark DataFrames with Great Expectations 1.x and flatten the results.

One Spark datasource per lane (``lanes.py``: a small capture's suites run two at a time, each lane in its own
cloned session), one dataframe asset + whole-dataframe batch definition + suite + validation definition +
checkpoint per table; each checkpoint runs with its DataFrame as the batch parameter. With ``quality.details:
failed`` a table's suite holds only the rules the screen (``screen.py``, one aggregate query for every table) did
not pass; the passed ones join its result bare. Results are flattened
into ``gold_dq_results`` rows (``flatten.py``); Data Docs are built once at the end into ``docs_dir`` and made
to work offline (``offline_docs.py``). The caller writes the rows with the storage layer (slice: run_id).

Example::

    dq = run_quality(spark, settings.quality, {"bronze_dir_entries": entries_df, "gold_findings": findings_df},
                     run_id=run_id, capture_id=capture_id, docs_dir=out_dir / "dq")
    dq_df = dq_results_frame(spark, dq.rows)      # schema of gold_dq_results
    write_reports(..., dq_summary=dq.summary)
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from jobs.driver_threads import map_at_once
from jobs.engine.local_frames import local_frame
from jobs.settings import QualitySettings
from jobs.spark_session import session_actions_at_once
from jobs.stage_log import get_logger
from jobs.tables.registry import spec

from .flatten import empty_counts_known, passed_counts, result_key, suite_rows
from .gx_context import offline_context
from .lanes import bound_to, cloned_session, frames_by_lane, suite_lanes
from .offline_docs import make_offline
from .screen import Screened, screen
from .suites import KNOWN_CHECK_IDS, META_KEY, Suite, build_suite


class DocsBuild:
    """The Data Docs site built from the context's validation results, made to work offline; on a thread of its
    own when ``background`` (:meth:`wait` joins it and raises what it raised)."""

    def __init__(self, context, docs_dir: Path, background: bool):
        self.removed: List[str] = []
        self._error: Optional[BaseException] = None
        self._thread: Optional[threading.Thread] = None
        if background:
            self._thread = threading.Thread(target=self._run, args=(context, docs_dir), name="kafka-recon-data-docs",
                                            daemon=True)
            self._thread.start()
        else:
            self._build(context, docs_dir)

    def _build(self, context, docs_dir: Path) -> None:
        context.build_data_docs()
        self.removed = make_offline(docs_dir).removed
        if self.removed:
            get_logger().warning("stage=quality data_docs_removed_external=%s", sorted(set(self.removed)))

    def _run(self, context, docs_dir: Path) -> None:
        try:
            self._build(context, docs_dir)
        except BaseException as exc:  # noqa: BLE001 - raised again by wait(), on the caller's thread
            self._error = exc

    def wait(self) -> List[str]:
        """The external URLs the offline pass removed, once the site is complete."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise RuntimeError(f"building the Data Docs failed: {self._error}") from self._error
        return self.removed


@dataclass
class DqRun:
    """What one data-quality run produced. With the Data Docs built in the background, ``docs_index`` names the
    site before it is complete: :meth:`wait_for_docs` waits for it."""

    rows: List[Dict[str, Any]]
    summary: Dict[str, Any]
    docs_index: Optional[Path] = None
    removed_urls: List[str] = field(default_factory=list)
    docs: Optional[DocsBuild] = None

    def wait_for_docs(self) -> None:
        if self.docs is not None:
            self.removed_urls = self.docs.wait()


def _expectation_class(rule):
    import great_expectations.expectations as gxe

    cls = getattr(gxe, rule.expectation, None)
    if cls is None:
        raise ValueError(f"no Great Expectations expectation named {rule.expectation!r}")
    return cls


def _expectation(rule):
    return _expectation_class(rule)(**dict(rule.kwargs), meta={META_KEY: rule.column_key})


def _counted_per_row(rule) -> bool:
    """Whether GX decides ``rule`` row by row (a map expectation: its element count is the table's rows)."""
    from great_expectations.expectations.expectation import (
        ColumnMapExpectation,
        ColumnPairMapExpectation,
        MulticolumnMapExpectation,
    )

    return issubclass(_expectation_class(rule), (ColumnMapExpectation, ColumnPairMapExpectation,
                                                 MulticolumnMapExpectation))


@dataclass
class _Validating:
    """What every suite's validation shares: the GX context, whose stores ``lock`` guards when suites run at once
    (their validations themselves run unguarded), and the run's identifier and result formats."""

    context: Any
    lock: threading.Lock
    run_identifier: Any
    result_format: dict


def _validate(v: _Validating, batch_definition, name: str, rules, df, result_format: dict):
    """``rules`` as one suite named ``name``, validated on ``df``: ``[(result key, suite validation result)]``
    and the GX suite."""
    import great_expectations as gx

    expectations = [_expectation(rule) for rule in rules]  # built outside the lock the other lane may wait on
    with v.lock:  # the rules in the suite before it is stored: one write, not a read and a write per rule
        gx_suite = v.context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
        validation = v.context.validation_definitions.add(
            gx.ValidationDefinition(name=f"{name}.validation", data=batch_definition, suite=gx_suite))
        checkpoint = v.context.checkpoints.add(
            gx.Checkpoint(name=f"{name}.checkpoint", validation_definitions=[validation], actions=[],
                          result_format=result_format))
    runs = list(checkpoint.run(batch_parameters={"dataframe": df}, run_id=v.run_identifier).run_results.items())
    return runs, gx_suite


def _add_passed(v: _Validating, gx_suite, suite: Suite, runs, passed) -> None:
    """The rules the screen passed (``passed``: result keys) into the suite and into each validation result, as
    the results GX's BOOLEAN_ONLY format gives a passing expectation, in the suite's order; each result's
    statistics and success counted again over all its results by GX's own function."""
    from great_expectations.core.expectation_validation_result import ExpectationValidationResult
    from great_expectations.validator.validation_statistics import calc_validation_statistics

    rules = [rule for rule in suite.rules if rule.result_key in passed]
    if not rules:
        return
    added = [_expectation(rule) for rule in rules]
    with v.lock:  # stored once: GX's add_expectation reads and writes the whole suite for each (~3 ms a rule)
        gx_suite.expectations.extend(added)
        gx_suite.save()
    configs = {rule.result_key: expectation.configuration for rule, expectation in zip(rules, added, strict=True)}
    for _, run in runs:
        by_key = {result_key(r): r for r in run.results}
        by_key.update((key, ExpectationValidationResult(
            success=True, expectation_config=config, result={}, meta={},
            exception_info={"raised_exception": False, "exception_traceback": None, "exception_message": None}))
            for key, config in configs.items())
        run.results = [by_key[rule.result_key] for rule in suite.rules if rule.result_key in by_key]
        stats = calc_validation_statistics(run.results)  # as GX's validator counts them
        run.statistics = {name: getattr(stats, name) for name in ("evaluated_expectations", "successful_expectations",
                                                                  "unsuccessful_expectations", "success_percent")}
        run.success = stats.success


def _run_suite(v: _Validating, batch_definition, suite: Suite, df, screened: Optional[Screened]):
    """Validate ``df`` with ``suite``. With ``screened`` (``quality.details: failed``, a table with rows), GX
    validates only the rules the screen did not pass, with the detailed format (screen.py: one aggregate query
    decided the rest), and the passed ones join the same validation result bare, so the Data Docs still show one
    validation per table. Without it, GX validates every rule with the detailed format. Returns the results and
    the keys of those left bare (passed: :func:`jobs.quality.flatten.passed_counts` completes their rows)."""
    bare = screened.passed if screened is not None else frozenset()
    rules = [rule for rule in suite.rules if rule.result_key not in bare]
    runs, gx_suite = _validate(v, batch_definition, suite.name, rules, df, v.result_format)
    _add_passed(v, gx_suite, suite, runs, bare)
    for key, result in runs:
        # a DataFrame batch carries no asset name, so Data Docs would say "Data asset: None": name the table
        spec_meta = dict(result.meta.get("batch_spec") or {})
        spec_meta["data_asset_name"] = suite.table
        result.meta["batch_spec"] = spec_meta
        with v.lock:
            v.context.validation_results_store.set(key, result)
    return [r for _, run in runs for r in run.results], set(bare)


def _is_cached(df) -> bool:
    level = df.storageLevel
    return level.useMemory or level.useDisk


def summarize(rows: List[Dict[str, Any]], docs_index: Optional[str]) -> Dict[str, Any]:
    """The small dict the report shows (and summary.json embeds under ``dq``)."""
    by_suite: Dict[str, Dict[str, Any]] = {}
    for row in rows:
        s = by_suite.setdefault(row["suite"], {"table": row["table_name"], "expectations": 0, "failed": 0,
                                               "skipped": 0})
        s["expectations"] += 1
        if row["success"] is None:
            s["skipped"] += 1
        elif not row["success"]:
            s["failed"] += 1
    failed = sum(s["failed"] for s in by_suite.values())
    return {
        "success": failed == 0 if rows else None,
        "suites": len(by_suite),
        "expectations": len(rows),
        "failed": failed,
        "skipped": sum(s["skipped"] for s in by_suite.values()),
        "by_suite": by_suite,
        "failures": [
            {"suite": r["suite"], "table": r["table_name"], "expectation": r["expectation"],
             "column": r["column_name"], "unexpected_count": r["unexpected_count"]}
            for r in rows if r["success"] is False
        ],
        "data_docs_index": docs_index,
    }


class QualityRun:
    """One data-quality run, validated in parts: every part's rows, Data Docs and summary end as one run's.

    Why parts: a small capture's bronze tables are complete once ingest has written them, and validating them
    while reconcile runs fills the second core, which reconcile's first half leaves idle (docs/benchmarks.md,
    session 26). ``validate_in_background`` does that on a thread and a clone of the session (GX registers each
    batch as the temp view ``tmp_view``: lanes.py); ``finish`` waits for it and raises what it raised. The rows
    are those of one :func:`run_quality` over every table, whatever the parts.
    """

    def __init__(self, spark, settings: QualitySettings, run_id: str, capture_id: Optional[str],
                 docs_dir: Optional[Path] = None, evaluated_at: Optional[datetime] = None):
        self.spark, self.settings, self.run_id, self.capture_id = spark, settings, run_id, capture_id
        self.evaluated_at = evaluated_at or datetime.now(timezone.utc)
        self.docs_dir = Path(docs_dir) if docs_dir is not None else None
        self.check_ids = tuple(dict.fromkeys([*KNOWN_CHECK_IDS, *settings.check_ids]))
        self.failed_only = settings.details == "failed"
        self._lock = threading.Lock()
        self._validating: Optional[_Validating] = None
        self._suites: Dict[str, Suite] = {}
        self._validated: Dict[str, Any] = {}
        self._row_counts: Dict[str, int] = {}
        self._sources = 0
        self._background: List[threading.Thread] = []
        self._errors: List[BaseException] = []

    def _shared(self) -> _Validating:
        """The GX context and what every suite's validation shares, made on first use (GX's import may still be
        under way on the preload thread until then)."""
        with self._lock:
            if self._validating is None:
                from great_expectations.core.run_identifier import RunIdentifier

                if self.docs_dir is not None:
                    self.docs_dir.mkdir(parents=True, exist_ok=True)
                self._validating = _Validating(
                    context=offline_context(self.docs_dir), lock=threading.Lock(),
                    run_identifier=RunIdentifier(run_name=self.run_id, run_time=self.evaluated_at),
                    result_format={"result_format": self.settings.result_format,
                                   "partial_unexpected_count": self.settings.partial_unexpected_count})
            return self._validating

    def validate(self, tables: Mapping[str, Any], suites_at_once: Optional[int] = None) -> None:
        """Validate each DataFrame in ``tables`` with its table's suite, ``suites_at_once`` suites at a time
        (default: as many as the session runs actions at once)."""
        v = self._shared()
        suites = {table: build_suite(table, tables[table].columns, self.check_ids) for table in sorted(tables)}
        with self._lock:
            again = set(suites) & set(self._suites)
            if again:
                raise ValueError(f"tables validated twice in one run: {sorted(again)}")
            self._suites.update(suites)
        ruled = {t: tables[t] for t, s in suites.items() if s.rules}
        screens = screen(ruled, suites) if self.failed_only else {}  # a failed read fails the stage
        at_once = suites_at_once if suites_at_once is not None else session_actions_at_once(self.spark)
        lanes = suite_lanes({t: len(suites[t].rules) for t in ruled}, at_once)
        lane_frames = frames_by_lane(tables, lanes, next(iter(tables.values())).sparkSession) if lanes else []
        cached_by_caller = {table for table in suites if _is_cached(tables[table])}
        batches = {}
        for frames in lane_frames:
            with v.lock:
                name = "kafka_recon" if self._sources == 0 else f"kafka_recon_{self._sources}"
                self._sources += 1
                datasource = v.context.data_sources.add_spark(name=name)
                datasource._spark = next(iter(frames.values())).sparkSession  # the engine queries the lane's session
                for table in frames:
                    asset = datasource.add_dataframe_asset(name=table)
                    batches[table] = asset.add_batch_definition_whole_dataframe(f"{table}_whole")

        def validate_lane(frames):
            out = {}
            for table, df in frames.items():
                screened = screens.get(table)
                if screened is not None and screened.rows == 0 and not empty_counts_known(suites[table]):
                    screened = None  # GX's counts on no rows for one of its expectation types are not known here
                out[table] = _run_suite(v, batches[table], suites[table], df, screened)
                if table not in cached_by_caller:  # GX's Spark datasource persists each batch and never releases it
                    df.unpersist()
            return out

        validated = {}
        for lane in map_at_once(validate_lane, lane_frames, len(lane_frames), name="kr-quality"):
            validated.update(lane)
        with self._lock:
            self._validated.update(validated)
            self._row_counts.update((table, screened.rows) for table, screened in screens.items())

    def validate_in_background(self, tables: Mapping[str, Any], label: Optional[str] = None) -> None:
        """Validate ``tables`` on a thread of their own, in a clone of their session, one suite at a time, while
        the caller goes on; :meth:`finish` waits for them. ``label`` names the thread's Spark jobs
        (:func:`jobs.engine.job_labels.label_jobs`). Where the session cannot be cloned they are validated now, on the
        caller's thread: sharing its session, the thread's ``tmp_view`` would be the caller's next one."""
        from jobs.engine.job_labels import label_jobs

        if not tables:
            return
        try:
            session = cloned_session(next(iter(tables.values())).sparkSession)
        except Exception:  # noqa: BLE001 - a runtime without classic sessions' JVM side
            self.validate(tables, suites_at_once=1)
            return
        bound = {name: bound_to(df, session) for name, df in tables.items()}

        def run() -> None:
            try:
                if label:
                    label_jobs(session, label)
                self.validate(bound, suites_at_once=1)
            except BaseException as exc:  # noqa: BLE001 - raised again by finish(), on the caller's thread
                self._errors.append(exc)

        thread = threading.Thread(target=run, name="kafka-recon-quality-early", daemon=True)
        self._background.append(thread)
        thread.start()

    def finish(self, tables: Optional[Mapping[str, Any]] = None, docs_in_background: bool = False) -> DqRun:
        """Validate ``tables``, wait for the background, and return the run: its ``gold_dq_results`` rows in table
        order, the summary, and the Data Docs (on a thread of their own when ``docs_in_background``, waited for
        with :meth:`DqRun.wait_for_docs`)."""
        if tables:
            self.validate(tables)
        for thread in self._background:
            thread.join()
        self._background.clear()
        if self._errors:
            raise RuntimeError(f"validating the early tables failed: {self._errors[0]}") from self._errors[0]
        log = get_logger()
        rows: List[Dict[str, Any]] = []
        for table in sorted(self._suites):
            suite = self._suites[table]
            results, bare = self._validated.get(table, ([], set()))
            table_rows = suite_rows(suite, results, self.run_id, self.capture_id, self.evaluated_at,
                                    self.settings.sample_max_chars)
            per_row = {rule.result_key: _counted_per_row(rule) for rule in suite.rules if rule.result_key in bare}
            for row in table_rows:
                key = (row["expectation"], row["column_name"])
                if key in bare:
                    row.update(passed_counts(row["expectation"], per_row[key], self._row_counts[table]))
            failed = sum(1 for r in table_rows if r["success"] is False)
            log.info("stage=quality suite=%s expectations=%d failed=%d skipped=%d", suite.name, len(table_rows),
                     failed, len(suite.skipped))
            rows.extend(table_rows)

        docs_index = docs = None
        if self.docs_dir is not None and rows:
            docs = DocsBuild(self._shared().context, self.docs_dir, docs_in_background)
            docs_index = self.docs_dir / "index.html"
        dq = DqRun(rows=rows, summary=summarize(rows, str(docs_index) if docs_index else None),
                   docs_index=docs_index, docs=docs)
        if not docs_in_background:
            dq.wait_for_docs()
        return dq


def run_quality(
    spark,
    settings: QualitySettings,
    tables: Mapping[str, Any],
    run_id: str,
    capture_id: Optional[str],
    docs_dir: Optional[Path] = None,
    evaluated_at: Optional[datetime] = None,
    suites_at_once: Optional[int] = None,
    docs_in_background: bool = False,
) -> DqRun:
    """Validate each DataFrame in ``tables`` (table name -> DataFrame) with its suite: one :class:`QualityRun`.

    :param tables: e.g. ``{"bronze_dir_entries": df, "gold_findings": df}``; a name's suite comes from
        ``suites.build_suite`` (column rules + table rules). Pass only this run's slice of each table.
    :param docs_dir: where to build the Data Docs site (``<out>/dq``); None builds none.
    :param suites_at_once: suites validated at a time (``lanes.py``); default: as many as the session runs
        actions at once (two for a small capture, one for a large one: ``spark_session.session_actions_at_once``).
    :param docs_in_background: build the Data Docs on a thread of their own, which the caller waits for with
        :meth:`DqRun.wait_for_docs`.
    :return: :class:`DqRun` with ``gold_dq_results`` rows, a summary for the report, and the docs index.
    """
    run = QualityRun(spark, settings, run_id, capture_id, docs_dir=docs_dir, evaluated_at=evaluated_at)
    if tables:
        run.validate(tables, suites_at_once)
    return run.finish(docs_in_background=docs_in_background)


def dq_results_frame(spark, rows: List[Dict[str, Any]]):
    """``rows`` as a DataFrame with the gold_dq_results columns and types (small: one row per expectation; a
    local relation, so writing it runs no Python task)."""
    table = spec("gold_dq_results")
    ordered = [tuple(row.get(c) for c in table.column_names) for row in rows]
    return local_frame(spark, ordered, table.spark_schema())
