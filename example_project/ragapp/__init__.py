"""ragapp: a small retrieval-augmented question answering service.

It chunks documents, embeds and indexes the chunks, retrieves with BM25 and
dense search, reranks, packs a prompt under a word budget and answers
extractively.  Everything is deterministic and runs on numpy alone.

>>> from ragapp import Document, Pipeline, PipelineConfig
>>> pipeline = Pipeline(PipelineConfig.from_env(), [Document("faq", "Refunds take 30 days.")])
"""

from __future__ import annotations

from .answer import Answer, PriceTable
from .chunking import CHUNKERS, make_chunker
from .documents import Chunk, Document
from .pipeline import DEFAULT_CHUNKING, Pipeline, PipelineConfig, Trace
from .retrieval import Hit

__all__ = [
    "CHUNKERS",
    "DEFAULT_CHUNKING",
    "Answer",
    "Chunk",
    "Document",
    "Hit",
    "Pipeline",
    "PipelineConfig",
    "PriceTable",
    "Trace",
    "make_chunker",
]
