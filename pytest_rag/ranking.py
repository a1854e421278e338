"""Ranking metrics over integer grade matrices.

A ranked list becomes one row of a ``[queries, K]`` matrix of gold grades
(0 for a non-relevant id and for the padding of a short list); the ideal
order is a second matrix holding each query's K highest gold grades.  Every
metric is then a few array operations over all queries at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .stages._common import FloatArray, f1

__all__ = ["GradeMatrix", "grade_matrix", "ranking_metrics", "top_k", "first_relevant_rank"]

_IntArray = npt.NDArray[np.int64]


def top_k(ids: Sequence[str], k: int) -> list[str]:
    """The first ``k`` ids after removing repeats (each id keeps its first rank)."""
    return list(dict.fromkeys(ids))[:k]


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
    """Build the grade matrices of the queries that have a list and relevant gold."""
    rows: list[int] = []
    flat: list[int] = []
    lengths: list[int] = []
    ideal_flat: list[int] = []
    ideal_lengths: list[int] = []
    counts: list[int] = []
    for index, (ranked, gold) in enumerate(zip(lists, relevant)):
        if ranked is None or not gold:
            continue
        positive = [grade for grade in gold.values() if grade > 0]
        if not positive:
            continue
        rows.append(index)
        top = top_k(ranked, k)
        get = gold.get
        flat.extend(get(chunk_id, 0) for chunk_id in top)
        lengths.append(len(top))
        best = sorted(positive, reverse=True)[:k]
        ideal_flat.extend(best)
        ideal_lengths.append(len(best))
        counts.append(len(positive))
    scored = len(rows)
    return GradeMatrix(
        np.asarray(rows, dtype=np.int64),
        _pack(flat, lengths, scored, k),
        _pack(ideal_flat, ideal_lengths, scored, k),
        np.asarray(counts, dtype=np.int64),
        k,
    )


def _pack(flat: list[int], lengths: list[int], rows: int, k: int) -> _IntArray:
    matrix = np.zeros((rows, k), dtype=np.int64)
    if flat:
        length = np.asarray(lengths, dtype=np.int64)
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
    precision = found / k
    recall = found / matrix.relevant_count
    ranks = np.arange(1, k + 1, dtype=np.float64)
    any_hit = hits.any(axis=1)
    first = np.argmax(hits, axis=1)
    mrr = np.where(any_hit, 1.0 / (first + 1), 0.0)
    discount = 1.0 / np.log2(ranks + 1.0)
    dcg = ((np.exp2(grades) - 1.0) * discount).sum(axis=1)
    idcg = ((np.exp2(matrix.ideal) - 1.0) * discount).sum(axis=1)
    ndcg = dcg / idcg
    precision_at = np.cumsum(hits, axis=1) / ranks
    ap = (precision_at * hits).sum(axis=1) / np.minimum(matrix.relevant_count, k)
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
