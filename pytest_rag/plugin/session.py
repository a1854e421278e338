"""The plugin's per-run state, kept in ``config.stash`` under :data:`session_key`.

One :class:`RagSession` exists per pytest run.  It holds what every part of
the plugin reads: the options, the metric specs, the loaded datasets and
baseline, what the tests recorded and what the run collected.  The parts that
act on it are separate pytest plugins, one job each (as pytest splits
junitxml, cacheprovider and terminal):

- :mod:`.gate`: after each test, thresholds and the baseline against what it
  recorded; a regression fails the test; junit-xml properties.
- :mod:`.transport`: the per-test results a pytest-xdist worker sends to the
  controller inside the test report, and their merge on the controller.
- :mod:`.scope`: which tests the run collected and selected, hence which
  baseline entries it can say anything about.
- :mod:`.baseline_maintenance`: ``--rag-update-baseline`` and
  ``--rag-prune-baseline``.
- :mod:`.report_files`: the scorecard and the ``--rag-report*`` / ``--rag-html``
  files.
- :mod:`.summary`: the scorecard and the notes in the terminal summary.

The controller alone writes the baseline and the reports, after every worker
is merged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..atomic import output_target
from ..errors import similar_file
from ..escaping import terminal_lines

# The rest is imported where it is used: pytest_configure creates the session
# on every run, also when no test uses the plugin, and must stay cheap.
if TYPE_CHECKING:
    from ..compare.baseline import Baseline
    from ..dataset.model import Dataset
    from ..registry import MetricSpec
    from ..reports.scorecard import Scorecard
    from .fixture import ItemState
    from .options import RagOptions
    from .scope import RunScope
    from .transport import RunResults

__all__ = ["RagSession", "item_state_key", "session_key"]

session_key = pytest.StashKey["RagSession"]()
item_state_key = pytest.StashKey["ItemState"]()


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is a pytest-xdist worker (which writes nothing itself)."""
    return hasattr(config, "workerinput")


def _validate_paths(options: RagOptions, root: Path) -> None:
    """A usage error before any test runs for a configured dataset or run file that does
    not exist (one error, not one per test), and for an output that links lead out of
    the project (checked again when written: :func:`~pytest_rag.atomic.output_target`)."""
    for path, what in ((options.dataset_path, options.dataset_source),
                       (options.run_path, options.run_source)):
        if path is not None and not os.path.exists(path):
            raise pytest.UsageError(terminal_lines(f"pytest-rag: {path}: file not found "
                                                   f"({what}){similar_file(path, str(path))}"))
    written = [options.report_json, options.report_md, options.report_html, options.export_dir]
    if options.update or options.prune:
        written.append(options.baseline_path)
    for path in written:
        if path is not None:
            try:
                output_target(path, root)
            except OSError as error:
                raise pytest.UsageError(terminal_lines(
                    f"pytest-rag: {path}: cannot write: {error}")) from None


class RagSession:
    """Per-run state of the plugin; the feature plugins read and fill it."""

    def __init__(self, config: pytest.Config, options: RagOptions,
                 specs: Mapping[str, MetricSpec]) -> None:
        from .scope import RunScope
        from .transport import RunResults

        self.config = config
        self.options = options
        self.specs = specs
        self.datasets: dict[tuple[Path, Path | None], Dataset] = {}
        self.baseline: Baseline | None = None
        #: Whether this xdist worker's baseline is the controller's copy (checked there).
        self.baseline_copied = False
        _validate_paths(options, config.rootpath)
        if options.compare or options.update or options.prune:
            # Updating creates a missing file, also at a path given with --rag-baseline=PATH.
            self.baseline = self._load_baseline(required=options.compare and not options.update)
        #: Controller side: what the tests recorded.
        self.results: RunResults = RunResults()
        self.scope: RunScope = RunScope(config)
        if (self.baseline is not None and options.compare and not options.update
                and not self.baseline_copied):
            self._validate_metric_keys(self.baseline)
        #: Lines for the end of the terminal summary, each said after "pytest-rag: ".
        self.notes: list[str] = []
        self.scorecard: Scorecard | None = None

    def reports_wanted(self) -> bool:
        """Whether a report file (``--rag-report``, ``--rag-report-md``, ``--rag-html``) or a
        ``pytest_rag_scorecard`` hook wants the scorecard with everything in it."""
        options = self.options
        return bool(any(path is not None for path in (options.report_json, options.report_md,
                                                      options.report_html))
                    or self.config.hook.pytest_rag_scorecard.get_hookimpls())

    def _load_baseline(self, *, required: bool) -> Baseline:
        from ..compare.baseline import Baseline, BaselineError
        from .transport import copy_for_worker, read_copy

        copy = copy_for_worker(self.config)
        if copy is not None:
            try:
                baseline = read_copy(*copy)
            except (OSError, ValueError, EOFError, TypeError):
                pass  # read the file, as a single process does
            else:
                self.baseline_copied = True
                return baseline
        path = self.options.baseline_path
        if not path.exists() and not required:
            return Baseline()
        try:
            return Baseline.load(path)
        except BaselineError as error:
            raise pytest.UsageError(terminal_lines(f"pytest-rag: {error}")) from None

    def _validate_metric_keys(self, baseline: Baseline) -> None:
        """A baseline metric that no metric defines (a custom metric renamed or no longer
        registered) is a usage error: its gate would vanish without a word.  Only the
        entries of tests in the run's paths count: a custom metric declared in the
        conftest of another folder is not registered in a run of this one."""
        from ..compare.likeness import unknown_metrics

        tests = {nodeid: stages for nodeid, stages in baseline.tests.items()
                 if self.scope.in_scope(nodeid)}
        unknown = unknown_metrics(tests, self.specs)
        if unknown:
            shown = "; ".join(unknown[:10]) + (f"; +{len(unknown) - 10} more"
                                               if len(unknown) > 10 else "")
            raise pytest.UsageError(
                f"pytest-rag: baseline file {str(self.options.baseline_path)!r} gates metrics "
                f"that neither pytest-rag nor a registered custom metric defines: {shown}. "
                "Register the custom metric (pytest_rag_register_metrics) or, if it was "
                "renamed or removed on purpose, record the tests again with "
                "--rag-update-baseline, which lists what it accepts")

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

    def item_state(self, item: pytest.Item) -> ItemState:
        """What ``item`` recorded so far (created on first use)."""
        state = item.stash.get(item_state_key, None)
        if state is None:
            from .fixture import ItemState

            state = ItemState(item.nodeid)
            if self.baseline is not None and self.options.compare:
                baseline = self.baseline
                state.baseline_value = lambda stage, key: baseline.value(item.nodeid, stage, key)
            item.stash[item_state_key] = state
        return state
