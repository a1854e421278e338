"""Stage 3, retrieval: ranking metrics over chunk ids and token metrics over spans."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from ..dataset.model import Dataset
from ..kernels.aggregate import percentile, ratio
from ..kernels.evidence import evidence_query_indices, list_overlap
from ..kernels.ranking import (
    CORPUS_COUNT_METRICS,
    ranking_per_query,
    scatter,
    top_k_of_each,
)
from ..kernels.relevance import uncounted_queries
from ._base import RankedSettings, RankedStageEvaluator, ReportBuilder, explain_uncounted

__all__ = ["RetrievalEvaluator"]



class RetrievalEvaluator(RankedStageEvaluator):
    """Retrieval metrics of ``retrieved_ids`` at K.

    Takes the settings of :class:`~pytest_rag.stages._base.RankedStageEvaluator`
    (``k``, ``relevance_from_evidence``).

    Notes
    -----
    Ranking metrics are ``None`` for a query without a chunk of grade > 0 or
    without ``retrieved_ids``.  With grades derived from evidence against the
    retrieved chunks alone (no ``chunks``), a query whose list misses its
    evidence scores 0 in hit, MRR and precision, and recall, F1, nDCG and AP
    are ``None`` for every such query (the corpus's relevant chunks are not
    counted); token metrics for a query without
    ``expected_evidence`` (with a token) or without ``retrieved_ids``.  A
    repeated id counts once, at its first rank; ``precision_at_k`` always
    divides by K.  Latency percentiles use numpy's linear interpolation.

    Examples
    --------
    >>> report = RetrievalEvaluator(k=2).evaluate(
    ...     retrieved_ids={"q1": ["c2", "c1", "c3"]}, relevant={"q1": ["c1", "c3"]})
    >>> report["precision_at_k"], report["recall_at_k"], report["mrr_at_k"]
    (0.5, 0.5, 0.5)
    """

    stage = "retrieval"
    inputs = frozenset({"documents", "chunks", "queries", "relevant", "expected_evidence",
                        "retrieved_ids", "retrieval_latency_ms"})
    def _compute(self, dataset: Dataset, settings: RankedSettings,
                 builder: ReportBuilder) -> None:
        k = settings.k
        queries = dataset.queries
        lists = [None if (entry := dataset.run.get(query.id)) is None else entry.retrieved_ids
                 for query in queries]
        uncounted = uncounted_queries(dataset)
        # The top K of each list, found once for the ranking and the token metrics.
        listed = [(i, ids) for i, ids in enumerate(lists) if ids is not None]
        tops: list[Collection[str] | None] = [None] * len(lists)
        for (i, _), top in zip(listed, top_k_of_each([ids for _, ids in listed], k)[0]):
            tops[i] = top
        for key, values in ranking_per_query(lists, [query.relevant for query in queries], k,
                                             uncounted, tops=tops).items():
            builder.set_per_query(key, values)
        explain_uncounted(builder, CORPUS_COUNT_METRICS, uncounted)
        self._token_metrics(dataset, tops, builder)
        latencies = [entry.retrieval_latency_ms for entry in dataset.run.values()]
        builder.set("p50_latency_ms", percentile(latencies, 50))
        builder.set("p95_latency_ms", percentile(latencies, 95))

    @staticmethod
    def _token_metrics(dataset: Dataset, tops: list[Collection[str] | None],
                       builder: ReportBuilder) -> None:
        """The token metrics of each query's top K (``tops``; ``None``: no list)."""
        if not dataset.chunks:
            return
        has_evidence = evidence_query_indices(dataset)
        scored = [i for i, ids in enumerate(tops) if ids is not None and has_evidence[i]]
        if not scored:
            return
        found = list_overlap(dataset, scored, [tops[i] for i in scored],  # type: ignore[misc]
                             "retrieved_ids")
        rows = np.asarray(scored, dtype=np.int64)
        count = len(dataset.queries)
        precision = ratio(found.inter, found.listed)
        precision[found.listed == 0] = 0.0
        builder.set_per_query("token_recall", scatter(ratio(found.inter, found.gold), rows, count))
        builder.set_per_query("token_precision", scatter(precision, rows, count))
        builder.set_per_query("token_iou", scatter(ratio(found.inter, found.union), rows, count))
        builder.set_per_query("complete_evidence_recall",
                              scatter(ratio(found.spans_whole, found.spans), rows, count))
