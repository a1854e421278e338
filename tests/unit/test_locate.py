"""Locating text without offsets (SEMANTICS.md, "Tokens and spans").

The first exact occurrence at or after the search start wins; failing that,
the first occurrence where every run of whitespace matches any other non-empty
run of whitespace, a leading or trailing run of the text matching the
document's whole run.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.text.locate import locate, nearest_text


@pytest.mark.parametrize(("text", "needle", "search_from", "expected"), [
    ("abc abc", "abc", 0, (0, 3)),
    ("abc abc", "abc", 1, (4, 7)),
    ("abc abc", "abc", 4, (4, 7)),
    ("abc abc", "abc", 5, None),
    ("abc", "abc", 3, None),
    ("abc", "abcd", 0, None),
    ("abc", "", 0, None),
    ("", "a", 0, None),
    ("a  b\nc", "b c", 0, (3, 6)),
    ("a  b\nc", "a b c", 0, (0, 6)),
    ("a\t\n b", "a b", 0, (0, 5)),
    ("a b", "a \n\t b", 0, (0, 3)),
    ("ab", "a b", 0, None),             # a run of whitespace must match a non-empty run
    ("a b", "ab", 0, None),
    ("x.y (z)*", "x.y (z)*", 0, (0, 8)),  # no regular expression in the text
    ("x.y  (z)*", "x.y (z)*", 0, (0, 9)),
    ("xay (z)", "x.y (z)", 0, None),
    ("price $5 ^ [1]", "$5  ^ [1]", 0, (6, 14)),
    ("a\u00a0b\u2003c", "a b c", 0, (0, 5)),  # Unicode whitespace is whitespace
    ("Straße  café", "Straße café", 0, (0, 12)),
])
def test_locate(text: str, needle: str, search_from: int,
                expected: tuple[int, int] | None) -> None:
    assert locate(text, needle, search_from) == expected


def test_exact_match_wins_over_an_earlier_flexible_one() -> None:
    text = "refund  window ... refund window"
    assert locate(text, "refund window") == (19, 32)
    assert text[19:32] == "refund window"


def test_flexible_search_starts_at_search_from() -> None:
    text = "a  b a\tb"
    assert locate(text, "a b", 0) == (0, 4)
    assert locate(text, "a b", 1) == (5, 8)


def test_leading_whitespace_matches_the_whole_run() -> None:
    text = "x   \n  y"
    assert locate(text, " \ty") == (1, 8)
    # A run that starts before search_from cannot be matched whole after it.
    assert locate("x   \n  y", "\ty", 2) is None


def test_trailing_whitespace_matches_the_whole_run() -> None:
    assert locate("x y  \n\tz", "y\t") == (2, 7)
    assert locate("x y", "y \t") is None  # a run needs whitespace in the document


def test_leading_and_trailing_whitespace_together() -> None:
    text = "a  b  c"
    assert locate(text, "\nb\n") == (1, 6)


def test_whitespace_only_needle() -> None:
    assert locate("ab  \tcd", " ") == (2, 3)          # exact first
    assert locate("ab\t\ncd", "  ") == (2, 4)        # then the first whole run


def test_exact_match_inside_a_run_is_still_exact() -> None:
    # Exact occurrences need no whole-run rule.
    assert locate("a   b", " b") == (3, 5)


# -- against a plain reference implementation ------------------------------------------


def reference(text: str, needle: str, search_from: int = 0) -> tuple[int, int] | None:
    """The rule written out: try every start and end, shortest program, slowest run."""
    if not needle:
        return None
    found = text.find(needle, search_from)
    if found >= 0:
        return found, found + len(needle)
    pieces = re.split(r"(\s+)", needle)  # alternating: text, whitespace, text, ...

    def matches(start: int, end: int) -> bool:
        pattern = "".join(r"\s+" if i % 2 else re.escape(piece)
                          for i, piece in enumerate(pieces) if piece)
        if re.fullmatch(pattern, text[start:end]) is None:
            return False
        if needle[0].isspace() and start > 0 and text[start - 1].isspace():
            return False  # the leading run must be the document's whole run
        if needle[-1].isspace() and end < len(text) and text[end].isspace():
            return False  # so must the trailing run
        return True

    for start in range(search_from, len(text) + 1):
        for end in range(start, len(text) + 1):
            if matches(start, end):
                return start, end
    return None


TEXTS = st.text(alphabet=st.sampled_from("ab \t\n\u00a0."), max_size=14)


@settings(max_examples=budget(500), derandomize=True, deadline=None)
@given(TEXTS, TEXTS.filter(bool), st.integers(0, 15))
def test_locate_agrees_with_the_reference(text: str, needle: str, search_from: int) -> None:
    assert locate(text, needle, search_from) == reference(text, needle, search_from)


@settings(max_examples=budget(300), derandomize=True, deadline=None)
@given(st.lists(st.text(alphabet="abc.*", min_size=1, max_size=3), min_size=1, max_size=4),
       st.lists(st.text(alphabet=" \t\n", min_size=1, max_size=3), min_size=4, max_size=4),
       st.lists(st.text(alphabet=" \t\n", min_size=1, max_size=3), min_size=4, max_size=4))
def test_text_with_different_whitespace_is_found(words: list[str], runs: list[str],
                                                 other_runs: list[str]) -> None:
    document = "".join(word + run for word, run in zip(words, runs))
    needle = "".join(word + run for word, run in zip(words, other_runs)).rstrip()
    span = locate(document, needle)
    assert span is not None
    start, end = span
    assert re.sub(r"\s+", " ", document[start:end]) == re.sub(r"\s+", " ", needle)


# -- against the former implementation (a regular expression), on larger inputs -----------


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
_PIECES = st.lists(st.sampled_from(["a", "b", "ab", " ", "  ", "\n", "\t", "\u00a0"]),
                 max_size=20).map("".join)


@settings(max_examples=budget(3000))
@given(text=_PIECES, needle=_PIECES.filter(bool), data=st.data())
def test_the_same_span_as_the_regular_expression(text: str, needle: str,
                                                 data: st.DataObject) -> None:
    search_from = data.draw(st.integers(0, len(text)))
    assert locate(text, needle, search_from) == regex_locate(text, needle, search_from)


@settings(max_examples=budget(500))
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


@settings(max_examples=200, deadline=None)
@given(st.text("ab \n", max_size=40), st.text("abc \n", min_size=1, max_size=20))
def test_nearest_text_tells_the_truth(text: str, needle: str) -> None:
    """What the hint says is found is found there; an unfound needle gets no false hint."""
    if locate(text, needle) is not None:
        return
    hint = nearest_text(text, needle)
    match = re.match(r"; its (first|last) (\d+) characters are at character (\d+) ", hint)
    assert (match is None) == (hint == "")
    if match is None:
        return
    count, start = int(match.group(2)), int(match.group(3))
    assert len(needle) // 4 < count < len(needle)
    part = needle[:count] if match.group(1) == "first" else needle[len(needle) - count:]
    found = locate(text, part)
    assert found is not None and found[0] == start


# -- first occurrences of many needles ---------------------------------------------------

from hypothesis import given as _given  # noqa: E402
from hypothesis import settings as _settings  # noqa: E402
from hypothesis import strategies as _st  # noqa: E402

from pytest_rag.text import occurrences  # noqa: E402
from pytest_rag.text.occurrences import WINDOW, FirstOccurrences  # noqa: E402


@_settings(max_examples=200, deadline=None)
@_given(_st.text(alphabet="ab \u00e9\U0001f600", max_size=300),
        _st.lists(_st.tuples(_st.integers(0, 300), _st.integers(0, 120),
                             _st.text(alphabet="ab", max_size=3)), max_size=8),
        _st.integers(1, 4))
def test_first_occurrences_equal_str_find(text: str, cuts: list[tuple[int, int, str]],
                                          checks: int) -> None:
    """Needles taken from the text (some changed at the end), on texts that repeat
    themselves; few checks, so that the str.find fallback is taken too."""
    old = occurrences.MAX_CANDIDATES
    occurrences.MAX_CANDIDATES = checks
    try:
        index = FirstOccurrences(text)
        for start, length, tail in cuts:
            needle = text[start:start + WINDOW + length] + tail
            assert index.find(needle) == text.find(needle), needle
    finally:
        occurrences.MAX_CANDIDATES = old


def test_first_occurrences_check_one_candidate_per_distinct_needle() -> None:
    """Chunks of a long text that does not repeat: each is found at its first
    candidate, so the work is one comparison per needle, not a scan of the text."""
    words = [f"w{i * 7919 % 100003}" for i in range(40_000)]
    text = " ".join(words)
    needles = [" ".join(words[i:i + 50]) for i in range(0, len(words), 50)]
    index = FirstOccurrences(text)
    assert [index.find(needle) for needle in needles] == [text.find(n) for n in needles]
    assert index.compared == len(needles)
