"""Retrieval: BM25, dense and hybrid search, judged on the same gold and the same K."""

from __future__ import annotations

import pytest

from pytest_rag import assert_metric
from ragapp.clock import elapsed_ms, now
from support import BOTH, Bench

#: method -> the recall@K it must reach on chroma (the gold of every test here).
FLOORS = {"bm25": 0.85, "dense": 0.65, "hybrid": 0.8}


def timed_search(bench: Bench, method: str, k: int
                 ) -> tuple[dict[str, list[str]], dict[str, float]]:
    """Each question's top ``k`` from one retriever, and how long each search took."""
    retrieved: dict[str, list[str]] = {}
    latency: dict[str, float] = {}
    for query_id, question in bench.questions().items():
        start = now()
        hits = bench.pipeline.retrieve(question, k, method)
        latency[query_id] = elapsed_ms(start)
        retrieved[query_id] = [hit.chunk_id for hit in hits]
    return retrieved, latency


@pytest.mark.rag_sweep  # one knob, the retriever, on the same data: star the best
@pytest.mark.parametrize("method", sorted(FLOORS))
def test_retriever(method: str, chroma: Bench, top_k: int, rag) -> None:
    retrieved, latency = timed_search(chroma, method, top_k)
    report = rag.retrieval(chunks=chroma.chunk_records(), retrieved_ids=retrieved,
                           retrieval_latency_ms=latency)
    assert_metric(report.recall_at_k >= FLOORS[method])
    assert_metric(report.token_recall >= FLOORS[method])


@pytest.mark.parametrize("bench", BOTH, indirect=True)
def test_pipeline_candidates(bench: Bench, rag) -> None:
    """The candidates the pipeline hands to the reranker, as timed inside ``Pipeline.ask``."""
    report = rag.retrieval(chunks=bench.chunk_records(),
                           retrieved_ids=bench.run(lambda t: t.retrieved_ids),
                           retrieval_latency_ms=bench.run(lambda t: t.retrieval_ms))
    assert_metric(report.hit_at_k >= 0.85)
    assert_metric(report.hit_at_k.share(">=", 1) >= 0.85)  # the same, read per query
    assert_metric(report.complete_evidence_recall >= 0.75)
