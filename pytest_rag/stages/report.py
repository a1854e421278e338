"""The result of one stage evaluation."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import did_you_mean
from ..registry import MetricSpec, stage_metrics
from .checks import MetricValue

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..dataset.model import Dataset

__all__ = ["Report"]


@dataclass(frozen=True)
class Report:
    """Every metric of one stage, for one evaluation.

    Attributes
    ----------
    stage:
        The stage key (``"retrieval"``, ...).
    values:
        Aggregate value of every key of the stage: a float, or ``None`` when
        not measured (never 0 for "not measured").
    settings:
        The settings used (``k``, ``size_limits``, ...).
    missing:
        For each ``None`` aggregate, why: ``"needs expected_evidence"``.
    query_ids:
        The queries of the evaluation, in dataset order.
    query_values:
        For per-query metrics, one float array aligned with ``query_ids``;
        NaN stands for ``None`` there.  Use :attr:`per_query` to read them.
    dataset:
        The data the evaluator read: its inputs resolved against the dataset,
        with the grades it derived from evidence (``relevance_from_evidence``).
        ``None`` for a report built by hand.  Not part of equality.

    Examples
    --------
    ``report["recall_at_k"]`` (or ``report.values["recall_at_k"]``) is the
    aggregate, a float or ``None``; ``report.per_query["recall_at_k"]["q1"]``
    the value of one query.  ``report.recall_at_k`` is a
    :class:`~pytest_rag.stages.checks.MetricValue`: compare it to build a check,
    ``assert_metric(report.recall_at_k >= 0.8)``, or read its ``.value``.
    """

    stage: str
    values: Mapping[str, float | None]
    settings: Mapping[str, Any] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    query_ids: tuple[str, ...] = ()
    query_values: Mapping[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    extra_specs: tuple[MetricSpec, ...] = field(default=(), repr=False)
    dataset: Dataset | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> MetricValue:
        __tracebackhide__ = True  # pytest shows the user's line, not this one
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return self.metric(name)
        hint = "" if name.startswith("_") or not values else did_you_mean(name, values)
        raise AttributeError(
            f"{type(self).__name__} of stage {self.__dict__.get('stage')!r} has no metric "
            f"{name!r}{hint}" + (f"; its metrics: {', '.join(values)}" if values else "")
        )

    def metric(self, key: str) -> MetricValue:
        """``key`` as a :class:`~pytest_rag.stages.checks.MetricValue`, ready for checks.

        ``report.recall_at_k`` is the same; compare it to build a check
        (``assert_metric(report.recall_at_k >= 0.8)``) or read ``.value``.
        """
        value = self[key]
        spec = next((spec for spec in self.specs if spec.key == key), None)
        return MetricValue(
            self.stage, key, value,
            self.per_query.get(key),
            self.missing.get(key, "") if value is None else "",
            spec.direction.value if spec is not None else "info",
        )

    def __getitem__(self, key: str) -> float | None:
        try:
            return self.values[key]
        except KeyError:
            raise KeyError(f"stage {self.stage!r} has no metric {key!r}"
                           f"{did_you_mean(str(key), self.values)}; "
                           f"its metrics: {', '.join(self.values)}") from None

    @functools.cached_property
    def per_query(self) -> dict[str, dict[str, float | None]]:
        """``{key: {query_id: value or None}}`` for every per-query metric."""
        import numpy as np  # loaded already: the values are arrays

        result: dict[str, dict[str, float | None]] = {}
        for key, array in self.query_values.items():
            values: list[float | None] = array.tolist()
            for row in np.flatnonzero(np.isnan(array)).tolist():  # few: not one check a value
                values[row] = None
            result[key] = dict(zip(self.query_ids, values))
        return result

    @property
    def specs(self) -> tuple[MetricSpec, ...]:
        """The registry entries of this stage's metrics (and of custom ones)."""
        return stage_metrics(self.stage) + self.extra_specs

    def not_measured(self) -> dict[str, str]:
        """The keys that are ``None``, with the reason for each."""
        return {key: self.missing.get(key, "not measured")
                for key, value in self.values.items() if value is None}

    def to_dict(self) -> dict[str, float | None]:
        """``{key: value}``, the form of ``pytest-rag evaluate --format json``."""
        return dict(self.values)
