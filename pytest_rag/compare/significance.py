"""Is a change between two runs real or noise?  Paired tests over per-query values.

Both functions take the per-query values of the same queries before and after
(queries missing on either side, or ``None`` there, are left out) and use a
fixed seed, so the same data always gives the same p-value and interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["PairedChange", "paired_change"]

DEFAULT_PERMUTATIONS = 10_000
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20_241_202
_BLOCK = 512


@dataclass(frozen=True)
class PairedChange:
    """The change of a per-query metric between two runs.

    Attributes
    ----------
    queries:
        Number of queries with a value on both sides.
    mean_delta:
        Mean of ``after - before`` over those queries; ``None`` without
        queries, or when it is beyond the float range (values of opposite
        signs near the float maximum; so are the interval's ends then).
    p_value:
        Two-sided p-value of a paired randomization (sign-flip) test of "no
        change"; ``None`` with fewer than 2 queries.  With all differences 0
        it is 1.
    ci_low, ci_high:
        95% percentile bootstrap interval of the mean difference; ``None``
        with fewer than 2 queries.
    """

    queries: int
    mean_delta: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None

    def significant(self, alpha: float) -> bool:
        """Whether the change is significant at level ``alpha``."""
        return self.p_value is not None and self.p_value < alpha


#: Values up to this size are compared as they are; larger ones are first
#: divided by a power of two, so that differences and sums cannot overflow.
_SAFE = 2.0 ** 1000


def _differences(before: Mapping[str, float | None],
                 after: Mapping[str, float | None]) -> tuple[npt.NDArray[np.float64], float]:
    """``(after - before) / factor`` of the queries with both values, and ``factor``.

    ``factor`` is 1 unless a value is near the float maximum: then it is a power
    of two (dividing by it is exact) that keeps every difference finite.
    """
    common = [query for query, value in before.items()
              if value is not None and after.get(query) is not None]
    common.sort()
    old = np.fromiter((before[q] for q in common), dtype=np.float64, count=len(common))
    new = np.fromiter((after[q] for q in common), dtype=np.float64, count=len(common))
    largest = max(float(np.abs(old).max(initial=0.0)), float(np.abs(new).max(initial=0.0)))
    factor = 1.0 if largest <= _SAFE else 2.0 ** 1023
    return new / factor - old / factor, factor


def _in_units(value: float, factor: float) -> float | None:
    """``value * factor``, or ``None`` when that is beyond the float range."""
    with np.errstate(over="ignore"):
        scaled = float(np.float64(value) * factor)
    return scaled if np.isfinite(scaled) else None


def paired_change(before: Mapping[str, float | None], after: Mapping[str, float | None], *,
                  permutations: int = DEFAULT_PERMUTATIONS, resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED, confidence: float = 0.95) -> PairedChange:
    """Paired randomization test and bootstrap interval of ``after - before``.

    The p-value counts the sign assignments whose mean difference is at least
    as far from 0 as the observed one, with the observed assignment included:
    ``p = (1 + #{|mean(s * d)| >= |mean(d)|}) / (1 + permutations)``.

    Examples
    --------
    >>> change = paired_change({"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5})
    >>> change.mean_delta, change.p_value
    (0.0, 1.0)
    """
    if permutations < 1 or resamples < 1:
        raise ValueError("permutations and resamples must be >= 1")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    diffs, factor = _differences(before, after)
    count = diffs.shape[0]
    if count == 0:
        return PairedChange(0, None, None, None, None)
    observed = float(diffs.mean())
    if count < 2:
        return PairedChange(count, _in_units(observed, factor), None, None, None)
    rng = np.random.default_rng(seed)
    scale = np.abs(diffs).max()
    if scale == 0:
        return PairedChange(count, _in_units(observed, factor), 1.0, 0.0, 0.0)
    # Compare in units of the largest difference, with a tolerance for rounding.
    target = abs(observed) / scale - 1e-12
    unit = diffs / scale
    extreme = 0
    done = 0
    while done < permutations:
        block = min(_BLOCK, permutations - done)
        signs = rng.integers(0, 2, size=(block, count), dtype=np.int8) * 2 - 1
        means = np.abs(signs @ unit) / count
        extreme += int((means >= target).sum())
        done += block
    p_value = (extreme + 1) / (permutations + 1)
    sums = np.empty(resamples)
    done = 0
    while done < resamples:
        block = min(_BLOCK, resamples - done)
        picks = rng.integers(0, count, size=(block, count))
        sums[done:done + block] = diffs[picks].sum(axis=1)
        done += block
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(sums / count, [tail, 100 - tail])
    return PairedChange(count, _in_units(observed, factor), float(p_value),
                        _in_units(float(low), factor), _in_units(float(high), factor))
