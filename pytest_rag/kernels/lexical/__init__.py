"""The lexical chunking metrics on integer arrays: word ids, then sorting and counting.

``lexical_cohesion``, ``lexical_boundary_clarity`` and ``lexical_chunk_stickiness``
(their definitions are in :class:`~pytest_rag.stages.chunking.ChunkingEvaluator`)
compare sets of lowercase tokens.  Here every token becomes an integer id, and
every set operation a sort of integer keys:

1. **Word ids.**  Each token (and each part of a token that a chunk edge cuts)
   is a character range of its document.  Its lowercase code points come from
   a lookup table of the code points present; its id from a polynomial hash of
   them (prefix sums, 64-bit wrapping arithmetic), grouped with
   ``numpy.unique``.  The ids are then *checked*: every range is compared,
   code point by code point, with the first range of its hash group, so two
   different words never share an id.  Should a check fail (a hash
   collision), that block of documents is done again with a Python
   dictionary of the lowercase strings.  The few ranges holding a code point
   whose lowercase is context dependent (capital sigma) or longer than one
   code point are lowercased by ``str.lower`` itself, so that every id stands
   for exactly ``token.lower()``.
2. **Sets and intersections.**  A chunk's tokens are the document's tokens it
   overlaps, its first and last replaced by their cut parts.  Distinct
   ``(set, word)`` keys come from one ``numpy.unique``; the intersection of
   two sets is the number of keys they share, counted by sorting both key
   lists together.  Neighbour pairs (stickiness, clarity) share keys through
   their pair number; the sentence pairs of a chunk (cohesion) through every
   pair of sentences that holds a word, generated per ``(chunk, word)`` group
   (:mod:`pytest_rag.kernels.cohesion`; a chunk needing too many is not
   measured, :attr:`LexicalMetrics.unmeasured`).

Documents are processed in blocks of about a million characters, so memory
stays a few arrays of that size whatever the corpus.  On a machine with two
cores or more, two threads do the blocks (:data:`THREADS`): two blocks in
memory at a time, and the same values in the same order as one thread gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ...dataset.model import Dataset, chunk_spans
from ..aggregate import mean_or_none
from ..cohesion import Cohesion
from ..cohesion import cohesion as _cohesion
from ..int_keys import divide as _divide
from ..int_keys import group_starts as _group_starts
from ..int_keys import jaccard_counts as _jaccard
from ..int_keys import ranges as _ranges
from ..positions import positions_of
from .words import (
    BlockWords,
    HashPowers,
    block_words,
    cut_words,
    expand,
    sentence_starts,
    unique_sorted,
)

__all__ = ["EDGE_TOKENS", "LexicalMetrics", "lexical_metrics", "sentence_starts"]

#: Tokens on each side of a boundary for ``lexical_boundary_clarity``.
EDGE_TOKENS: Final = 12
#: Characters of documents hashed together (a larger document is a block of its own).
BLOCK_CHARS: Final = 1 << 20
#: Blocks done at a time, each in a thread (fewer on a machine with fewer cores).
THREADS: Final = 2
#: Integer keys below this are 32-bit (half the memory traffic, faster sorts).
_KEYS_32: int = 2**31

_IntArray = npt.NDArray[np.int64]
#: Integer keys, 32 or 64-bit (see ``_KEYS_32``).
_Keys = npt.NDArray[np.signedinteger[Any]]


@dataclass(frozen=True)
class LexicalMetrics:
    """The three lexical chunking metrics, and the chunks ``lexical_cohesion`` left out.

    Attributes
    ----------
    values:
        ``lexical_cohesion``, ``lexical_boundary_clarity`` and
        ``lexical_chunk_stickiness``; ``lexical_cohesion`` is ``None`` when a
        chunk was not measured.
    unmeasured:
        ``(chunk row, counts)`` of each chunk whose cohesion needed more
        (pair of distinct sentence parts, shared word) counts than
        :data:`pytest_rag.kernels.cohesion.PAIR_WORD_LIMIT`, in chunk order.
    """

    values: dict[str, float | None]
    unmeasured: tuple[tuple[int, int], ...] = ()


def _blocks(docs: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    blocks: list[list[int]] = []
    used = BLOCK_CHARS
    for doc, size in zip(docs, sizes):
        if used + size > BLOCK_CHARS or not blocks:
            blocks.append([])
            used = 0
        blocks[-1].append(doc)
        used += size
    return blocks


def _pair_counts(left_keys: _Keys, right_keys: _Keys) -> _Keys:
    """Keys present in both lists (each list without repeats): the sorted shared keys.

    Each list is usually sorted already (chunks in document order), and a
    stable sort (timsort for 64-bit keys) then merges the two runs in linear time.
    """
    both = np.concatenate([left_keys, right_keys])
    both.sort(kind="stable")
    shared: _Keys = both[1:][both[1:] == both[:-1]]
    return shared


def lexical_metrics(dataset: Dataset, scope: _IntArray, pairs: tuple[_IntArray, _IntArray]
                    ) -> LexicalMetrics | None:
    """``lexical_cohesion``, ``lexical_boundary_clarity`` and ``lexical_chunk_stickiness``.

    ``scope`` are the documents that have a chunk, ``pairs`` the ``(left, right)``
    chunk rows of the neighbour pairs (two chunks of one document).  Every set
    compared belongs to one document, so each block of documents is done on
    its own (two at a time, in threads, where there are the cores): memory and
    sort sizes stay those of a block or two, and time grows linearly with the
    corpus.  ``None`` when a block's integer keys would not fit an int64 (the
    caller then uses Python sets).
    """
    positions = positions_of(dataset)
    documents = dataset.documents
    _, starts, ends = chunk_spans(dataset.chunks)
    n = len(starts)
    chunk_start = np.fromiter(starts, dtype=np.int64, count=n)
    chunk_end = np.fromiter(ends, dtype=np.int64, count=n)
    lo, hi, doc_of = positions.chunk_lo, positions.chunk_hi, positions.chunk_doc
    scope_list = scope.tolist()
    blocks = _blocks(scope_list, [len(documents[doc].text) for doc in scope_list])
    # The chunks and the pairs of each block, found with one sort each.
    block_of_doc = np.full(len(documents), -1, dtype=np.int64)
    for number, block in enumerate(blocks):
        block_of_doc[block] = number
    chunk_order = np.argsort(block_of_doc[doc_of], kind="stable")
    chunk_edges = np.searchsorted(block_of_doc[doc_of][chunk_order], np.arange(len(blocks) + 1))
    left, right = pairs
    pair_order = np.argsort(block_of_doc[doc_of[left]], kind="stable")
    pair_edges = np.searchsorted(block_of_doc[doc_of[left]][pair_order],
                                 np.arange(len(blocks) + 1))
    local = np.full(n, -1, dtype=np.int64)
    token_base = np.zeros(len(documents), dtype=np.int64)  # global token -> block token
    char_of_doc = np.zeros(len(documents), dtype=np.int64)  # start of a text in its block
    powers = HashPowers()  # shared by every document and block hashed below

    def block_values(number: int) -> tuple[_IntArray, _BlockValues | None]:
        """The block's chunk rows and its metrics (``None``: keys too large)."""
        block = blocks[number]
        words = dataset.corpus_cached(f"lexical_words:{block}",
                                       partial(_words_of_block, block=block, powers=powers))
        token_base[block] = words.token_base - positions.base[block]
        char_base = words.char_base
        token_start, token_end = words.token_start, words.token_end

        rows = chunk_order[chunk_edges[number]:chunk_edges[number + 1]]
        local[rows] = np.arange(rows.shape[0])
        b_lo = lo[rows] + token_base[doc_of[rows]]  # block token intervals
        b_hi = hi[rows] + token_base[doc_of[rows]]
        char_of_doc[block] = char_base
        b_start = chunk_start[rows] + char_of_doc[doc_of[rows]]  # in the block's text
        b_end = chunk_end[rows] + char_of_doc[doc_of[rows]]
        sizes = b_hi - b_lo
        nonempty = np.flatnonzero(sizes > 0)
        # The cut parts of the edge tokens of the chunks.
        heads = nonempty[token_start[b_lo[nonempty]] < b_start[nonempty]]
        tails = nonempty[token_end[b_hi[nonempty] - 1] > b_end[nonempty]]
        cut_lo = np.concatenate([b_start[heads],
                                 np.maximum(token_start[b_hi[tails] - 1], b_start[tails])])
        cut_hi = np.concatenate([np.minimum(token_end[b_lo[heads]], b_end[heads]),
                                 b_end[tails]])
        word, cut_word, vocabulary = cut_words(words, documents, block, cut_lo, cut_hi, powers)
        head_word, tail_word = cut_word[:heads.shape[0]], cut_word[heads.shape[0]:]
        pair_rows = pair_order[pair_edges[number]:pair_edges[number + 1]]
        return rows, _block_metrics(word, words.previous, words.sentence_rank, b_lo, b_hi,
                                    heads, head_word, tails, tail_word, local[left[pair_rows]],
                                    local[right[pair_rows]], vocabulary)

    cohesion: list[npt.NDArray[np.float64]] = []
    clarity: list[npt.NDArray[np.float64]] = []
    stickiness: list[npt.NDArray[np.float64]] = []
    unmeasured: list[tuple[int, int]] = []
    for rows, values in _in_threads(block_values, len(blocks), lambda found: found[1] is None):
        if values is None:
            return None  # keys would not fit an int64: the caller's set-based path
        found = values[0]
        cohesion.append(found.values[~np.isnan(found.values)])
        unmeasured += zip(rows[found.over].tolist(), found.pair_words.tolist())
        clarity.append(values[1])
        stickiness.append(values[2])
    unmeasured.sort()
    return LexicalMetrics({"lexical_cohesion": None if unmeasured else _mean_of(cohesion),
                           "lexical_boundary_clarity": _mean_of(clarity),
                           "lexical_chunk_stickiness": _mean_of(stickiness)},
                          tuple(unmeasured))


_BlockValues = tuple[Cohesion, npt.NDArray[np.float64], npt.NDArray[np.float64]]
_Result = TypeVar("_Result")


def _in_threads(work: Callable[[int], _Result], count: int,
                last: Callable[[_Result], bool]) -> list[_Result]:
    """``[work(0), work(1), ...]`` up to ``work(count - 1)`` or the first result for
    which ``last`` is true, whichever comes first, computed by :data:`THREADS` threads
    where the machine has that many cores: the blocks write to no shared place (each
    to its own rows and documents), and numpy lets go of the interpreter in its array
    work.  At most one block per thread is under way, so a stop wastes at most those;
    the results are the same, in the same order, either way."""
    threads = min(THREADS, count, _cores())
    results: list[_Result] = []
    if threads < 2:
        for number in range(count):
            results.append(work(number))
            if last(results[-1]):
                break
        return results
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    with ThreadPoolExecutor(threads, thread_name_prefix="pytest-rag-lexical") as pool:
        under_way: deque[Future[_Result]] = deque(
            pool.submit(work, number) for number in range(threads))
        following = threads
        while under_way:
            results.append(under_way.popleft().result())
            if last(results[-1]):
                break  # the block under way ends unread: what it raises is not looked at
            if following < count:
                under_way.append(pool.submit(work, following))
                following += 1
    return results


def _cores() -> int:
    """The cores this process may run on."""
    import os

    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _words_of_block(dataset: Dataset, *, block: list[int], powers: HashPowers) -> BlockWords:
    """The word ids of one block of the dataset's documents (kept with the corpus)."""
    return block_words(dataset.documents, block, powers)


def _mean_of(parts: list[npt.NDArray[np.float64]]) -> float | None:
    return mean_or_none(np.concatenate(parts)) if parts else None


def _block_metrics(word: _IntArray, previous: _IntArray, sentence_rank: _IntArray,
                   lo: _IntArray, hi: _IntArray, heads: _IntArray, head_word: _IntArray,
                   tails: _IntArray, tail_word: _IntArray, left: _IntArray, right: _IntArray,
                   vocabulary: int
                   ) -> tuple[Cohesion, npt.NDArray[np.float64],
                              npt.NDArray[np.float64]] | None:
    """Cohesion of each chunk with two sentence parts or more, clarity and stickiness of
    each pair, for the chunks ``[lo, hi)`` (tokens of one block) and the pairs
    ``(left, right)`` of those chunks."""
    n = lo.shape[0]
    sizes = hi - lo
    # Every token of every chunk, its first and last replaced by their cut parts.
    owner, position = expand(lo, sizes)
    occurrence = word[position]
    offsets = _group_starts(sizes)
    occurrence[offsets[heads]] = head_word
    occurrence[offsets[tails] + sizes[tails] - 1] = tail_word
    nonempty = sizes > 0
    piece = sentence_rank[position]
    piece -= np.repeat(sentence_rank[lo[nonempty]], sizes[nonempty])  # the part in the chunk
    pieces = np.zeros(n, dtype=np.int64)
    pieces[nonempty] = sentence_rank[hi[nonempty] - 1] - sentence_rank[lo[nonempty]] + 1
    most = max(int(pieces.max(initial=0)), 1)
    # Powers of two where the keys fit, so that splitting a key is a shift and
    # a mask instead of an integer division; the order of the keys, and so
    # every result, is the same with any span and parts large enough.
    span, parts = 1 << (max(vocabulary, 1) - 1).bit_length(), 1 << (most - 1).bit_length()
    if n * span * parts >= 2**62:
        span, parts = max(vocabulary, 1), most
        if n * span * parts >= 2**62:
            return None
    # 32-bit keys where they fit (a block is about a million characters, so
    # they mostly do): half the memory traffic, and sorts several times faster.
    key_type = np.int32 if n * span * parts < _KEYS_32 else np.int64
    token_key: _Keys = owner.astype(key_type)  # (chunk, word) of every token
    token_key *= span
    token_key += occurrence
    # One sort gives the distinct (chunk, word, part) keys, grouped by (chunk, word).
    keys = token_key * parts
    keys += piece
    keys = unique_sorted(keys)
    chunk_word = _divide(keys, parts)
    first_of_word = np.empty(keys.shape[0], dtype=bool)
    if keys.shape[0]:
        first_of_word[0] = True
        np.not_equal(chunk_word[1:], chunk_word[:-1], out=first_of_word[1:])
    chunk_keys = chunk_word[first_of_word]  # distinct (chunk, word), sorted

    # Stickiness and clarity: the distinct words of each side of each neighbour pair.
    count_pairs = left.shape[0]
    as_left: _Keys = np.full(n, -1, dtype=key_type)
    as_right: _Keys = np.full(n, -1, dtype=key_type)
    as_left[left] = np.arange(count_pairs)
    as_right[right] = np.arange(count_pairs)
    key_chunk = _divide(chunk_keys, span)
    chunk_words = np.bincount(key_chunk, minlength=n).astype(np.float64)
    cut = np.zeros(n, dtype=bool)
    cut[heads] = True
    cut[tails] = True
    fast, fast_inter = _adjacent_overlap(previous, lo, hi, cut, left, right)
    inter = np.zeros(count_pairs, dtype=np.float64)
    inter[fast] = fast_inter
    if not fast.all():  # the other pairs: their keys, merged
        slow_left, slow_right = as_left.copy(), as_right.copy()
        slow_left[left[fast]] = -1
        slow_right[right[fast]] = -1
        inter += _shared_words(chunk_keys, key_chunk, slow_left, slow_right, span, count_pairs)
    stickiness = _jaccard(inter, chunk_words[left], chunk_words[right])
    edge = np.minimum(EDGE_TOKENS, sizes)
    tail_keys = unique_sorted(token_key[_ranges(offsets + sizes - edge, edge)])
    head_keys = unique_sorted(token_key[_ranges(offsets, edge)])
    tail_words = np.bincount(_divide(tail_keys, span), minlength=n).astype(np.float64)
    head_words = np.bincount(_divide(head_keys, span), minlength=n).astype(np.float64)
    clarity = 1.0 - _neighbour_jaccard(tail_keys, head_keys, as_left, as_right, span,
                                       count_pairs, tail_words[left], head_words[right])
    cohesion = _cohesion(keys, chunk_word, first_of_word, pieces, span, parts)
    if cohesion is None:
        return None
    return cohesion, clarity, stickiness


def _adjacent_overlap(previous: _IntArray, lo: _IntArray, hi: _IntArray,
                      cut: npt.NDArray[np.bool_], left: _IntArray, right: _IntArray
                      ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """The shared words of the neighbour pairs that follow each other, without sorting.

    A pair is done here when neither chunk has a cut edge token and the right
    chunk starts inside the left one or where it ends, and ends at or after it
    (``lo_L <= lo_R <= hi_L <= hi_R``, both holding a token): the usual
    sliding or back-to-back windows.  Then a word of the right chunk is also
    in the left one exactly when its first token ``t`` in the right chunk
    (``previous[t] < lo_R``) lies in the left one (``t < hi_L``) or its
    previous token does (``previous[t] >= lo_L``: the latest token of the word
    before ``lo_R``, and ``lo_R <= hi_L``).  Returns which pairs were done and
    their counts.
    """
    l_lo, l_hi, r_lo, r_hi = lo[left], hi[left], lo[right], hi[right]
    fast = (~cut[left] & ~cut[right] & (l_lo < l_hi) & (r_lo < r_hi)
            & (l_lo <= r_lo) & (r_lo <= l_hi) & (l_hi <= r_hi))
    rows = np.flatnonzero(fast)
    sizes = r_hi[rows] - r_lo[rows]
    token = _ranges(r_lo[rows], sizes)  # every token of the right chunks
    before = previous[token]
    shared = before < np.repeat(r_lo[rows], sizes)  # first in the right chunk...
    shared &= (token < np.repeat(l_hi[rows], sizes)) | (before >= np.repeat(l_lo[rows], sizes))
    # Each pair's tokens are one run (every run holds a token): its count is a sum.
    inter = np.add.reduceat(shared, _group_starts(sizes), dtype=np.int64).astype(np.float64)
    return fast, inter


def _shared_words(keys: _Keys, key_chunk: _Keys, as_left: _Keys, as_right: _Keys, span: int,
                  count: int) -> npt.NDArray[np.float64]:
    """Words shared by the two chunks of each pair (``as_left``/``as_right``: the pair of
    a chunk, -1 for none), from their sorted ``chunk * span + word`` keys."""
    word = keys - key_chunk * span
    left_pair, right_pair = as_left[key_chunk], as_right[key_chunk]
    shared = _pair_counts(left_pair[left_pair >= 0] * span + word[left_pair >= 0],
                          right_pair[right_pair >= 0] * span + word[right_pair >= 0])
    return np.bincount(_divide(shared, span), minlength=count).astype(np.float64)


def _neighbour_jaccard(left_keys: _Keys, right_keys: _Keys, as_left: _Keys, as_right: _Keys,
                       span: int, count: int, left_size: npt.NDArray[np.float64],
                       right_size: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Jaccard of the left chunk's ``left_keys`` set and the right chunk's ``right_keys`` set."""
    left_chunk, right_chunk = _divide(left_keys, span), _divide(right_keys, span)
    left_pair, right_pair = as_left[left_chunk], as_right[right_chunk]
    a, b = left_pair >= 0, right_pair >= 0
    shared = _pair_counts(left_pair[a] * span + (left_keys - left_chunk * span)[a],
                          right_pair[b] * span + (right_keys - right_chunk * span)[b])
    inter = np.bincount(_divide(shared, span), minlength=count).astype(np.float64)
    return _jaccard(inter, left_size, right_size)
