"""Finding a chunk's or a quote's text in its document, and naming a place in a text.

The first exact occurrence at or after ``search_from`` wins; failing that, the
first occurrence where every run of whitespace may match any other non-empty
run of whitespace (a leading or trailing run matches the document's whole run).

The whitespace-flexible search runs in time linear in the text and the needle:
the needle's inner words must equal consecutive words of the text, found with
the Knuth-Morris-Pratt scan over the word sequence, and only its first and
last words may be a suffix and a prefix of a text word.  (A regular expression
``w1\\s+w2\\s+...`` takes quadratic time on repetitive text: seconds for a
10k-token quote.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..escaping import quoted

__all__ = ["line_column", "locate", "nearest_text"]

_WORDS = re.compile(r"\S+")
#: Characters shown on each side where a quote and its document part.
_CONTEXT = 30


def _failure(pattern: list[str]) -> list[int]:
    """The Knuth-Morris-Pratt failure function of a word sequence."""
    failure = [0] * len(pattern)
    k = 0
    for i in range(1, len(pattern)):
        while k and pattern[i] != pattern[k]:
            k = failure[k - 1]
        if pattern[i] == pattern[k]:
            k += 1
        failure[i] = k
    return failure


def _occurrences(words: list[str], pattern: list[str]) -> list[int]:
    """Where ``pattern`` starts in ``words``, in order (every occurrence, overlapping)."""
    failure, found, k = _failure(pattern), [], 0
    for i, word in enumerate(words):
        while k and word != pattern[k]:
            k = failure[k - 1]
        if word == pattern[k]:
            k += 1
            if k == len(pattern):
                found.append(i - k + 1)
                k = failure[k - 1]
    return found


def _flexible(text: str, needle: str, search_from: int) -> tuple[int, int] | None:
    """The first whitespace-flexible occurrence (see the module), in linear time."""
    parts = needle.split()
    lead, trail = needle[:1].isspace(), needle[-1:].isspace()
    if len(parts) < 2:  # no inner whitespace: a bounded pattern, no backtracking to fear
        pattern = ("(?<!\\s)\\s+" if lead else "") + "".join(map(re.escape, parts)) + (
            "\\s+" if trail and parts else "")
        match = re.compile(pattern).search(text, search_from)
        return None if match is None else (match.start(), match.end())
    spans = [match.span() for match in _WORDS.finditer(text)]
    words = [text[start:end] for start, end in spans]
    first, middle, last = parts[0], parts[1:-1], parts[-1]
    # Candidates: j is the index of the text word that holds the needle's first word.
    if middle:
        candidates: Iterable[int] = (j - 1 for j in _occurrences(words, middle) if j >= 1)
    else:
        candidates = range(len(words) - 1)
    for j in candidates:
        end_word = j + len(parts) - 1
        if end_word >= len(words):
            break
        word_start, word_end = spans[j]
        if lead:  # the first word whole, from the start of the whitespace run before it
            if words[j] != first or (word_start == 0):
                continue
            start = spans[j - 1][1] if j else 0
        else:
            if not words[j].endswith(first):
                continue
            start = word_end - len(first)
        if start < search_from:
            continue
        last_start, last_end = spans[end_word]
        if trail:  # the last word whole, to the end of the whitespace run after it
            if words[end_word] != last or last_end == len(text):
                continue
            end = spans[end_word + 1][0] if end_word + 1 < len(spans) else len(text)
        else:
            if not words[end_word].startswith(last):
                continue
            end = last_start + len(last)
        return start, end
    return None


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
    return _flexible(text, needle, search_from)


def line_column(text: str, offset: int) -> str:
    """``"line L, column C"`` (both from 1) of the character at ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _longest(found: Callable[[int], bool], most: int) -> int:
    """The largest ``n`` in ``0..most`` with ``found(n)``, ``found`` being monotonic."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if found(middle):
            low = middle
        else:
            high = middle - 1
    return low


def nearest_text(text: str, needle: str, search_from: int = 0) -> str:
    """For a ``needle`` that :func:`locate` does not find in ``text`` at or after
    ``search_from``: where the longest beginning (or end) of it is found, and the text on
    both sides where they part, as the end of a message (``""`` when what is found is
    too short to tell: a quarter of the needle or less).

    A beginning found means every shorter beginning is found too, so a binary
    search over its length takes a logarithmic number of linear searches.

    >>> hint = nearest_text("Ends in 30 days.", "in 30 dayz")
    >>> hint.split(", which ")  # doctest: +NORMALIZE_WHITESPACE
    ['; its first 9 characters are at character 5 of the document',
     "goes on 's.' where the quote has 'z'"]
    """
    if search_from:
        earlier = locate(text, needle)
        if earlier is not None:
            return (f"; it is at character {earlier[0]}, before the search start (chunks "
                    "given by text are located in order, each after the one before)")
    head = _longest(lambda n: locate(text, needle[:n], search_from) is not None, len(needle))
    tail = _longest(lambda n: locate(text, needle[len(needle) - n:], search_from) is not None,
                    len(needle))
    if max(head, tail) <= max(2, len(needle) // 4):
        return ""
    if head >= tail:
        span = locate(text, needle[:head], search_from)
        assert span is not None
        return (f"; its first {head} characters are at character {span[0]} of the document, "
                f"which goes on {quoted(text[span[1]:span[1] + _CONTEXT])} where the quote "
                f"has {quoted(needle[head:head + _CONTEXT])}")
    cut = len(needle) - tail
    span = locate(text, needle[cut:], search_from)
    assert span is not None
    return (f"; its last {tail} characters are at character {span[0]} of the document, "
            f"which has {quoted(text[max(0, span[0] - _CONTEXT):span[0]])} before them where "
            f"the quote has {quoted(needle[max(0, cut - _CONTEXT):cut])}")
