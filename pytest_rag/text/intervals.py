"""Set arithmetic on token positions held as integer intervals.

A set of positions is a bag of half-open intervals ``[lo, hi)`` that may
overlap; a *group* id says which set (query, chunk, ...) an interval belongs
to.  All functions work on every group at once with a sort and a running
maximum, so no Python set of positions is ever built.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["containing", "intersection_sizes", "touching_count", "union_sizes"]

_IntArray = npt.NDArray[np.int64]


def union_sizes(lo: _IntArray, hi: _IntArray, group: _IntArray, groups: int) -> _IntArray:
    """Size of the union of each group's intervals (``groups`` results)."""
    if lo.shape[0] == 0:
        return np.zeros(groups, dtype=np.int64)
    span = int(max(int(hi.max()), int(lo.max()))) + 1
    shift = group.astype(np.int64) * span
    order = np.lexsort((lo, group))
    lo_s = lo[order] + shift[order]
    hi_s = np.maximum(hi[order], lo[order]) + shift[order]
    reach = np.maximum.accumulate(hi_s)
    before = np.empty_like(reach)
    before[0] = lo_s[0]
    before[1:] = reach[:-1]
    new = np.maximum(hi_s - np.maximum(lo_s, before), 0)
    return np.bincount(group[order], weights=new, minlength=groups).astype(np.int64)


def intersection_sizes(
    a_lo: _IntArray, a_hi: _IntArray, a_group: _IntArray,
    b_lo: _IntArray, b_hi: _IntArray, b_group: _IntArray,
    groups: int,
) -> tuple[_IntArray, _IntArray, _IntArray, _IntArray]:
    """Per group: ``|A|``, ``|B|``, ``|A ∩ B|`` and ``|A ∪ B|`` of two interval bags."""
    size_a = union_sizes(a_lo, a_hi, a_group, groups)
    size_b = union_sizes(b_lo, b_hi, b_group, groups)
    size_union = union_sizes(
        np.concatenate([a_lo, b_lo]),
        np.concatenate([a_hi, b_hi]),
        np.concatenate([a_group, b_group]),
        groups,
    )
    return size_a, size_b, size_a + size_b - size_union, size_union


def containing(
    outer_lo: _IntArray, outer_hi: _IntArray, inner_lo: _IntArray, inner_hi: _IntArray
) -> npt.NDArray[np.bool_]:
    """For each inner interval, whether one outer interval holds all of it.

    Outer intervals are any bag (they are sorted here); an empty inner
    interval is never held (it has no positions).
    """
    if outer_lo.shape[0] == 0:
        return np.zeros(inner_lo.shape[0], dtype=bool)
    order = np.argsort(outer_lo, kind="stable")
    lo_sorted = outer_lo[order]
    reach = np.maximum.accumulate(outer_hi[order])
    last = np.searchsorted(lo_sorted, inner_lo, side="right") - 1
    held = np.zeros(inner_lo.shape[0], dtype=bool)
    ok = last >= 0
    held[ok] = reach[last[ok]] >= inner_hi[ok]
    return held & (inner_hi > inner_lo)


def touching_count(
    outer_lo: _IntArray, outer_hi: _IntArray, inner_lo: _IntArray, inner_hi: _IntArray
) -> _IntArray:
    """For each inner interval, how many non-empty outer intervals share a position with it."""
    keep = outer_hi > outer_lo
    lo_sorted = np.sort(outer_lo[keep])
    hi_sorted = np.sort(outer_hi[keep])
    starts_before_end = np.searchsorted(lo_sorted, inner_hi, side="left")
    ends_before_start = np.searchsorted(hi_sorted, inner_lo, side="right")
    count = (starts_before_end - ends_before_start).astype(np.int64)
    count[inner_hi <= inner_lo] = 0
    return count
