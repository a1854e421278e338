"""``lexical_cohesion`` of every chunk: the mean Jaccard of all pairs of its sentence parts."""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .int_keys import divide, group_starts, jaccard_counts, ranges, remainder

__all__ = ["cohesion"]

#: Integer keys below this are 32-bit (half the memory traffic, faster sorts).
_KEYS_32: Final = 2**31

_IntArray = npt.NDArray[np.int64]
_Keys = npt.NDArray[np.signedinteger[Any]]


def cohesion(keys: _Keys, chunk_word: _Keys, first_of_word: npt.NDArray[np.bool_],
              pieces: _IntArray, span: int, parts: int) -> npt.NDArray[np.float64] | None:
    """Mean Jaccard of all pairs of sentence parts, for each chunk with at least two.

    ``keys`` are the sorted distinct ``(chunk * span + word) * parts + part``:
    a run of equal ``chunk_word`` is the parts of one chunk that hold one word,
    in ascending order, and every two of them share that word.  Each pair
    ``(a, b)`` of parts of chunk ``c`` is the key ``(c * width + a) * width + b``
    (``width`` a power of two, so that splitting a key is shifts and masks, and
    32-bit where the keys fit); sorted, the runs of equal keys count the
    shared words, and the pairs of a chunk come in ``(a, b)`` order.  ``None``
    when those keys would not fit an int64.
    """
    n = pieces.shape[0]
    multi = np.flatnonzero(pieces >= 2)
    if multi.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    bits = (int(pieces.max()) - 1).bit_length()
    if n << (2 * bits) >= 2**62:
        return None
    dtype = np.int32 if n << (2 * bits) < _KEYS_32 else np.int64
    chunk = divide(chunk_word, span)
    if multi.shape[0] < n:  # the chunks of one part make no pair
        keep = pieces[chunk] >= 2
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
    counted = pieces[multi].astype(np.float64)
    result: npt.NDArray[np.float64] = sums[multi] / (counted * (counted - 1) / 2)
    return result
