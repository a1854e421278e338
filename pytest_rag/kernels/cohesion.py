"""``lexical_cohesion`` of every chunk: the mean Jaccard of all pairs of its sentence parts.

A word held by ``m`` parts of a chunk makes ``m (m - 1) / 2`` pairs, so one
chunk of thousands of sentences (a document left whole) makes hundreds of
millions of pair keys.  Memory stays bounded by :data:`PAIR_BUDGET` keys:
chunks are done in runs whose pairs fit the budget, and a chunk whose pairs
alone exceed it is done in blocks of its first parts, each counting the
shared words of its pairs.  Every chunk's Jaccard values are summed one
after the other in ``(a, b)`` order, as a single pass over all pairs would,
so the values are the same whatever the budget.

Time grows with those (pair of parts, shared word) counts, quadratic in the
parts of a chunk.  A chunk with more than :data:`_GROUP_ABOVE` of them has
its identical parts (the same set of words) grouped first: ``k`` identical
parts make ``k (k - 1) / 2`` pairs of Jaccard 1 (a part holds a token, so its
set is not empty), and a pair of groups of ``k`` and ``l`` parts stands for
``k l`` pairs of one Jaccard value.  That sum is exact; only its order of
additions differs from the pairwise one (the values agree to about 1e-15).
A chunk that still needs more than :data:`PAIR_WORD_LIMIT` counts is not
measured (:attr:`Cohesion.over`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .int_keys import divide, group_starts, jaccard_counts, ranges, remainder, run_counts

__all__ = ["PAIR_BUDGET", "PAIR_WORD_LIMIT", "Cohesion", "cohesion", "set_cohesion"]

#: Pair keys generated at a time (each a few 8-byte arrays of this length at most).
PAIR_BUDGET: int = 1 << 20
#: The most (pair of sentence parts, shared word) counts one chunk may need, its
#: identical parts grouped: a few seconds of work.  A chunk needing more is not measured.
PAIR_WORD_LIMIT: Final = 200_000_000
#: Chunks needing more counts than this have their identical parts grouped first
#: (below it the pairwise pass is fast, and its order of additions is kept).
_GROUP_ABOVE: int = 1 << 22
#: Integer keys below this are 32-bit (half the memory traffic, faster sorts).
_KEYS_32: Final = 2**31

_IntArray = npt.NDArray[np.int64]
_Keys = npt.NDArray[np.signedinteger[Any]]


@dataclass(frozen=True)
class Cohesion:
    """``lexical_cohesion`` of the chunks of a block.

    Attributes
    ----------
    values:
        The mean Jaccard of each chunk with at least two sentence parts, in
        chunk order; NaN for a chunk in ``over``.
    over, pair_words:
        The chunks (block rows) not measured, and the (pair of distinct
        parts, shared word) counts each needed, above :data:`PAIR_WORD_LIMIT`.
    """

    values: npt.NDArray[np.float64]
    over: _IntArray
    pair_words: _IntArray


def cohesion(keys: _Keys, chunk_word: _Keys, first_of_word: npt.NDArray[np.bool_],
             pieces: _IntArray, span: int, parts: int) -> Cohesion | None:
    """Mean Jaccard of all pairs of sentence parts, for each chunk with at least two.

    ``keys`` are the sorted distinct ``(chunk * span + word) * parts + part``:
    a run of equal ``chunk_word`` is the parts of one chunk that hold one word,
    in ascending order, and every two of them share that word.  ``None`` when
    the pair keys of a run of chunks would not fit an int64.
    """
    n = pieces.shape[0]
    multi = np.flatnonzero(pieces >= 2)
    none = np.zeros(0, dtype=np.int64)
    if multi.shape[0] == 0:
        return Cohesion(np.zeros(0, dtype=np.float64), none, none)
    chunk = divide(chunk_word, span)
    group_start = np.flatnonzero(first_of_word)
    group_size = np.diff(np.append(group_start, first_of_word.shape[0]))
    # Only the words held by two parts or more of a chunk make pairs.
    shared_by = group_size >= 2
    group_start, group_size = group_start[shared_by], group_size[shared_by]
    pairs = np.bincount(chunk[group_start], weights=group_size * (group_size - 1) // 2,
                        minlength=n)
    ends = np.cumsum(pairs)
    large = pairs > _GROUP_ABOVE
    large_rows = np.append(np.flatnonzero(large), n)  # each run stops at the next of them
    sums = np.zeros(n, dtype=np.float64)
    over: list[int] = []
    pair_words: list[int] = []
    first = 0
    while first < n:
        lo, hi = np.searchsorted(chunk, [first, first + 1], side="left").tolist()
        if large[first]:
            size = int(pieces[first])
            found_sum, needed = _large_sum(remainder(keys[lo:hi], parts).astype(np.int64),
                                           first_of_word[lo:hi], size)
            if found_sum is None:
                over.append(first)
                pair_words.append(needed)
                sums[first] = np.nan
            else:
                sums[first] = found_sum
            first += 1
            continue
        done = float(ends[first - 1]) if first else 0.0
        stop = max(int(np.searchsorted(ends, done + PAIR_BUDGET, side="right")), first + 1)
        stop = min(stop, int(large_rows[np.searchsorted(large_rows, first)]))
        hi = int(np.searchsorted(chunk, stop, side="left"))
        if stop == first + 1 and pairs[first] > PAIR_BUDGET:
            sums[first] = _blocked_sum(remainder(keys[lo:hi], parts).astype(np.int64),
                                       first_of_word[lo:hi], int(pieces[first]))
        else:
            groups = slice(*np.searchsorted(group_start, [lo, hi]).tolist())
            found = _pair_sums(keys[lo:hi], chunk[lo:hi] - first, group_start[groups] - lo,
                               group_size[groups], pieces[first:stop], parts)
            if found is None:
                return None
            sums[first:stop] = found
        first = stop
    counted = pieces[multi].astype(np.float64)
    result: npt.NDArray[np.float64] = sums[multi] / (counted * (counted - 1) / 2)
    return Cohesion(result, np.array(over, dtype=np.int64), np.array(pair_words, dtype=np.int64))


def set_cohesion(parts: Sequence[set[str]]) -> tuple[float | None, int]:
    """Mean Jaccard of all pairs of ``parts`` (at least two non-empty sets) as
    :func:`cohesion` computes it for a chunk, and the (pair of distinct parts,
    shared word) counts it needed; ``None`` for the mean over the limit."""
    ids: dict[str, int] = {}
    sizes = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    word = np.fromiter((ids.setdefault(token, len(ids)) for part in parts for token in part),
                       dtype=np.int64, count=int(sizes.sum()))
    part = np.repeat(np.arange(len(parts), dtype=np.int64), sizes)
    order = np.lexsort((part, word))
    word, part = word[order], part[order]
    first_of_word = np.ones(word.shape[0], dtype=bool)
    first_of_word[1:] = word[1:] != word[:-1]
    needed = _pair_words(first_of_word)
    if needed > _GROUP_ABOVE:
        total, needed = _large_sum(part, first_of_word, len(parts))
    else:
        total = _blocked_sum(part, first_of_word, len(parts))
    count = len(parts)
    return (None if total is None else total / (count * (count - 1) / 2)), needed


def _pair_words(first_of_word: npt.NDArray[np.bool_]) -> int:
    """The (pair of parts, shared word) counts of one chunk: ``m (m - 1) / 2`` for each
    word held by ``m`` parts (``first_of_word``: where each word's run starts)."""
    holders = np.diff(np.append(np.flatnonzero(first_of_word), first_of_word.shape[0]))
    return int((holders * (holders - 1) // 2).sum())


def _mixed(values: _IntArray) -> npt.NDArray[np.uint64]:
    """A 64-bit mix of each value (the finaliser of splitmix64), wrapping."""
    z: npt.NDArray[np.uint64] = (values.astype(np.uint64) + np.uint64(1)) * np.uint64(
        0x9E3779B97F4A7C15)
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def _identical_parts(part: _IntArray, word: _IntArray, size: int) -> _IntArray:
    """For each of the ``size`` parts of a chunk, the first part with the same set of words.

    ``part`` and ``word`` are the distinct ``(word, part)`` of the chunk, sorted
    by word then part.  Parts with the same number of words and the same sum of
    mixed word ids are candidates; each candidate is then compared word by word
    with the first of its kind, and one that differs (a collision of sums)
    stays a part of its own.  Every part holds a word.
    """
    by_part = np.argsort(part, kind="stable")  # each part's words, ascending
    words = word[by_part]
    count = np.bincount(part, minlength=size)
    start = group_starts(count)
    signature = np.add.reduceat(_mixed(words), start) if words.shape[0] else np.zeros(
        size, dtype=np.uint64)
    order = np.lexsort((np.arange(size), signature, count))
    new = np.ones(size, dtype=bool)
    new[1:] = (signature[order[1:]] != signature[order[:-1]]) | (
        count[order[1:]] != count[order[:-1]])
    first = order[np.flatnonzero(new)]
    same_as = np.empty(size, dtype=np.int64)
    same_as[order] = np.repeat(first, np.diff(np.append(np.flatnonzero(new), size)))
    differs = words[ranges(start, count)] != words[ranges(start[same_as], count)]
    owner = np.repeat(np.arange(size, dtype=np.int64), count)
    wrong = np.bincount(owner[differs], minlength=size) > 0
    same_as[wrong] = np.flatnonzero(wrong)
    return same_as


def _large_sum(part: _IntArray, first_of_word: npt.NDArray[np.bool_],
               size: int) -> tuple[float | None, int]:
    """The sum of the Jaccard values of all pairs of parts of one chunk, its identical
    parts grouped, and the (pair of groups, shared word) counts that needed;
    ``None`` for the sum when those exceed :data:`PAIR_WORD_LIMIT`."""
    word = np.cumsum(first_of_word) - 1
    same_as = _identical_parts(part, word, size)
    kept = same_as == np.arange(size, dtype=np.int64)
    groups = int(np.count_nonzero(kept))
    number = np.cumsum(kept) - 1  # a kept part's group, in part order
    multiplicity = np.bincount(number[same_as], minlength=groups)
    keep = kept[part]
    grouped, grouped_word = number[part[keep]], word[keep]
    grouped_first = np.ones(grouped.shape[0], dtype=bool)
    grouped_first[1:] = grouped_word[1:] != grouped_word[:-1]
    needed = _pair_words(grouped_first)
    if needed > PAIR_WORD_LIMIT:
        return None, needed
    if groups == size:  # no two parts alike: the pairwise sum itself
        return _blocked_sum(part, first_of_word, size), needed
    weight = multiplicity.astype(np.float64)
    within = float((multiplicity * (multiplicity - 1) // 2).sum())
    return _blocked_sum(grouped, grouped_first, groups, weight) + within, needed


def _blocked_sum(part: _IntArray, first_of_word: npt.NDArray[np.bool_], size: int,
                 weight: npt.NDArray[np.float64] | None = None) -> float:
    """The sum of the Jaccard values of all pairs of parts of one chunk (``part``: the
    part of each of its distinct ``(word, part)``, sorted by word then part), block
    by block of its first parts; each pair's value times ``weight[a] * weight[b]``
    when given.

    A block's shared words are counted in a dense ``rows x parts`` table when
    the parts are at most :data:`PAIR_BUDGET`, else by sorting its pair keys
    (a table row per part would make the work quadratic in the parts).
    """
    part_words = np.bincount(part, minlength=size).astype(np.float64)
    group_start = np.flatnonzero(first_of_word)
    group_size = np.diff(np.append(group_start, first_of_word.shape[0]))
    shared_by = group_size >= 2
    group_start, group_size = group_start[shared_by], group_size[shared_by]
    member = ranges(group_start, group_size)
    member_part = part[member]
    rank = np.arange(member.shape[0], dtype=np.int64) - np.repeat(group_starts(group_size),
                                                                  group_size)
    later = np.repeat(group_size, group_size) - 1 - rank  # its pairs: the members after it
    from_part = np.cumsum(np.bincount(member_part, weights=later, minlength=size))
    by_part = np.argsort(member_part, kind="stable")
    member_edges = np.searchsorted(member_part[by_part], np.arange(size + 1), side="left")
    dense = size <= PAIR_BUDGET
    total = 0.0
    a0 = 0
    while a0 < size:
        done = float(from_part[a0 - 1]) if a0 else 0.0
        a1 = min(size, int(np.searchsorted(from_part, done + PAIR_BUDGET, side="right")))
        if dense:
            a1 = min(a1, a0 + max(1, PAIR_BUDGET // size))
        a1 = max(a1, a0 + 1)
        chosen = by_part[member_edges[a0]:member_edges[a1]]
        count = later[chosen]
        second = member_part[ranges(chosen + 1, count)]
        first = np.repeat(member_part[chosen], count)
        if dense:
            inter = np.bincount((first - a0) * size + second, minlength=(a1 - a0) * size)
            found = np.flatnonzero(inter)  # row-major: pairs in (a, b) order
            shared = inter[found].astype(np.float64)
        else:
            pair_key = (first - a0) * size + second
            pair_key.sort()
            found, shared = run_counts(pair_key)  # ascending: pairs in (a, b) order
        a, b = np.divmod(found, size)
        jaccard = jaccard_counts(shared, part_words[a + a0], part_words[b])
        if weight is not None:
            jaccard *= weight[a + a0] * weight[b]
        # One pass, one addition after the other, from the running total.
        total = float(np.bincount(np.zeros(jaccard.shape[0] + 1, dtype=np.int64),
                                  weights=np.concatenate(([total], jaccard)))[0])
        a0 = a1
    return total


def _pair_sums(keys: _Keys, chunk: _Keys, group_start: _IntArray, group_size: _IntArray,
               pieces: _IntArray, parts: int) -> npt.NDArray[np.float64] | None:
    """The sum of the Jaccard values of the pairs of parts of each chunk of a run.

    ``group_start`` and ``group_size`` are the runs of ``keys`` (offsets in it)
    of the (chunk, word) held by two parts or more: the words that make pairs.

    Each pair ``(a, b)`` of parts of chunk ``c`` is the key ``(c * width + a) *
    width + b`` (``width`` a power of two, so that splitting a key is shifts
    and masks, and 32-bit where the keys fit); sorted, the runs of equal keys
    count the shared words, and the pairs of a chunk come in ``(a, b)`` order.
    ``None`` when those keys would not fit an int64.
    """
    n = pieces.shape[0]
    bits = (max(int(pieces.max()), 1) - 1).bit_length()
    if n << (2 * bits) >= 2**62:
        return None
    dtype = np.int32 if n << (2 * bits) < _KEYS_32 else np.int64
    part = (chunk << bits) + remainder(keys, parts)  # chunk * width + part
    part_words = np.bincount(part, minlength=n << bits).astype(np.float64)
    member = ranges(group_start, group_size)  # the parts of those words, group after group
    member_part = part[member].astype(dtype)
    # Each member pairs with the members after it in its group.
    rank = np.arange(member.shape[0], dtype=np.int64) - np.repeat(group_starts(group_size),
                                                                  group_size)
    later = np.repeat(group_size, group_size) - 1 - rank
    second = np.arange(int(later.sum()), dtype=np.int64) - np.repeat(
        group_starts(later) - np.arange(member.shape[0], dtype=np.int64) - 1, later)
    # (chunk * width + a) * width + b  ==  ((chunk * width + a) << bits) + (part_b - chunk * width)
    low_mask = dtype((1 << bits) - 1)
    pair_key = np.repeat(member_part << dtype(bits), later) + (member_part[second] & low_mask)
    pair_key.sort()
    found, inter = run_counts(pair_key)
    shared = found.astype(np.int64)
    first_part = shared >> bits
    second_part = ((first_part >> bits) << bits) + (shared & ((1 << bits) - 1))
    jaccard = jaccard_counts(inter, part_words[first_part], part_words[second_part])
    sums = np.bincount(shared >> (2 * bits), weights=jaccard, minlength=n)
    return sums.astype(np.float64, copy=False)
