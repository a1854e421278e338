"""Workload 3, embedding: exact top K, top-K recall, ANN recall, similarities, health.

At scale 1: 200,000 chunk vectors of dimension 384 (float32), 1% of them
exact copies of another row and 0.1% zero, and 1,000 queries, each near one
of its 3 gold chunks; the ANN list holds 10 ids, about 7 of them from the
exact top 10.  K = 10.

pytest-rag's side is one ``EmbeddingEvaluator(k=10).evaluate(...)`` call with
the chunks, their documents, the vectors as an array aligned with the chunks
and the query vectors as ``{query: row}``: the whole stage, input checks and
conversion included.  A second pytest-rag row times the stage's kernel alone,
``scan_vectors`` (one blocked pass: norms, duplicates and the exact top K), on
the same array, to show what the stage adds; the goals are judged on the
stage.  The peers only find the top K, on normalized float32 vectors: faiss
``IndexFlatIP``, and the limit, a bare blocked numpy product with
``argpartition``.  They agree with pytest-rag when the top-K sets give
the same query top-K recall and ANN recall for every query.

One more pair of rows times the stage and faiss both at one thread (every
BLAS and OpenMP library of the process limited to one thread by
threadpoolctl, which is what ``OPENBLAS_NUM_THREADS=1`` and
``faiss.omp_set_num_threads(1)`` do): a comparison that does not depend on
how each library uses the cores of a shared machine.  It is compared only
with itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from bench_harness import Goal, Metrics, Side

NAME = "embedding"
K = 10
VECTORS = 200_000
DIM = 384
QUERIES = 1_000
GOLD = 3
DOCUMENT_CHUNKS = 100
#: Rows per block of the bare numpy product (64 MiB of float32 scores per block).
BARE_BLOCK = 16_384
SEED = 20243
#: The stage and faiss with every BLAS and OpenMP library at one thread (a pair of sides).
ONE_THREAD = "pytest-rag, 1 thread"
FAISS_ONE_THREAD = "faiss IndexFlatIP, 1 thread"


@dataclass(frozen=True)
class Inputs:
    query_ids: list[str]
    chunk_ids: list[str]
    documents: dict[str, str]
    chunks: list[dict[str, Any]]
    vectors: np.ndarray
    query_vectors: dict[str, np.ndarray]
    relevant: dict[str, list[str]]
    ann_ids: dict[str, list[str]]

    def size(self) -> str:
        rows, dim = self.vectors.shape
        return f"{rows:,} x {dim} float32, {len(self.query_ids):,} queries"


def make(scale: float) -> Inputs:
    """The workload at ``scale`` (1 = 200,000 vectors), always the same for one scale."""
    rng = np.random.default_rng(SEED)
    count = max(int(VECTORS * scale), 200)
    queries = max(int(QUERIES * scale), 20)
    vectors = rng.standard_normal((count, DIM), dtype=np.float32)
    gold = rng.integers(0, count, size=(queries, GOLD))
    near = vectors[gold[:, 0]] + 0.6 * rng.standard_normal((queries, DIM), dtype=np.float32)
    # Copies and zero rows go where no query looks, so that no exact tie sits
    # at a query's K-th place (pytest-rag breaks ties by chunk order, the
    # peers as they happen to).
    top = _bare_top(vectors, near, K)
    kth = (_unit(vectors[top]) * _unit(near)[:, None, :]).sum(axis=2).min()
    quiet = np.flatnonzero(_best_cosine(vectors, near) < kth - 0.01)
    chosen = rng.choice(quiet, size=count // 100 + max(count // 1000, 1), replace=False)
    copies, zeros = chosen[:count // 100], chosen[count // 100:]
    vectors[copies] = vectors[rng.choice(quiet, size=copies.shape[0])]
    vectors[zeros] = 0.0
    chunk_ids = [f"c{i}" for i in range(count)]
    documents = {f"doc{d}": "x" * 2000 for d in range(-(-count // DOCUMENT_CHUNKS))}
    chunks = [{"id": chunk_id, "doc_id": f"doc{i // DOCUMENT_CHUNKS}",
               "start": (i % DOCUMENT_CHUNKS) * 10, "end": (i % DOCUMENT_CHUNKS) * 10 + 20}
              for i, chunk_id in enumerate(chunk_ids)]
    query_ids = [f"q{i}" for i in range(queries)]
    ann = np.where(rng.random((queries, K)) < 0.7, top, rng.integers(0, count, size=(queries, K)))
    return Inputs(
        query_ids, chunk_ids, documents, chunks, vectors,
        dict(zip(query_ids, near)),
        {q: [chunk_ids[i] for i in row] for q, row in zip(query_ids, gold.tolist())},
        {q: [chunk_ids[i] for i in row] for q, row in zip(query_ids, ann.tolist())},
    )


# -- pytest-rag ------------------------------------------------------------------
def _rag(inputs: Inputs) -> Any:
    from pytest_rag import EmbeddingEvaluator

    return EmbeddingEvaluator(k=K).evaluate(
        documents=inputs.documents, chunks=inputs.chunks, chunk_vectors=inputs.vectors,
        query_vector=inputs.query_vectors, relevant=inputs.relevant, ann_ids=inputs.ann_ids)


def _kernel(inputs: Inputs) -> Any:
    """The stage's one pass over the vectors alone (``scan_vectors``): norms,
    duplicates and the exact top K, without the chunks' conversion to records
    and the stage's per-query metrics and report."""
    from pytest_rag.stages.embedding import scan_vectors

    queries = _unit(_query_matrix(inputs).astype(np.float64))
    return scan_vectors(inputs.vectors, queries, K).top


def _rag_metrics(report: Any, inputs: Inputs) -> Metrics:
    assert list(report.query_ids) == inputs.query_ids
    return {key: report.query_values[key] for key in ("query_topk_recall", "ann_recall_at_k")}


# -- peers: the top K only ----------------------------------------------------------
def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def _bare_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The top ``k`` rows of every query by float32 cosine, a block of rows at a time."""
    units, query_units = _unit(vectors), _unit(queries)
    best_scores = np.full((queries.shape[0], 0), -np.inf, dtype=np.float32)
    best_rows = np.zeros((queries.shape[0], 0), dtype=np.int64)
    for lo in range(0, units.shape[0], BARE_BLOCK):
        scores = query_units @ units[lo:lo + BARE_BLOCK].T
        kk = min(k, scores.shape[1])
        top = np.argpartition(scores, scores.shape[1] - kk, axis=1)[:, -kk:]
        merged_scores = np.concatenate([best_scores, np.take_along_axis(scores, top, axis=1)], 1)
        merged_rows = np.concatenate([best_rows, top + lo], axis=1)
        keep = min(k, merged_scores.shape[1])
        pick = np.argpartition(merged_scores, merged_scores.shape[1] - keep, axis=1)[:, -keep:]
        best_scores = np.take_along_axis(merged_scores, pick, axis=1)
        best_rows = np.take_along_axis(merged_rows, pick, axis=1)
    return best_rows


def _best_cosine(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Each row's highest cosine with any query."""
    query_units = _unit(queries)
    return np.concatenate([(query_units @ _unit(vectors[lo:lo + BARE_BLOCK]).T).max(axis=0)
                           for lo in range(0, vectors.shape[0], BARE_BLOCK)])


def _query_matrix(inputs: Inputs) -> np.ndarray:
    return np.stack([inputs.query_vectors[q] for q in inputs.query_ids])


def _numpy(inputs: Inputs) -> Any:
    return _bare_top(inputs.vectors, _query_matrix(inputs), K)


def _faiss(inputs: Inputs) -> Any:
    import faiss

    units = np.array(inputs.vectors, dtype=np.float32)  # normalize_L2 works in place
    faiss.normalize_L2(units)
    queries = np.array(_query_matrix(inputs), dtype=np.float32)
    faiss.normalize_L2(queries)
    index = faiss.IndexFlatIP(units.shape[1])
    index.add(units)
    return index.search(queries, K)[1]


def _one_thread(run: Callable[[Inputs], Any]) -> Callable[[Inputs], Any]:
    """``run`` with every BLAS and OpenMP library of the process at one thread."""
    def limited(inputs: Inputs) -> Any:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            return run(inputs)

    return limited


def _top_metrics(top: Any, inputs: Inputs) -> Metrics:
    """Query top-K recall and ANN recall from each query's top-K rows."""
    row_of = {chunk_id: i for i, chunk_id in enumerate(inputs.chunk_ids)}
    recall, ann = [], []
    for query, rows in zip(inputs.query_ids, np.asarray(top).tolist()):
        exact = set(rows)
        gold = inputs.relevant[query]
        recall.append(sum(row_of[g] in exact for g in gold) / len(gold))
        listed = list(dict.fromkeys(inputs.ann_ids[query]))[:K]
        ann.append(sum(row_of[a] in exact for a in listed) / len(exact))
    return {"query_topk_recall": np.array(recall), "ann_recall_at_k": np.array(ann)}


def sides() -> list[Side]:
    """pytest-rag, then faiss and the bare numpy product; then both sides at one thread."""
    shared = ("query_topk_recall", "ann_recall_at_k")
    not_shared = ("the peers find the top K only: similarities, duplicates and zero norms are "
                  "pytest-rag's alone (and timed on its side)")
    return [
        Side("pytest-rag", _rag, _rag_metrics, ("pytest_rag",)),
        Side("pytest-rag scan_vectors kernel", _kernel, _top_metrics, ("pytest_rag",),
             shared=shared, rag=True),
        Side("faiss IndexFlatIP", _faiss, _top_metrics, ("faiss",), shared=shared,
             not_shared=not_shared, goal=Goal(1.0, "< 1 (faster than faiss)")),
        Side("numpy blocked matmul", _numpy, _top_metrics, ("numpy",), shared=shared,
             not_shared=not_shared, goal=Goal(1.2, "<= 1.2")),
        Side(ONE_THREAD, _one_thread(_rag), _rag_metrics, ("pytest_rag", "threadpoolctl"),
             shared=shared, rag=True, pair=FAISS_ONE_THREAD),
        Side(FAISS_ONE_THREAD, _one_thread(_faiss), _top_metrics, ("faiss", "threadpoolctl"),
             shared=shared, not_shared=not_shared,
             goal=Goal(1.0, "< 1 (faster than faiss, both at 1 thread)"), pair=ONE_THREAD),
    ]
