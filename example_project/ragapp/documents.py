"""The pipeline's records: source documents and the chunks cut from them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .text import WordIndex

__all__ = ["Chunk", "Document"]


@dataclass(frozen=True)
class Document:
    """A source document.  ``metadata`` holds at least ``source`` and ``title``."""

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return str(self.metadata.get("source") or self.id)

    @property
    def title(self) -> str:
        return str(self.metadata.get("title") or self.id)

    @cached_property
    def word_index(self) -> WordIndex:
        """Word offsets, computed once per document."""
        return WordIndex(self.text)


@dataclass(frozen=True)
class Chunk:
    """A character span ``[start, end)`` of a document, with its text and metadata."""

    id: str
    doc_id: str
    start: int
    end: int
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def overlap(self, other: Chunk) -> int:
        """Characters this chunk shares with ``other`` (0 across documents)."""
        if other.doc_id != self.doc_id:
            return 0
        return max(0, min(self.end, other.end) - max(self.start, other.start))

    def as_record(self) -> dict[str, Any]:
        """The chunk as a ``chunks`` entry of the pytest-rag/v1 format."""
        return {"id": self.id, "doc_id": self.doc_id, "start": self.start, "end": self.end,
                "metadata": dict(self.metadata)}
