"""Stage 2, embedding: vector health, exact cosine top K, ANN recall, similarities.

Everything is computed from the vectors passed in; no model is called.  The
one blocked pass over the chunk vectors (norms, duplicates, the sum of unit
vectors and the exact top K of every query) is
:func:`pytest_rag.kernels.vector_scan.scan_vectors`.
"""

from __future__ import annotations

import numpy as np

from ..dataset.model import ChunkTable, Dataset
from ..errors import DatasetError
from ..kernels.aggregate import mean, ratio
from ..kernels.ranking import scatter, top_k
from ..kernels.vector_scan import (
    NonFiniteVector,
    VectorScan,
    hits_in_top,
    scan_vectors,
    tie_order,
    unit_rows,
)
from ._base import RankedSettings, RankedStageEvaluator, ReportBuilder

#: The scan's names stay importable from here (benchmarks and older code).
__all__ = ["EmbeddingEvaluator", "NonFiniteVector", "VectorScan", "scan_vectors", "tie_order"]


class EmbeddingEvaluator(RankedStageEvaluator):
    """Embedding and index metrics from the vectors you pass (no model is called).

    Takes the settings of :class:`~pytest_rag.stages._base.RankedStageEvaluator`;
    ``k`` is the size of the exact top K and of the ANN list.

    Notes
    -----
    ``V`` is the set of chunk vectors (``chunk_vectors``; ids that are not
    chunks are allowed), ``cos`` the cosine similarity in float64, 0 when
    either vector is zero.  Gold ``G_q`` means the query's ``relevant`` ids
    of grade > 0 (a grade-0 id is judged not relevant, so it is a negative).

    Pooled over ``V`` (``None`` without chunk vectors):

    - ``zero_norm_rate``: share of vectors whose norm is exactly 0.
    - ``duplicate_vector_rate``: ``(|V| - #distinct) / |V|``; rows equal value
      by value (``-0.0`` equals ``0.0``).
    - ``mean_vector_norm``: mean Euclidean norm.
    - ``index_coverage``: share of vector ids in ``indexed_ids`` (``None``
      without ``indexed_ids``).

    Per query, then averaged over the queries where not ``None`` (all need a
    ``query_vector``):

    - ``query_topk_recall``: ``|E_q^K ∩ G_q| / |G_q|``; a gold id without a
      vector is a miss; ``None`` without gold.
    - ``ann_recall_at_k``: ``|A_q ∩ E_q^K| / |E_q^K|`` with ``A_q`` the first K
      distinct ``ann_ids``; needs no gold; ``None`` without ``ann_ids``.
    - ``positive_similarity``: mean cos over the gold ids that have a vector;
      ``None`` when there is none.
    - ``negative_similarity``: mean cos over the other vectors (non-chunk ids
      included); needs no gold; ``None`` when every vector is gold.
    - ``similarity_margin``: positive minus negative, for queries with both.

    ``E_q^K`` is the exact top ``min(K, |V|)`` by ``numpy.round(cos, 9)``,
    ties by chunk order, vectors of non-chunk ids last in their given order.

    Examples
    --------
    >>> report = EmbeddingEvaluator(k=1).evaluate(
    ...     chunk_vectors={"c1": [1.0, 0.0], "c2": [0.0, 2.0]},
    ...     query_vector={"q1": [1.0, 1.0]}, relevant={"q1": ["c2"]})
    >>> report["query_topk_recall"]  # cos 0.7071 for both: the tie goes to c1
    0.0
    >>> round(report["similarity_margin"], 12)  # 1 / sqrt(2) - 1 / sqrt(2)
    0.0
    """

    stage = "embedding"
    # "documents" too: chunks passed as a keyword are checked against them.
    inputs = frozenset({"documents", "chunks", "queries", "relevant", "expected_evidence",
                        "chunk_vectors", "indexed_ids", "query_vector", "ann_ids"})
    def _compute(self, dataset: Dataset, settings: RankedSettings,
                 builder: ReportBuilder) -> None:
        vectors = dataset.vectors
        if vectors is None or vectors.chunk_matrix is None or not vectors.chunk_ids:
            return
        matrix = vectors.chunk_matrix
        ids = vectors.chunk_ids
        count = len(ids)
        k = settings.k
        queries = dataset.queries
        gold = [[chunk_id for chunk_id, grade in (query.relevant or {}).items() if grade > 0]
                for query in queries]
        # Queries with a vector: (index into queries, query vector, ann_ids).
        asked = [(i, entry.query_vector, entry.ann_ids) for i, query in enumerate(queries)
                 if (entry := dataset.run.get(query.id)) is not None
                 and entry.query_vector is not None]
        query_norms, query_units = unit_rows(
            np.vstack([vector for _, vector, _ in asked]) if asked
            else np.zeros((0, matrix.shape[1])))
        if not np.isfinite(query_norms).all():
            bad = asked[int(np.flatnonzero(~np.isfinite(query_norms))[0])][0]
            raise DatasetError(dataset.source, f"run[{queries[bad].id!r}].query_vector",
                               "must hold finite numbers with a finite norm")
        # Only queries with gold or ann_ids need their exact top K.
        ranked = [n for n, (i, _, ann_ids) in enumerate(asked) if gold[i] or ann_ids is not None]
        # Vectors in chunk order, one per chunk (an array aligned with the
        # chunks, for one): the chunks' own index says which row is which.
        chunk_index = dataset.chunk_index
        aligned = count == len(chunk_index) and (
            (isinstance(dataset.chunks, ChunkTable) and ids is dataset.chunks.ids)
            or ids == tuple(chunk_index))
        try:
            scan = scan_vectors(matrix, query_units[ranked], k,
                                None if aligned else tie_order(ids, chunk_index))
        except NonFiniteVector as error:
            raise DatasetError(dataset.source, f"vectors.chunks[{ids[error.row]!r}]",
                               "must hold finite numbers with a finite norm") from None

        builder.set("zero_norm_rate", np.count_nonzero(scan.norms == 0) / count)
        builder.set("duplicate_vector_rate", (count - scan.distinct) / count)
        builder.set("mean_vector_norm", mean(scan.norms))  # no overflow near the float max
        if vectors.indexed_ids is not None:
            builder.set("index_coverage", len(set(ids) & set(vectors.indexed_ids)) / count)

        row_of = chunk_index if aligned else dict(zip(ids, range(count)))
        # Gold and ANN ids of the ranked queries, each found or not in its
        # query's exact top K (the rows of a top K are distinct).
        gold_lists = [gold[asked[n][0]] for n in ranked]
        ann_lists = [None if (listed := asked[n][2]) is None else top_k(listed, k)
                     for n in ranked]
        gold_hits = hits_in_top(scan.top, row_of, gold_lists)
        ann_hits = hits_in_top(scan.top, row_of, [found or [] for found in ann_lists])
        recall = np.full(len(queries), np.nan)
        ann = np.full(len(queries), np.nan)
        query_rows = [asked[n][0] for n in ranked]
        with_gold = [j for j, wanted in enumerate(gold_lists) if wanted]
        recall[[query_rows[j] for j in with_gold]] = (
            gold_hits[with_gold] / np.asarray([len(gold_lists[j]) for j in with_gold]))
        with_ann = [j for j, found in enumerate(ann_lists) if found is not None]
        ann[[query_rows[j] for j in with_ann]] = ann_hits[with_ann] / scan.top.shape[1]
        builder.set_per_query("query_topk_recall", recall)
        builder.set_per_query("ann_recall_at_k", ann)

        # Positive: the gold rows of each query; negative: every other row, whose
        # cosine sum is (q . sum of unit vectors) - (positive sum).
        gold_rows = [list(map(row_of.get, gold[i])) for i, _, _ in asked]
        pair_query = [n for n, found in enumerate(gold_rows) for row in found if row is not None]
        pair_row = np.asarray([row for found in gold_rows for row in found if row is not None],
                              dtype=np.int64)
        _, gold_units = unit_rows(np.asarray(matrix[pair_row], dtype=np.float64))
        pairs = np.asarray(pair_query, dtype=np.int64)
        cosines = np.einsum("ij,ij->i", query_units[pairs], gold_units)
        asked_count = len(asked)
        positive_count = np.bincount(pairs, minlength=asked_count).astype(np.float64)
        positive_sum = np.bincount(pairs, weights=cosines, minlength=asked_count)
        negative_count = count - positive_count
        # Means of cosines computed as dot products of unit rows: clip the rounding
        # step that can carry them past +-1.
        positive = np.clip(ratio(positive_sum, positive_count), -1.0, 1.0)
        negative = np.clip(ratio(query_units @ scan.unit_sum - positive_sum, negative_count),
                           -1.0, 1.0)
        rows = np.asarray([i for i, _, _ in asked], dtype=np.int64)
        builder.set_per_query("positive_similarity", scatter(positive, rows, len(queries)))
        builder.set_per_query("negative_similarity", scatter(negative, rows, len(queries)))
        builder.set_per_query("similarity_margin",
                              scatter(positive - negative, rows, len(queries)))
