"""``lexical_cohesion`` of every chunk: the mean Jaccard of all pairs of its sentence parts.

A word held by ``m`` parts of a chunk makes ``m (m - 1) / 2`` pairs, so one
chunk of thousands of sentences (a document left whole) makes hundreds of
millions of pair keys.  Memory stays bounded by :data:`PAIR_BUDGET` keys:
chunks are done in runs whose pairs fit the budget, and a chunk whose pairs
alone exceed it is done in blocks of its first parts, each counting the
shared words of its pairs in a dense ``rows x parts`` table.  Every chunk's
Jaccard values are summed one after the other in ``(a, b)`` order, as a
single pass over all pairs would, so the values are the same whatever the
budget.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .int_keys import divide, group_starts, jaccard_counts, ranges, remainder

__all__ = ["PAIR_BUDGET", "cohesion"]

#: Pair keys generated at a time (each a few 8-byte arrays of this length at most).
PAIR_BUDGET: int = 1 << 20
#: Integer keys below this are 32-bit (half the memory traffic, faster sorts).
_KEYS_32: Final = 2**31

_IntArray = npt.NDArray[np.int64]
_Keys = npt.NDArray[np.signedinteger[Any]]


def cohesion(keys: _Keys, chunk_word: _Keys, first_of_word: npt.NDArray[np.bool_],
             pieces: _IntArray, span: int, parts: int) -> npt.NDArray[np.float64] | None:
    """Mean Jaccard of all pairs of sentence parts, for each chunk with at least two.

    ``keys`` are the sorted distinct ``(chunk * span + word) * parts + part``:
    a run of equal ``chunk_word`` is the parts of one chunk that hold one word,
    in ascending order, and every two of them share that word.  ``None`` when
    the pair keys of a run of chunks would not fit an int64.
    """
    n = pieces.shape[0]
    multi = np.flatnonzero(pieces >= 2)
    if multi.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    chunk = divide(chunk_word, span)
    group_start = np.flatnonzero(first_of_word)
    group_size = np.diff(np.append(group_start, first_of_word.shape[0]))
    pairs = np.bincount(chunk[group_start], weights=group_size * (group_size - 1) // 2,
                        minlength=n)
    ends = np.cumsum(pairs)
    sums = np.zeros(n, dtype=np.float64)
    first = 0
    while first < n:
        done = float(ends[first - 1]) if first else 0.0
        stop = max(int(np.searchsorted(ends, done + PAIR_BUDGET, side="right")), first + 1)
        lo, hi = np.searchsorted(chunk, [first, stop], side="left").tolist()
        if stop == first + 1 and pairs[first] > PAIR_BUDGET:
            sums[first] = _blocked_sum(keys[lo:hi], first_of_word[lo:hi],
                                       int(pieces[first]), parts)
        else:
            found = _pair_sums(keys[lo:hi], chunk[lo:hi] - first, first_of_word[lo:hi],
                               pieces[first:stop], parts)
            if found is None:
                return None
            sums[first:stop] = found
        first = stop
    counted = pieces[multi].astype(np.float64)
    result: npt.NDArray[np.float64] = sums[multi] / (counted * (counted - 1) / 2)
    return result


def _blocked_sum(keys: _Keys, first_of_word: npt.NDArray[np.bool_], size: int,
                 parts: int) -> float:
    """The sum of the Jaccard values of all pairs of parts of one chunk (``keys``:
    its sorted ``word * parts + part`` keys, offset by the chunk), block by block."""
    part = remainder(keys, parts).astype(np.int64)
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
    total = 0.0
    a0 = 0
    while a0 < size:
        done = float(from_part[a0 - 1]) if a0 else 0.0
        a1 = min(size, a0 + max(1, PAIR_BUDGET // size),
                 int(np.searchsorted(from_part, done + PAIR_BUDGET, side="right")))
        a1 = max(a1, a0 + 1)
        chosen = np.flatnonzero((member_part >= a0) & (member_part < a1))
        count = later[chosen]
        second = member_part[ranges(chosen + 1, count)]
        first = np.repeat(member_part[chosen], count)
        inter = np.bincount((first - a0) * size + second, minlength=(a1 - a0) * size)
        found = np.flatnonzero(inter)  # row-major: pairs in (a, b) order
        a, b = np.divmod(found, size)
        jaccard = jaccard_counts(inter[found].astype(np.float64), part_words[a + a0],
                                 part_words[b])
        # One pass, one addition after the other, from the running total.
        total = float(np.bincount(np.zeros(jaccard.shape[0] + 1, dtype=np.int64),
                                  weights=np.concatenate(([total], jaccard)))[0])
        a0 = a1
    return total


def _pair_sums(keys: _Keys, chunk: _Keys, first_of_word: npt.NDArray[np.bool_],
               pieces: _IntArray, parts: int) -> npt.NDArray[np.float64] | None:
    """The sum of the Jaccard values of the pairs of parts of each chunk of a run.

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
    multi = pieces >= 2
    if not multi.all():  # the chunks of one part make no pair
        keep = multi[chunk]
        chunk, first_of_word, keys = chunk[keep], first_of_word[keep], keys[keep]
    part = (chunk << bits) + remainder(keys, parts)  # chunk * width + part
    part_words = np.bincount(part, minlength=n << bits).astype(np.float64)
    # Only the words held by two parts or more of a chunk make pairs.
    group_start = np.flatnonzero(first_of_word)
    group_size = np.diff(np.append(group_start, first_of_word.shape[0]))
    shared_by = group_size >= 2
    group_start, group_size = group_start[shared_by], group_size[shared_by]
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
    if pair_key.shape[0]:
        new = np.empty(pair_key.shape[0], dtype=bool)
        new[0] = True
        np.not_equal(pair_key[1:], pair_key[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        shared = pair_key[starts].astype(np.int64)
        inter = np.diff(np.append(starts, pair_key.shape[0])).astype(np.float64)
    else:
        shared, inter = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    first_part = shared >> bits
    second_part = ((first_part >> bits) << bits) + (shared & ((1 << bits) - 1))
    jaccard = jaccard_counts(inter, part_words[first_part], part_words[second_part])
    sums = np.bincount(shared >> (2 * bits), weights=jaccard, minlength=n)
    return sums.astype(np.float64, copy=False)
