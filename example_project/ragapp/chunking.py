"""Chunkers: each a small function from a :class:`Document` to its chunks.

Four strategies, chosen by name through :data:`CHUNKERS`:

``markdown``
    Recursive splitting along the document's structure: headings open a new
    chunk, and paragraphs, lists, tables and code blocks are kept whole when
    they fit in ``max_words``; a block that does not fit is split at lines,
    then sentences, then words.
``tokens``
    Fixed windows of ``size`` words, each starting ``size - overlap`` words
    after the previous one.
``sentences``
    Windows of ``size`` sentences, ``overlap`` of them shared with the next.
``naive``
    Fixed windows of ``size`` characters, cut wherever they fall, with no
    section metadata.  Kept as the "what not to do" reference.

Every chunk carries ``doc_id``, ``start``/``end`` offsets and the metadata
``source``, ``section`` (the heading it sits under, else the document title)
and ``chunker``; ``naive`` leaves ``section`` out.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .documents import Chunk, Document
from .text import Block, markdown_blocks, sentence_spans

__all__ = [
    "CHUNKERS",
    "Chunker",
    "chunk_documents",
    "fixed_token_windows",
    "make_chunker",
    "markdown_recursive",
    "naive_characters",
    "sentence_windows",
]

Chunker = Callable[[Document], list[Chunk]]
Span = tuple[int, int]

_HEADING_MARKS = re.compile(r"^[#=\s]+|[#=\s]+$")


class _Sections:
    """The heading above any offset of a document."""

    def __init__(self, document: Document, blocks: Iterable[Block] | None = None) -> None:
        headings = [b for b in (blocks if blocks is not None else markdown_blocks(document.text))
                    if b.kind == "heading"]
        self._starts = [b.start for b in headings]
        self._names = [_heading_text(document.text[b.start:b.end]) for b in headings]
        self._title = document.title

    def at(self, offset: int) -> str:
        i = bisect.bisect_right(self._starts, offset) - 1
        return self._names[i] if i >= 0 else self._title


def _heading_text(line: str) -> str:
    """``"= = Gameplay = ="``, ``"## Gameplay"`` and ``"==== Gameplay"`` all give ``"Gameplay"``."""
    return _HEADING_MARKS.sub("", line) or line.strip()


def _make_chunks(document: Document, spans: Iterable[Span], chunker: str,
                 sections: _Sections | None) -> list[Chunk]:
    chunks = []
    for number, (start, end) in enumerate(spans):
        metadata: dict[str, Any] = {"source": document.source, "chunker": chunker}
        if sections is not None:
            metadata["section"] = sections.at(start)
        chunks.append(Chunk(f"{document.id}#{number:04d}", document.id, start, end,
                            document.text[start:end], metadata))
    return chunks


def fixed_token_windows(document: Document, *, size: int = 200, overlap: int = 40) -> list[Chunk]:
    """Windows of ``size`` words; consecutive windows share ``overlap`` words.

    A window runs from the first character of its first word to the last
    character of its last word.  The last window ends at the last word.
    """
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need size >= 1 and 0 <= overlap < size, got {size=}, {overlap=}")
    index = document.word_index
    n = len(index)
    spans = []
    for first in range(0, max(n, 1), size - overlap):
        if n == 0:
            break
        last = min(first + size, n) - 1
        spans.append((index.starts[first], index.ends[last]))
        if last == n - 1:
            break
    return _make_chunks(document, spans, f"tokens-{size}-{overlap}", _Sections(document))


def sentence_windows(document: Document, *, size: int = 5, overlap: int = 1) -> list[Chunk]:
    """Windows of ``size`` sentences; consecutive windows share ``overlap`` sentences."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need size >= 1 and 0 <= overlap < size, got {size=}, {overlap=}")
    sentences = sentence_spans(document.text)
    spans = []
    for first in range(0, len(sentences), size - overlap):
        window = sentences[first:first + size]
        spans.append((window[0][0], window[-1][1]))
        if first + size >= len(sentences):
            break
    return _make_chunks(document, spans, f"sentences-{size}-{overlap}", _Sections(document))


def naive_characters(document: Document, *, size: int = 400) -> list[Chunk]:
    """Windows of ``size`` characters, cut mid-word, without section metadata."""
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    spans = [(start, min(start + size, len(document.text)))
             for start in range(0, len(document.text), size)]
    return _make_chunks(document, spans, f"naive-{size}", None)


def _split_to_fit(document: Document, start: int, end: int, max_words: int) -> list[Span]:
    """Cut ``[start, end)`` into pieces of at most ``max_words`` words.

    Tries line breaks first, then sentence ends, then word windows, and packs
    the resulting parts greedily so that pieces stay as large as allowed.
    """
    index = document.word_index
    text = document.text
    if index.count(start, end) <= max_words:
        return [(start, end)]
    lines = []
    position = start
    for line in text[start:end].split("\n"):
        if line.strip():
            left = position + len(line) - len(line.lstrip())
            lines.append((left, position + len(line.rstrip())))
        position += len(line) + 1
    parts = lines if len(lines) > 1 else sentence_spans(text, start, end)
    if len(parts) <= 1:  # one long sentence: plain word windows
        first = index.first_in(start)
        last = first + index.count(start, end)
        return [(index.starts[i], index.ends[min(i + max_words, last) - 1])
                for i in range(first, last, max_words)]
    pieces: list[Span] = []
    for part in parts:
        pieces.extend(_split_to_fit(document, part[0], part[1], max_words))
    return _pack(document, pieces, max_words)


def _pack(document: Document, pieces: list[Span], max_words: int) -> list[Span]:
    packed: list[Span] = []
    words = 0
    for start, end in pieces:
        size = document.word_index.count(start, end)
        if packed and words + size <= max_words:
            packed[-1] = (packed[-1][0], end)
            words += size
        else:
            packed.append((start, end))
            words = size
    return packed


def markdown_recursive(document: Document, *, max_words: int = 200) -> list[Chunk]:
    """Structure-aware chunks of at most ``max_words`` words.

    A heading always opens a new chunk and stays with the text below it.
    Blocks are added to the open chunk while they fit; a block too large for
    any chunk is split by :func:`_split_to_fit` and its pieces packed.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    blocks = markdown_blocks(document.text)
    index = document.word_index
    spans: list[Span] = []
    open_start: int | None = None
    open_end = 0
    open_words = 0
    only_headings = False

    def close() -> None:
        nonlocal open_start
        if open_start is not None:
            spans.append((open_start, open_end))
        open_start = None

    for block in blocks:
        size = index.count(block.start, block.end)
        if block.kind == "heading":
            if not only_headings:
                close()
            if open_start is None:
                open_start, open_words = block.start, 0
            open_end, open_words, only_headings = block.end, open_words + size, True
            continue
        if open_start is not None and open_words + size <= max_words:
            open_end, open_words, only_headings = block.end, open_words + size, False
            continue
        pieces = _split_to_fit(document, block.start, block.end, max_words)
        if open_start is not None and only_headings and open_words < max_words:
            # Keep the heading with the text below it: cut the first piece
            # smaller when the two do not fit together.
            if open_words + index.count(*pieces[0]) > max_words:
                pieces[:1] = _split_to_fit(document, *pieces[0], max_words - open_words)
            pieces[0] = (open_start, pieces[0][1])
            open_start = None
        close()
        for piece in pieces[:-1]:
            spans.append(piece)
        open_start, open_end = pieces[-1]
        open_words, only_headings = index.count(*pieces[-1]), False
    close()
    return _make_chunks(document, spans, f"markdown-{max_words}", _Sections(document, blocks))


#: Chunkers by name; their keyword arguments are the tuning knobs.
CHUNKERS: Mapping[str, Callable[..., list[Chunk]]] = {
    "markdown": markdown_recursive,
    "tokens": fixed_token_windows,
    "sentences": sentence_windows,
    "naive": naive_characters,
}


def make_chunker(name: str, **params: Any) -> Chunker:
    """The chunker ``name`` with its parameters bound: ``make_chunker("tokens", size=128)``."""
    try:
        function = CHUNKERS[name]
    except KeyError:
        known = ", ".join(sorted(CHUNKERS))
        raise ValueError(f"unknown chunker {name!r}; known: {known}") from None
    return functools.partial(function, **params)


def chunk_documents(documents: Iterable[Document], chunker: Chunker) -> list[Chunk]:
    """All chunks of ``documents``, in document order then offset order."""
    return [chunk for document in documents for chunk in chunker(document)]
