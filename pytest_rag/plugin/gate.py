"""The per-test gate: thresholds and the baseline against what one test recorded.

After a test's call phase, :class:`GatePlugin` checks the declared thresholds
(markers, ``--rag-threshold``, ini) and, with ``--rag-baseline``, compares each
recorded stage with its baseline entry.  A failed check or a regression fails
the test with a message that leads with the worst problem; the values go into
junit-xml properties, and the results into the report's payload
(:mod:`.transport`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Generator, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from ..escaping import shown_id, terminal_lines, terminal_text
from ..formatting import number_text
from .session import item_state_key
from .transport import PAYLOAD, make_payload

if TYPE_CHECKING:
    from ..compare.comparison import MetricDiff
    from ..compare.records import CheckOutcome, StageRecord
    from ..compare.thresholds import Threshold
    from ..stages.checks import Comparison
    from ..stages.report import Report
    from .fixture import ItemState
    from .session import RagSession

__all__ = ["HEADLINE_PREFIX", "GatePlugin"]

HEADLINE_PREFIX = "RAG checks failed: "
#: Why a test's ``rag_threshold`` marker cannot be read (found at collection).
_marker_error_key = pytest.StashKey[str]()


def _fmt(value: float | None) -> str:
    return "not measured" if value is None else number_text(value)


def _check_outcome(comparison: Comparison) -> CheckOutcome | None:
    from ..compare.records import CheckOutcome
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
        threshold = threshold.expected
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        return None
    return CheckOutcome(metric.stage, metric.key, comparison.op, float(threshold), "test",
                       comparison.passed)


class GatePlugin:
    """Fails a test whose recorded stages miss a threshold or regress against the baseline."""

    def __init__(self, session: RagSession) -> None:
        self.session = session
        self.options = session.options

    def _markers(self, item: pytest.Item) -> list[Threshold]:
        """The thresholds of the test's ``rag_threshold`` markers; a ValueError names the
        marker and, for an unknown stage or metric, the closest name."""
        from ..compare.thresholds import parse_threshold

        declared: list[Threshold] = []
        for mark in item.iter_markers("rag_threshold"):
            for text in mark.args:
                if not isinstance(text, str):
                    raise ValueError(f"@pytest.mark.rag_threshold takes strings like "
                                     f"'retrieval.recall_at_k >= 0.8', got {text!r}")
                try:
                    declared.append(parse_threshold(text, "marker", self.session.specs))
                except ValueError as error:
                    raise ValueError(f"@pytest.mark.rag_threshold({text!r}): {error}") from None
        return declared

    def _declared(self, item: pytest.Item) -> list[Threshold]:
        return (self._markers(item) + list(self.options.cli_thresholds)
                + list(self.options.ini_thresholds))

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Every ``rag_threshold`` marker is read at collection, whether or not its test
        records the stage: a misspelled metric would otherwise be ignored silently."""
        for item in items:
            try:
                self._markers(item)
            except ValueError as error:
                item.stash[_marker_error_key] = f"pytest-rag: {error}"

    @pytest.hookimpl(wrapper=True)
    def pytest_pycollect_makeitem(self, collector: pytest.Collector, name: str, obj: object
                                  ) -> Generator[None, Any, Any]:
        """A wrong ``rag_sweep(...)`` argument is one collection error of its test function
        (like a wrong ``parametrize``), not a failure repeated by every variant."""
        made = yield
        items = made if isinstance(made, list) else [made]
        first = next((item for item in items if isinstance(item, pytest.Item)), None)
        if first is not None:
            from .sweeps import sweep_rule

            _, error = sweep_rule(first, self.session.specs)
            if error is not None:
                raise collector.CollectError(
                    terminal_lines(f"{error} (on {first.nodeid.split('[')[0]})"))
        return made

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        problem = item.stash.get(_marker_error_key, None)
        if problem is not None:  # an error of the test, before its fixtures run
            pytest.fail(terminal_lines(problem), pytrace=False)

    def _finish_item(self, item: pytest.Item, state: ItemState
                     ) -> tuple[list[str], dict[str, Any], bool]:
        """Checks, diffs and properties of one test: ``(failure message lines, payload,
        whether a metric regressed)``; no lines when the gate passes."""
        from ..compare.comparison import compare_record
        from ..compare.records import CheckOutcome, StageRecord

        baseline = self.session.baseline
        calls = state.calls()
        root = str(self.session.config.rootpath)
        records = [StageRecord.from_report(item.nodeid, report, name=name, root=root)
                   for name, report in calls]
        reports = {record.entry_key: report for record, (_, report) in zip(records, calls)}
        # A check the test made reads the latest report of its stage: it belongs to that call.
        latest = {report.stage: record.entry_key for record, (_, report) in zip(records, calls)
                  if report is state.latest().get(report.stage)}
        test_checks = [c for c in (_check_outcome(c) for c in state.checks) if c is not None]
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
        checks = {r.entry_key: [dataclasses.replace(c, name=r.name) for c in test_checks
                                if latest.get(c.stage) == r.entry_key] for r in records}
        diffs: dict[str, list[MetricDiff]] = {}
        gold_notes: list[str] = []  # said after a failure: why some metrics compared as they did
        gold_changed: set[str] = set()
        for record in records:
            for (stage, key), threshold in chosen.items():
                if stage != record.stage or key not in record.values:
                    continue
                value = record.values[key]
                passed = threshold.holds(value)
                checks[record.entry_key].append(CheckOutcome(
                    stage, key, threshold.op, threshold.value, threshold.source, passed,
                    record.name))
                if not passed:
                    why = (f", not measured: {record.missing.get(key, '')}" if value is None
                           else "")
                    failures.append(f"{stage}.{key} = {_fmt(value)}, expected {threshold} "
                                    f"({threshold.source} threshold){why}")
            if baseline is not None and self.options.compare:
                found = compare_record(record, baseline, self.session.specs,
                                       self.options.tolerances, alpha=self.options.significance,
                                       # the JSON report shows every p-value
                                       all_statistics=self.options.report_json is not None)
                diffs[record.entry_key] = found
                block = self._regression_lines(record, found)
                titles.update(block[:1])
                failures.extend(block)
                failures.extend(self._unsettled_lines(record, found))
                change = baseline.gold_change(record)
                if change is not None:
                    gold_notes.append(f"  {record.entry_key}: {change.text()}")
                    gold_changed.add(record.entry_key)
                if (self.options.strict and not self.options.update
                        and baseline.entry(item.nodeid, record.entry_key) is None):
                    failures.append(f"{record.entry_key}: no baseline entry for this test in "
                                    f"{self.options.baseline_path.name} (--rag-strict); "
                                    "record one with --rag-update-baseline")
        lost = self._lost_stage_lines(item.nodeid, set(reports))
        failures.extend(lost)
        from .sweeps import variant_payload

        variant, variant_error = variant_payload(item, state.latest(), self.session.specs)
        if variant_error:
            failures.append(variant_error)
        export_notes: list[str] = []
        exported: list[str] = []
        if self.options.export_dir is not None:
            from .report_files import export_reports

            export_notes, exported = export_reports(
                self.options.export_dir, item.nodeid, state.latest(),
                run_root=self.session.config.rootpath)
        if self.options.report_html is not None:  # only then: xdist payloads stay small
            records = [self._with_details(record, reports[record.entry_key],
                                          diffs.get(record.entry_key, []))
                       for record in records]
        _add_junit_properties(item, records, diffs)
        sweep = item.get_closest_marker("rag_sweep") is not None
        if not (sweep or self._controller_reads_per_query()):
            # Only the gold fingerprints of a changed gold: the controller names the change.
            records = [dataclasses.replace(
                record, per_query={},
                gold=record.gold if record.entry_key in gold_changed else {})
                for record in records]
        regressed = [diff for stage_diffs in diffs.values() for diff in stage_diffs
                     if diff.failed] if not self.options.update else []
        message = _message(failures, regressed, self.options.baseline_path.name, titles)
        if message:
            message.extend(gold_notes)
        notes = [f"{item.nodeid} called rag.{stage}() {count} times without name=: its calls "
                 f"are told apart by their order ({stage}, {stage}[#2], ...); pass name= to "
                 "each call to keep its baseline entry when the order changes"
                 for stage, count in state.unnamed_repeats().items()]
        payload = make_payload(
            sweep=sweep, variant=variant, records=records,
            checks=[check for stage_checks in checks.values() for check in stage_checks],
            diffs=[diff for stage_diffs in diffs.values() for diff in stage_diffs],
            notes=[*notes, *export_notes], exported=exported)
        return message, payload, bool(regressed)

    def _controller_reads_per_query(self) -> bool:
        """Whether the end of the run reads per-query values and gold fingerprints: to
        write the baseline, a report file or the scorecard a ``pytest_rag_scorecard``
        hook receives.  Otherwise a test's payload leaves them out (pytest-xdist sends
        every payload to the controller, and the controller keeps it to the end)."""
        return self.options.update or self.session.reports_wanted()

    def _unsettled_lines(self, record: StageRecord, diffs: list[MetricDiff]) -> list[str]:
        """Under ``--rag-strict``, a failure line for an entry that could not be compared
        like with like (other gold, other settings): it is no passing comparison."""
        if not self.options.strict or self.options.update:
            return []
        notes = dict.fromkeys(diff.note for diff in diffs if diff.unsettled)
        return [f"{record.entry_key}: not compared with the baseline: {note} (--rag-strict); "
                "once reviewed, record it with --rag-update-baseline" for note in notes]

    def _with_details(self, record: StageRecord, report: Report,
                      diffs: list[MetricDiff]) -> StageRecord:
        """``record`` with the drill-down details of the HTML report (``--rag-html``)."""
        from ..reports.drilldown import build_details

        before = None
        baseline = self.session.baseline
        if baseline is not None and self.options.compare:
            entry = baseline.entry(record.nodeid, record.entry_key)
            before = None if entry is None else entry.get("per_query")
        specs = self.session.specs
        directions = {key: spec.direction.value for key in record.values
                      if (spec := specs.get(f"{record.stage}.{key}")) is not None}
        regressed = [diff.key for diff in diffs if diff.worse]
        details = build_details(report, baseline_per_query=before, directions=directions,
                                regressed=regressed)
        return dataclasses.replace(record, details=details)

    def _lost_stage_lines(self, nodeid: str, recorded: set[str]) -> list[str]:
        """A failure line per stage the baseline holds for ``nodeid`` that it did not record."""
        baseline = self.session.baseline
        if baseline is None or not self.options.compare or self.options.update:
            return []
        lost = [stage for stage in baseline.tests.get(nodeid, {}) if stage not in recorded]
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
                 "" if d.delta is None else f"{d.delta:+.3f}", f"{d.tolerance:.3f}", d.direction)
                for d in bad]
        table = tabulate(rows, headers=("metric", "baseline", "current", "delta", "tolerance",
                                        "direction"), tablefmt="simple", disable_numparse=True)
        lines = [(f"{record.entry_key}: {len(bad)} metric{'s' if len(bad) != 1 else ''} worse "
                  f"than the baseline ({self.options.baseline_path.name}), worst first:")]
        lines.extend("  " + line for line in table.splitlines())
        noted: dict[str, list[str]] = {}  # one line per note, naming its metrics
        for diff in bad:
            if diff.status == "lost" and diff.note:
                noted.setdefault(diff.note, []).append(diff.key)
                continue  # the note names the queries
            if diff.status == "lost":
                lines.append(f"  {diff.key} is no longer measured: "
                             f"{record.missing.get(diff.key, 'not measured')}")
            if diff.worse_queries:
                shown = ", ".join(f"{shown_id(q)} {_fmt(a)} -> {_fmt(b)}"
                                  for q, a, b in diff.worse_queries[:5])
                more = (f" (+{len(diff.worse_queries) - 5} more)"
                        if len(diff.worse_queries) > 5 else "")
                lines.append(f"  queries worse in {diff.key}: {shown}{more}")
            if diff.note:  # queries newly measured or no longer measurable
                noted.setdefault(diff.note, []).append(diff.key)
        lines.extend(f"  {', '.join(keys)}: {terminal_text(note)}" for note, keys in noted.items())
        return lines

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "teardown" and item_state_key in item.stash:
            # The test is over: its reports (and the inputs they hold) are not needed any
            # more, and pytest keeps every item to the end of the run.
            del item.stash[item_state_key]
        if call.when != "call":
            return report
        state = item.stash.get(item_state_key, None)
        if state is None or not state.reports:
            lost = self._lost_stage_lines(item.nodeid, set())
            if lost and report.passed:  # recorded nothing this time: every gate is gone
                report.outcome = "failed"
                report.longrepr = "\n".join(map(terminal_lines, _message(
                    lost, [], self.options.baseline_path.name)))
            return report
        message_lines, payload, regressed = self._finish_item(item, state)
        if message_lines:
            message = "\n".join(map(terminal_lines, message_lines))
            if report.skipped and hasattr(report, "wasxfail") and regressed and (
                    self.options.strict):
                # xfail covers the test's own failure, not a worse pipeline.
                del report.wasxfail  # a failure of its own, not a strict xpass
                report.outcome = "failed"
                _add_to_failure(report, message + "\na regression in an xfail test "
                                "(--rag-strict)")
            elif report.passed:
                report.outcome = "failed"
                report.longrepr = message
            elif report.failed:
                _add_to_failure(report, message)
        report.user_properties = list(item.user_properties)
        setattr(report, PAYLOAD, payload)
        return report


def _add_to_failure(report: pytest.TestReport, message: str) -> None:
    """The gate's verdict after the test's own failure, in the same failure text (which is
    what junit-xml, and so CI, shows)."""
    add_section = getattr(report.longrepr, "addsection", None)
    if add_section is not None:
        add_section("RAG checks", message)
    else:
        report.longrepr = f"{report.longrepr}\n\n{message}"


def _add_junit_properties(item: pytest.Item, records: list[StageRecord],
                          diffs: Mapping[str, list[MetricDiff]]) -> None:
    """Each metric's value, and its baseline status, value and delta, as junit-xml
    properties (``rag.<stage>.<key>[.status|.baseline|.delta]``)."""
    for record in records:
        by_key = {d.key: d for d in diffs.get(record.entry_key, [])}
        for key, value in record.values.items():
            name = f"rag.{record.entry_key}.{key}"
            item.user_properties.append((name, "not measured" if value is None else value))
            diff = by_key.get(key)
            if diff is not None:
                item.user_properties.append((f"{name}.status", diff.status))
            if diff is not None and diff.baseline is not None:
                item.user_properties.append((f"{name}.baseline", diff.baseline))
                if diff.delta is not None:
                    item.user_properties.append((f"{name}.delta", diff.delta))


def _severity(diff: MetricDiff) -> float:
    """How bad a regression is (:attr:`MetricDiff.effect`)."""
    return diff.effect


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
        if worst.note and worst.status == "lost":  # the numbers alone would not say it
            return [(f"{HEADLINE_PREFIX}{worst.entry_key}.{worst.key}: {terminal_text(worst.note)}"
                     f" ({baseline_name}){more}"), *failures]
        return [(f"{HEADLINE_PREFIX}{worst.entry_key}.{worst.key} {_fmt(worst.baseline)} -> "
                 f"{_fmt(worst.current)}, worse than the baseline ({baseline_name}){more}"),
                *failures]
    return [HEADLINE_PREFIX + failures[0].rstrip(":") + more, *failures[1:]]
