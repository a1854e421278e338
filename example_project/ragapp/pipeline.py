"""The pipeline: configuration, indexing and one call per question."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .answer import Answer, ExtractiveAnswerer, PriceTable
from .chunking import CHUNKERS, chunk_documents, make_chunker
from .clock import elapsed_ms, now
from .documents import Chunk, Document
from .embedding import FloatMatrix, HashingEmbedder
from .index import ExactIndex, RandomProjectionIndex
from .packing import pack_context
from .rerank import ProximityReranker
from .retrieval import BM25Retriever, DenseRetriever, Hit, HybridRetriever, Retriever

__all__ = ["DEFAULT_CHUNKING", "Pipeline", "PipelineConfig", "Trace"]

#: The tuned settings of each chunker (see the chunker sweep in the tests).
DEFAULT_CHUNKING: Mapping[str, Mapping[str, int]] = {
    "markdown": {"max_words": 160},
    "tokens": {"size": 160, "overlap": 32},
    "sentences": {"size": 6, "overlap": 1},
    "naive": {"size": 400},
}


@dataclass(frozen=True)
class PipelineConfig:
    """Every knob of the pipeline.  The defaults are the tuned production settings."""

    chunker: str = "markdown"
    chunk_params: Mapping[str, int] = field(
        default_factory=lambda: dict(DEFAULT_CHUNKING["markdown"]))
    embedding_dim: int = 256
    ann_tables: int = 12
    ann_bits: int = 4
    ann_seed: int = 20240601
    retriever: str = "hybrid"
    candidates: int = 20
    rerank: bool = True
    context_words: int = 500
    abstain_below: float = 0.5
    price: PriceTable = field(default_factory=PriceTable)

    def with_chunker(self, name: str, **params: int) -> PipelineConfig:
        """This configuration with another chunker (its tuned settings unless given)."""
        if name not in CHUNKERS:
            raise ValueError(f"unknown chunker {name!r}; known: {', '.join(sorted(CHUNKERS))}")
        return replace(self, chunker=name, chunk_params=params or dict(DEFAULT_CHUNKING[name]))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> PipelineConfig:
        """The defaults, with the chunker taken from ``RAGAPP_CHUNKER`` when it is set."""
        env = os.environ if environ is None else environ
        config = cls()
        name = env.get("RAGAPP_CHUNKER", "").strip()
        return config.with_chunker(name) if name else config


@dataclass(frozen=True)
class Trace:
    """Everything the pipeline did for one question, for tests and logs."""

    question: str
    retrieved_ids: tuple[str, ...]
    reranked_ids: tuple[str, ...]
    context_ids: tuple[str, ...]
    answer: Answer
    retrieval_ms: float
    generation_ms: float
    total_ms: float


def _ms(start: float) -> float:
    return elapsed_ms(start)


class Pipeline:
    """Chunk, embed and index ``documents``; then answer questions with :meth:`ask`.

    Examples
    --------
    >>> docs = [Document("faq", "# Refunds\\n\\nRefunds are accepted within 30 days.")]
    >>> Pipeline(PipelineConfig(), docs).ask("When are refunds accepted?").answer.text
    'Refunds are accepted within 30 days.'
    """

    def __init__(self, config: PipelineConfig, documents: Iterable[Document]) -> None:
        self.config = config
        self.documents = {document.id: document for document in documents}
        self.chunks: list[Chunk] = chunk_documents(
            self.documents.values(), make_chunker(config.chunker, **config.chunk_params))
        self.chunk_by_id = {chunk.id: chunk for chunk in self.chunks}
        self.word_counts = {
            chunk.id: self.documents[chunk.doc_id].word_index.count(chunk.start, chunk.end)
            for chunk in self.chunks}
        self.embedder = HashingEmbedder(config.embedding_dim)
        self.vectors: FloatMatrix = self.embedder.embed([chunk.text for chunk in self.chunks])
        ids = [chunk.id for chunk in self.chunks]
        self.exact_index = ExactIndex(ids, self.vectors)
        self.ann_index = RandomProjectionIndex(ids, self.vectors, tables=config.ann_tables,
                                               bits=config.ann_bits, seed=config.ann_seed)
        bm25 = BM25Retriever(self.chunks)
        dense = DenseRetriever(self.embedder, self.exact_index)
        self.retrievers: dict[str, Retriever] = {
            "bm25": bm25,
            "dense": dense,
            "hybrid": HybridRetriever([bm25, dense]),
        }
        self.reranker = ProximityReranker(bm25.idf_of, self.chunk_by_id)
        self.answerer = ExtractiveAnswerer(bm25.idf_of, abstain_below=config.abstain_below,
                                           price=config.price)

    def retrieve(self, question: str, k: int, method: str | None = None) -> list[Hit]:
        """The top ``k`` chunks from one retriever (the configured one by default)."""
        return self.retrievers[method or self.config.retriever].search(question, k)

    def embed_query(self, question: str) -> FloatMatrix:
        return self.embedder.embed_one(question)

    def ann_search(self, question: str, k: int) -> list[str]:
        """The approximate index's top ``k`` for the question's embedding."""
        ids, _ = self.ann_index.search(self.embed_query(question), k)
        return ids

    def ask(self, question: str) -> Trace:
        """Retrieve, rerank, pack and answer, timing each step."""
        start = now()
        hits = self.retrieve(question, self.config.candidates)
        retrieval_ms = _ms(start)
        reranked = self.reranker.rerank(question, hits) if self.config.rerank else hits
        context = pack_context(reranked, self.chunk_by_id, self.word_counts,
                               budget=self.config.context_words)
        packed = set(context.ids)
        ranked = [self.chunk_by_id[hit.chunk_id] for hit in reranked if hit.chunk_id in packed]
        generation_start = now()
        answer = self.answerer.answer(question, ranked, context.text)
        generation_ms = _ms(generation_start)
        return Trace(question, tuple(h.chunk_id for h in hits), tuple(h.chunk_id for h in reranked),
                     tuple(context.ids), answer, retrieval_ms, generation_ms, _ms(start))

    def describe(self) -> dict[str, Any]:
        """A short summary for logs: the chunker, chunk count and index sizes."""
        return {"chunker": self.config.chunker, **self.config.chunk_params,
                "chunks": len(self.chunks), "indexed": len(self.exact_index)}
