"""The pytest plugin (entry point ``rag``; disable it with ``-p no:rag``).

It adds the ``rag_dataset`` fixture (with its module- and session-scoped
forms ``rag_dataset_module`` and ``rag_dataset_session``) and the ``rag``
fixture, the ``rag_dataset`` and ``rag_threshold`` markers, the ``--rag-*``
options and ``rag_*`` ini options, explanations for failed metric assertions,
baselines and the scorecard.
Nothing here imports numpy: a run that does not use the fixtures pays only
for option parsing.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .session import session_key  # the run's state: one RagSession in config.stash

# Everything else is imported where it is used, so that a run that does not use
# the plugin pays for little more than registering its options.
if TYPE_CHECKING:
    from ..dataset.model import Dataset
    from ..registry import MetricSpec
    from ..stages.report import Report
    from .fixture import Rag
    from .session import RagSession


def pytest_addoption(parser: pytest.Parser) -> None:
    from .options import add_options

    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def _specs(config: pytest.Config) -> dict[str, MetricSpec]:
    from ..registry import REGISTRY, MetricSpec

    specs = dict(REGISTRY)
    for declared in config.hook.pytest_rag_register_metrics(config=config):
        for spec in declared or ():
            if not isinstance(spec, MetricSpec):
                raise pytest.UsageError(f"pytest_rag_register_metrics must return MetricSpec "
                                        f"objects, got {spec!r}")
            if spec.name in specs:
                raise pytest.UsageError(f"pytest-rag: custom metric {spec.name} is already "
                                        "defined")
            specs[spec.name] = spec
    return specs


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> Generator[None, None, None]:
    """A misspelled ``--rag-*`` option is a usage error with the closest spelling (checked
    once the initial conftests have added their options)."""
    from .options import refuse_unknown_flags

    result = yield
    refuse_unknown_flags(parser, args)
    return result


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rag_dataset(path, run=None): the gold dataset for this test's rag_dataset "
                   "and rag fixtures, and a run file replacing its run (relative to the test "
                   "file)")
    config.addinivalue_line(
        "markers", "rag_sweep(objective=None, cost=None, shipped=None, require=()): the "
                   "parametrized variants of this test sweep one knob (a chunker size, a "
                   "retriever) on the same data: the sweep table stars the best comparable "
                   "values and recommends a variant by the objective metric and the costs "
                   "among those meeting the required thresholds; with shipped='id' the run "
                   "fails when another variant beats it beyond noise at no higher cost")
    config.addinivalue_line(
        "markers", "rag_knobs(**values): the knobs of this sweep variant (default: its "
                   "parametrize arguments)")
    config.addinivalue_line(
        "markers", "rag_threshold(*exprs): thresholds like 'retrieval.recall_at_k >= 0.8' for "
                   "every report of that stage this test records")
    from .options import RagOptions
    from .session import RagSession

    specs = _specs(config)
    options = RagOptions.from_config(config, specs)
    session = RagSession(config, options, specs)
    config.stash[session_key] = session
    for name, part in _parts(session).items():
        config.pluginmanager.register(part, name)


def _parts(session: RagSession) -> dict[str, object]:
    """The plugin's parts, each a pytest plugin over the run's state (see ``.session``)."""
    from .baseline_maintenance import BaselineMaintenance
    from .gate import GatePlugin
    from .report_files import ReportFiles
    from .scope import ScopePlugin
    from .summary import Summary
    from .transport import BaselineCopyPlugin, TransportPlugin

    return dict(zip(_PART_NAMES, (GatePlugin(session), TransportPlugin(session.results),
                                  ScopePlugin(session.scope), BaselineMaintenance(session),
                                  ReportFiles(session), Summary(session),
                                  BaselineCopyPlugin(session.baseline)), strict=True))


_PART_NAMES = ("rag-gate", "rag-transport", "rag-scope", "rag-baseline-maintenance",
               "rag-report-files", "rag-summary", "rag-baseline-copy")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(session_key, None)
    if session is not None:
        for name in _PART_NAMES:
            part = config.pluginmanager.get_plugin(name)
            if part is not None:
                config.pluginmanager.unregister(part)
        del config.stash[session_key]


def _dataset_path(request: pytest.FixtureRequest, session: RagSession
                  ) -> tuple[Path | None, Path | None]:
    """``(dataset, run file)``: the marker's, else the configured ones."""
    marker = request.node.get_closest_marker("rag_dataset")
    if marker is not None:
        run = marker.kwargs.get("run")
        if (len(marker.args) != 1 or not isinstance(marker.args[0], (str, Path))
                or set(marker.kwargs) - {"run"} or not isinstance(run, (str, Path, type(None)))):
            pytest.fail("@pytest.mark.rag_dataset takes one path and optionally run=PATH, e.g. "
                        "@pytest.mark.rag_dataset('gold.yaml', run='run.yaml')", pytrace=False)
        folder = Path(request.node.path).parent
        return folder / marker.args[0], None if run is None else folder / run
    return session.options.dataset_path, session.options.run_path


_NO_DATASET = ("pytest-rag: no dataset configured: set the ini option rag_dataset, pass "
               "--rag-dataset PATH, or mark the test with @pytest.mark.rag_dataset('gold.yaml')")


def _configured_dataset(request: pytest.FixtureRequest) -> Dataset:
    session = request.config.stash[session_key]
    path, run = _dataset_path(request, session)
    if path is None:
        pytest.fail(_NO_DATASET, pytrace=False)
    return session.dataset_at(path, run)


@pytest.fixture
def rag_dataset(request: pytest.FixtureRequest) -> Dataset:
    """The gold dataset (with its run, if any), loaded once per session per path.

    Named by ``@pytest.mark.rag_dataset(path)`` on the test, class or module,
    else by ``--rag-dataset``, else by the ini option ``rag_dataset``.
    """
    return _configured_dataset(request)


@pytest.fixture(scope="module")
def rag_dataset_module(request: pytest.FixtureRequest) -> Dataset:
    """``rag_dataset`` for module-scoped fixtures: the same object, loaded once.

    A ``rag_dataset`` marker applies when it is on the module (``pytestmark``);
    markers on a test or class cannot change a module's value.
    """
    return _configured_dataset(request)


@pytest.fixture(scope="session")
def rag_dataset_session(request: pytest.FixtureRequest) -> Dataset:
    """``rag_dataset`` for session-scoped fixtures: the same object, loaded once.

    Named by ``--rag-dataset``, else by the ini option ``rag_dataset`` (markers
    belong to tests and modules, so they do not apply).
    """
    return _configured_dataset(request)


@pytest.fixture
def rag(request: pytest.FixtureRequest) -> Generator[Rag, None, None]:
    """Evaluate pipeline stages and record them for the scorecard and the baseline.

    ``rag.retrieval(retrieved_ids=..., k=5)`` returns the stage's ``Report``;
    there is one method per stage and ``rag.evaluate()`` for all of them.
    While the fixture is active, symbolic checks (``assert_metric(recall_at_k
    >= 0.8)``) resolve against the reports this test recorded.
    """
    from ..stages.checks import reset_context, use_context
    from .fixture import Rag, with_extra_metrics

    session = request.config.stash[session_key]
    item = request.node
    path, run = _dataset_path(request, session)
    loaded: dict[str, Dataset | None] = {}

    def dataset() -> Dataset | None:
        if "value" not in loaded:
            loaded["value"] = None if path is None else session.dataset_at(path, run)
        return loaded["value"]

    def compute_extra(stage: str, report: Report) -> Report:
        hook = request.config.hook.pytest_rag_compute_metrics
        if not hook.get_hookimpls():
            return report
        values: dict[str, float | None] = {}
        # The data the stage read: the inputs resolved once, by the evaluator.
        for result in hook(stage=stage, report=report, dataset=report.dataset):
            values.update(result or {})
        if not values:
            return report
        try:
            return with_extra_metrics(report, values, session.specs)
        except (TypeError, ValueError) as error:
            message = f"pytest-rag: {error}"
        pytest.fail(message, pytrace=False)  # outside the except clause: no chained error

    state = session.item_state(item)
    token = use_context(state)
    try:
        yield Rag(state, dataset, session.options.stage_settings, session.specs, compute_extra)
    finally:
        reset_context(token)


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object,
                              right: object) -> list[str] | None:
    """Explain ``assert report.recall_at_k >= 0.8`` like ``assert_metric`` does.

    Also ``assert recall_at_k >= 0.8`` (a symbolic name) and ``.every`` checks.
    """
    if not type(left).__module__.startswith("pytest_rag."):
        return None  # not ours: leave it to pytest, without importing anything
    from ..stages.checks import Comparison, MetricRef, MetricValue, _EveryQuery

    every = isinstance(left, _EveryQuery)
    metric = left.metric if isinstance(left, _EveryQuery) else left
    if isinstance(metric, MetricRef):
        try:
            metric = metric.resolve()
        except (LookupError, RuntimeError):
            return None
    if not isinstance(metric, MetricValue) or op not in ("<", "<=", ">", ">=", "==", "!="):
        return None
    comparison = Comparison(metric, op, right, every=every)
    shown = f"{metric!r}.every" if every else repr(metric)
    return [f"{shown} {op} {right!r}", "", *comparison.explain().split("; ")]

