"""Stage 4, reranking: the reranked list at K, and what the reranker changed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..dataset.model import Dataset
from ..kernels.ranking import first_relevant_rank, grade_matrix, ranking_metrics, scatter
from ._base import RankedStageEvaluator, ReportBuilder

__all__ = ["RerankingEvaluator"]



class RerankingEvaluator(RankedStageEvaluator):
    """Reranking metrics: ``retrieved_ids`` is before, ``reranked_ids`` after.

    Parameters
    ----------
    k:
        Cut-off.  ``None``: the dataset's ``params.k``, else 5.
    relevance_from_evidence:
        Grade chunks from the gold spans where ``relevant`` is absent; see
        :class:`~pytest_rag.stages._base.RankedStageEvaluator`.

    Notes
    -----
    ``ndcg_at_k`` and ``mrr_at_k`` score the reranked list; the gains are
    after minus before per query, for queries with both lists and a chunk of
    grade > 0, then averaged.  ``first_relevant_rank_change`` compares the
    first relevant rank over the whole de-duplicated lists (``None`` for a
    query where either list has no relevant id); it is informational.
    ``candidate_set_preservation_rate`` compares the two whole lists as sets
    over the queries that have both, and needs no gold.

    Examples
    --------
    >>> report = RerankingEvaluator(k=2).evaluate(
    ...     retrieved_ids={"q1": ["a", "b"]}, reranked_ids={"q1": ["b", "a"]},
    ...     relevant={"q1": ["b"]})
    >>> report["mrr_at_k"], report["mrr_gain"], report["first_relevant_rank_change"]
    (1.0, 0.5, 1.0)
    """

    stage = "reranking"
    inputs = frozenset({"documents", "chunks", "queries", "relevant", "expected_evidence",
                        "retrieved_ids", "reranked_ids"})
    def _compute(self, dataset: Dataset, settings: Mapping[str, Any],
                 builder: ReportBuilder) -> None:
        k = settings["k"]
        queries = dataset.queries
        count = len(queries)
        entries = [dataset.run.get(query.id) for query in queries]
        before = [None if entry is None else entry.retrieved_ids for entry in entries]
        after = [None if entry is None else entry.reranked_ids for entry in entries]
        relevant = [query.relevant for query in queries]

        after_matrix = grade_matrix(after, relevant, k)
        after_metrics = ranking_metrics(after_matrix)
        builder.set_per_query("ndcg_at_k", scatter(after_metrics["ndcg_at_k"], after_matrix.rows, count))
        builder.set_per_query("mrr_at_k", scatter(after_metrics["mrr_at_k"], after_matrix.rows, count))

        both = [a if b is not None else None for a, b in zip(after, before)]
        paired_after = grade_matrix(both, relevant, k)
        paired_before = grade_matrix([b if a is not None else None for a, b in zip(after, before)],
                                     relevant, k)
        gains_after = ranking_metrics(paired_after)
        gains_before = ranking_metrics(paired_before)
        for gain, key in (("ndcg_gain", "ndcg_at_k"), ("mrr_gain", "mrr_at_k"),
                          ("precision_gain", "precision_at_k")):
            builder.set_per_query(gain, scatter(gains_after[key] - gains_before[key],
                                                paired_after.rows, count))

        change = np.full(count, np.nan)
        preserved = np.full(count, np.nan)
        for index, (old, new, gold) in enumerate(zip(before, after, relevant)):
            if old is None or new is None:
                continue
            preserved[index] = float(set(old) == set(new))
            if gold:
                rank_before = first_relevant_rank(old, gold)
                rank_after = first_relevant_rank(new, gold)
                if rank_before is not None and rank_after is not None:
                    change[index] = rank_before - rank_after
        builder.set_per_query("first_relevant_rank_change", change)
        builder.set_per_query("candidate_set_preservation_rate", preserved)
