"""Workload 2, token evidence: retrieval token metrics and the chunking metrics.

At scale 1: 200 documents of about 10,000 tokens (2 million in all), 20,000
overlapping chunks (100 per document, about 130 tokens each, a fifth of them
cutting a word at an edge), and 10,000 queries with 2 gold evidence spans and
a top 10 each.  The workload runs at a quarter, half and the whole of its
size (0.5, 1 and 2 million tokens at scale 1) to show how time grows.

pytest-rag builds one dataset from the plain inputs (``parse_dataset``) and
evaluates the chunking stage and the retrieval stage at K = 10 on it.  The
peer is :mod:`bench_reference_evidence`, plain Python with sets of positions.
The ratio has no goal any more: issue 16 retired the 50 x goal in favour of
the chunker sweep's (:mod:`bench_sweep`), which is what a user waits for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from bench_harness import Metrics, Side

NAME = "evidence"
SIZES = (0.25, 0.5, 1.0)
K = 10
DOCUMENTS = 200
WORDS_PER_DOCUMENT = 8_200
CHUNKS_PER_DOCUMENT = 100
QUERIES_PER_DOCUMENT = 50
SIZE_LIMITS = (100, 160)
SEED = 20242

_VOCABULARY = (
    "the of and to in a is was for on that with as by at from it be this are which or "
    "river city state year first new after during between under about more most other "
    "than national school music film team season water system century population "
    "government company world war time north south east west great early late high low "
    "café naïve Zürich don't well-known 1,200 3.5 O'Brien"
).split()
#: What follows a word: sentences of about 15 words, a paragraph every 4 or so.
_GAPS = (" ", ", ", ". ", "? ", ".\n", ";  ")
_GAP_WEIGHTS = (0.855, 0.07, 0.05, 0.005, 0.015, 0.005)
_RETRIEVAL = {"token_recall": "recall", "token_precision": "precision", "token_iou": "iou",
              "complete_evidence_recall": "complete"}
_CHUNKING = ("coverage", "overlap_ratio", "mean_chunk_tokens", "min_chunk_tokens",
             "max_chunk_tokens", "size_cv", "size_compliance", "evidence_completeness",
             "evidence_fragmentation", "lexical_cohesion", "lexical_boundary_clarity",
             "lexical_chunk_stickiness")


@dataclass(frozen=True)
class Inputs:
    query_ids: list[str]
    documents: dict[str, str]
    chunks: list[dict[str, Any]]
    evidence: dict[str, list[dict[str, Any]]]
    retrieved: dict[str, list[str]]
    tokens: int

    def size(self) -> str:
        return (f"{self.tokens / 1e6:.2g}M tokens, {len(self.chunks):,} chunks, "
                f"{len(self.query_ids):,} queries")


def _document(rng: np.random.Generator, words: int) -> tuple[str, np.ndarray, np.ndarray]:
    """Text of ``words`` words, and each word's start and end offset."""
    ranks = np.minimum(rng.zipf(1.3, size=words), len(_VOCABULARY)) - 1
    chosen = [_VOCABULARY[rank] for rank in ranks.tolist()]
    chosen = [word.capitalize() if coin else word
              for word, coin in zip(chosen, (rng.random(words) < 0.1).tolist())]
    gaps = rng.choice(_GAPS, p=_GAP_WEIGHTS, size=words)
    lengths = np.fromiter(map(len, chosen), dtype=np.int64, count=words)
    gap_lengths = np.fromiter(map(len, gaps.tolist()), dtype=np.int64, count=words)
    starts = np.concatenate([[0], np.cumsum(lengths + gap_lengths)[:-1]])
    return "".join(w + g for w, g in zip(chosen, gaps.tolist())), starts, starts + lengths


def make(scale: float) -> Inputs:
    """The workload at ``scale`` (1 = 2 million tokens), always the same for one scale."""
    rng = np.random.default_rng(SEED)
    count = max(round(DOCUMENTS * scale), 2)
    documents: dict[str, str] = {}
    chunks: list[dict[str, Any]] = []
    evidence: dict[str, list[dict[str, Any]]] = {}
    retrieved: dict[str, list[str]] = {}
    stride = WORDS_PER_DOCUMENT // CHUNKS_PER_DOCUMENT
    for d in range(count):
        doc_id = f"doc{d}"
        text, starts, ends = _document(rng, WORDS_PER_DOCUMENT)
        documents[doc_id] = text
        first = d * CHUNKS_PER_DOCUMENT
        for c in range(CHUNKS_PER_DOCUMENT):
            lo = c * stride
            hi = min(lo + stride + int(rng.integers(8, 52)), WORDS_PER_DOCUMENT)
            start, end = int(starts[lo]), int(ends[hi - 1])
            cut = rng.random()
            if cut < 0.1 and ends[lo] - starts[lo] > 2:
                start += 1  # cuts the first word
            elif cut < 0.2 and ends[hi - 1] - starts[hi - 1] > 2:
                end -= 1  # cuts the last word
            chunks.append({"id": f"{doc_id}#{c}", "doc_id": doc_id, "start": start, "end": end})
        for q in range(QUERIES_PER_DOCUMENT):
            query_id = f"q{d}.{q}"
            spans = []
            homes = []
            for _ in range(2):
                lo = int(rng.integers(0, WORDS_PER_DOCUMENT - 40))
                hi = lo + int(rng.integers(3, 40))
                spans.append({"doc_id": doc_id, "start": int(starts[lo]), "end": int(ends[hi - 1])})
                homes.append(first + min(lo // stride, CHUNKS_PER_DOCUMENT - 1))
            others = (first + rng.integers(0, CHUNKS_PER_DOCUMENT, size=K)).tolist()
            if rng.random() < 0.7:
                others[int(rng.integers(0, 3))] = homes[0]
            if rng.random() < 0.3:
                others[int(rng.integers(3, K))] = homes[1]
            evidence[query_id] = spans
            retrieved[query_id] = [chunks[i]["id"] for i in others]
    tokens = sum(len(_words(text)) for text in documents.values())
    return Inputs(list(evidence), documents, chunks, evidence, retrieved, tokens)


def _words(text: str) -> list[str]:
    from bench_reference_evidence import WORD

    return WORD.findall(text)


# -- pytest-rag ------------------------------------------------------------------
def _rag(inputs: Inputs) -> Any:
    from pytest_rag import ChunkEvaluator, RetrievalEvaluator, parse_dataset

    dataset = parse_dataset({
        "documents": [{"id": doc_id, "text": text} for doc_id, text in inputs.documents.items()],
        "chunks": inputs.chunks,
        "queries": [{"id": query_id, "expected_evidence": spans}
                    for query_id, spans in inputs.evidence.items()],
        "run": {query_id: {"retrieved_ids": ids} for query_id, ids in inputs.retrieved.items()},
    })
    chunking = ChunkEvaluator(size_limits=SIZE_LIMITS).evaluate(dataset)
    return chunking, RetrievalEvaluator(k=K).evaluate(dataset)


def _rag_metrics(result: Any, inputs: Inputs) -> Metrics:
    chunking, retrieval = result
    assert list(retrieval.query_ids) == inputs.query_ids
    metrics = {key: retrieval.query_values[key] for key in _RETRIEVAL}
    metrics.update({key: _scalar(chunking.values[key]) for key in _CHUNKING})
    return metrics


# -- the plain Python reference -------------------------------------------------
def _reference(inputs: Inputs) -> Any:
    from bench_reference_evidence import Corpus, chunking, retrieval

    corpus = Corpus(inputs.documents)
    return (chunking(corpus, inputs.chunks, inputs.evidence, SIZE_LIMITS),
            retrieval(corpus, inputs.chunks, inputs.evidence, inputs.retrieved, K))


def _reference_metrics(result: Any, inputs: Inputs) -> Metrics:
    pooled, per_query = result
    metrics = {key: np.array([np.nan if (v := per_query[q][name]) is None else v
                              for q in inputs.query_ids]) for key, name in _RETRIEVAL.items()}
    metrics.update({key: _scalar(pooled[key]) for key in _CHUNKING})
    return metrics


def _scalar(value: float | None) -> np.ndarray:
    return np.array([np.nan if value is None else value])


def sides() -> list[Side]:
    """pytest-rag, then the plain Python reference."""
    return [
        Side("pytest-rag", _rag, _rag_metrics, ("pytest_rag",)),
        Side("plain Python sets", _reference, _reference_metrics,
             shared=(*_RETRIEVAL, *_CHUNKING),
             not_shared=("structural_integrity (no Markdown block in the text), boundary_f1 (no "
                         "expected chunks), semantic and metadata metrics (no vectors or "
                         "metadata): None on the pytest-rag side, not in the reference")),
    ]
