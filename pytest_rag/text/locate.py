"""Finding a chunk's or a quote's text in its document, and naming a place in a text.

The first exact occurrence at or after ``search_from`` wins; failing that, the
first occurrence where every run of whitespace may match any other non-empty
run of whitespace (a leading or trailing run matches the document's whole run).
"""

from __future__ import annotations

import re

__all__ = ["line_column", "locate"]

_WHITESPACE_RUNS = re.compile(r"(\s+)")


def _flexible_pattern(needle: str) -> re.Pattern[str]:
    parts = _WHITESPACE_RUNS.split(needle)
    pieces: list[str] = []
    for index, part in enumerate(parts):
        if not part:
            continue
        if index % 2:
            pieces.append(r"\s+")
        else:
            pieces.append(re.escape(part))
    pattern = "".join(pieces)
    if needle[:1].isspace():
        # A leading run matches the document's whole run: start where it starts.
        pattern = r"(?<!\s)" + pattern
    return re.compile(pattern)


def locate(text: str, needle: str, search_from: int = 0) -> tuple[int, int] | None:
    """``(start, end)`` of ``needle`` in ``text`` at or after ``search_from``, or ``None``.

    Examples
    --------
    >>> locate("a  b\\nc", "b c")
    (3, 6)
    >>> locate("abc abc", "abc", 1)
    (4, 7)
    """
    if not needle:
        return None
    found = text.find(needle, search_from)
    if found >= 0:
        return found, found + len(needle)
    match = _flexible_pattern(needle).search(text, search_from)
    if match is None:
        return None
    return match.start(), match.end()


def line_column(text: str, offset: int) -> str:
    """``"line L, column C"`` (both from 1) of the character at ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"
