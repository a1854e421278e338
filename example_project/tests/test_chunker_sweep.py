"""Test-driven tuning: the same gold, several chunkers, one scorecard row each.

The retriever is held fixed (BM25, top K), so differences come from the
chunking alone.  Read the results in the scorecard (``pytest -v`` lists every
metric), or in ``--rag-report-md``; the example's README explains them.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from pytest_rag import Dataset, assert_metric
from ragapp import Document, make_chunker
from ragapp.chunking import chunk_documents
from ragapp.retrieval import BM25Retriever
from support import chunk_records

SWEEP = [
    pytest.param("markdown", {"max_words": 120}, id="markdown-120"),
    pytest.param("markdown", {"max_words": 160}, id="markdown-160"),
    pytest.param("markdown", {"max_words": 240}, id="markdown-240"),
    pytest.param("tokens", {"size": 160, "overlap": 0}, id="tokens-160-0"),
    pytest.param("tokens", {"size": 160, "overlap": 32}, id="tokens-160-32"),
    pytest.param("sentences", {"size": 6, "overlap": 1}, id="sentences-6-1"),
    pytest.param("naive", {"size": 400}, id="naive-400"),
]


@pytest.mark.rag_sweep  # one knob, the chunker, on the same data: star the best
@pytest.mark.parametrize(("chunker", "params"), SWEEP)
def test_chunker_sweep(chunker: str, params: dict[str, Any], chroma_gold: Dataset,
                       chroma_documents: list[Document], top_k: int, rag) -> None:
    chunks = chunk_documents(chroma_documents, make_chunker(chunker, **params))
    bm25 = BM25Retriever(chunks)
    retrieved: dict[str, list[str]] = {}
    latency: dict[str, float] = {}
    for query in chroma_gold.queries:
        start = time.perf_counter()
        retrieved[query.id] = [hit.chunk_id for hit in bm25.search(query.question or "", top_k)]
        latency[query.id] = (time.perf_counter() - start) * 1000

    records = chunk_records(chunks)
    chunking = rag.chunking(chunks=records)
    retrieval = rag.retrieval(chunks=records, retrieved_ids=retrieved,
                              retrieval_latency_ms=latency)
    # Floors every candidate must clear.  They also put these metrics in the
    # scorecard's summary, one row per candidate, which is the comparison.
    assert_metric(chunking.evidence_completeness >= 0.6)
    assert_metric(chunking.size_compliance >= 0.4)
    assert_metric(retrieval.ndcg_at_k >= 0.6)
    assert_metric(retrieval.token_recall >= 0.7)
    assert_metric(retrieval.token_precision >= 0.03)
    assert_metric(retrieval.complete_evidence_recall >= 0.45)
