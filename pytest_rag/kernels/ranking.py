"""Ranking metrics over integer grade matrices.

A ranked list becomes one row of a ``[queries, K]`` matrix of gold grades
(0 for a non-relevant id and for the padding of a short list); the ideal
order is a second matrix holding each query's K highest gold grades.  Every
metric is then a few array operations over all queries at once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter, is_not, itemgetter, methodcaller

import numpy as np
import numpy.typing as npt

from .aggregate import FloatArray, f1

__all__ = [
    "CORPUS_COUNT_METRICS",
    "GradeMatrix",
    "first_relevant_rank",
    "grade_matrix",
    "ranking_metrics",
    "ranking_per_query",
    "top_k",
    "top_k_of_each",
]

_IntArray = npt.NDArray[np.int64]
#: Whole numbers up to 2**53 are floats exactly; a larger K is divided by exactly.
_EXACT_INT = 2 ** 53
_get = attrgetter("get")
_values = methodcaller("values")


def top_k(ids: Sequence[str], k: int) -> list[str]:
    """The first ``k`` ids after removing repeats (each id keeps its first rank).

    Only the head of the list is read: ``ids[:end]`` grows by the number of
    ids still missing until it holds ``k`` distinct ids (or is the whole list),
    so the usual list without repeats near the top costs ``k`` hashes.
    """
    end = k
    while True:
        head = dict.fromkeys(ids[:end])
        if len(head) >= k or end >= len(ids):
            return list(head)[:k]
        end += k - len(head)


@dataclass(frozen=True)
class GradeMatrix:
    """Grades of the top K of each scored query.

    ``rows`` are the indices (into the query list) of the scored queries: those
    with a ranked list and a gold chunk of grade > 0.
    """

    rows: _IntArray
    grades: _IntArray
    ideal: _IntArray
    relevant_count: _IntArray
    k: int


def grade_matrix(lists: Sequence[Sequence[str] | None],
                 relevant: Sequence[Mapping[str, int] | None], k: int, *,
                 tops: Sequence[Collection[str] | None] | None = None) -> GradeMatrix:
    """Build the grade matrices of the queries that have a list and relevant gold.

    ``tops``: the :func:`top_k` of each list (``None`` where the list is), when the
    caller has them already (:func:`top_k_of_each`); else they are found here.

    The per-query work is C-level ``map`` chains over all queries (the first K
    ids of each list de-duplicated by ``dict.fromkeys``, one mapped
    ``dict.get`` of each query's grades over them), Python running only for
    the lists with a repeat among their first K ids; counting the relevant
    ids, dropping the queries without one and sorting each query's gold
    grades for the ideal order are done on flat arrays for all queries at once.
    """
    size = len(lists)
    scorable = (np.fromiter(map(is_not, lists, repeat(None)), dtype=bool, count=size)
                & np.fromiter(map(bool, relevant), dtype=bool, count=size))
    candidates = np.flatnonzero(scorable)
    count = candidates.shape[0]
    if count == size:
        ranked_lists: list[Sequence[str]] = list(lists)  # type: ignore[arg-type]
        golds: list[Mapping[str, int]] = list(relevant)  # type: ignore[arg-type]
    else:
        ranked_lists = [lists[row] for row in candidates.tolist()]
        golds = [relevant[row] for row in candidates.tolist()]
    if tops is None:
        firsts, lengths = top_k_of_each(ranked_lists, k)
    else:
        firsts = [tops[row] for row in candidates.tolist()]
        lengths = np.fromiter(map(len, firsts), dtype=np.int64, count=count)
    flat = np.fromiter(chain.from_iterable(map(map, map(_get, golds), firsts,
                                               repeat(repeat(0)))),
                       dtype=np.int64, count=int(lengths.sum()))
    sizes = np.fromiter(map(len, golds), dtype=np.int64, count=count)
    grades = np.fromiter(chain.from_iterable(map(_values, golds)),
                         dtype=np.int64, count=int(sizes.sum()))
    owner = np.repeat(np.arange(count, dtype=np.int64), sizes)
    relevant_count = np.bincount(owner[grades > 0], minlength=count).astype(np.int64)
    # Each query's grades, highest first: its first min(K, size) are the
    # ideal list (grade-0 ids only pad it with zeros, as an empty slot does).
    ordered = _grades_descending(grades, owner, count)
    rank = np.arange(grades.shape[0], dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    # Columns past the longest list and the largest gold are all zero: the
    # matrices stop there, however large K is (K itself still divides P@K).
    width = max(1, min(k, max(int(lengths.max(initial=0)), int(sizes.max(initial=0)))))
    best = rank < width
    ideal = np.zeros((count, width), dtype=np.int64)
    ideal[owner[best], rank[best]] = ordered[best]
    scored = relevant_count > 0  # a query whose gold grades are all 0 is not scored
    return GradeMatrix(
        np.asarray(candidates, dtype=np.int64)[scored],
        _pack(flat, lengths, count, width)[scored],
        ideal[scored],
        relevant_count[scored],
        k,
    )


def top_k_of_each(lists: Sequence[Sequence[str]], k: int) -> tuple[list[Collection[str]],
                                                                    _IntArray]:
    """:func:`top_k` of every list (as a list or a dict's keys, in rank order) and
    their lengths: C-level ``map`` chains over all lists, Python running only
    for the lists with a repeat among their first K ids."""
    ranked_lists = list(lists)
    tops: list[Collection[str]] = list(map(dict.fromkeys, map(itemgetter(slice(0, k)),
                                                                ranked_lists)))
    lengths = np.fromiter(map(len, tops), dtype=np.int64, count=len(tops))
    if tops:
        full = np.fromiter(map(len, ranked_lists), dtype=np.int64, count=len(tops))
        cap = min(k, int(full.max()) + 1)  # K itself may not fit an int64
        _fill_repeats(tops, lengths, ranked_lists,
                      np.flatnonzero((lengths < cap) & (full > cap)).tolist(), k)
    return tops, lengths


def _fill_repeats(tops: list[Collection[str]], lengths: _IntArray,
                  ranked_lists: list[Sequence[str]], rows: list[int], k: int) -> None:
    """The top K of the ``rows`` whose first K ids hold a repeat, in place.

    All of them are first read to 2K ids at once (C-level maps); the few still
    short of K distinct ids among a longer list go through :func:`top_k`.
    """
    if not rows:
        return
    lists = list(map(ranked_lists.__getitem__, rows))
    heads = list(map(dict.fromkeys, map(itemgetter(slice(0, 2 * k)), lists)))
    found = list(map(itemgetter(slice(0, k)), map(list, heads)))
    for row, ranked, head, top in zip(rows, lists, heads, found):
        if len(head) < k and 2 * k < len(ranked):
            top = top_k(ranked, k)  # more than K repeats among the first 2K: read further
        tops[row] = top
    lengths[rows] = np.fromiter(map(len, map(tops.__getitem__, rows)), dtype=np.int64,
                                count=len(rows))


def _grades_descending(grades: _IntArray, owner: _IntArray, count: int) -> _IntArray:
    """``grades`` sorted by owner (ascending, as they come) and, within one owner,
    from the highest grade down: one sort of ``owner * span + (top - grade)``
    keys, decoded back to grades (``np.lexsort`` where those would not fit)."""
    if not grades.shape[0]:
        return grades
    top, low = int(grades.max()), int(grades.min())
    span = top - low + 1
    if span * max(count, 1) >= 2**62:
        return grades[np.lexsort((-grades, owner))]
    keys = owner * span + (top - grades)
    keys.sort()
    return top - keys % span


def _pack(flat: _IntArray, length: _IntArray, rows: int, k: int) -> _IntArray:
    matrix = np.zeros((rows, k), dtype=np.int64)
    if flat.shape[0]:
        row = np.repeat(np.arange(rows), length)
        starts = np.cumsum(length) - length
        column = np.arange(flat.shape[0]) - np.repeat(starts, length)
        matrix[row, column] = flat
    return matrix


def ranking_metrics(matrix: GradeMatrix) -> dict[str, FloatArray]:
    """P, R, F1, MRR, nDCG, hit and AP at K of each scored query.

    nDCG uses gain ``2^grade - 1`` and discount ``log2(rank + 1)``; IDCG the K
    highest gold grades.  AP divides the sum of P@i over relevant ranks
    ``i <= K`` by ``min(#relevant, K)``.  A miss scores 0 in MRR.
    """
    k = matrix.k
    grades = matrix.grades
    hits = grades > 0
    found = hits.sum(axis=1).astype(np.float64)
    if k <= _EXACT_INT:
        precision = found / k
    else:  # beyond a float's whole numbers: Python's exact int division, by count of hits
        per_count = np.array([count / k for count in range(grades.shape[1] + 1)])
        precision = per_count[found.astype(np.int64)]
    recall = found / matrix.relevant_count
    ranks = np.arange(1, grades.shape[1] + 1, dtype=np.float64)  # min(K, what any list holds)
    any_hit = hits.any(axis=1)
    first = np.argmax(hits, axis=1)
    mrr = np.where(any_hit, 1.0 / (first + 1), 0.0)
    discount = 1.0 / np.log2(ranks + 1.0)
    dcg = ((np.exp2(grades) - 1.0) * discount).sum(axis=1)
    idcg = ((np.exp2(matrix.ideal) - 1.0) * discount).sum(axis=1)
    ndcg = dcg / idcg
    precision_at = np.cumsum(hits, axis=1) / ranks
    # min(#relevant, K); K is capped first so that a huge K fits an int64.
    ap = (precision_at * hits).sum(axis=1) / np.minimum(
        matrix.relevant_count, min(k, int(matrix.relevant_count.max(initial=1))))
    return {
        "precision_at_k": precision,
        "recall_at_k": recall,
        "f1_at_k": f1(precision, recall),
        "mrr_at_k": mrr,
        "ndcg_at_k": ndcg,
        "hit_at_k": any_hit.astype(np.float64),
        "average_precision_at_k": ap,
    }


#: The metrics of :func:`ranking_metrics` that divide by (or are bounded by) the
#: number of relevant chunks in the corpus.
CORPUS_COUNT_METRICS = frozenset({"recall_at_k", "f1_at_k", "ndcg_at_k",
                                  "average_precision_at_k"})


def ranking_per_query(lists: Sequence[Sequence[str] | None],
                      relevant: Sequence[Mapping[str, int] | None], k: int,
                      uncounted: npt.NDArray[np.bool_] | None = None, *,
                      tops: Sequence[Collection[str] | None] | None = None
                      ) -> dict[str, FloatArray]:
    """:func:`ranking_metrics` of every query (NaN where a query is not scored);
    ``tops`` as for :func:`grade_matrix`.

    ``uncounted`` marks the queries whose grades cover only the listed chunks,
    not the corpus: such a query with a list is scored even when none of its
    ids is relevant (a miss: hit, MRR and precision 0), and the metrics of
    :data:`CORPUS_COUNT_METRICS` are NaN for it.
    """
    count = len(lists)
    matrix = grade_matrix(lists, relevant, k, tops=tops)
    values = {key: scatter(found, matrix.rows, count)
              for key, found in ranking_metrics(matrix).items()}
    if uncounted is not None and uncounted.any():
        listed = np.fromiter(map(is_not, lists, repeat(None)), dtype=bool, count=count)
        missed = uncounted & listed & np.isnan(values["hit_at_k"])
        for key, found in values.items():
            found[uncounted if key in CORPUS_COUNT_METRICS else missed] = (
                np.nan if key in CORPUS_COUNT_METRICS else 0.0)
    return values


def first_relevant_rank(ranked: Sequence[str], gold: Mapping[str, int]) -> int | None:
    """1-based rank of the first relevant id of the de-duplicated list, or ``None``."""
    for rank, chunk_id in enumerate(dict.fromkeys(ranked), start=1):
        if gold.get(chunk_id, 0) > 0:
            return rank
    return None


def scatter(values: FloatArray, rows: _IntArray, size: int) -> FloatArray:
    """Per-query array of ``size`` with ``values`` at ``rows`` and NaN elsewhere."""
    out = np.full(size, np.nan)
    out[rows] = values
    return out
