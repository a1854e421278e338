"""A deterministic reranker: query-term coverage and proximity inside each candidate.

A first-stage retriever ranks chunks by term statistics over the whole
chunk.  The reranker looks inside the chunk: does it contain the rare words
of the question, and do they occur close together?
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .documents import Chunk
from .retrieval import Hit
from .text import content_terms

__all__ = ["ProximityReranker"]


class ProximityReranker:
    """Rerank candidates by idf-weighted coverage, proximity and their first-stage rank.

    For a question with distinct content words ``Q`` (weights ``idf(t)``,
    total ``W``) and a candidate chunk:

    - ``coverage`` = the weight of the words of ``Q`` the chunk contains, over ``W``;
    - ``proximity`` = the largest weight of words of ``Q`` found together in
      any window of ``window`` consecutive content words, over ``W``;
    - ``prior`` = ``1 / (1 + rank / 10)`` from the first-stage rank (0-based).

    ``score = coverage_weight * coverage + proximity_weight * proximity + prior_weight * prior``.
    Ties keep the first-stage order.

    Parameters
    ----------
    idf:
        The weight of a word, usually ``BM25Retriever.idf_of``.
    chunks:
        The chunks by id, to read the candidates' text.
    """

    def __init__(self, idf: Callable[[str], float], chunks: Mapping[str, Chunk], *,
                 window: int = 24, coverage_weight: float = 0.4, proximity_weight: float = 0.4,
                 prior_weight: float = 0.2) -> None:
        self.idf = idf
        self.chunks = chunks
        self.window = window
        self.weights = (coverage_weight, proximity_weight, prior_weight)
        self._terms: dict[str, list[str]] = {}

    def _chunk_terms(self, chunk_id: str) -> list[str]:
        terms = self._terms.get(chunk_id)
        if terms is None:
            terms = self._terms[chunk_id] = content_terms(self.chunks[chunk_id].text)
        return terms

    def _proximity(self, terms: Sequence[str], weights: Mapping[str, float]) -> float:
        positions = [(i, term) for i, term in enumerate(terms) if term in weights]
        best = 0.0
        counts: dict[str, int] = {}
        current = 0.0
        left = 0
        for position, term in positions:
            counts[term] = counts.get(term, 0) + 1
            if counts[term] == 1:
                current += weights[term]
            while position - positions[left][0] >= self.window:
                gone = positions[left][1]
                counts[gone] -= 1
                if counts[gone] == 0:
                    current -= weights[gone]
                left += 1
            best = max(best, current)
        return best

    def _weights_of(self, question: str) -> dict[str, float]:
        return {term: self.idf(term) for term in sorted(set(content_terms(question)))}

    def _score(self, weights: Mapping[str, float], chunk_id: str, rank: int) -> float:
        a, b, c = self.weights
        prior = 1.0 / (1.0 + rank / 10)
        total = sum(weights.values())
        if total <= 0:
            return c * prior
        terms = self._chunk_terms(chunk_id)
        coverage = sum(weights[t] for t in set(terms) & weights.keys()) / total
        proximity = self._proximity(terms, weights) / total
        return a * coverage + b * proximity + c * prior

    def score(self, question: str, chunk_id: str, rank: int) -> float:
        """The reranking score of one candidate at first-stage ``rank`` (0-based)."""
        return self._score(self._weights_of(question), chunk_id, rank)

    def rerank(self, question: str, hits: Sequence[Hit]) -> list[Hit]:
        """``hits`` in the new order, with the reranking scores."""
        weights = self._weights_of(question)
        scored = [(round(self._score(weights, hit.chunk_id, rank), 12), rank, hit.chunk_id)
                  for rank, hit in enumerate(hits)]
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [Hit(chunk_id, score) for score, _, chunk_id in scored]
