"""Embedding: healthy vectors, separable relevant chunks, and an ANN index that finds them."""

from __future__ import annotations

from pytest_rag import assert_metric
from support import Bench


def test_embeddings_and_ann_index(chroma: Bench, top_k: int, rag) -> None:
    pipeline = chroma.pipeline
    questions = chroma.questions()
    report = rag.embedding(
        chunks=chroma.chunk_records(),
        chunk_vectors=pipeline.vectors,
        indexed_ids=list(pipeline.ann_index.ids),
        query_vector={qid: pipeline.embed_query(text) for qid, text in questions.items()},
        ann_ids={qid: pipeline.ann_search(text, top_k) for qid, text in questions.items()},
    )
    assert_metric(report.index_coverage >= 0.99)
    assert_metric(report.duplicate_vector_rate <= 0.02)
    assert_metric(report.query_topk_recall >= 0.6)   # exact top K holds the relevant chunks
    assert_metric(report.ann_recall_at_k >= 0.75)    # the LSH index finds the exact top K
    assert_metric(report.similarity_margin >= 0.2)   # relevant chunks sit closer than the rest
