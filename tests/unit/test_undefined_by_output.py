"""The registry's ``undefined_when`` column against the stages' code.

Each stage is evaluated with every input given, once with ordinary outputs (every
per-query metric has a value) and with degenerate outputs (an empty answer, an
empty context, a list without a relevant chunk, ...): exactly the metrics whose
column is set become ``None``.  The baseline comparison relies on the column to
tell a query the output left unmeasurable from a lost one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from pytest_rag.registry import REGISTRY, STAGES
from pytest_rag.stages.augmentation import AugmentationEvaluator
from pytest_rag.stages.embedding import EmbeddingEvaluator
from pytest_rag.stages.end_to_end import EndToEndEvaluator
from pytest_rag.stages.generation import GenerationEvaluator
from pytest_rag.stages.report import Report
from pytest_rag.stages.reranking import RerankingEvaluator
from pytest_rag.stages.retrieval import RetrievalEvaluator

DOCS = [{"id": "d", "text": "Each token may make 600 requests per minute. "
                            "Tokens expire after 90 days."}]
CHUNKS = [{"id": "c0", "doc_id": "d", "start": 0, "end": 44},
          {"id": "c1", "doc_id": "d", "start": 45, "end": 73}]
EVIDENCE = {"q1": [{"doc_id": "d", "start": 45, "end": 73}]}


def retrieval(ids: list[str]) -> Report:
    return RetrievalEvaluator(k=2).evaluate(documents=DOCS, chunks=CHUNKS,
                                            retrieved_ids={"q1": ids}, relevant={"q1": ["c1"]},
                                            expected_evidence=EVIDENCE,
                                            retrieval_latency_ms={"q1": 5.0})


def reranking(ids: list[str]) -> Report:
    return RerankingEvaluator(k=2).evaluate(retrieved_ids={"q1": ids}, reranked_ids={"q1": ids},
                                            relevant={"q1": ["c1"]})


def augmentation(ids: list[str]) -> Report:
    return AugmentationEvaluator(max_context_tokens=50).evaluate(
        documents=DOCS, chunks=CHUNKS, context_ids={"q1": ids}, expected_evidence=EVIDENCE)


def generation(answer: str, claims: list[dict[str, Any]]) -> Report:
    return GenerationEvaluator().evaluate(
        documents=DOCS, chunks=CHUNKS, answer={"q1": answer},
        reference_answer={"q1": "After 90 days."}, required_facts={"q1": ["90 days"]},
        answerable={"q1": True}, cited_ids={"q1": []}, expected_citations={"q1": ["c1"]},
        verified_claims={"q1": claims}, task_success={"q1": True}, context_ids={"q1": ["c1"]},
        generation_latency_ms={"q1": 5.0})


def end_to_end(answer: str) -> Report:
    return EndToEndEvaluator().evaluate(answer={"q1": answer}, reference_answer={"q1": "x"},
                                        task_success={"q1": True}, latency_ms={"q1": 5.0},
                                        cost_usd={"q1": 0.1}, total_tokens={"q1": 10})


def embedding(vectors: Mapping[str, list[float]]) -> Report:
    return EmbeddingEvaluator(k=1).evaluate(chunk_vectors=dict(vectors),
                                            query_vector={"q1": [1.0, 1.0]},
                                            ann_ids={"q1": ["c0"]}, relevant={"q1": ["c1"]})


#: Per stage: ordinary outputs, then the degenerate ones.
CASES: dict[str, tuple[Callable[[], Report], list[Callable[[], Report]]]] = {
    "retrieval": (lambda: retrieval(["c1", "c0"]), [lambda: retrieval([])]),
    "reranking": (lambda: reranking(["c0", "c1"]),
                  [lambda: reranking(["c0"]), lambda: reranking([])]),
    "augmentation": (lambda: augmentation(["c0", "c1"]),
                     [lambda: augmentation([]), lambda: augmentation(["c0"])]),
    "generation": (lambda: generation("After 90 days.", [{"claim": "90 days", "supported": True}]),
                   [lambda: generation("", []), lambda: generation("After ninety days.", [])]),
    "end_to_end": (lambda: end_to_end("x"), [lambda: end_to_end("")]),
    "embedding": (lambda: embedding({"c0": [1.0, 0.0], "c1": [0.0, 1.0]}),
                  [lambda: embedding({"c0": [1.0, 0.0]}), lambda: embedding({"c1": [1.0, 0.0]})]),
}


def unmeasured(report: Report) -> set[str]:
    return {key for key, values in report.per_query.items() if values.get("q1") is None}


@pytest.mark.parametrize("stage", sorted(CASES))
def test_the_column_names_exactly_the_metrics_the_output_can_leave_undefined(stage: str) -> None:
    ordinary, degenerate = CASES[stage]
    assert unmeasured(ordinary()) == set()  # every input given: every metric measured
    found = set().union(*(unmeasured(case()) for case in degenerate))
    column = {spec.key for spec in REGISTRY.values()
              if spec.stage == stage and spec.undefined_when is not None}
    assert found == column


def test_only_per_query_metrics_of_the_cased_stages_set_the_column() -> None:
    for spec in REGISTRY.values():
        if spec.undefined_when is not None:
            assert spec.per_query and spec.stage in CASES, spec.name
    assert set(STAGES) - set(CASES) == {"chunking"}  # pooled: no per-query values
