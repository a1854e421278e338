"""Is a change between two runs real or noise?  Paired tests over per-query values.

Both functions take the per-query values of the same queries before and after
(queries missing on either side, or ``None`` there, are left out) and use a
fixed seed, so the same data always gives the same p-value and interval.

With few changed queries (at most 13) the randomization test counts every sign
assignment of them, which gives its exact p-value; otherwise it draws
``permutations`` random ones.

Cost: the randomization test draws ``permutations`` sign assignments of every
query, but only the queries whose value changed move a mean; their signs are
read straight from the generator's output (the same draws, 1/8 of the work,
see :func:`_extreme_assignments`).  The bootstrap draws ``resamples`` x
queries indices in bounded chunks.  Memory is bounded by :data:`_CHUNK`.
:func:`paired_changes` compares one run with several (a sweep's variants with
the best) and draws the bootstrap's indices once for the comparisons that
would draw the same ones.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["PairedChange", "paired_change", "paired_changes"]

DEFAULT_PERMUTATIONS = 10_000
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20_241_202
#: Sign assignments drawn per call of the generator (the draws, and so the
#: p-values, depend on it: never change it).
_BLOCK = 512
#: Bytes of signs, or bootstrap picks, held at a time: memory stays bounded
#: whatever the number of queries.
_CHUNK = 1 << 22


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
    ``p = (1 + #{|mean(s * d)| >= |mean(d)|}) / (1 + permutations)``.  With at
    most :data:`EXACT_QUERIES` changed queries, and ``2 ** changed <=
    permutations``, every assignment is counted instead: the exact p-value
    (four changed queries, all worse: 2/16 = 0.125).  Only the p-value differs;
    the generator is drawn as before, so the interval is the same.

    Examples
    --------
    >>> change = paired_change({"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5})
    >>> change.mean_delta, change.p_value
    (0.0, 1.0)
    """
    return paired_changes(before, [after], permutations=permutations, resamples=resamples,
                          seed=seed, confidence=confidence)[0]


def paired_changes(before: Mapping[str, float | None],
                   afters: Sequence[Mapping[str, float | None]], *,
                   permutations: int = DEFAULT_PERMUTATIONS, resamples: int = DEFAULT_RESAMPLES,
                   seed: int = DEFAULT_SEED, confidence: float = 0.95) -> list[PairedChange]:
    """:func:`paired_change` of ``before`` and each of ``afters``, equal to it value for
    value (a sweep compares every variant with the best).  Where two comparisons
    leave the generator in the same state before their bootstrap (the same number of
    common queries: the draws do not depend on the values), they share its draws, so
    the generator's work is done once instead of once per comparison."""
    if permutations < 1 or resamples < 1:
        raise ValueError("permutations and resamples must be >= 1")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    results: list[PairedChange | None] = []
    # (queries, generator state) -> its comparisons: the same state alone is not enough,
    # since two numbers of queries can use up the same number of random bytes.
    waiting: dict[tuple[int, str], list[tuple[int, _Pending]]] = {}
    for position, after in enumerate(afters):
        found = _before_bootstrap(before, after, permutations, seed)
        if isinstance(found, PairedChange):
            results.append(found)
            continue
        results.append(None)
        key = (found.diffs.shape[0], repr(found.rng.bit_generator.state))
        waiting.setdefault(key, []).append((position, found))
    tail = (1 - confidence) / 2 * 100
    for group in waiting.values():
        rng = group[0][1].rng
        all_sums = _bootstrap_sums(rng, [pending.diffs for _, pending in group], resamples)
        for (position, pending), sums in zip(group, all_sums):
            count, factor = pending.diffs.shape[0], pending.factor
            low, high = np.percentile(sums / count, [tail, 100 - tail])
            results[position] = PairedChange(count, _in_units(pending.observed, factor),
                                             pending.p_value, _in_units(float(low), factor),
                                             _in_units(float(high), factor))
    return [result for result in results if result is not None]


@dataclass(frozen=True)
class _Pending:
    """A comparison tested and waiting for its bootstrap: its differences (in units of
    ``factor``), their mean, the p-value and the generator where the test left it."""

    diffs: npt.NDArray[np.float64]
    factor: float
    observed: float
    p_value: float
    rng: np.random.Generator


def _before_bootstrap(before: Mapping[str, float | None], after: Mapping[str, float | None],
                      permutations: int, seed: int) -> PairedChange | _Pending:
    """The comparison done when it needs no bootstrap, else the randomization test done."""
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
    extreme = _extreme_assignments(rng, unit, target, permutations)  # leaves rng for the
    p_value = _exact_p_value(unit, target)  # bootstrap, whichever p-value is given
    if p_value is None or 2 ** np.count_nonzero(unit) > permutations:
        p_value = (extreme + 1) / (permutations + 1)
    return _Pending(diffs, factor, observed, p_value, rng)


#: Changed queries up to which :func:`_exact_p_value` counts every sign assignment
#: (2 ** 13 = 8,192 of them); beyond, or when ``permutations`` is smaller than their
#: number, the p-value is the random draws' estimate.
EXACT_QUERIES = 13


def _exact_p_value(unit: npt.NDArray[np.float64], target: float) -> float | None:
    """The share of all sign assignments of the changed queries' ``unit`` differences
    whose ``|mean|`` reaches ``target``: the randomization test's exact p-value, which
    the random draws estimate (so four queries that all got worse give 2/16 = 0.125,
    not an estimate just under it).  ``None`` with more than :data:`EXACT_QUERIES`
    changed queries."""
    values = unit[np.flatnonzero(unit)]
    changed = values.shape[0]
    if changed > EXACT_QUERIES:
        return None
    # Row r holds the signs of the bits of r: every assignment once.
    bits = (np.arange(2 ** changed)[:, None] >> np.arange(changed)) & 1
    signs = bits.astype(np.float64) * 2 - 1
    return float(np.mean(np.abs(signs @ values) / unit.shape[0] >= target))


def _signs_from_bytes(stream: _ByteStream, rows: int, count: int, changed: npt.NDArray[np.intp]
                      ) -> npt.NDArray[np.int8]:
    """The next ``rows`` x ``count`` signs of ``rng.integers(0, 2, dtype=int8) * 2 - 1``,
    columns ``changed`` only.

    For a range of 2, numpy's bounded ``int8`` draw takes one byte of the
    generator's 32-bit output at a time (lowest byte first) and returns its top
    bit, never rejecting one; a 32-bit output is the low, then the high half
    of a 64-bit one.  So the signs are the top bits of the raw output's bytes
    in memory order (little-endian).
    """
    raw = stream.take(rows * count).reshape(rows, count)[:, changed]
    return (raw >> 7).astype(np.int8) * 2 - 1


class _ByteStream:
    """The bytes of a PCG64 generator's raw 64-bit output, in order, drawn on demand."""

    def __init__(self, generator: np.random.Generator) -> None:
        self.bits = generator.bit_generator
        self.left = np.empty(0, dtype=np.uint8)
        self.taken = 0

    def take(self, count: int) -> npt.NDArray[np.uint8]:
        need = count - self.left.shape[0]
        if need > 0:
            words = np.asarray(self.bits.random_raw(-(-need // 8)), dtype="<u8")
            self.left = np.concatenate([self.left, words.view(np.uint8)])
        out, self.left = self.left[:count], self.left[count:]
        self.taken += count
        return out

    def end_call(self) -> None:
        """Drop the rest of the 32-bit output a call of the generator began."""
        self.take(-self.taken % 4)

    def release(self) -> None:
        """Leave the generator as numpy's own draws would: a half-used 64-bit
        output becomes its buffered 32-bit value."""
        state = dict(self.bits.state)
        if self.left.shape[0]:
            state["has_uint32"] = 1
            state["uinteger"] = int(self.left[:4].view("<u4")[0])
        self.bits.state = state


def _fast_signs(generator: np.random.Generator) -> bool:
    """Whether the signs can be read from the raw output (:func:`_signs_from_bytes`)."""
    state = generator.bit_generator.state
    return (sys.byteorder == "little" and state.get("bit_generator") == "PCG64"
            and not state.get("has_uint32"))


def _extreme_assignments(rng: np.random.Generator, unit: npt.NDArray[np.float64],
                         target: float, permutations: int) -> int:
    """How many of ``permutations`` random sign assignments ``s`` give
    ``|mean(s * unit)| >= target``.

    The assignments are those of ``rng.integers(0, 2, size=(_BLOCK, queries),
    dtype=np.int8) * 2 - 1``, block after block, and ``rng`` is left where
    those draws leave it; a query whose ``unit`` is 0 adds nothing to any mean,
    so only the changed queries' signs are looked at.
    """
    count = unit.shape[0]
    changed = np.flatnonzero(unit)
    values = unit[changed]
    extreme = 0
    done = 0
    fast = _fast_signs(rng)
    stream = _ByteStream(rng) if fast else None
    while done < permutations:
        block = min(_BLOCK, permutations - done)
        if stream is None:
            signs = rng.integers(0, 2, size=(block, count), dtype=np.int8) * 2 - 1
            extreme += int((np.abs(signs[:, changed] @ values) / count >= target).sum())
        else:
            step = max(1, _CHUNK // count)
            for start in range(0, block, step):
                rows = min(step, block - start)
                signs = _signs_from_bytes(stream, rows, count, changed)
                extreme += int((np.abs(signs @ values) / count >= target).sum())
            stream.end_call()
        done += block
    if stream is not None:
        stream.release()
    return extreme


def _bootstrap_sums(rng: np.random.Generator, diffs: Sequence[npt.NDArray[np.float64]],
                    resamples: int) -> list[npt.NDArray[np.float64]]:
    """Sums of ``resamples`` resamples (with replacement) of each array of ``diffs`` (of
    one length), all with the same picks: the draws of ``rng.integers(0, len,
    size=(resamples, len))``, in chunks of at most :data:`_CHUNK` bytes (the 64-bit
    draws do not depend on the chunking).

    Where every sum of an array is exact in any order (:func:`_exact_in_any_order`:
    0/1 hits, halves, ...), its sums come from how often each query was picked in a
    resample, one count matrix for all such arrays and one matrix product: the same
    numbers as adding the picked values, bit for bit, without gathering them again
    for every array.
    """
    count = diffs[0].shape[0]
    sums = [np.empty(resamples) for _ in diffs]
    exact = [i for i, values in enumerate(diffs) if _exact_in_any_order(values)]
    gathered = sorted(set(range(len(diffs))) - set(exact))
    by_counts = np.stack([diffs[i] for i in exact], axis=1) if exact else None
    step = max(1, _CHUNK // (8 * count))
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        picks = rng.integers(0, count, size=(rows, count))
        for i in gathered:
            sums[i][start:start + rows] = diffs[i][picks].sum(axis=1)
        if by_counts is not None:
            picks += (np.arange(rows, dtype=np.int64) * count)[:, None]  # row r: r * count + q
            picked = np.bincount(picks.ravel(), minlength=rows * count).reshape(rows, count)
            found = picked.astype(np.float64) @ by_counts
            for column, i in enumerate(exact):
                sums[i][start:start + rows] = found[:, column]
    return sums


#: Powers of two tried as the denominator of every difference (1, 1/2, ... 1/2**30).
_DYADIC_BITS = 31


def _exact_in_any_order(values: npt.NDArray[np.float64]) -> bool:
    """Whether every sum of ``len(values)`` of ``values`` (repeats allowed), and each
    partial sum on the way, is exactly a float, in any order of additions: the values
    are finite multiples of one ``2**-s`` whose largest possible sum stays below 2**53.
    A ``-0.0`` is excluded (the sign of a sum of zeros depends on the order)."""
    if values.shape[0] == 0 or not np.isfinite(values).all():
        return False
    if ((values == 0) & np.signbit(values)).any():
        return False
    largest = float(np.abs(values).max()) * values.shape[0]
    for bits in range(_DYADIC_BITS):
        scaled = values * float(2 ** bits)  # exact: a power of two
        if largest * 2.0 ** bits >= 2.0 ** 53:
            return False
        if (np.floor(scaled) == scaled).all():
            return True
    return False
