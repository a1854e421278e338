"""What every stage evaluator shares: settings, input resolution, the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..dataset.arguments import resolve_inputs
from ..dataset.gc_pause import collector_paused
from ..dataset.model import Dataset
from ..registry import stage_metrics
from ._common import ReportBuilder
from .report import Report

__all__ = ["RankedStageEvaluator", "StageEvaluator"]

#: The cut-off when neither the evaluator nor the dataset's params give one.
DEFAULT_K = 5


class StageEvaluator:
    """Base of the seven evaluators.

    Subclasses set :attr:`stage` and :attr:`inputs` (the keyword arguments
    ``evaluate`` accepts) and implement :meth:`_compute`.  Settings are
    constructor arguments; a setting left ``None`` falls back to the dataset's
    ``params`` and then to the default of SEMANTICS (``k`` = 5,
    ``boundary_tolerance`` = 0, no default for the others).  When the settings
    hold ``relevance_from_evidence: True``, queries without ``relevant`` get
    grades derived from their evidence spans before :meth:`_compute`
    (:mod:`pytest_rag.kernels.relevance`).
    """

    stage: ClassVar[str]
    inputs: ClassVar[frozenset[str]]
    settings_names: ClassVar[tuple[str, ...]] = ()

    def _settings(self, dataset: Dataset) -> dict[str, Any]:
        return {}

    def evaluate(self, dataset: Dataset | None = None, /, **inputs: Any) -> Report:
        """Evaluate the stage on ``dataset``, with ``inputs`` replacing its inputs.

        Parameters
        ----------
        dataset:
            A loaded :class:`~pytest_rag.Dataset` (gold and run), or ``None``.
        **inputs:
            Inputs by their FORMAT.md names.  Per-query inputs are mappings of
            query id to value (``retrieved_ids={"q1": ["c3", "c1"]}``); an input
            passed here replaces the dataset's input of the same name for every
            query.

        Returns
        -------
        Report
            Every key of the stage; ``None`` where not measured, with the reason
            in ``report.missing``.
        """
        # The collector is paused (and restored) around the whole call: the
        # records built from the inputs are freed on return, before it is back.
        with collector_paused():
            return self._evaluate(dataset, inputs)

    def _evaluate(self, dataset: Dataset | None, inputs: Mapping[str, Any]) -> Report:
        data = resolve_inputs(dataset, inputs, self.inputs)
        settings = self._settings(data)
        if settings.get("relevance_from_evidence"):
            from ..kernels.relevance import relevance_from_evidence

            data = relevance_from_evidence(data)
        builder = ReportBuilder(self.stage, stage_metrics(self.stage), data, settings)
        self._compute(data, settings, builder)
        return builder.build()

    def _compute(self, dataset: Dataset, settings: Mapping[str, Any],
                 builder: ReportBuilder) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({args})"


class RankedStageEvaluator(StageEvaluator):
    """Base of the evaluators that rank chunks at K: retrieval, reranking, embedding.

    Parameters
    ----------
    k:
        Cut-off.  ``None``: the dataset's ``params.k``, else 5.
    relevance_from_evidence:
        Derive the grades of queries that have ``expected_evidence`` but no
        ``relevant`` from the chunks (2: holds a whole gold span, 1: touches
        one).  Off by default.
    """

    settings_names = ("k", "relevance_from_evidence")

    def __init__(self, *, k: int | None = None,
                 relevance_from_evidence: bool | None = None) -> None:
        self.k = check_k(k)
        self.relevance_from_evidence = check_flag("relevance_from_evidence",
                                                  relevance_from_evidence)

    def _settings(self, dataset: Dataset) -> dict[str, Any]:
        return {"k": self.k or dataset.params.k or DEFAULT_K,
                **flag_settings("relevance_from_evidence", self.relevance_from_evidence)}


def check_flag(name: str, value: bool | None) -> bool:
    """Validate a boolean setting; ``None`` is ``False``."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def flag_settings(name: str, value: bool) -> dict[str, bool]:
    """``{name: True}`` when the flag is on, else nothing (the report's settings
    then stay as they were before the flag existed)."""
    return {name: True} if value else {}


def check_k(k: int | None) -> int | None:
    """Validate a ``k`` setting (a whole number >= 1) or pass ``None`` through."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    return k
