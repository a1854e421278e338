"""Test-driven tuning: the same gold, several chunkers, one sweep that decides.

The retriever is held fixed (BM25, top K) and so is the packer (the
pipeline's 500-word budget), so differences come from the chunking alone.
The sweep table ranks the chunkers on whether the packed context holds each
question's evidence whole (``context_sufficient``), within noise, against
what they cost (context and index tokens), and recommends one; the shipped
chunker fails the run if another beats it beyond noise at no higher cost.
The example's README explains the output.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_rag import Dataset, assert_metric
from ragapp import Document, make_chunker
from ragapp.chunking import chunk_documents
from ragapp.clock import elapsed_ms, now
from ragapp.packing import pack_context
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


#: Candidates the packer chooses from, and its word budget (as in the pipeline); it
#: skips a chunk that overlaps one already packed (overlapping windows repeat text).
CANDIDATES = 20
BUDGET = 500


# One knob, the chunker, on the same data.  The rule: of the chunkers whose chunks fit
# the embedder (size_limits, pytest.ini) and that are within noise of the best context
# sufficiency, the one with the fewest chunks; the shipped one must not be beaten beyond
# noise at no higher cost.
@pytest.mark.rag_sweep(objective="augmentation.context_sufficient", cost="chunks",
                       require="chunking.size_compliance >= 0.9", shipped="markdown-160")
@pytest.mark.parametrize(("chunker", "params"), SWEEP)
def test_chunker_sweep(chunker: str, params: dict[str, Any], chroma_gold: Dataset,
                       chroma_documents: list[Document], top_k: int, rag) -> None:
    chunks = chunk_documents(chroma_documents, make_chunker(chunker, **params))
    bm25 = BM25Retriever(chunks)
    by_id = {chunk.id: chunk for chunk in chunks}
    documents = {document.id: document for document in chroma_documents}
    words = {chunk.id: documents[chunk.doc_id].word_index.count(chunk.start, chunk.end)
             for chunk in chunks}
    retrieved: dict[str, list[str]] = {}
    latency: dict[str, float] = {}
    context: dict[str, list[str]] = {}
    for query in chroma_gold.queries:
        start = now()
        retrieved[query.id] = [hit.chunk_id for hit in bm25.search(query.question or "", top_k)]
        latency[query.id] = elapsed_ms(start)
        candidates = bm25.search(query.question or "", CANDIDATES)
        context[query.id] = pack_context(candidates, by_id, words, budget=BUDGET,
                                        max_overlap=0.0).ids

    records = chunk_records(chunks)
    chunking = rag.chunking(chunks=records)
    retrieval = rag.retrieval(chunks=records, retrieved_ids=retrieved,
                              retrieval_latency_ms=latency)
    rag.augmentation(chunks=records, context_ids=context)
    # Floors every candidate must clear.  They also put these metrics in the
    # scorecard's summary, one row per candidate, which is the comparison.
    assert_metric(chunking.evidence_completeness >= 0.6)
    assert_metric(chunking.size_compliance >= 0.4)
    assert_metric(retrieval.ndcg_at_k >= 0.6)
    assert_metric(retrieval.token_recall >= 0.7)
    assert_metric(retrieval.token_precision >= 0.03)
    assert_metric(retrieval.complete_evidence_recall >= 0.45)
