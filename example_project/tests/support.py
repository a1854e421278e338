"""Test-side glue: turn the pipeline's output into pytest-rag inputs.

The gold marks evidence as character spans, not chunk ids; pytest.ini's
``rag_relevance_from_evidence = true`` grades each question's chunks from
those spans, so the gold stays valid whatever the chunker does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from pytest_rag import Dataset
from ragapp import Chunk, Document, Pipeline, Trace

__all__ = [
    "BOTH",
    "CLAPNQ",
    "Bench",
    "chunk_records",
    "documents_of",
    "expected_citations",
]

T = TypeVar("T")

#: Marks a test (or a parameter) to be judged against the ClapNQ gold file.
CLAPNQ = pytest.mark.rag_dataset("../data/clapnq/gold.json")
#: Parametrize the ``bench`` fixture over both datasets (``indirect=True``).
BOTH = [pytest.param("chroma", id="chroma"), pytest.param("clapnq", marks=CLAPNQ, id="clapnq")]


def documents_of(gold: Dataset) -> list[Document]:
    """The gold file's documents as the pipeline's input documents."""
    return [Document(d.id, d.text, dict(d.metadata or {})) for d in gold.documents]


def chunk_records(chunks: Iterable[Chunk]) -> list[dict[str, Any]]:
    """The ``chunks`` input of pytest-rag: id, doc_id, offsets and metadata."""
    return [chunk.as_record() for chunk in chunks]


def expected_citations(gold: Dataset) -> dict[str, list[str]]:
    """The documents a good answer cites: those holding the question's evidence."""
    return {query.id: sorted({span.doc_id for span in query.expected_evidence})
            for query in gold.queries if query.expected_evidence}


@dataclass(frozen=True, repr=False)
class Bench:
    """One gold dataset, the pipeline built over its documents, and its answers."""

    name: str
    gold: Dataset
    pipeline: Pipeline
    traces: Mapping[str, Trace]

    def __repr__(self) -> str:  # short: it appears in every failure report
        config = self.pipeline.config
        params = ",".join(f"{k}={v}" for k, v in config.chunk_params.items())
        return (f"<Bench {self.name}: {len(self.gold.queries)} questions, {len(self.chunks)} "
                f"chunks from {config.chunker}({params})>")

    @property
    def chunks(self) -> list[Chunk]:
        return self.pipeline.chunks

    def chunk_records(self) -> list[dict[str, Any]]:
        return chunk_records(self.pipeline.chunks)

    def questions(self) -> dict[str, str]:
        return {query.id: query.question or "" for query in self.gold.queries}

    def run(self, field: Callable[[Trace], T]) -> dict[str, T]:
        """One value per question from the traces: ``bench.run(lambda t: t.context_ids)``."""
        return {query_id: field(trace) for query_id, trace in self.traces.items()}
