"""Markdown structural blocks: headings, fenced code, tables and lists.

``structural_integrity`` (chunking) asks whether each block of a document
stayed whole in one chunk.  The blocks are found here, in one pass over the
lines of the text (split at ``\\n`` only), by these rules (the README's
"Metric definitions", Chunking, states them for users):

``heading``
    An ATX heading line: ``#`` to ``######`` at the very start of the line,
    then a space.
``code``
    A fenced code block, from a line starting with ````` or ``~~~`` to the
    next line starting with the same three characters (or the end of the
    document).  Lines inside a fence belong to the fence only.
``table``
    Two or more consecutive lines whose first non-whitespace character is
    ``|``.
``list``
    Consecutive item lines (``^\\s*([-*+]|\\d+[.)])\\s+``) together with the
    non-blank indented lines under an item.  A list runs until a blank line
    or a line that is neither an item nor indented; a table indented inside
    a list belongs to the list only.

A block's span runs from the first character of its first line to the last
character of its last line, without the trailing newline.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

__all__ = ["Block", "markdown_blocks"]

_ITEM: Final = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+")
_HEADING: Final = re.compile(r"#{1,6} ")
_FENCES: Final = ("```", "~~~")
#: First characters a line of structure can start with, besides whitespace and
#: decimal digits; any other line is prose, which only ends an open list or table.
_MARKS: str = "#`~|-*+"


class Block(NamedTuple):
    """One structural block: its kind and character span ``[start, end)``."""

    kind: str
    start: int
    end: int


def markdown_blocks(text: str) -> list[Block]:
    """The structural blocks of a Markdown text, in document order.

    Parameters
    ----------
    text:
        The document text.

    Returns
    -------
    list of Block
        ``kind`` is ``"heading"``, ``"code"``, ``"table"`` or ``"list"``.
        Blocks do not overlap.  A block may hold no token (a heading of
        ``"# !"``); the caller ignores such blocks.

    Examples
    --------
    >>> markdown_blocks("# Title\\n\\n- a\\n  more\\n- b\\n\\ntext")
    [Block(kind='heading', start=0, end=7), Block(kind='list', start=9, end=23)]
    """
    blocks: list[Block] = []
    fence = ""          # the open fence's three characters, "" when none is open
    fence_start = 0
    list_start = -1     # first character of the open list, -1 when none is open
    list_end = 0
    table_start = -1    # first character of the open run of "|" lines
    table_end = 0
    table_lines = 0
    offset = 0
    for line in text.split("\n"):
        start = offset
        end = offset + len(line)
        offset = end + 1
        if fence:
            if line.startswith(fence):
                blocks.append(Block("code", fence_start, end))
                fence = ""
            continue
        first = line[:1]
        # Prose (no mark, whitespace or digit first) is no item, table row or heading.
        prose = first not in _MARKS and not first.isspace() and not first.isdecimal()
        head = line[:3]
        if prose or head in _FENCES:  # either ends an open list or table
            if list_start >= 0:
                blocks.append(Block("list", list_start, list_end))
                list_start = -1
            if table_lines >= 2:
                blocks.append(Block("table", table_start, table_end))
            table_lines = 0
            if not prose:
                fence, fence_start = head, start
            continue
        is_item = _ITEM.match(line) is not None
        if list_start >= 0:
            if is_item or (line[:1].isspace() and not line.isspace()):
                list_end = end
                continue
            blocks.append(Block("list", list_start, list_end))
            list_start = -1
        if is_item:
            if table_lines >= 2:
                blocks.append(Block("table", table_start, table_end))
            table_lines = 0
            list_start, list_end = start, end
            continue
        if line.lstrip().startswith("|"):
            if table_lines == 0:
                table_start = start
            table_lines += 1
            table_end = end
            continue
        if table_lines >= 2:
            blocks.append(Block("table", table_start, table_end))
        table_lines = 0
        if _HEADING.match(line) is not None:
            blocks.append(Block("heading", start, end))
    if fence:
        # An unclosed fence runs to the end of the document (without a final newline).
        stop = len(text) - 1 if text.endswith("\n") else len(text)
        blocks.append(Block("code", fence_start, max(fence_start, stop)))
    if list_start >= 0:
        blocks.append(Block("list", list_start, list_end))
    if table_lines >= 2:
        blocks.append(Block("table", table_start, table_end))
    return blocks
