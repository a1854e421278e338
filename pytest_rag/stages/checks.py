"""Metric checks that explain themselves: ``assert_metric(report.recall_at_k >= 0.8)``.

``report.recall_at_k`` is a :class:`MetricValue`, not a float: comparing it
builds a :class:`Comparison` that remembers the metric, the operator and the
threshold, so a failure can say ``retrieval.recall_at_k = 0.742, expected >=
0.800 (baseline 0.812, -0.070); lowest queries: q17 0.00, q3 0.33``.  A metric
that is ``None`` (not measured) never passes a check.

Symbolic names (``from pytest_rag.metrics import recall_at_k``) are
:class:`MetricRef`; they are resolved against the latest report of the
running test that has the key, through the :class:`CheckContext` that the
pytest plugin installs for each test.  This module does not import pytest.
"""

from __future__ import annotations

import contextvars
import math
import numbers
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..formatting import delta_text, number_text

__all__ = [
    "CheckContext",
    "Comparison",
    "MetricRef",
    "MetricValue",
    "assert_metric",
    "current_context",
    "use_context",
]

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}
#: Per-query values shown in a failure message.
LOWEST_SHOWN = 5


class CheckContext(Protocol):
    """What a check may ask of the running test (implemented by the plugin)."""

    def resolve(self, key: str, stage: str | None) -> MetricValue:
        """The value of ``key`` in this test's latest report (of ``stage``)."""

    def baseline(self, stage: str, key: str) -> float | None:
        """The baseline value of ``stage.key`` for this test, if any."""

    def add_check(self, comparison: Comparison) -> None:
        """Keep a check the test made, for the gate and the scorecard's threshold column."""


_CONTEXT: contextvars.ContextVar[CheckContext | None] = contextvars.ContextVar(
    "pytest_rag_check_context", default=None)


def current_context() -> CheckContext | None:
    """The context of the running test, or ``None`` outside the plugin."""
    return _CONTEXT.get()


def use_context(context: CheckContext | None) -> contextvars.Token[CheckContext | None]:
    """Install ``context`` for checks; pass the token to :func:`reset_context`."""
    return _CONTEXT.set(context)


def reset_context(token: contextvars.Token[CheckContext | None]) -> None:
    _CONTEXT.reset(token)


def _fmt(value: object) -> str:
    """A number as every output prints it (:mod:`pytest_rag.formatting`); else its repr."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            return number_text(float(value))
        except OverflowError:  # an int beyond the float range
            return str(value)
    return repr(value) if not hasattr(value, "expected") else str(value)


class _Comparable:
    """Builds comparisons from the rich comparison operators."""

    def _compare(self, op: str, other: object) -> Comparison:
        raise NotImplementedError

    def __lt__(self, other: object) -> Comparison:
        return self._compare("<", other)

    def __le__(self, other: object) -> Comparison:
        return self._compare("<=", other)

    def __gt__(self, other: object) -> Comparison:
        return self._compare(">", other)

    def __ge__(self, other: object) -> Comparison:
        return self._compare(">=", other)

    def __eq__(self, other: object) -> Comparison:  # type: ignore[override]
        return self._compare("==", other)

    def __ne__(self, other: object) -> Comparison:  # type: ignore[override]
        return self._compare("!=", other)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class MetricValue(_Comparable):
    """The value of one metric in one report, with what explains it.

    Attributes
    ----------
    stage, key:
        Which metric (``"retrieval"``, ``"recall_at_k"``).
    value:
        The aggregate, or ``None`` when not measured.
    per_query:
        ``{query_id: value or None}`` for per-query metrics, else ``None``.
    reason:
        Why ``value`` is ``None`` (``"needs expected_evidence"``).
    direction:
        ``"higher"``, ``"lower"`` or ``"info"``; orders the "lowest queries".
    """

    stage: str
    key: str
    value: float | None
    per_query: Mapping[str, float | None] | None = None
    reason: str = ""
    direction: str = "higher"

    @property
    def name(self) -> str:
        return f"{self.stage}.{self.key}"

    def _compare(self, op: str, other: object) -> Comparison:
        if isinstance(other, (MetricRef, _EveryQuery)):
            raise TypeError(f"compare {self.name} with a number or another report's metric")
        return Comparison(self, op, other)

    def __float__(self) -> float:
        if self.value is None:
            raise TypeError(f"{self.name} is not measured ({self.reason or 'no value'})")
        return float(self.value)

    def __bool__(self) -> bool:
        raise TypeError(
            f"{self.name} is a metric, not a truth value; compare it "
            f"(assert_metric(report.{self.key} >= 0.8)) or read report.{self.key}.value")

    def __repr__(self) -> str:
        shown = "None" if self.value is None else repr(self.value)
        return f"{self.name}={shown}"

    def __format__(self, spec: str) -> str:
        if self.value is None:
            return format("not measured", spec if spec and spec[-1] not in "efgn%" else "")
        return format(self.value, spec)

    @property
    def every(self) -> _EveryQuery:
        """Checks on each query: ``assert_metric(report.recall_at_k.every >= 0.5)``."""
        return _EveryQuery(self)

    def share(self, op: str, threshold: float) -> MetricValue:
        """The share of measured queries whose value satisfies ``op threshold``.

        ``assert_metric(report.recall_at_k.share(">=", 0.5) >= 0.9)`` asks that at
        least 90% of the queries reach a recall of 0.5.  ``None`` when no query
        has a value.
        """
        compare = _operator(op)
        values = self._query_values()
        measured = [v for v in values.values() if v is not None]
        share = (None if not measured
                 else sum(compare(v, threshold) for v in measured) / len(measured))
        return MetricValue(self.stage, f"share({self.key} {op} {_fmt(threshold)})", share,
                           None, self.reason or "no query has a value", "higher")

    def lowest(self, count: int = LOWEST_SHOWN) -> list[tuple[str, float]]:
        """The ``count`` worst queries (lowest for higher-is-better metrics)."""
        measured = [(q, v) for q, v in (self.per_query or {}).items() if v is not None]
        reverse = self.direction == "lower"
        measured.sort(key=lambda item: (-item[1] if reverse else item[1], item[0]))
        return measured[:count]

    def _query_values(self) -> Mapping[str, float | None]:
        if self.per_query is None:
            raise ValueError(f"{self.name} has no per-query values")
        return self.per_query


def _operator(op: str) -> Callable[[Any, Any], bool]:
    try:
        return _OPERATORS[op]
    except KeyError:
        raise ValueError(f"unknown operator {op!r}; use one of {', '.join(_OPERATORS)}") from None


@dataclass(frozen=True, eq=False)
class MetricRef(_Comparable):
    """A metric by name, resolved when checked: ``recall_at_k >= 0.8``.

    ``stage`` is ``None`` for a bare key: the running test's latest report that
    has the key is used.
    """

    key: str
    stage: str | None = None

    def _compare(self, op: str, other: object) -> Comparison:
        return Comparison(self, op, other)

    def resolve(self) -> MetricValue:
        context = current_context()
        if context is None:
            raise RuntimeError(
                f"the symbolic metric {self.key!r} can only be checked inside a test that "
                "evaluated a stage with the 'rag' fixture; outside one, compare the report's "
                f"value: report.{self.key} >= ...")
        return context.resolve(self.key, self.stage)

    @property
    def every(self) -> _EveryQuery:
        return _EveryQuery(self)

    def __bool__(self) -> bool:
        raise TypeError(f"{self.key} is a metric name; compare it: "
                        f"assert_metric({self.key} >= 0.8)")

    def __repr__(self) -> str:
        return self.key if self.stage is None else f"{self.stage}.{self.key}"


@dataclass(frozen=True, eq=False)
class _EveryQuery(_Comparable):
    metric: MetricValue | MetricRef

    def _compare(self, op: str, other: object) -> Comparison:
        return Comparison(self.metric, op, other, every=True)


@dataclass(frozen=True, eq=False)
class Comparison:
    """A check of one metric against a threshold; truthy when it passes.

    ``every=True`` checks each query's value instead of the aggregate.
    A metric that is ``None`` (or a query without a value, for ``every``
    checks, is skipped) fails.
    """

    metric: MetricValue | MetricRef
    op: str
    threshold: Any
    every: bool = False

    def __post_init__(self) -> None:
        _operator(self.op)

    def resolved(self) -> MetricValue:
        metric = self.metric
        return metric.resolve() if isinstance(metric, MetricRef) else metric

    def _holds(self, value: float) -> bool:
        threshold = self.threshold
        if isinstance(threshold, MetricValue):  # another report's metric, e.g. chunker A vs B
            if threshold.value is None:
                return False
            threshold = threshold.value
        if self.op in ("==", "!=") and hasattr(threshold, "expected"):
            equal = bool(threshold == value)  # pytest.approx and the like
            return equal if self.op == "==" else not equal
        return bool(_operator(self.op)(value, threshold))

    def failures(self) -> list[tuple[str, float | None]]:
        """What fails: ``[("", value)]`` for the aggregate, or the failing queries."""
        metric = self.resolved()
        if self.threshold is None and self.op in ("==", "!=") and not self.every:
            holds = (metric.value is None) == (self.op == "==")
            return [] if holds else [("", metric.value)]
        if not self.every:
            if metric.value is None or not self._holds(metric.value):
                return [("", metric.value)]
            return []
        values = metric._query_values()
        measured = {q: v for q, v in values.items() if v is not None}
        if not measured:
            return [("", None)]
        return [(q, v) for q, v in measured.items() if not self._holds(v)]

    @property
    def passed(self) -> bool:
        return not self.failures()

    def __bool__(self) -> bool:
        context = current_context()
        if context is not None:
            context.add_check(self)
        return self.passed

    def explain(self) -> str:
        """The failure message (also meaningful when the check passes)."""
        metric = self.resolved()
        expected = f"expected {self.op} {_fmt(self.threshold)}"
        if metric.value is None and not (self.every and metric.per_query):
            return f"{metric.name} not measured: {metric.reason or 'no value'} ({expected})"
        if self.every:
            bad = self.failures()
            if bad == [("", None)]:
                return f"{metric.name}: no query has a value ({expected} for every query)"
            shown = ", ".join(f"{q} {_fmt(v)}" for q, v in bad[:LOWEST_SHOWN])
            more = f" and {len(bad) - LOWEST_SHOWN} more" if len(bad) > LOWEST_SHOWN else ""
            measured = sum(v is not None for v in metric._query_values().values())
            return (f"{metric.name}: {expected} for every query; {len(bad)} of {measured} "
                    f"fail: {shown}{more}")
        text = f"{metric.name} = {_fmt(metric.value)}, {expected}"
        context = current_context()
        baseline = context.baseline(metric.stage, metric.key) if context is not None else None
        if baseline is not None and metric.value is not None:
            text += f" (baseline {_fmt(baseline)}, {delta_text(metric.value - baseline)})"
        lowest = metric.lowest() if metric.per_query else []
        if lowest:
            text += "; lowest queries: " + ", ".join(f"{q} {_fmt(v)}" for q, v in lowest)
        return text

    def __repr__(self) -> str:
        scope = ".every" if self.every else ""
        return f"<Comparison {self.metric!r}{scope} {self.op} {self.threshold!r}>"


def assert_metric(check: Comparison) -> None:
    """Fail with an explanation unless ``check`` passes.

    Parameters
    ----------
    check:
        A comparison of a metric with a threshold: ``report.recall_at_k >= 0.8``,
        ``recall_at_k >= 0.8`` (symbolic, inside a test using the ``rag``
        fixture), ``report.recall_at_k.every >= 0.5`` or
        ``report.recall_at_k.share(">=", 0.5) >= 0.9``.

    Raises
    ------
    AssertionError
        When the check fails; a metric that is not measured always fails.
    TypeError
        When ``check`` is not a comparison of a metric (e.g. a plain bool).
    """
    __tracebackhide__ = True
    if not isinstance(check, Comparison):
        raise TypeError(
            f"assert_metric takes a comparison of a metric, like "
            f"assert_metric(report.recall_at_k >= 0.8); got {type(check).__name__} {check!r}")
    if not check:
        raise AssertionError(check.explain())


def is_nan(value: float | None) -> bool:
    return value is not None and math.isnan(value)
