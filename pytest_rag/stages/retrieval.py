"""Stage 3, retrieval: ranking metrics over chunk ids and token metrics over spans."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..data import Dataset
from ..errors import DatasetError
from ..intervals import containing, intersection_sizes
from ..ranking import grade_matrix, ranking_metrics, scatter, top_k
from ._base import StageEvaluator, check_k
from ._common import ReportBuilder, percentile, ratio

__all__ = ["RetrievalEvaluator", "token_overlap"]

DEFAULT_K = 5


def token_overlap(dataset: Dataset, lists: list[tuple[int, list[str]]], field: str
                  ) -> dict[str, Any]:
    """Token sets of ranked or packed chunk lists against each query's gold spans.

    ``lists`` holds ``(query index, chunk ids)`` of the queries that have both a
    list and gold evidence with at least one token.  Returns, per query of
    ``lists`` (in that order), the sizes ``|R|``, ``|G|``, ``|R ∩ G|``,
    ``|R ∪ G|``, the number of gold spans held whole by one listed chunk, the
    number of gold spans, plus the flat chunk indices and owners.

    Raises
    ------
    DatasetError
        For a listed id that is not a known chunk (its span is needed).
    """
    positions = dataset.positions
    index = dataset.chunk_index
    owners: list[int] = []
    chunk_rows: list[int] = []
    for slot, (query, ids) in enumerate(lists):
        for rank, chunk_id in enumerate(ids):
            row = index.get(chunk_id)
            if row is None:
                query_id = dataset.queries[query].id
                raise DatasetError(dataset.source, f"run.{query_id}.{field}[{rank}]",
                                   f"unknown chunk {chunk_id!r}: token metrics need its span")
            chunk_rows.append(row)
        owners.extend([slot] * len(ids))
    groups = len(lists)
    chunk_idx = np.asarray(chunk_rows, dtype=np.int64)
    owner = np.asarray(owners, dtype=np.int64)
    slot_of_query = np.full(len(dataset.queries), -1, dtype=np.int64)
    slot_of_query[[query for query, _ in lists]] = np.arange(groups)
    ev_slot = slot_of_query[positions.evidence_query] if positions.evidence_query.size else \
        np.zeros(0, dtype=np.int64)
    keep = (ev_slot >= 0) & (positions.evidence_hi > positions.evidence_lo)
    ev_lo, ev_hi, ev_owner = positions.evidence_lo[keep], positions.evidence_hi[keep], ev_slot[keep]
    r_lo, r_hi = positions.chunk_lo[chunk_idx], positions.chunk_hi[chunk_idx]
    size_r, size_g, inter, union = intersection_sizes(r_lo, r_hi, owner, ev_lo, ev_hi, ev_owner, groups)
    whole = np.zeros(ev_lo.shape[0], dtype=bool)
    for slot in np.unique(ev_owner).tolist():
        spans = ev_owner == slot
        mine = owner == slot
        whole[spans] = containing(r_lo[mine], r_hi[mine], ev_lo[spans], ev_hi[spans])
    return {
        "size_r": size_r, "size_g": size_g, "inter": inter, "union": union,
        "whole": np.bincount(ev_owner, weights=whole, minlength=groups),
        "spans": np.bincount(ev_owner, minlength=groups).astype(np.float64),
        "chunk_idx": chunk_idx, "owner": owner,
    }


def evidence_queries(dataset: Dataset) -> set[int]:
    """Indices of the queries with at least one gold span that holds a token."""
    positions = dataset.positions
    nonempty = positions.evidence_hi > positions.evidence_lo
    return set(np.unique(positions.evidence_query[nonempty]).tolist())


class RetrievalEvaluator(StageEvaluator):
    """Retrieval metrics of ``retrieved_ids`` at K.

    Parameters
    ----------
    k:
        Cut-off.  ``None``: the dataset's ``params.k``, else 5.

    Notes
    -----
    Ranking metrics are ``None`` for a query without a chunk of grade > 0 or
    without ``retrieved_ids``; token metrics for a query without
    ``expected_evidence`` (with a token) or without ``retrieved_ids``.  A
    repeated id counts once, at its first rank; ``precision_at_k`` always
    divides by K.  Latency percentiles use numpy's linear interpolation.

    Examples
    --------
    >>> report = RetrievalEvaluator(k=2).evaluate(
    ...     retrieved_ids={"q1": ["c2", "c1", "c3"]}, relevant={"q1": ["c1", "c3"]})
    >>> report.precision_at_k, report.recall_at_k, report.mrr_at_k
    (0.5, 0.5, 0.5)
    """

    stage = "retrieval"
    inputs = frozenset({"documents", "chunks", "queries", "relevant", "expected_evidence",
                        "retrieved_ids", "retrieval_latency_ms"})
    settings_names = ("k",)

    def __init__(self, *, k: int | None = None) -> None:
        self.k = check_k(k)

    def _settings(self, dataset: Dataset) -> dict[str, Any]:
        return {"k": self.k or dataset.params.k or DEFAULT_K}

    def _compute(self, dataset: Dataset, settings: Mapping[str, Any],
                 builder: ReportBuilder) -> None:
        k = settings["k"]
        queries = dataset.queries
        count = len(queries)
        lists = [None if (entry := dataset.run.get(query.id)) is None else entry.retrieved_ids
                 for query in queries]
        matrix = grade_matrix(lists, [query.relevant for query in queries], k)
        for key, values in ranking_metrics(matrix).items():
            builder.set_per_query(key, scatter(values, matrix.rows, count))
        self._token_metrics(dataset, lists, k, builder)
        latencies = [entry.retrieval_latency_ms for entry in dataset.run.values()]
        builder.set("p50_latency_ms", percentile(latencies, 50))
        builder.set("p95_latency_ms", percentile(latencies, 95))

    @staticmethod
    def _token_metrics(dataset: Dataset, lists: list[Any], k: int,
                       builder: ReportBuilder) -> None:
        count = len(dataset.queries)
        if not dataset.chunks:
            return
        with_evidence = evidence_queries(dataset)
        scored = [(i, top_k(ids, k)) for i, ids in enumerate(lists)
                  if ids is not None and i in with_evidence]
        if not scored:
            return
        sizes = token_overlap(dataset, scored, "retrieved_ids")
        rows = np.asarray([i for i, _ in scored], dtype=np.int64)
        precision = ratio(sizes["inter"], sizes["size_r"])
        precision[sizes["size_r"] == 0] = 0.0
        builder.set_per_query("token_recall", scatter(ratio(sizes["inter"], sizes["size_g"]), rows, count))
        builder.set_per_query("token_precision", scatter(precision, rows, count))
        builder.set_per_query("token_iou", scatter(ratio(sizes["inter"], sizes["union"]), rows, count))
        builder.set_per_query("complete_evidence_recall",
                              scatter(ratio(sizes["whole"], sizes["spans"]), rows, count))
