"""One way to print numbers and settings, in every output.

Metric values: three decimals (``0.742``, ``12.000``), one from 1000 on
(``1520.5``), so ratios, counts and milliseconds line up in one column;
changes the same with a sign (``+0.070``); p-values three decimals, or
``<0.001``.  Settings in JSON notation: ``size_limits=[20, 200]``,
``abstain_phrases=["i don't know"]``, ``k=5``: lists in brackets and strings in
double quotes, as the dataset format writes them, whether the value came as a
tuple, a list or from a baseline file.  Settings left at ``None`` are not
printed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["NOT_MEASURED", "cell_text", "delta_text", "fitted", "number_text", "p_value_text",
           "setting_text", "settings_text", "value_text"]

#: How a metric that has no value is written in prose.
NOT_MEASURED = "not measured"


def _number(value: float, sign: str, small: float, digits: int) -> str:
    if not math.isfinite(value):
        return f"{value:{sign}}"
    if abs(value) >= 1000:
        return f"{value:{sign}.1f}"
    if 0 < abs(value) < small:
        return f"{value:{sign}.{digits}g}"
    return f"{value:{sign}.3f}"


def number_text(value: float) -> str:
    """A metric value: ``0.742``, ``12.000``, ``1520.5``; below 0.01 two significant
    digits (a cost of ``0.00012`` USD, not ``0.000``)."""
    return _number(value, "", 0.01, 2)


def value_text(value: float | None) -> str:
    """A metric value in prose: :func:`number_text`, or ``not measured`` for ``None``."""
    return NOT_MEASURED if value is None else number_text(value)


def cell_text(value: float | None) -> str:
    """A metric value in a table cell: :func:`number_text`, or ``-`` for ``None``."""
    return "-" if value is None else number_text(value)


def delta_text(value: float) -> str:
    """A change of a metric value, signed: ``+0.070``, ``-1520.5``, ``+5e-05``."""
    return _number(value, "+", 0.001, 1)


def p_value_text(value: float) -> str:
    """A p-value: ``0.032``, ``<0.001``."""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def fitted(text: object, width: int) -> str:
    """``text`` in a table cell of ``width`` characters: cut with ``…`` when longer.

    >>> fitted("average_precision_at_k", 10)
    'average_p…'
    """
    shown = str(text)
    return shown if len(shown) <= width else shown[:width - 1] + "…"


def setting_text(value: Any) -> str:
    """``value`` in JSON notation (tuples as lists; text as written, not ASCII-escaped).

    >>> setting_text((20, 200)), setting_text(["i don't know"]), setting_text(5)
    ('[20, 200]', '["i don\\'t know"]', '5')
    """
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # not JSON (a numpy value, NaN): its plain text
        return str(value)


def settings_text(settings: Mapping[str, Any]) -> str:
    """``k=5, size_limits=[20, 200]``: the settings that are set, in their order."""
    return ", ".join(f"{key}={setting_text(value)}" for key, value in settings.items()
                     if value is not None)
