"""Integer-key helpers of the lexical kernels: ranges, group starts, shifts, Jaccard."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["divide", "group_starts", "jaccard_counts", "ranges", "remainder", "run_counts"]

_IntArray = npt.NDArray[np.int64]
#: Integer keys, 32 or 64-bit.
_Keys = npt.NDArray[np.signedinteger[Any]]


def group_starts(lengths: _IntArray) -> _IntArray:
    return np.cumsum(lengths) - lengths


def ranges(starts: _IntArray, lengths: _IntArray) -> _IntArray:
    """Every index of the ranges ``[start, start + length)``, one range after the other."""
    index = np.repeat(starts - group_starts(lengths), lengths)
    index += np.arange(index.shape[0], dtype=np.int64)
    return index


def jaccard_counts(inter: npt.NDArray[np.float64], left: npt.NDArray[np.float64],
             right: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    union = left + right - inter
    out = np.zeros(union.shape[0], dtype=np.float64)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def divide(values: _Keys, divisor: int) -> _Keys:
    """``values // divisor`` for values >= 0: a shift when ``divisor`` is a power of two."""
    if divisor & (divisor - 1) == 0:
        return values >> (divisor.bit_length() - 1)
    return values // divisor


def remainder(values: _Keys, divisor: int) -> _Keys:
    """``values % divisor`` for values >= 0: a mask when ``divisor`` is a power of two."""
    if divisor & (divisor - 1) == 0:
        return values & (divisor - 1)
    return values % divisor


def run_counts(keys: _Keys) -> tuple[_Keys, npt.NDArray[np.float64]]:
    """The distinct values of the sorted ``keys``, ascending, and how many times each occurs."""
    if keys.shape[0] == 0:
        return keys, np.zeros(0, dtype=np.float64)
    new = np.empty(keys.shape[0], dtype=bool)
    new[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return keys[starts], np.diff(np.append(starts, keys.shape[0])).astype(np.float64)
