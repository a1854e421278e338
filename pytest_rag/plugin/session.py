"""The plugin's per-run state and hooks: checks after each test, the baseline, the scorecard.

One :class:`RagSession` is registered per pytest run (in ``config.stash``).
After a test's call phase it applies declared thresholds and the baseline to
what the test recorded, fails the test on a regression, attaches junit-xml
properties, and ships the records inside the test report, so that pytest-xdist
workers deliver them to the controller.  The controller alone writes the
baseline and the reports, after every worker is merged.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Collection, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..atomic import exclusive, output_target, write_atomically
from ..errors import similar_file
from ..escaping import shown_id, terminal_lines, terminal_text
from ..formatting import number_text

# The rest is imported where it is used: pytest_configure creates the session
# on every run, also when no test uses the plugin, and must stay cheap.
if TYPE_CHECKING:
    from ..compare.baseline import Baseline, MetricDiff
    from ..compare.records import CheckRecord, StageRecord
    from ..compare.thresholds import Threshold
    from ..dataset.model import Dataset
    from ..registry import MetricSpec
    from ..reports.scorecard import Scorecard
    from ..stages.checks import Comparison
    from ..stages.report import Report
    from .fixture import ItemState
    from .options import RagOptions

__all__ = ["RagSession", "item_state_key"]

item_state_key = pytest.StashKey["ItemState"]()
PAYLOAD = "rag_payload"
#: Set in an xdist worker's ``workeroutput`` when it deselected tests.
PARTIAL = "rag_partial"


def _fmt(value: float | None) -> str:
    return "not measured" if value is None else number_text(value)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _check_record(comparison: Comparison) -> CheckRecord | None:
    from ..compare.records import CheckRecord
    from ..stages.checks import MetricValue

    if comparison.every:
        return None
    try:
        metric = comparison.resolved()
    except (LookupError, RuntimeError):
        return None
    threshold = comparison.threshold
    if isinstance(threshold, MetricValue):
        threshold = threshold.value
    elif hasattr(threshold, "expected"):
        threshold = getattr(threshold, "expected")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        return None
    return CheckRecord(metric.stage, metric.key, comparison.op, float(threshold), "test",
                       comparison.passed)


def _check_paths(options: RagOptions, root: Path) -> None:
    """A usage error before any test runs for a configured dataset or run file that does
    not exist (one error, not one per test), and for an output that links lead out of
    the project (checked again when written: :func:`~pytest_rag.atomic.output_target`)."""
    for path, what in ((options.dataset_path, "--rag-dataset / ini rag_dataset"),
                       (options.run_path, "--rag-run / ini rag_run")):
        if path is not None and not os.path.exists(path):
            raise pytest.UsageError(terminal_lines(f"pytest-rag: {path}: file not found "
                                                   f"({what}){similar_file(path, str(path))}"))
    written = [options.report_json, options.report_md, options.report_html]
    if options.update or options.prune:
        written.append(options.baseline_path)
    for path in written:
        if path is not None:
            try:
                output_target(path, root)
            except OSError as error:
                raise pytest.UsageError(f"pytest-rag: {path}: cannot write: {error}") from None


class RagSession:
    """Per-run state of the plugin (registered as a pytest plugin object)."""

    def __init__(self, config: pytest.Config, options: RagOptions,
                 specs: Mapping[str, MetricSpec]) -> None:
        self.config = config
        self.options = options
        self.specs = specs
        self.datasets: dict[tuple[Path, Path | None], Dataset] = {}
        self.baseline: Baseline | None = None
        _check_paths(options, config.rootpath)
        if options.compare or options.update or options.prune:
            # Updating creates a missing file, also at a path given with --rag-baseline=PATH.
            self.baseline = self._load_baseline(required=options.compare and not options.update)
        # Controller side: what the tests recorded.
        self.records: list[StageRecord] = []
        self.checks: dict[tuple[str, str], list[CheckRecord]] = {}
        self.diffs: dict[tuple[str, str], list[MetricDiff]] = {}
        self.outcomes: dict[str, str] = {}
        self.collected: set[str] = set()
        self.order: list[str] = []  # node ids in collection order
        self.sweep_tests: set[str] = set()  # test functions marked rag_sweep
        self.variants: dict[str, dict[str, Any]] = {}  # knobs, costs, rule per variant
        self.partial = bool(config.option.keyword or config.option.markexpr)
        self.collection_errors = False
        self.notes: list[str] = []
        self.scorecard: Scorecard | None = None

    # -- data -------------------------------------------------------------------
    def _load_baseline(self, *, required: bool) -> Baseline:
        from ..compare.baseline import Baseline, BaselineError

        path = self.options.baseline_path
        if not path.exists() and not required:
            return Baseline()
        try:
            return Baseline.load(path)
        except BaselineError as error:
            raise pytest.UsageError(terminal_lines(f"pytest-rag: {error}")) from None

    def dataset_at(self, path: Path, run: Path | None = None) -> Dataset:
        """Load a dataset (with a run file) once per session per paths; errors fail the
        asking test."""
        __tracebackhide__ = True
        from ..dataset.loading import load_dataset
        from ..errors import DatasetError

        key = (path.resolve(), None if run is None else run.resolve())
        if key not in self.datasets:
            try:
                self.datasets[key] = load_dataset(
                    path, run=run, allow_outside_paths=self.options.allow_outside_paths,
                    relevance_level=self.options.relevance_level)
            except DatasetError as error:
                message = terminal_lines(f"pytest-rag: {error}")
            else:
                return self.datasets[key]
            # Outside the except clause, so the report shows no chained DatasetError.
            pytest.fail(message, pytrace=False)
        return self.datasets[key]

    # -- per test -----------------------------------------------------------------
    def item_state(self, item: pytest.Item) -> ItemState:
        state = item.stash.get(item_state_key, None)
        if state is None:
            from .fixture import ItemState

            state = ItemState(item.nodeid)
            if self.baseline is not None and self.options.compare:
                baseline = self.baseline
                state.baseline_value = lambda stage, key: baseline.value(item.nodeid, stage, key)
            item.stash[item_state_key] = state
        return state

    def _declared(self, item: pytest.Item) -> list[Threshold]:
        from ..compare.thresholds import parse_threshold

        declared: list[Threshold] = []
        for mark in item.iter_markers("rag_threshold"):
            for text in mark.args:
                if not isinstance(text, str):
                    raise ValueError(f"@pytest.mark.rag_threshold takes strings like "
                                     f"'retrieval.recall_at_k >= 0.8', got {text!r}")
                declared.append(parse_threshold(text, "marker", self.specs))
        return declared + list(self.options.cli_thresholds) + list(self.options.ini_thresholds)

    def _finish_item(self, item: pytest.Item, state: ItemState
                     ) -> tuple[list[str], dict[str, Any]]:
        """Checks, diffs and properties of one test: ``(failure message lines, payload)``;
        no lines when the gate passes."""
        from ..compare.baseline import compare_record
        from ..compare.records import CheckRecord, StageRecord

        latest = state.latest()
        records = [StageRecord.from_report(item.nodeid, report) for report in latest.values()]
        test_checks = [c for c in (_check_record(c) for c in state.checks) if c is not None]
        checked = {(c.stage, c.key) for c in test_checks}
        failures: list[str] = []
        titles: set[str] = set()  # the first line of each regression table
        try:
            declared = self._declared(item)
        except ValueError as error:
            failures.append(f"pytest-rag: {error}")
            declared = []
        chosen: dict[tuple[str, str], Threshold] = {}
        for threshold in declared:  # strongest source first
            ident = (threshold.stage, threshold.key)
            if ident not in checked and ident not in chosen:
                chosen[ident] = threshold
        checks = {(r.stage): [c for c in test_checks if c.stage == r.stage] for r in records}
        diffs: dict[str, list[MetricDiff]] = {}
        gold_notes: list[str] = []  # said after a failure: why some metrics compared as they did
        for record in records:
            for (stage, key), threshold in chosen.items():
                if stage != record.stage or key not in record.values:
                    continue
                value = record.values[key]
                passed = threshold.holds(value)
                checks[stage].append(CheckRecord(stage, key, threshold.op, threshold.value,
                                                 threshold.source, passed))
                if not passed:
                    why = (f", not measured: {record.missing.get(key, '')}" if value is None
                           else "")
                    failures.append(f"{stage}.{key} = {_fmt(value)}, expected {threshold} "
                                    f"({threshold.source} threshold){why}")
            if self.baseline is not None and self.options.compare:
                diffs[record.stage] = compare_record(record, self.baseline, self.specs,
                                                     self.options.tolerances,
                                                     alpha=self.options.significance,
                                                     # the JSON report shows every p-value
                                                     all_statistics=self.options.report_json
                                                     is not None)
                block = self._regression_lines(record, diffs[record.stage])
                titles.update(block[:1])
                failures.extend(block)
                change = self.baseline.gold_change(record)
                if change is not None:
                    gold_notes.append(f"  {record.stage}: {change.text()}")
                if (self.options.strict and not self.options.update
                        and self.baseline.entry(item.nodeid, record.stage) is None):
                    failures.append(f"{record.stage}: no baseline entry for this test in "
                                    f"{self.options.baseline_path.name} (--rag-strict); "
                                    "record one with --rag-update-baseline")
        lost = self._lost_stage_lines(item.nodeid, set(latest))
        failures.extend(lost)
        from .sweeps import variant_payload

        variant, variant_error = variant_payload(item, latest, self.specs)
        if variant_error:
            failures.append(variant_error)
        export_notes: list[str] = []
        if self.options.export_dir is not None:
            from .export import export_reports

            export_notes = export_reports(self.options.export_dir, item.nodeid, latest)
        if self.options.report_html is not None:  # only then: xdist payloads stay small
            records = [self._with_details(record, latest[record.stage],
                                          diffs.get(record.stage, [])) for record in records]
        for record in records:
            by_key = {d.key: d for d in diffs.get(record.stage, [])}
            for key, value in record.values.items():
                name = f"rag.{record.stage}.{key}"
                item.user_properties.append((name, "not measured" if value is None else value))
                diff = by_key.get(key)
                if diff is not None:
                    item.user_properties.append((f"{name}.status", diff.status))
                if diff is not None and diff.baseline is not None:
                    item.user_properties.append((f"{name}.baseline", diff.baseline))
                    if diff.delta is not None:
                        item.user_properties.append((f"{name}.delta", diff.delta))
        regressed = [diff for stage_diffs in diffs.values() for diff in stage_diffs
                     if diff.failed] if not self.options.update else []
        message = _message(failures, regressed, self.options.baseline_path.name, titles)
        if message:
            message.extend(gold_notes)
        payload = {
            "sweep": item.get_closest_marker("rag_sweep") is not None,
            "variant": variant,
            "notes": export_notes,  # said by the controller, also under pytest-xdist
            "records": [record.to_json() for record in records],
            "checks": [check.to_json() for stage_checks in checks.values() for check in stage_checks],
            "diffs": [_diff_json(diff) for stage_diffs in diffs.values() for diff in stage_diffs],
        }
        return message, payload

    def _with_details(self, record: StageRecord, report: Report,
                      diffs: list[MetricDiff]) -> StageRecord:
        """``record`` with the drill-down details of the HTML report (``--rag-html``)."""
        import dataclasses

        from ..reports.drilldown import build_details

        before = None
        if self.baseline is not None and self.options.compare:
            entry = self.baseline.entry(record.nodeid, record.stage)
            before = None if entry is None else entry.get("per_query")
        directions = {key: spec.direction.value for key in record.values
                      if (spec := self.specs.get(f"{record.stage}.{key}")) is not None}
        regressed = [diff.key for diff in diffs if diff.failed or diff.status == "within noise"]
        details = build_details(report, baseline_per_query=before, directions=directions,
                                regressed=regressed)
        return dataclasses.replace(record, details=details)

    def _lost_stage_lines(self, nodeid: str, recorded: set[str]) -> list[str]:
        """A failure line per stage the baseline holds for ``nodeid`` that it did not record."""
        if self.baseline is None or not self.options.compare or self.options.update:
            return []
        lost = [stage for stage in self.baseline.tests.get(nodeid, {}) if stage not in recorded]
        return [f"{stage}: recorded in {self.options.baseline_path.name} but not by this test: "
                "its gate is gone (run --rag-update-baseline to drop it, if that is intended)"
                for stage in sorted(lost)]

    def _regression_lines(self, record: StageRecord, diffs: list[MetricDiff]) -> list[str]:
        if self.options.update:
            return []
        bad = sorted((diff for diff in diffs if diff.failed), key=_severity, reverse=True)
        if not bad:
            return []
        from tabulate import tabulate

        rows = [(d.key, _fmt(d.baseline), _fmt(d.current),
                 "" if d.delta is None else f"{d.delta:+.3f}", f"{d.allowed:.3f}", d.direction)
                for d in bad]
        table = tabulate(rows, headers=("metric", "baseline", "current", "delta", "tolerance",
                                        "direction"), tablefmt="simple", disable_numparse=True)
        lines = [f"{record.stage}: {len(bad)} metric{'s' if len(bad) != 1 else ''} worse than "
                 f"the baseline ({self.options.baseline_path.name}), worst first:"]
        lines.extend("  " + line for line in table.splitlines())
        for diff in bad:
            if diff.status == "lost":
                lines.append(f"  {diff.key} is no longer measured: "
                             f"{record.missing.get(diff.key, 'not measured')}")
            if diff.worse_queries:
                shown = ", ".join(f"{shown_id(q)} {_fmt(a)} -> {_fmt(b)}"
                                  for q, a, b in diff.worse_queries[:5])
                more = (f" (+{len(diff.worse_queries) - 5} more)"
                        if len(diff.worse_queries) > 5 else "")
                lines.append(f"  queries worse in {diff.key}: {shown}{more}")
        return lines

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when != "call":
            return report
        state = item.stash.get(item_state_key, None)
        if state is None or not state.reports:
            lost = self._lost_stage_lines(item.nodeid, set())
            if lost and report.passed:  # recorded nothing this time: every gate is gone
                report.outcome = "failed"
                report.longrepr = "\n".join(map(terminal_text, _message(
                    lost, [], self.options.baseline_path.name)))
            return report
        message_lines, payload = self._finish_item(item, state)
        if message_lines:
            message = "\n".join(map(terminal_text, message_lines))
            if report.passed:
                report.outcome = "failed"
                report.longrepr = message
            elif report.failed:
                # The test's own failure stays first; the gate's verdict goes into the same
                # failure text, which is what junit-xml (and so CI) shows.
                add_section = getattr(report.longrepr, "addsection", None)
                if add_section is not None:
                    add_section("RAG checks", message)
                else:
                    report.longrepr = f"{report.longrepr}\n\n{message}"
        report.user_properties = list(item.user_properties)
        setattr(report, PAYLOAD, payload)
        return report

    # -- controller -----------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.outcomes[report.nodeid] = report.outcome
        payload = getattr(report, PAYLOAD, None)
        if report.when != "call" or not payload:
            return
        from ..compare.records import CheckRecord, StageRecord
        from ..compare.sweeps import split_nodeid

        if payload.get("sweep"):
            self.sweep_tests.add(split_nodeid(report.nodeid)[0])
        if payload.get("variant"):
            self.variants[report.nodeid] = payload["variant"]
        self.notes.extend(payload.get("notes", ()))
        for data in payload["records"]:
            self.records = [r for r in self.records
                            if (r.nodeid, r.stage) != (data["nodeid"], data["stage"])]
            self.records.append(StageRecord.from_json(data))
        for data in payload["checks"]:
            self.checks.setdefault((report.nodeid, data["stage"]), []).append(
                CheckRecord.from_json(data))
        for data in payload["diffs"]:
            self.diffs.setdefault((report.nodeid, data["stage"]), []).append(_diff_from_json(data))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected.update(item.nodeid for item in session.items)
        self.order.extend(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.order:  # every worker collects the same tests in the same order
            self.order.extend(ids)
        self.collected.update(ids)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if items:
            self.partial = True
            if _is_worker(self.config):  # the controller does not collect: tell it
                self.config.workeroutput[PARTIAL] = True  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if getattr(node, "workeroutput", {}).get(PARTIAL):
            self.partial = True

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors = True

    def _in_scope(self, nodeid: str) -> bool:
        """Whether the run's arguments cover the test ``nodeid``."""
        args = self.config.args
        if self.config.args_source != pytest.Config.ArgsSource.ARGS:
            return True
        path = (self.config.rootpath / nodeid.split("::", 1)[0]).resolve()
        for arg in args:
            if "::" in arg:
                continue
            target = (self.config.invocation_params.dir / arg).resolve()
            if target == path or target in path.parents:
                return True
        return False

    def _selection(self) -> str | None:
        """The option by which this run left tests out of collection or selection, if any.

        A test that was not collected is only provably gone when nothing but the
        file arguments (see :meth:`_in_scope`) narrowed the run.
        """
        option = self.config.option
        for flag, dest in (("--lf", "lf"), ("--sw", "stepwise"), ("--ignore", "ignore"),
                           ("--ignore-glob", "ignore_glob"), ("--deselect", "deselect"),
                           ("-k", "keyword"), ("-m", "markexpr")):
            if getattr(option, dest, None):
                return flag
        return "deselected tests" if self.partial else None

    def stale_entries(self) -> list[str] | None:
        """Baseline entries of tests that no longer exist; ``None`` when a run can't tell."""
        if self.baseline is None or self._selection() or self.collection_errors:
            return None
        return sorted(nodeid for nodeid in self.baseline.tests
                      if nodeid not in self.collected and self._in_scope(nodeid))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if _is_worker(self.config):
            return
        self._write_baseline(session)
        if not self._scorecard_wanted():
            return  # nothing recorded, nothing asked for: a run that did not use the plugin
        from ..reports.scorecard import build_scorecard

        gold_changes = {}
        if self.baseline is not None and self.options.compare:
            for record in self.records:
                change = self.baseline.gold_change(record)
                if change is not None:
                    gold_changes[(record.nodeid, record.stage)] = change
        from ..compare.sweeps import Variant
        from .sweeps import gate_failures

        self.scorecard = build_scorecard(self.records, self.checks, self.diffs, self.specs,
                                         self.outcomes, self.order,
                                         frozenset(self.sweep_tests), gold_changes,
                                         {nodeid: Variant.from_json(data)
                                          for nodeid, data in self.variants.items()})
        scorecard = self.scorecard
        beaten = gate_failures(scorecard.sweeps())
        self.notes.extend(beaten)
        if beaten and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        writers = ((self.options.report_json, _write_json_report),
                   (self.options.report_md, _append_markdown_report),
                   (self.options.report_html, self._write_html_report))
        for path, write in writers:
            if path is None:
                continue
            try:
                output_target(path, self.config.rootpath)  # before a folder is made
                path.parent.mkdir(parents=True, exist_ok=True)
                write(path, scorecard, self.config.rootpath)
                self.notes.append(f"wrote {path}")
            except OSError as error:
                self.notes.append(f"could not write {path}: {error.strerror or error}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        self.config.hook.pytest_rag_scorecard(config=self.config, scorecard=self.scorecard)

    def _write_html_report(self, path: Path, scorecard: Scorecard, root: Path) -> None:
        from ..reports.html import render_html

        details = {(record.nodeid, record.stage): record.details
                   for record in self.records if record.details}
        baseline = self.baseline if self.options.compare else None
        text = render_html(scorecard, details, baseline=baseline, specs=self.specs)
        write_atomically(path, text.encode("utf-8"), root=root)

    def _scorecard_wanted(self) -> bool:
        """Whether anything was recorded, or a report or a hook wants even an empty scorecard."""
        options = self.options
        return bool(self.records or self.checks or self.diffs
                    or any(path is not None for path in (options.report_json, options.report_md,
                                                         options.report_html))
                    or self.config.hook.pytest_rag_scorecard.get_hookimpls())

    def _write_baseline(self, session: pytest.Session) -> None:
        options = self.options
        if self.baseline is None or not (options.update or options.prune):
            if self.baseline is not None and options.compare:
                stale = self.stale_entries()
                if stale:
                    self.notes.append("baseline entries of tests that no longer exist "
                                      "(remove with --rag-update-baseline --rag-prune-baseline "
                                      "on a full run): " + ", ".join(stale))
            return
        if self.collection_errors or session.exitstatus in (
                pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR,
                pytest.ExitCode.USAGE_ERROR):
            self.notes.append(f"baseline {options.baseline_path} not written: the run was "
                              "interrupted or had collection errors")
            return
        # Concurrent updates (two CI jobs, `-k a` and `-k b`) take turns, and each applies
        # its own changes to the file as it is now, so both survive.
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(exclusive(options.baseline_path, root=self.config.rootpath))
            except OSError as error:  # the folder cannot be made or opened
                self._not_written(session, error)
                return
            self._update_baseline_file(session)

    def _not_written(self, session: pytest.Session, error: OSError) -> None:
        self.notes.append(f"could not write baseline {self.options.baseline_path}: "
                          f"{error.strerror or error}")
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def _update_baseline_file(self, session: pytest.Session) -> None:
        """Apply this run's changes to the baseline file as it is now (under the lock)."""
        from ..compare.baseline import Baseline, BaselineError

        options = self.options
        assert self.baseline is not None
        current = self.baseline
        if options.baseline_path.exists():
            try:
                current = Baseline.load(options.baseline_path)
            except BaselineError as error:
                self.notes.append(f"baseline {options.baseline_path} not written: {error}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
                return
        updated = current
        # A test that skipped itself after recording did not run to the end: keep its entry.
        records = [record for record in self.records
                   if self.outcomes.get(record.nodeid) != "skipped"]
        if options.update:
            # A test that ran to the end and no longer records a stage: its entry goes.
            recorded = {(record.nodeid, record.stage) for record in records}
            dropped = sorted((nodeid, stage) for nodeid, stages in updated.tests.items()
                             if self.outcomes.get(nodeid) == "passed"
                             for stage in stages if (nodeid, stage) not in recorded)
            if dropped:
                updated = updated.without_stages(dropped)
                self.notes.append("dropped baseline entries of stages the tests no longer "
                                  "record: " + ", ".join(f"{nodeid} [{stage}]"
                                                         for nodeid, stage in dropped))

            try:
                updated = updated.updated(records, self.specs, options.tolerances)
            except BaselineError as error:
                self.notes.append(f"baseline {options.baseline_path} not written: {error}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
                return
        stale = self.stale_entries()
        if options.prune:
            if stale is None:
                reason = self._selection() or "collection errors"
                self.notes.append("--rag-prune-baseline refused: this run did not collect every "
                                  f"test ({reason}); run the whole suite without test selection "
                                  "to prune")
            elif stale:
                updated = updated.without(stale)
                self.notes.append("pruned baseline entries: " + ", ".join(stale))
        elif stale:
            self.notes.append("baseline entries of tests that no longer exist (kept; remove them "
                              "with --rag-prune-baseline): " + ", ".join(stale))
        if updated == current and options.baseline_path.exists():
            self.notes.append(f"baseline {options.baseline_path} unchanged")
            return
        try:
            updated.save(options.baseline_path, root=self.config.rootpath)
        except OSError as error:
            self._not_written(session, error)
            return
        except BaselineError as error:  # its reader would refuse it: the old file stays
            self.notes.append(str(error))
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        stages = len(records) if options.update else 0
        self.notes.append(f"baseline written to {options.baseline_path} "
                          f"({stages} stage report{'s' if stages != 1 else ''} updated)")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if _is_worker(self.config):
            return
        scorecard = self.scorecard
        show = self.options.scorecard != "off" and scorecard is not None and scorecard.entries
        if show and scorecard is not None:
            full = self.options.scorecard == "full" or self.config.get_verbosity() > 0
            terminalreporter.write_sep("=", "RAG scorecard")
            for line in scorecard.lines(full=full,
                                        sweep_width=self.config.get_terminal_writer().fullwidth):
                terminalreporter.write_line(terminal_text(line))
            counts = scorecard.counts()
            improved = counts.get("improved", 0)
            worse = counts.get("REGRESSED", 0) + counts.get("LOST", 0) + counts.get("FAIL", 0)
            # Only when nothing got worse: an update would also accept the regressions.
            if improved and not worse and self.options.compare and not self.options.update:
                terminalreporter.write_line(  # within 80 columns, like the scorecard
                    f"{improved} metric{'s' if improved != 1 else ''} improved: the baseline "
                    "can be tightened (--rag-update-baseline)")
        for note in self.notes:  # ids of tests and queries in it: escaped like every line
            terminalreporter.write_line(terminal_text(f"pytest-rag: {note}"))


def _write_json_report(path: Path, scorecard: Scorecard, root: Path) -> None:
    import json

    text = json.dumps(scorecard.to_json(), indent=2, sort_keys=True, allow_nan=False)
    write_atomically(path, (text + "\n").encode("utf-8"), root=root)


def _append_markdown_report(path: Path, scorecard: Scorecard, root: Path) -> None:
    """Append, as a CI step summary expects (a new or empty file is simply written); what
    the file held stays, whatever happens to the append, and a device such as
    ``/dev/stdout`` works, so this one is not replaced atomically."""
    output_target(path, root)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(scorecard.markdown() + "\n")


HEADLINE_PREFIX = "RAG checks failed: "


def _severity(diff: MetricDiff) -> float:
    """How bad a regression is: the change against the baseline's magnitude (a metric no
    longer measured, or one that left zero, ranks first)."""
    if diff.current is None or diff.baseline is None:
        return math.inf
    change = abs(diff.current - diff.baseline)
    return change / abs(diff.baseline) if diff.baseline else math.inf


def _message(failures: list[str], regressed: list[MetricDiff], baseline_name: str,
             titles: Collection[str] = ()) -> list[str]:
    """The lines of a gate failure, each thing said once; none when ``failures`` is empty.

    The first line (what ``-ra`` and junit's ``message`` show) leads with the worst
    regression if there is one (its table follows), else with the first problem
    (which is then not repeated), and says how many more problems follow: one per
    regressed metric and per other top-level line (``titles`` are table titles).
    """
    if not failures:
        return []
    problems = len(regressed) + sum(1 for line in failures
                                    if not line.startswith(" ") and line not in titles)
    more = f" (+{problems - 1} more below)" if problems > 1 else ""
    if regressed:
        worst = max(regressed, key=_severity)  # the first of equals: registry order
        return [f"{HEADLINE_PREFIX}{worst.stage}.{worst.key} {_fmt(worst.baseline)} -> "
                f"{_fmt(worst.current)}, worse than the baseline ({baseline_name}){more}",
                *failures]
    return [HEADLINE_PREFIX + failures[0].rstrip(":") + more, *failures[1:]]


def _diff_json(diff: MetricDiff) -> dict[str, Any]:
    return {"stage": diff.stage, "key": diff.key, "current": diff.current,
            "baseline": diff.baseline, "allowed": diff.allowed, "direction": diff.direction,
            "status": diff.status, "worse_queries": [list(q) for q in diff.worse_queries],
            "p_value": diff.p_value, "ci_low": diff.ci_low, "ci_high": diff.ci_high}


def _diff_from_json(data: Mapping[str, Any]) -> MetricDiff:
    from ..compare.baseline import MetricDiff

    return MetricDiff(data["stage"], data["key"], data["current"], data["baseline"],
                      float(data["allowed"]), data["direction"], data["status"],
                      tuple((q, a, b) for q, a, b in data["worse_queries"]),
                      data["p_value"], data["ci_low"], data["ci_high"])

