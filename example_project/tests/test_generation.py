"""Generation: answers against human references, abstention, citations and grounding."""

from __future__ import annotations

from pytest_rag import assert_metric
from support import CLAPNQ, Bench, expected_citations


def generation_inputs(bench: Bench) -> dict[str, object]:
    return {
        "chunks": bench.chunk_records(),
        "context_ids": bench.run(lambda t: t.context_ids),
        "answer": bench.run(lambda t: t.answer.text),
        "abstained": bench.run(lambda t: t.answer.abstained),
        "cited_ids": bench.run(lambda t: list(t.answer.cited_ids)),
        "expected_citations": expected_citations(bench.gold),
        "generation_latency_ms": bench.run(lambda t: t.generation_ms),
    }


@CLAPNQ
def test_answers_against_references(clapnq: Bench, rag) -> None:
    report = rag.generation(**generation_inputs(clapnq))
    assert_metric(report.answer_f1 >= 0.25)
    assert_metric(report.rouge_l_f1 >= 0.22)
    assert_metric(report.abstention_accuracy >= 0.65)  # answer the answerable, decline the rest
    assert_metric(report.citation_precision >= 0.5)


def test_answers_are_grounded(chroma: Bench, rag) -> None:
    report = rag.generation(**generation_inputs(chroma))
    assert_metric(report.citation_recall >= 0.45)
    assert_metric(report.context_grounding >= 0.6)
