"""The linear whitespace-flexible search against the regular expression it replaces."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.text.locate import locate


def regex_locate(text: str, needle: str, search_from: int = 0) -> tuple[int, int] | None:
    """The former implementation: exact, then ``word\\s+word...`` as a regular expression."""
    if not needle:
        return None
    found = text.find(needle, search_from)
    if found >= 0:
        return found, found + len(needle)
    pieces = []
    for index, part in enumerate(re.split(r"(\s+)", needle)):
        if part:
            pieces.append(r"\s+" if index % 2 else re.escape(part))
    pattern = "".join(pieces)
    if needle[:1].isspace():
        pattern = r"(?<!\s)" + pattern
    match = re.compile(pattern).search(text, search_from)
    return None if match is None else (match.start(), match.end())


# Few letters and several kinds of whitespace, so that near matches abound.
_TEXT = st.lists(st.sampled_from(["a", "b", "ab", " ", "  ", "\n", "\t", "\u00a0"]),
                 max_size=20).map("".join)


@settings(max_examples=3000)
@given(text=_TEXT, needle=_TEXT.filter(bool), data=st.data())
def test_the_same_span_as_the_regular_expression(text: str, needle: str,
                                                 data: st.DataObject) -> None:
    search_from = data.draw(st.integers(0, len(text)))
    assert locate(text, needle, search_from) == regex_locate(text, needle, search_from)


@settings(max_examples=500)
@given(words=st.lists(st.sampled_from(["a", "b", "ab", "ba"]), min_size=1, max_size=12),
       data=st.data())
def test_a_needle_cut_from_the_text_with_other_whitespace_is_found(words: list[str],
                                                                   data: st.DataObject) -> None:
    text = " ".join(words) + " " + " ".join(reversed(words))
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i + 1, len(words)))
    needle = "\n\t".join(words[i:j])
    assert locate(text, needle) == regex_locate(text, needle)
    assert locate(text, needle) is not None


def test_a_long_quote_in_repetitive_text() -> None:
    """10,000 words of quote in 40,000 words of text that repeat (the regular expression
    took seconds here; the hostile-input table bounds the time of such files)."""
    text = " ".join(["the"] * 40_000) + " end"
    needle = "\n".join(["the"] * 9_999 + ["end"])
    assert locate(text, needle) == (4 * 30_001, len(text))
