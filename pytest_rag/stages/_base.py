"""What every stage evaluator shares: settings, input resolution, the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..data import Dataset
from ..inputs import resolve_inputs
from ..registry import stage_metrics
from ..report import Report
from ._common import ReportBuilder

__all__ = ["StageEvaluator"]


class StageEvaluator:
    """Base of the seven evaluators.

    Subclasses set :attr:`stage` and :attr:`inputs` (the keyword arguments
    ``evaluate`` accepts) and implement :meth:`_compute`.  Settings are
    constructor arguments; a setting left ``None`` falls back to the dataset's
    ``params`` and then to the default of SEMANTICS (``k`` = 5,
    ``boundary_tolerance`` = 0, no default for the others).
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
        data = resolve_inputs(dataset, inputs, self.inputs)
        settings = self._settings(data)
        builder = ReportBuilder(self.stage, stage_metrics(self.stage), data, settings)
        self._compute(data, settings, builder)
        return builder.build()

    def _compute(self, dataset: Dataset, settings: Mapping[str, Any],
                 builder: ReportBuilder) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({args})"


def check_k(k: int | None) -> int | None:
    """Validate a ``k`` setting (a whole number >= 1) or pass ``None`` through."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    return k
