"""The plugin's side of sweeps: a variant's knobs, costs and rule, and the sweep gate.

A parametrized test's knobs are its ``parametrize`` argument names and values
(``callspec.params``, in argument order), or, when a variant carries
``@pytest.mark.rag_knobs(name=value, ...)`` (on the ``pytest.param``, the test or
its class), exactly those.  Values that are not plain JSON are kept as their text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import unknown_names

if TYPE_CHECKING:
    import pytest

    from ..compare.sweeps import Sweep, SweepRule
    from ..registry import MetricSpec
    from ..stages.report import Report

__all__ = ["gate_failures", "sweep_rule", "variant_payload"]


def _json_value(value: Any) -> Any:
    """``value`` as plain JSON: numbers, text, booleans, ``None``, lists and objects of
    those; anything else (an object, NaN) as its text."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(item) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _json_value(item) for key, item in value.items()}
    return str(value)


def _knobs(item: pytest.Item) -> list[list[Any]]:
    marker = item.get_closest_marker("rag_knobs")
    if marker is not None:
        return [[name, _json_value(value)] for name, value in marker.kwargs.items()]
    callspec = getattr(item, "callspec", None)
    params: Mapping[str, Any] = getattr(callspec, "params", {}) or {}
    return [[name, _json_value(value)] for name, value in params.items()]


def variant_payload(item: pytest.Item, reports: Mapping[str, Report],
                    specs: Mapping[str, MetricSpec]) -> tuple[dict[str, Any] | None, str | None]:
    """``(variant data, error)`` of a parametrized test (``(None, None)`` otherwise):
    its knobs, costs and, under ``@pytest.mark.rag_sweep(...)``, its rule; ``error``
    names a wrong marker argument."""
    if getattr(item, "callspec", None) is None and item.get_closest_marker("rag_knobs") is None:
        return None, None
    from ..compare.sweeps import Variant
    from ..compare.sweeps.costs import variant_costs

    rule, error = sweep_rule(item, specs)
    knobs = tuple((name, value) for name, value in _knobs(item))
    variant = Variant(knobs, variant_costs(reports.values()) if reports else {}, rule)
    return variant.to_json(), error


def sweep_rule(item: pytest.Item, specs: Mapping[str, MetricSpec]
               ) -> tuple[SweepRule | None, str | None]:
    """``(rule, error)`` of the item's ``@pytest.mark.rag_sweep(...)`` arguments: no rule
    without arguments; ``error`` names the wrong argument and the closest name."""
    from ..compare.sweeps import SweepRule

    marker = item.get_closest_marker("rag_sweep")
    if marker is None or not marker.kwargs:
        return None, None
    arguments = ("objective", "cost", "shipped", "require")
    unknown = sorted(set(marker.kwargs) - set(arguments))
    try:
        if unknown:
            raise ValueError(f"rag_sweep takes objective=, cost=, shipped= and require=, "
                             f"not {unknown_names(unknown, arguments)}")
        return SweepRule.validated(specs, **marker.kwargs), None
    except ValueError as problem:
        return None, f"pytest-rag: @pytest.mark.{problem}"


def gate_failures(sweeps: list[Sweep]) -> list[str]:
    """One line per sweep whose shipped variant fails its gate."""
    return [f"sweep gate failed for {sweep.test}: {sweep.verdict.gate}" for sweep in sweeps
            if sweep.verdict is not None and sweep.verdict.gate is not None]
