"""Test-side glue: turn the pipeline's output into pytest-rag inputs, and derive gold.

The chroma gold marks evidence as character spans, not chunk ids, so each
question's ``relevant`` chunks are derived here from the chunking under test.
The gold therefore stays valid whatever the chunker does.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
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
    "relevance_grades",
]

WHOLE, PARTIAL = 2, 1
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


def relevance_grades(chunks: Sequence[Chunk], gold: Dataset) -> dict[str, dict[str, int]]:
    """Each question's graded relevant chunks, from its evidence spans.

    Grade 2: the chunk holds a whole gold span.  Grade 1: it shares at least
    one character with a span but holds none whole.  Other chunks are not
    listed (grade 0).  Questions without evidence get no entry.
    """
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in sorted(chunks, key=lambda c: (c.doc_id, c.start, c.end)):
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    starts = {doc_id: [c.start for c in doc_chunks] for doc_id, doc_chunks in by_doc.items()}
    relevant: dict[str, dict[str, int]] = {}
    for query in gold.queries:
        grades: dict[str, int] = {}
        for span in query.expected_evidence:
            doc_chunks = by_doc.get(span.doc_id, [])
            # Chunks that start at or after the span's end cannot touch it.
            stop = bisect.bisect_left(starts.get(span.doc_id, []), span.end)
            for chunk in doc_chunks[:stop]:
                if chunk.end <= span.start:
                    continue
                whole = chunk.start <= span.start and span.end <= chunk.end
                grades[chunk.id] = max(grades.get(chunk.id, 0), WHOLE if whole else PARTIAL)
        if grades:
            relevant[query.id] = grades
    return relevant


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

    def relevant(self) -> dict[str, dict[str, int]]:
        """Graded relevant chunks of every question with evidence (see :func:`relevance_grades`)."""
        return relevance_grades(self.pipeline.chunks, self.gold)

    def questions(self) -> dict[str, str]:
        return {query.id: query.question or "" for query in self.gold.queries}

    def run(self, field: Callable[[Trace], T]) -> dict[str, T]:
        """One value per question from the traces: ``bench.run(lambda t: t.context_ids)``."""
        return {query_id: field(trace) for query_id, trace in self.traces.items()}
