"""Declared thresholds (``retrieval.recall_at_k >= 0.8``) and tolerances.

Thresholds can be declared in ini (``rag_thresholds``), on the command line
(``--rag-threshold``) and with the ``rag_threshold`` marker; a check written in
the test itself beats a marker, which beats the command line, which beats ini.
Tolerances say how much worse than the baseline a metric may get: absolute for
ratios (``rag_tolerance``, default 0.01), relative for latency, cost and tokens
(``rag_relative_tolerance``, default 10%), and per metric in ``rag_tolerances``
(``retrieval.p95_latency_ms 25%`` or ``retrieval.recall_at_k 0.02``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..registry import MetricSpec

__all__ = ["SOURCES", "Threshold", "Tolerances", "parse_threshold", "parse_tolerance"]

#: Where a threshold came from, strongest first.
SOURCES: tuple[str, ...] = ("test", "marker", "cli", "ini")

_THRESHOLD = re.compile(
    r"^\s*(?P<stage>[a-z_]+)\.(?P<key>[A-Za-z_][\w]*)\s*(?P<op><=|>=|==|<|>)\s*(?P<value>\S+)\s*$")
_TOLERANCE = re.compile(r"^\s*(?P<stage>[a-z_]+)\.(?P<key>[A-Za-z_]\w*)\s+(?P<value>[^\s%]+)(?P<pct>%?)\s*$")


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
            ">=": value >= self.value, "==": math.isclose(value, self.value, rel_tol=1e-9, abs_tol=1e-12),
        }[self.op]

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}"


def _known(stage: str, key: str, specs: Mapping[str, MetricSpec], text: str) -> None:
    if f"{stage}.{key}" not in specs:
        stages = sorted({spec.stage for spec in specs.values()})
        if stage not in stages:
            raise ValueError(f"{text!r}: unknown stage {stage!r}; known: {', '.join(stages)}")
        keys = [spec.key for spec in specs.values() if spec.stage == stage]
        raise ValueError(f"{text!r}: unknown metric {key!r} of stage {stage!r}; "
                         f"known: {', '.join(keys)}")


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


def parse_tolerance(text: str, specs: Mapping[str, MetricSpec]) -> tuple[str, float, bool]:
    """Parse ``"retrieval.p95_latency_ms 25%"`` to ``(name, 0.25, relative=True)``."""
    match = _TOLERANCE.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected 'stage.metric AMOUNT' or 'stage.metric PERCENT%', "
                         "e.g. 'retrieval.p95_latency_ms 25%'")
    _known(match["stage"], match["key"], specs, text)
    try:
        amount = float(match["value"])
    except ValueError:
        raise ValueError(f"{text!r}: {match['value']!r} is not a number") from None
    if not math.isfinite(amount) or amount < 0:
        raise ValueError(f"{text!r}: a tolerance must be a finite number >= 0")
    relative = match["pct"] == "%"
    return f"{match['stage']}.{match['key']}", amount / 100 if relative else amount, relative


@dataclass(frozen=True)
class Tolerances:
    """How much worse than its baseline each metric may get."""

    absolute: float = 0.01
    relative: float = 0.10
    overrides: Mapping[str, tuple[float, bool]] = field(default_factory=dict)

    def for_metric(self, spec: MetricSpec) -> tuple[float, bool]:
        """``(amount, relative)`` for ``spec``: relative amounts are fractions."""
        if spec.name in self.overrides:
            return self.overrides[spec.name]
        if spec.relative_tolerance:
            return self.relative, True
        return self.absolute, False

    def allowed(self, spec: MetricSpec, baseline: float) -> float:
        """The absolute change allowed from ``baseline`` before it is a regression."""
        amount, relative = self.for_metric(spec)
        return amount * abs(baseline) if relative else amount

    @classmethod
    def parse(cls, absolute: float, relative: float, lines: Iterable[str],
              specs: Mapping[str, MetricSpec]) -> Tolerances:
        for name, value in (("rag_tolerance", absolute), ("rag_relative_tolerance", relative)):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        overrides = {}
        for line in lines:
            if line.strip():
                name, amount, is_relative = parse_tolerance(line, specs)
                overrides[name] = (amount, is_relative)
        return cls(absolute, relative, overrides)
