"""Context packing: choose the chunks that go into the prompt, under a word budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .documents import Chunk
from .retrieval import Hit

__all__ = ["PackedContext", "pack_context"]


@dataclass(frozen=True)
class PackedContext:
    """The chunks of a prompt, in prompt order, and how many words they hold."""

    chunks: tuple[Chunk, ...]
    words: int
    skipped_duplicates: int

    @property
    def ids(self) -> list[str]:
        return [chunk.id for chunk in self.chunks]

    @property
    def text(self) -> str:
        return "\n\n".join(chunk.text for chunk in self.chunks)


def _edges_first(ranked: Sequence[Chunk]) -> tuple[Chunk, ...]:
    """Best chunks at both ends, weakest in the middle.

    Models read the start and the end of a long prompt best ("lost in the
    middle", Liu et al., 2023): rank 1 goes first, rank 2 last, rank 3
    second, rank 4 second to last, and so on.
    """
    front: list[Chunk] = []
    back: list[Chunk] = []
    for i, chunk in enumerate(ranked):
        (front if i % 2 == 0 else back).append(chunk)
    return tuple(front + back[::-1])


def pack_context(hits: Sequence[Hit], chunks: Mapping[str, Chunk], word_counts: Mapping[str, int],
                 *, budget: int, max_overlap: float = 0.2) -> PackedContext:
    """Fill the prompt with the best chunks that fit in ``budget`` words.

    Candidates are taken in ``hits`` order.  A chunk that shares more than
    ``max_overlap`` of its characters with a chunk already packed (overlapping
    windows of the same document) is skipped as a duplicate; a chunk that
    does not fit in the words left is skipped, and smaller ones after it may
    still fit.  The packed chunks are then placed best-at-the-edges.
    """
    chosen: list[Chunk] = []
    used = 0
    duplicates = 0
    for hit in hits:
        chunk = chunks[hit.chunk_id]
        length = max(chunk.end - chunk.start, 1)
        if any(chunk.overlap(other) > max_overlap * length for other in chosen):
            duplicates += 1
            continue
        size = word_counts[chunk.id]
        if used + size > budget:
            continue
        chosen.append(chunk)
        used += size
    return PackedContext(_edges_first(chosen), used, duplicates)
