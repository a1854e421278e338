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

import numpy as np
import numpy.typing as npt

from .stages._common import FloatArray, f1

__all__ = ["GradeMatrix", "grade_matrix", "ranking_metrics", "top_k", "first_relevant_rank"]

_IntArray = npt.NDArray[np.int64]
#: Whole numbers up to 2**53 are floats exactly; a larger K is divided by exactly.
_EXACT_INT = 2 ** 53


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
                 relevant: Sequence[Mapping[str, int] | None], k: int) -> GradeMatrix:
    """Build the grade matrices of the queries that have a list and relevant gold.

    One pass over the queries does only C-level calls per query (the top K of
    a list without a repeat near its head, one mapped ``dict.get`` over it)
    and keeps no per-query object; counting the relevant ids, dropping the
    queries without one and sorting each query's gold grades for the ideal
    order are done on flat arrays for all queries at once.
    """
    candidates: list[int] = []
    golds: list[Mapping[str, int]] = []
    flat: list[int] = []
    lengths: list[int] = []
    extend, add_length = flat.extend, lengths.append
    zeros = repeat(0)
    for index, (ranked, gold) in enumerate(zip(lists, relevant)):
        if ranked is None or not gold:
            continue
        top: Collection[str] = dict.fromkeys(ranked[:k])
        if len(top) < k < len(ranked):
            top = top_k(ranked, k)  # a repeat among the first K: read further
        extend(map(gold.get, top, zeros))
        add_length(len(top))
        candidates.append(index)
        golds.append(gold)
    count = len(candidates)
    sizes = np.fromiter(map(len, golds), dtype=np.int64, count=count)
    grades = np.fromiter(chain.from_iterable(gold.values() for gold in golds),
                         dtype=np.int64, count=int(sizes.sum()))
    owner = np.repeat(np.arange(count, dtype=np.int64), sizes)
    relevant_count = np.bincount(owner[grades > 0], minlength=count).astype(np.int64)
    # Each query's grades, highest first: its first min(K, size) are the
    # ideal list (grade-0 ids only pad it with zeros, as an empty slot does).
    order = np.lexsort((-grades, owner))
    rank = np.arange(grades.shape[0], dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    # Columns past the longest list and the largest gold are all zero: the
    # matrices stop there, however large K is (K itself still divides P@K).
    width = max(1, min(k, max(max(lengths, default=0), int(sizes.max()) if count else 0)))
    best = rank < width
    ideal = np.zeros((count, width), dtype=np.int64)
    ideal[owner[best], rank[best]] = grades[order][best]
    scored = relevant_count > 0  # a query whose gold grades are all 0 is not scored
    return GradeMatrix(
        np.asarray(candidates, dtype=np.int64)[scored],
        _pack(flat, np.asarray(lengths, dtype=np.int64), count, width)[scored],
        ideal[scored],
        relevant_count[scored],
        k,
    )


def _pack(flat: list[int], length: _IntArray, rows: int, k: int) -> _IntArray:
    matrix = np.zeros((rows, k), dtype=np.int64)
    if flat:
        row = np.repeat(np.arange(rows), length)
        starts = np.cumsum(length) - length
        column = np.arange(len(flat)) - np.repeat(starts, length)
        matrix[row, column] = np.asarray(flat, dtype=np.int64)
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
