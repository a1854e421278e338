"""Declared thresholds (``retrieval.recall_at_k >= 0.8``) and tolerances.

Thresholds can be declared in ini (``rag_thresholds``), on the command line
(``--rag-threshold``) and with the ``rag_threshold`` marker; a check written in
the test itself beats a marker, which beats the command line, which beats ini.
Tolerances say how much worse than the baseline a metric may get: absolute for
ratios (``rag_tolerance``, default 0.01), relative for cost and tokens
(``rag_relative_tolerance``, default 10%), relative plus a fixed slack for
latency, which is measured and varies between runs of unchanged code
(``rag_latency_tolerance``, default ``100% + 5``: fail beyond twice the
baseline plus 5 ms), and per metric in ``rag_tolerances``
(``retrieval.p95_latency_ms 25%``, ``retrieval.p95_latency_ms 50% + 2`` or
``retrieval.recall_at_k 0.02``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from ..errors import unknown_names
from ..registry import MetricSpec

__all__ = ["SOURCES", "Threshold", "Tolerance", "Tolerances", "parse_latency_tolerance",
           "parse_threshold", "parse_tolerance"]

#: Where a threshold came from, strongest first.
SOURCES: tuple[str, ...] = ("test", "marker", "cli", "ini")

_THRESHOLD = re.compile(
    r"^\s*(?P<stage>[a-z_]+)\.(?P<key>[A-Za-z_][\w]*)\s*(?P<op><=|>=|==|<|>)\s*(?P<value>\S+)\s*$")
_AMOUNT = r"(?P<value>[^\s%+]+)(?P<pct>%?)(?:\s*\+\s*(?P<slack>[^\s%+]+))?"
_TOLERANCE = re.compile(r"^\s*(?P<stage>[a-z_]+)\.(?P<key>[A-Za-z_]\w*)\s+" + _AMOUNT + r"\s*$")
_LATENCY_TOLERANCE = re.compile(r"^\s*" + _AMOUNT + r"\s*$")


@dataclass(frozen=True)
class Threshold:
    """``stage.key OP value``, declared in ``source`` (test, marker, cli or ini)."""

    stage: str
    key: str
    op: str
    value: float
    source: str

    @property
    def name(self) -> str:
        return f"{self.stage}.{self.key}"

    def holds(self, value: float | None) -> bool:
        """Whether ``value`` passes; ``None`` (not measured) never does."""
        if value is None:
            return False
        return {
            "<": value < self.value, "<=": value <= self.value, ">": value > self.value,
            ">=": value >= self.value,
            "==": math.isclose(value, self.value, rel_tol=1e-9, abs_tol=1e-12),
        }[self.op]

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}"


def _known(stage: str, key: str, specs: Mapping[str, MetricSpec], text: str) -> None:
    if f"{stage}.{key}" not in specs:
        stages = sorted({spec.stage for spec in specs.values()})
        if stage not in stages:
            raise ValueError(f"{text!r}: unknown stage {unknown_names([stage], stages)}; "
                             f"known: {', '.join(stages)}")
        keys = [spec.key for spec in specs.values() if spec.stage == stage]
        raise ValueError(f"{text!r}: unknown metric {unknown_names([key], keys)} of stage "
                         f"{stage!r}; known: {', '.join(keys)}")


def parse_threshold(text: str, source: str, specs: Mapping[str, MetricSpec]) -> Threshold:
    """Parse ``"retrieval.recall_at_k >= 0.8"``.

    Raises
    ------
    ValueError
        Naming the text, for a malformed line, an unknown metric or a bad number.
    """
    match = _THRESHOLD.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected 'stage.metric OP number', e.g. "
                         "'retrieval.recall_at_k >= 0.8' (OP: <, <=, >, >=, ==)")
    stage, key = match["stage"], match["key"]
    _known(stage, key, specs, text)
    try:
        value = float(match["value"])
    except ValueError:
        raise ValueError(f"{text!r}: {match['value']!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r}: the threshold must be a finite number")
    return Threshold(stage, key, match["op"], value, source)


class Tolerance(NamedTuple):
    """How much worse than its baseline value a metric may get.

    ``amount`` is a fraction of the baseline value when ``relative``, else an
    amount in the metric's unit; ``slack`` is added in the metric's unit (the
    milliseconds a latency may also grow by).
    """

    amount: float
    relative: bool
    slack: float = 0.0

    def at(self, baseline: float) -> float:
        """This tolerance at ``baseline``, in the metric's unit: the largest change from
        ``baseline`` that is not a regression."""
        return (self.amount * abs(baseline) if self.relative else self.amount) + self.slack

    def __str__(self) -> str:
        text = f"{self.amount:.0%}" if self.relative else f"{self.amount:g}"
        return text + (f" + {self.slack:g}" if self.slack else "")


def _amount(match: re.Match[str], text: str) -> Tolerance:
    numbers = []
    for group in ("value", "slack"):
        raw = match[group]
        if raw is None:
            numbers.append(0.0)
            continue
        try:
            number = float(raw)
        except ValueError:
            raise ValueError(f"{text!r}: {raw!r} is not a number") from None
        if not math.isfinite(number) or number < 0:
            raise ValueError(f"{text!r}: a tolerance must be a finite number >= 0")
        numbers.append(number)
    relative = match["pct"] == "%"
    if match["slack"] is not None and not relative:
        raise ValueError(f"{text!r}: a slack ('+ AMOUNT') goes with a percentage, e.g. '50% + 2'")
    return Tolerance(numbers[0] / 100 if relative else numbers[0], relative, numbers[1])


def parse_tolerance(text: str, specs: Mapping[str, MetricSpec]) -> tuple[str, Tolerance]:
    """Parse ``"retrieval.p95_latency_ms 25%"`` to ``("retrieval.p95_latency_ms",
    Tolerance(0.25, True))``; ``"... 50% + 2"`` adds a slack of 2 in the metric's unit."""
    match = _TOLERANCE.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected 'stage.metric AMOUNT', 'stage.metric PERCENT%' or "
                         "'stage.metric PERCENT% + AMOUNT', e.g. 'retrieval.p95_latency_ms 25%'")
    _known(match["stage"], match["key"], specs, text)
    return f"{match['stage']}.{match['key']}", _amount(match, text)


def parse_latency_tolerance(text: str) -> Tolerance:
    """Parse ini ``rag_latency_tolerance``: ``"100% + 5"``, ``"50%"`` or ``"20"`` (ms)."""
    match = _LATENCY_TOLERANCE.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected 'PERCENT% + MS', "
                         "'PERCENT%' or 'MS', e.g. '100% + 5'")
    return _amount(match, text)


#: The default for latency: beyond twice the baseline plus 5 ms (see README "Baselines").
LATENCY_DEFAULT = Tolerance(1.0, True, 5.0)


@dataclass(frozen=True)
class Tolerances:
    """How much worse than its baseline each metric may get."""

    absolute: float = 0.01
    relative: float = 0.10
    overrides: Mapping[str, tuple[float, bool] | Tolerance] = field(default_factory=dict)
    latency: Tolerance = LATENCY_DEFAULT

    def for_metric(self, spec: MetricSpec) -> Tolerance:
        """The tolerance of ``spec``: its override, else its kind's default."""
        if spec.name in self.overrides:
            return Tolerance(*self.overrides[spec.name])
        if spec.measured:
            return self.latency
        if spec.relative_tolerance:
            return Tolerance(self.relative, True)
        return Tolerance(self.absolute, False)

    def at(self, spec: MetricSpec, baseline: float) -> float:
        """The tolerance of ``spec`` at ``baseline``, in the metric's unit
        (:meth:`Tolerance.at`)."""
        return self.for_metric(spec).at(baseline)

    @classmethod
    def parse(cls, absolute: float, relative: float, lines: Iterable[str],
              specs: Mapping[str, MetricSpec], latency: Tolerance = LATENCY_DEFAULT
              ) -> Tolerances:
        for name, value in (("rag_tolerance", absolute), ("rag_relative_tolerance", relative)):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        overrides = {}
        for line in lines:
            if line.strip():
                name, tolerance = parse_tolerance(line, specs)
                overrides[name] = tolerance
        return cls(absolute, relative, overrides, latency)
