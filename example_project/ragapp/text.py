"""Words, sentences and blocks: the text rules every stage of the pipeline shares.

A *word* is a maximal run of ``\\w`` characters, compared in lowercase, the
same rule pytest-rag uses to count tokens, so the pipeline's token budget and
the evaluator's ``budget_compliant`` agree.  Offsets are Python ``str``
indices into the document text, ``[start, end)``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "STOPWORDS",
    "Block",
    "WordIndex",
    "content_terms",
    "estimate_llm_tokens",
    "markdown_blocks",
    "sentence_spans",
    "words",
]

WORD = re.compile(r"\w+")

#: Function words that carry no topic.  Kept short on purpose: question words
#: such as "when" or "who" are dropped, numbers and negations are kept.
STOPWORDS: frozenset[str] = frozenset("""
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is
it its itself just me more most my myself of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself
yourselves s t d ll m re ve unk
""".split())

# A sentence ends after . ! or ? followed by whitespace, at a line break, or at a
# literal "\n" escape (the chat logs are a Python repr of the messages).
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\s*\n\s*|(?:\\n)+")
_HEADING = re.compile(r"^(?:#{1,6}\s+\S.*|\s*(=+)\s+\S.*\s\1\s*|={3,}\s+\S.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_TABLE_ROW = re.compile(r"^\s*\||\S\s\|\s")


def words(text: str) -> list[str]:
    """The lowercase words of ``text``: ``words("Hi, Bob!") == ["hi", "bob"]``."""
    return [match.group().lower() for match in WORD.finditer(text)]


def content_terms(text: str) -> list[str]:
    """The words of ``text`` without :data:`STOPWORDS`, in order, repeats kept."""
    return [word for word in words(text) if word not in STOPWORDS]


def estimate_llm_tokens(text: str) -> int:
    """LLM tokens of ``text`` by the usual rule of thumb, one per 4 characters (rounded up)."""
    return -(-len(text) // 4)


class WordIndex:
    """The word offsets of one text, to count and cut words in character ranges."""

    __slots__ = ("ends", "starts")

    def __init__(self, text: str) -> None:
        spans = [match.span() for match in WORD.finditer(text)]
        self.starts: list[int] = [start for start, _ in spans]
        self.ends: list[int] = [end for _, end in spans]

    def __len__(self) -> int:
        return len(self.starts)

    def count(self, start: int, end: int) -> int:
        """Number of words that overlap ``[start, end)``."""
        first = bisect.bisect_right(self.ends, start)
        last = bisect.bisect_left(self.starts, end)
        return max(0, last - first)

    def first_in(self, start: int) -> int:
        """Index of the first word that ends after ``start``."""
        return bisect.bisect_right(self.ends, start)


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The sentences of ``text[start:end]`` as offsets into ``text``, trimmed of blanks.

    Pieces without a word are dropped.
    """
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    position = start
    for match in _SENTENCE_BREAK.finditer(text, start, stop):
        _append_trimmed(text, position, match.start(), spans)
        position = match.end()
    _append_trimmed(text, position, stop, spans)
    return spans


def _append_trimmed(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped and WORD.search(stripped):
        left = start + (len(piece) - len(piece.lstrip()))
        spans.append((left, left + len(stripped)))


@dataclass(frozen=True)
class Block:
    """A structural block of a document: heading, paragraph, list, table or code."""

    kind: str
    start: int
    end: int


def _lines(text: str) -> Iterator[tuple[int, int]]:
    position = 0
    for line in text.split("\n"):
        yield position, position + len(line)
        position += len(line) + 1


def markdown_blocks(text: str) -> list[Block]:
    """Split ``text`` into blocks, reading Markdown and its near relatives.

    Headings are Markdown (``# Title``), WikiText (``= = Title = =``) or the
    ``==== Body`` markers of PubMed dumps.  Tables are runs of lines with
    ``|`` cells, lists runs of items with their indented continuation lines,
    code the lines of a fenced block.  Everything else between blank lines is
    a paragraph.  A block ends before its final line break.
    """
    blocks: list[Block] = []
    lines = list(_lines(text))
    i = 0
    while i < len(lines):
        start, end = lines[i]
        line = text[start:end]
        if not line.strip():
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            j = i + 1
            marker = fence.group(1)
            while j < len(lines) and not text[lines[j][0]:lines[j][1]].lstrip().startswith(marker):
                j += 1
            j = min(j, len(lines) - 1)
            blocks.append(Block("code", start, lines[j][1]))
            i = j + 1
            continue
        if _HEADING.match(line):
            blocks.append(Block("heading", start, end))
            i += 1
            continue
        kind = ("table" if _TABLE_ROW.search(line)
                else "list" if _LIST_ITEM.match(line) else "paragraph")
        j = i + 1
        while j < len(lines):
            follow = text[lines[j][0]:lines[j][1]]
            if not follow.strip() or _HEADING.match(follow) or _FENCE.match(follow):
                break
            is_row = bool(_TABLE_ROW.search(follow))
            if kind == "table" and not is_row:
                break
            if kind != "table" and is_row:
                break
            if kind == "list" and not (_LIST_ITEM.match(follow) or follow[:1].isspace()):
                break
            if kind == "paragraph" and _LIST_ITEM.match(follow):
                break
            j += 1
        blocks.append(Block(kind, start, lines[j - 1][1]))
        i = j
    return blocks
