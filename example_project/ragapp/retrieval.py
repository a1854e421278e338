"""Retrievers: BM25 over the chunks' words, dense search over their vectors, and both fused.

Every retriever has ``search(question, k) -> list[Hit]``, best first, with
ties broken by chunk order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .documents import Chunk
from .embedding import HashingEmbedder
from .index import ExactIndex, top_k
from .text import content_terms

__all__ = ["BM25Retriever", "DenseRetriever", "Hit", "HybridRetriever", "Retriever"]


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk and the score the retriever gave it."""

    chunk_id: str
    score: float


class Retriever(Protocol):
    def search(self, question: str, k: int) -> list[Hit]: ...


class BM25Retriever:
    """Okapi BM25 (Robertson et al.), with the Lucene form of idf.

    The score of chunk ``c`` sums over the question's distinct content words ``t``::

        score(q, c) = sum_t idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |c| / avgdl))

    with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``, where ``tf`` counts
    ``t`` in chunk ``c``, ``|c|`` is its number of content words, ``N`` the
    number of chunks and ``df`` how many of them contain ``t``.  The postings
    are stored in compressed sparse rows, so a query touches only the chunks
    that share a word with it.
    """

    def __init__(self, chunks: Sequence[Chunk], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.chunk_ids = [chunk.id for chunk in chunks]
        vocabulary: dict[str, int] = {}
        rows: list[int] = []
        terms: list[int] = []
        lengths = np.zeros(len(chunks))
        for row, chunk in enumerate(chunks):
            words = content_terms(chunk.text)
            lengths[row] = len(words)
            for word in words:
                terms.append(vocabulary.setdefault(word, len(vocabulary)))
                rows.append(row)
        self.vocabulary = vocabulary
        # Count (term, row) pairs, then sort by term: one run of postings per term.
        width = max(len(chunks), 1)
        pairs = np.asarray(terms, dtype=np.int64) * width + np.asarray(rows, dtype=np.int64)
        unique, tf = np.unique(pairs, return_counts=True)
        term_of = unique // width
        self._rows = (unique % width).astype(np.intp)
        self._offsets = np.searchsorted(term_of, np.arange(len(vocabulary) + 1))
        df = np.diff(self._offsets)
        n = len(chunks)
        self.idf = np.log1p((n - df + 0.5) / (df + 0.5))
        average = float(lengths.mean()) if n else 0.0
        norm = k1 * (1 - b + b * lengths[self._rows] / average) if average else k1
        self._weights = tf * (k1 + 1) / (tf + norm)

    def idf_of(self, word: str) -> float:
        """The idf of ``word``; a word no chunk has gets the highest possible idf."""
        term = self.vocabulary.get(word)
        n = len(self.chunk_ids)
        return float(self.idf[term]) if term is not None else math.log1p((n + 0.5) / 0.5)

    def scores(self, question: str) -> npt.NDArray[np.float64]:
        """The BM25 score of every chunk for ``question`` (repeated query words count once)."""
        scores = np.zeros(len(self.chunk_ids))
        for word in sorted(set(content_terms(question))):
            term = self.vocabulary.get(word)
            if term is None:
                continue
            lo, hi = self._offsets[term], self._offsets[term + 1]
            scores[self._rows[lo:hi]] += self.idf[term] * self._weights[lo:hi]
        return scores

    def search(self, question: str, k: int) -> list[Hit]:
        scores = self.scores(question)
        hits = np.flatnonzero(scores > 0)
        rows, values = top_k(scores[hits], k, hits)
        return [Hit(self.chunk_ids[int(row)], float(value))
                for row, value in zip(rows, values, strict=True)]


class DenseRetriever:
    """Nearest chunks to the question's embedding, from any vector index."""

    def __init__(self, embedder: HashingEmbedder, index: ExactIndex) -> None:
        self.embedder = embedder
        self.index = index

    def search(self, question: str, k: int) -> list[Hit]:
        ids, scores = self.index.search(self.embedder.embed_one(question), k)
        return [Hit(chunk_id, float(score)) for chunk_id, score in zip(ids, scores, strict=True)]


class HybridRetriever:
    """Reciprocal rank fusion (Cormack et al., 2009) of several retrievers.

    ``score(c) = sum over retrievers r of 1 / (constant + rank_r(c))``, from
    each retriever's top ``depth``; ranks count from 1.
    """

    def __init__(self, retrievers: Sequence[Retriever], *, depth: int = 50,
                 constant: int = 60) -> None:
        self.retrievers = list(retrievers)
        self.depth = depth
        self.constant = constant

    def search(self, question: str, k: int) -> list[Hit]:
        fused: dict[str, float] = {}
        first_seen: dict[str, int] = {}
        for retriever in self.retrievers:
            for rank, hit in enumerate(retriever.search(question, self.depth), start=1):
                fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + 1.0 / (self.constant + rank)
                first_seen.setdefault(hit.chunk_id, len(first_seen))
        order = sorted(fused, key=lambda cid: (-round(fused[cid], 12), first_seen[cid]))
        return [Hit(chunk_id, fused[chunk_id]) for chunk_id in order[:k]]
