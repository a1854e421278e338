"""Chunking: does the chunker keep gold evidence, structure and metadata intact?"""

from __future__ import annotations

from pytest_rag import assert_metric
from ragapp.text import sentence_spans
from support import CLAPNQ, Bench


def sentence_vectors(bench: Bench) -> dict[str, list[list[float]]]:
    """The embedding of each sentence of each chunk, for the semantic cohesion metrics."""
    embed = bench.pipeline.embedder.embed_one
    return {chunk.id: [embed(chunk.text[s:e]).tolist() for s, e in sentence_spans(chunk.text)]
            for chunk in bench.chunks}


def test_chunks_keep_evidence_whole(chroma: Bench, rag) -> None:
    report = rag.chunking(chunks=chroma.chunk_records(), chunk_vectors=chroma.pipeline.vectors,
                          sentence_vectors=sentence_vectors(chroma))
    assert_metric(report.evidence_completeness >= 0.95)   # gold spans inside one chunk
    assert_metric(report.evidence_fragmentation <= 1.05)  # chunks per gold span
    assert_metric(report.structural_integrity >= 0.95)    # tables and lists not cut
    assert_metric(report.size_compliance >= 0.9)          # within rag_size_limits
    assert_metric(report.metadata_completeness >= 1.0)    # source and section on every chunk


@CLAPNQ
def test_passages_stay_whole(clapnq: Bench, rag) -> None:
    report = rag.chunking(chunks=clapnq.chunk_records())
    assert_metric(report.evidence_completeness >= 0.98)
    assert_metric(report.metadata_completeness >= 1.0)
