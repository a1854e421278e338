"""Tokens: maximal matches of ``\\w+`` (Python ``re``, Unicode), compared in lowercase.

``tokenize`` does not run the regular expression on documents (it uses a code
point table), so it is checked against ``re.finditer`` on random Unicode text.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.text.tokens import WORD, span_intervals, text_tokens, tokenize

# Characters where "\w" is easy to get wrong: combining marks (not \w), digits of
# other scripts, letter-like numbers, the underscore, joiners, emoji, case
# mappings that change length, and whitespace/punctuation from all over Unicode.
TRICKY = ("_", "\u0301", "\u0308", "\u20dd", "\u0663", "\u096b", "\uff13", "\u00b2", "\u2167",
          "\u2460", "\u00bd", "\u200d", "\u200b", "\u2019", "\u00b7", "\u0130", "\u00df",
          "\ufb03", "\u01c5", "\u03a3", "\u1e9e", "\U0001f642", "\U0001f44d\U0001f3fd",
          "\U0001d7d8", "\u4e2d", "\u3042", "\u0627", "\u05d0", "\u00a0", "\u3000", "\u2028",
          "\x1c", "\x85", "-", "'", " ", "\n", "a", "Z", "9")

UNICODE_TEXT = st.lists(
    st.one_of(st.sampled_from(TRICKY),
              st.characters(exclude_categories=("Cs",)),
              st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=4)),
    max_size=30,
).map("".join)


def expected_tokens(text: str) -> tuple[list[int], list[int], list[str]]:
    matches = list(re.finditer(r"\w+", text))
    return ([m.start() for m in matches], [m.end() for m in matches],
            [m.group().lower() for m in matches])


@settings(max_examples=budget(1000), derandomize=True, deadline=None)
@given(UNICODE_TEXT)
def test_tokenize_equals_the_regular_expression(text: str) -> None:
    starts, ends, words = expected_tokens(text)
    table = tokenize(text)
    assert table.starts.tolist() == starts
    assert table.ends.tolist() == ends
    assert table.words == words
    assert len(table) == len(words)
    assert text_tokens(text) == words


@pytest.mark.parametrize("char", TRICKY)
def test_each_tricky_character_alone_and_between_letters(char: str) -> None:
    for text in (char, f"a{char}b", f"{char}{char}", f" {char}x{char} "):
        starts, ends, words = expected_tokens(text)
        table = tokenize(text)
        assert (table.starts.tolist(), table.ends.tolist(), table.words) == (starts, ends, words)


def test_every_code_point_is_classified_like_the_regular_expression() -> None:
    # One text with every non-surrogate code point, separated so each is its own token.
    points = [p for p in range(0x110000) if not 0xD800 <= p <= 0xDFFF]
    text = "".join(chr(p) for p in points)
    table = tokenize(text)
    is_word = np.zeros(len(text), dtype=bool)
    for start, end in zip(table.starts.tolist(), table.ends.tolist()):
        is_word[start:end] = True
    expected = np.zeros(len(text), dtype=bool)
    for match in WORD.finditer(text):
        expected[match.start():match.end()] = True
    wrong = np.flatnonzero(is_word != expected)
    assert wrong.size == 0, [hex(points[i]) for i in wrong[:10]]


def test_docstring_example() -> None:
    table = tokenize("Hi, Bob!")
    assert ((table.starts.tolist(), table.ends.tolist(), table.words)
            == ([0, 4], [2, 7], ["hi", "bob"]))


def test_empty_and_wordless_text() -> None:
    for text in ("", " ", "...", "\u0301\u0301", "\U0001f642"):
        table = tokenize(text)
        assert len(table) == 0 and table.words == [] and text_tokens(text) == []
        assert table.starts.dtype == np.int64 and table.ends.dtype == np.int64


def test_offsets_are_code_points_and_words_are_lowercase() -> None:
    text = "ÉCOLE 🙂 İstanbul x\u0301y 3\u0663_4"
    table = tokenize(text)
    assert [text[s:e] for s, e in zip(table.starts.tolist(), table.ends.tolist())] == [
        "ÉCOLE", "İstanbul", "x", "y", "3\u0663_4"]
    # str.lower() of the match, even where it changes the length.
    assert table.words == ["école", "i\u0307stanbul", "x", "y", "3\u0663_4"]


def test_text_tokens() -> None:
    assert text_tokens("I don't KNOW, 2,048 MB.") == ["i", "don", "t", "know", "2", "048", "mb"]


# -- spans -------------------------------------------------------------------------------


def brute_intervals(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token indices overlapping each span by at least one character."""
    tokens = [(m.start(), m.end()) for m in re.finditer(r"\w+", text)]
    result = []
    for start, end in spans:
        inside = [i for i, (ts, te) in enumerate(tokens) if start < end and ts < end and te > start]
        lo = inside[0] if inside else None
        if lo is None:
            result.append(None)
        else:
            assert inside == list(range(lo, inside[-1] + 1))
            result.append((lo, inside[-1] + 1))
    return result


@settings(max_examples=budget(500), derandomize=True, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab_ .\u0301\u0663"), max_size=20).flatmap(
    lambda text: st.tuples(
        st.just(text),
        st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))), max_size=8))))
def test_span_intervals_are_the_overlapping_tokens(case: tuple[str, list[tuple[int, int]]]) -> None:
    text, spans = case
    table = tokenize(text)
    lo, hi = span_intervals(table, [s for s, _ in spans], [e for _, e in spans])
    assert lo.dtype == np.int64 and hi.dtype == np.int64
    for (start, end), low, high, want in zip(spans, lo.tolist(), hi.tolist(),
                                             brute_intervals(text, spans)):
        if want is None:
            assert low == high, (start, end)  # no token: an empty interval
        else:
            assert (low, high) == want, (start, end)


def test_word_cut_by_a_boundary_belongs_to_both_sides() -> None:
    table = tokenize("alpha beta")
    lo, hi = span_intervals(table, [0, 3], [3, 10])
    assert list(zip(lo.tolist(), hi.tolist())) == [(0, 1), (0, 2)]


def test_empty_span_holds_no_token() -> None:
    table = tokenize("alpha beta")
    lo, hi = span_intervals(table, [2, 6, 7], [2, 6, 3])
    assert (hi - lo).tolist() == [0, 0, 0]


def test_span_intervals_accepts_scalars() -> None:
    lo, hi = span_intervals(tokenize("alpha beta"), 0, 3)
    assert (int(lo), int(hi)) == (0, 1)
