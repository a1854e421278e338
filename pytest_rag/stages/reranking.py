"""Stage 4, reranking: the reranked list at K, and what the reranker changed."""

from __future__ import annotations

from functools import partial
from operator import is_not

import numpy as np

from ..dataset.model import Dataset
from ..kernels.ranking import first_relevant_rank, ranking_per_query
from ..kernels.relevance import uncounted_queries
from ._base import RankedSettings, RankedStageEvaluator, ReportBuilder, explain_uncounted

__all__ = ["RerankingEvaluator"]

_given = partial(is_not, None)



class RerankingEvaluator(RankedStageEvaluator):
    """Reranking metrics: ``retrieved_ids`` is before, ``reranked_ids`` after.

    Takes the settings of :class:`~pytest_rag.stages._base.RankedStageEvaluator`
    (``k``, ``relevance_from_evidence``).

    Notes
    -----
    ``ndcg_at_k`` and ``mrr_at_k`` score the reranked list; the gains are
    after minus before per query, for queries with both lists and a chunk of
    grade > 0, then averaged.  ``first_relevant_rank_change`` compares the
    first relevant rank over the whole de-duplicated lists (``None`` for a
    query where either list has no relevant id); it is informational.
    ``candidate_set_preservation_rate`` compares the two whole lists as sets
    over the queries that have both, and needs no gold.  With grades derived
    from evidence against the listed chunks alone (no ``chunks``), a query
    whose list misses its evidence scores 0 in MRR and precision, and
    ``ndcg_at_k`` and ``ndcg_gain`` are ``None`` for it (the corpus's relevant
    chunks are not counted).

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
    def _compute(self, dataset: Dataset, settings: RankedSettings,
                 builder: ReportBuilder) -> None:
        k = settings.k
        queries = dataset.queries
        count = len(queries)
        entries = [dataset.run.get(query.id) for query in queries]
        before = [None if entry is None else entry.retrieved_ids for entry in entries]
        after = [None if entry is None else entry.reranked_ids for entry in entries]
        relevant = [query.relevant for query in queries]

        uncounted = uncounted_queries(dataset)
        after_metrics = ranking_per_query(after, relevant, k, uncounted)
        builder.set_per_query("ndcg_at_k", after_metrics["ndcg_at_k"])
        builder.set_per_query("mrr_at_k", after_metrics["mrr_at_k"])

        both = [a if b is not None else None for a, b in zip(after, before)]
        gains_after = ranking_per_query(both, relevant, k, uncounted)
        gains_before = ranking_per_query(
            [b if a is not None else None for a, b in zip(after, before)], relevant, k, uncounted)
        for gain, key in (("ndcg_gain", "ndcg_at_k"), ("mrr_gain", "mrr_at_k"),
                          ("precision_gain", "precision_at_k")):
            builder.set_per_query(gain, gains_after[key] - gains_before[key])
        explain_uncounted(builder, ("ndcg_at_k", "ndcg_gain") if any(map(_given, both))
                          else ("ndcg_at_k",), uncounted)

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
