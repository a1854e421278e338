"""The ``rag`` fixture: evaluate a stage, record it for the scorecard and baseline."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import DatasetError, describe_value, unknown_names
from ..registry import STAGES, MetricSpec
from ..stages.checks import Comparison, MetricRef, MetricValue

if TYPE_CHECKING:
    from ..dataset.model import Dataset
    from ..stages.report import Report

__all__ = ["ItemState", "Rag"]


@dataclass
class ItemState:
    """What one test recorded: its reports in order and the checks it made."""

    nodeid: str
    reports: list[Report] = field(default_factory=list)
    checks: list[Comparison] = field(default_factory=list)
    baseline_value: Callable[[str, str], float | None] | None = None
    #: The ``name=`` of each call in :attr:`reports` (``None``: not named).
    names: list[str | None] = field(default_factory=list)

    # The CheckContext protocol of pytest_rag.stages.checks:
    def resolve(self, key: str, stage: str | None) -> MetricValue:
        for report in reversed(self.reports):
            if (stage is None or report.stage == stage) and key in report.values:
                return report.metric(key)
        evaluated = ", ".join(dict.fromkeys(r.stage for r in self.reports)) or "no stage yet"
        where = f"a {stage} report" if stage else "a report"
        raise LookupError(f"{where} with metric {key!r} was not recorded by this test "
                          f"(it evaluated: {evaluated}); call rag.<stage>(...) first")

    def baseline(self, stage: str, key: str) -> float | None:
        return self.baseline_value(stage, key) if self.baseline_value is not None else None

    def add_check(self, comparison: Comparison) -> None:
        # Resolve symbolic names now: the context is gone when the test's report is made.
        if isinstance(comparison.metric, MetricRef):
            try:
                comparison = dataclasses.replace(comparison, metric=comparison.resolved())
            except LookupError:
                pass
        self.checks.append(comparison)

    def calls(self) -> list[tuple[str | None, Report]]:
        """Each call's entry name and report, in the order of first calls: a named call
        by its name, the unnamed calls of a stage by their order (``None`` for the
        first, then ``"#2"``, ``"#3"``, ...); of calls with one name, the last."""
        found: dict[tuple[str, str | None], Report] = {}
        unnamed: dict[str, int] = {}
        for report, name in zip(self.reports, self.names):
            if name is None:
                count = unnamed[report.stage] = unnamed.get(report.stage, 0) + 1
                name = None if count == 1 else f"#{count}"
            found[(report.stage, name)] = report
        return [(name, report) for (_, name), report in found.items()]

    def unnamed_repeats(self) -> dict[str, int]:
        """``{stage: calls}`` for the stages this test called more than once without
        ``name=`` (their entries are told apart by order only)."""
        counts: dict[str, int] = {}
        for report, name in zip(self.reports, self.names):
            if name is None:
                counts[report.stage] = counts.get(report.stage, 0) + 1
        return {stage: count for stage, count in counts.items() if count > 1}

    def latest(self) -> dict[str, Report]:
        """The latest report of each stage, in the order stages were first recorded."""
        latest: dict[str, Report] = {}
        for report in self.reports:
            latest[report.stage] = report
        return latest


class Rag:
    """Evaluate pipeline stages inside a test and record them.

    One method per stage, named by the stage key.  Each takes the stage's
    inputs by their format names as keyword arguments (``retrieved_ids=...``)
    and its settings (``k=5``); settings not passed come from the ini options
    (``rag_k``, ...), then from the dataset's ``params``.  Inputs not passed
    come from the configured dataset (its gold and its ``run`` section).  The
    report is returned and recorded under the test's node id and the stage;
    ``name="bm25"`` records a call under its own baseline entry
    (``retrieval[bm25]``), so that a test gating several calls of one stage
    keeps each entry when their order changes.
    """

    def __init__(self, state: ItemState, dataset: Callable[[], Dataset | None],
                 settings: Mapping[str, Any], specs: Mapping[str, MetricSpec],
                 compute_extra: Callable[[str, Report], Report]) -> None:
        self._state = state
        self._dataset = dataset
        self._settings = dict(settings)
        self._specs = specs
        self._compute_extra = compute_extra

    def __repr__(self) -> str:
        stages = ", ".join(report.stage for report in self._state.reports) or "nothing yet"
        return f"<rag fixture of {self._state.nodeid}: recorded {stages}>"

    @property
    def dataset(self) -> Dataset | None:
        """The configured dataset, or ``None`` when none is configured."""
        return self._dataset()

    @property
    def reports(self) -> dict[str, Report]:
        """The latest report of each stage this test recorded."""
        return self._state.latest()

    def _run(self, stage: str, kwargs: Mapping[str, Any]) -> Report:
        __tracebackhide__ = True
        from ..dataset.frameworks import validate_doc_id_key
        from ..stages.evaluate import EVALUATORS, make_evaluator

        name = kwargs.get("name")
        kwargs = {key: value for key, value in kwargs.items() if key != "name"}
        if name is not None and (not isinstance(name, str) or not name or name.startswith("#")
                                 or any(char in name for char in "[]")):
            pytest.fail(f"pytest-rag: rag.{stage}(name=...) takes a non-empty string without "
                        f"'[', ']' or a leading '#', got {name!r}", pytrace=False)

        names = EVALUATORS[stage].settings_names
        settings = {**{k: v for k, v in self._settings.items() if k in names},
                    **{k: v for k, v in kwargs.items() if k in names}}
        # How framework chunk objects name their document: a call's value, else the ini's.
        doc_id_key = kwargs.get("doc_id_key", self._settings.get("doc_id_key"))
        inputs = {k: v for k, v in kwargs.items() if k not in names and k != "doc_id_key"}
        accepted = EVALUATORS[stage].inputs
        unknown = sorted(set(inputs) - accepted)
        if unknown:
            pytest.fail(f"pytest-rag: rag.{stage}() got unexpected argument(s) "
                        f"{unknown_names(unknown, [*accepted, *names, 'doc_id_key'])}; "
                        f"inputs: {', '.join(sorted(accepted))}; "
                        f"settings: {', '.join([*names, 'doc_id_key'])}", pytrace=False)
        dataset = self._dataset()
        if dataset is None and not inputs:
            # Nothing to evaluate: recording would gate on an all-null entry.
            pytest.fail(f"pytest-rag: rag.{stage}() got no inputs and no dataset is configured: "
                        f"pass its inputs ({', '.join(sorted(accepted))}), set the ini option "
                        "rag_dataset, pass --rag-dataset or mark the test with "
                        "@pytest.mark.rag_dataset(path)", pytrace=False)
        message = ""
        try:
            evaluator = make_evaluator(stage, **settings)
            validate_doc_id_key(doc_id_key)
        except (TypeError, ValueError) as error:  # a bad setting, e.g. k=0
            message = f"pytest-rag: rag.{stage}(): {error}"
        else:
            try:
                report = evaluator.evaluate(dataset, doc_id_key=doc_id_key, **inputs)
            except DatasetError as error:
                message = f"pytest-rag: {error}"
        if message:  # failed outside the except clause: no chained DatasetError in the report
            pytest.fail(message, pytrace=False)
        report = self._compute_extra(stage, report)
        self._state.reports.append(report)
        self._state.names.append(name)
        return report

    def chunking(self, **kwargs: Any) -> Report:
        """Evaluate and record the chunking stage (``ChunkingEvaluator``)."""
        __tracebackhide__ = True
        return self._run("chunking", kwargs)

    def embedding(self, **kwargs: Any) -> Report:
        """Evaluate and record the embedding stage (``EmbeddingEvaluator``)."""
        __tracebackhide__ = True
        return self._run("embedding", kwargs)

    def retrieval(self, **kwargs: Any) -> Report:
        """Evaluate and record the retrieval stage (``RetrievalEvaluator``)."""
        __tracebackhide__ = True
        return self._run("retrieval", kwargs)

    def reranking(self, **kwargs: Any) -> Report:
        """Evaluate and record the reranking stage (``RerankingEvaluator``)."""
        __tracebackhide__ = True
        return self._run("reranking", kwargs)

    def augmentation(self, **kwargs: Any) -> Report:
        """Evaluate and record the augmentation stage (``AugmentationEvaluator``)."""
        __tracebackhide__ = True
        return self._run("augmentation", kwargs)

    def generation(self, **kwargs: Any) -> Report:
        """Evaluate and record the generation stage (``GenerationEvaluator``)."""
        __tracebackhide__ = True
        return self._run("generation", kwargs)

    def end_to_end(self, **kwargs: Any) -> Report:
        """Evaluate and record the end-to-end stage (``EndToEndEvaluator``)."""
        __tracebackhide__ = True
        return self._run("end_to_end", kwargs)

    def evaluate(self, **settings: Any) -> dict[str, Report]:
        """Evaluate every stage the dataset allows; record those that measured something.

        Only settings are accepted here (``k=10``); the inputs are the dataset's.
        """
        __tracebackhide__ = True
        from ..stages.evaluate import EVALUATORS

        known = {name for cls in EVALUATORS.values() for name in cls.settings_names}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise TypeError(f"rag.evaluate() takes settings only ({', '.join(sorted(known))}); "
                            f"got {unknown_names(unknown, known)}")
        if self._dataset() is None:
            pytest.fail("pytest-rag: rag.evaluate() needs a dataset: set the ini option "
                        "rag_dataset, pass --rag-dataset or mark the test with "
                        "@pytest.mark.rag_dataset(path)", pytrace=False)
        measured: dict[str, Report] = {}
        for stage in STAGES:
            names = EVALUATORS[stage].settings_names
            report = self._run(stage, {k: v for k, v in settings.items() if k in names})
            if any(value is not None for value in report.values.values()):
                measured[stage] = report
            else:  # the report just recorded; not remove(), whose == compares arrays
                self._state.reports.pop()
                self._state.names.pop()
        return measured


def _finite(value: numbers.Real) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond the float range
        return False


def with_extra_metrics(report: Report, values: Mapping[str, float | None],
                       specs: Mapping[str, MetricSpec]) -> Report:
    """``report`` with custom metric values (declared in ``specs``) added."""
    extra = []
    for key, value in values.items():
        spec = specs.get(f"{report.stage}.{key}")
        if spec is None:
            raise ValueError(f"custom metric {report.stage}.{key} was not declared with "
                             "pytest_rag_register_metrics")
        # numpy numbers are numbers; an int beyond the float range is not finite.
        if isinstance(value, bool) or (value is not None and not isinstance(value, numbers.Real)):
            raise TypeError(f"custom metric {report.stage}.{key} must be a number or None, "
                            f"got {describe_value(value)}")
        if value is not None and not _finite(value):  # the baseline and reports are JSON
            raise ValueError(f"custom metric {report.stage}.{key} must be a finite number or "
                             f"None, got {describe_value(value)}")
        extra.append(spec)
    merged = {**report.values, **{k: None if v is None else float(v) for k, v in values.items()}}
    return dataclasses.replace(report, values=merged, extra_specs=tuple(extra))
