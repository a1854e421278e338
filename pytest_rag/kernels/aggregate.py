"""Aggregates of per-query arrays: means over the defined values, ratios, F1, percentiles.

NaN stands for a query whose value is not defined; every function here skips
or propagates it as its docstring says.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["FloatArray", "f1", "mean", "percentile", "ratio"]

FloatArray = npt.NDArray[np.float64]


def mean(values: FloatArray) -> float | None:
    """Mean over the non-NaN entries; ``None`` when there is none."""
    valid = values[~np.isnan(values)]
    if valid.shape[0] == 0:
        return None
    with np.errstate(over="ignore"):  # handled below, so no RuntimeWarning for the user
        result = float(valid.mean())
    if not math.isfinite(result):  # the sum of huge finite values overflowed
        result = float((valid / valid.shape[0]).sum())
    return result


def mean_or_none(values: Sequence[float] | FloatArray) -> float | None:
    """The plain mean (every entry counts); ``None`` for no values."""
    return float(np.mean(values)) if len(values) else None


def ratio(numerator: npt.ArrayLike, denominator: npt.ArrayLike) -> FloatArray:
    """Elementwise ``numerator / denominator``; NaN where the denominator is 0."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def f1(precision: FloatArray, recall: FloatArray) -> FloatArray:
    """Harmonic mean; 0 when precision + recall is 0; NaN where either is NaN."""
    total = precision + recall
    out = np.zeros_like(total)
    np.divide(2 * precision * recall, total, out=out, where=total > 0)
    out[np.isnan(total)] = np.nan
    return out


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """numpy's default (linear) percentile of the given values; ``None`` if none."""
    data = np.fromiter((v for v in values if v is not None), dtype=np.float64)
    if data.shape[0] == 0:
        return None
    return float(np.percentile(data, q))
