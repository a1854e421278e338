"""Answer text metrics: tokens, token P/R/F1, LCS and ROUGE-L, facts, abstention, numbers.

Expected values are written as the arithmetic that gives them.  The fast
paths (ASCII tokenizer, set-based multiset intersection, bit-parallel LCS)
are checked against plain reference implementations on random input.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.kernels import answers
from pytest_rag.kernels.answers import (
    DEFAULT_ABSTAIN_PHRASES,
    abstains,
    answer_tokens,
    contains_run,
    fact_coverage,
    lcs_length,
    matched_tokens,
    normalize,
    numbers,
    rouge_l_f1,
    score_answer,
    score_tokens,
    token_scores,
)
from pytest_rag.text.tokens import text_tokens

# Characters where "\w" or lowercasing is easy to get wrong: combining marks,
# other scripts' digits, the underscore, capital sigma (final-sigma rule),
# dotted capital I (lowercases to two code points), apostrophes, whitespace.
TRICKY = ("_", "\u0301", "\u0663", "\uff13", "\u00b2", "\u2167", "\u0130", "\u00df", "\u03a3",
          "\u1e9e", "\u2019", "'", "\u00a0", "\u3000", "\x1c", "\x85", "-", ",", ".", " ", "\n",
          "a", "Z", "9", "\u4e2d")
NO_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
TEXT = st.lists(st.one_of(st.sampled_from(TRICKY), st.characters(exclude_categories=NO_SURROGATES)),
                max_size=40).map("".join)
WORDS = st.lists(st.sampled_from("abcde"), max_size=25)


def naive_lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = (table[i][j] + 1 if x == y
                                   else max(table[i][j + 1], table[i + 1][j]))
    return table[len(a)][len(b)]


# --- tokens and norm ---------------------------------------------------------------------

def test_tokens_split_on_every_non_word_character() -> None:
    assert answer_tokens("Hi, Bob! It's 2,500.") == ["hi", "bob", "it", "s", "2", "500"]
    assert normalize("  The  Refund-window: 30 DAYS!") == "the refund window 30 days"


def test_norm_keeps_articles_unlike_squad() -> None:
    # The SQuAD script drops "a", "an", "the" and deletes the apostrophe in "don't".
    assert normalize("The answer: don't!") == "the answer don t"


@settings(max_examples=budget(400))
@given(TEXT)
def test_answer_tokens_equal_the_project_token_rule(text: str) -> None:
    assert answer_tokens(text) == text_tokens(text)
    assert normalize(text) == " ".join(text_tokens(text))


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_ascii_fast_path_equals_the_regex(text: str) -> None:
    assert answer_tokens(text) == [m.lower() for m in re.findall(r"\w+", text)]


def test_unicode_lowercasing_is_per_token() -> None:
    # "İ" lowercases to "i" + U+0307 (not a word character): still one token.
    assert answer_tokens("İx") == ["i\u0307x"]
    assert answer_tokens("ΟΔΟΣ.ΣΑ") == ["οδος", "σα"]


# --- token precision, recall, F1 ------------------------------------------------------------

def test_token_scores_by_hand() -> None:
    p, r, f = token_scores(["refunds", "within", "30", "days"], ["30", "days"])
    assert (p, r) == (2 / 4, 2 / 2)
    assert f == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))


def test_repeated_tokens_match_as_often_as_on_both_sides() -> None:
    # "a" twice in the answer, three times in the reference: 2 matches; "c" once each.
    answer, reference = ["a", "a", "b", "c", "c"], ["a", "c", "a", "a"]
    assert matched_tokens(answer, reference) == 2 + 1
    p, r, _ = token_scores(answer, reference)
    assert (p, r) == (3 / 5, 3 / 4)


@given(WORDS, WORDS)
def test_matched_tokens_is_the_multiset_intersection(a: list[str], b: list[str]) -> None:
    assert matched_tokens(a, b) == sum((Counter(a) & Counter(b)).values())


def test_empty_token_lists() -> None:
    assert token_scores([], []) == (1.0, 1.0, 1.0)
    assert token_scores(["x"], []) == (0.0, 0.0, 0.0)
    assert token_scores([], ["x"]) == (0.0, 0.0, 0.0)
    assert token_scores(["x"], ["y"]) == (0.0, 0.0, 0.0)


# --- LCS and ROUGE-L ---------------------------------------------------------------------------

def test_lcs_by_hand() -> None:
    assert lcs_length(["a", "b", "c", "b", "d"], ["b", "d", "c", "b"]) == 3
    assert lcs_length([], ["a"]) == 0
    assert lcs_length(["a"] * 70, ["a"] * 65) == 65  # masks wider than one machine word


@settings(max_examples=budget(300))
@given(WORDS, WORDS)
def test_bit_parallel_lcs_equals_the_dynamic_programming_table(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == naive_lcs(a, b) == lcs_length(b, a)


@given(st.lists(st.sampled_from("ab"), min_size=60, max_size=140),
       st.lists(st.sampled_from("abc"), max_size=140))
def test_long_lcs(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == naive_lcs(a, b)


@settings(max_examples=200)
@given(WORDS, st.lists(WORDS, min_size=1, max_size=3))
def test_rouge_l_of_score_tokens_equals_the_dynamic_programming_table(
        answer: list[str], references: list[list[str]]) -> None:
    """Whichever list is shorter carries the bits: the same F1 as the DP table."""
    def f1(reference: list[str]) -> float:
        if not answer and not reference:
            return 1.0
        lcs = naive_lcs(answer, reference)
        if lcs == 0:
            return 0.0
        p, r = lcs / len(answer), lcs / len(reference)
        return 2 * p * r / (p + r)

    scores = score_tokens(answer, references)
    assert scores is not None
    assert scores.rouge_l_f1 == max(map(f1, references))


def test_the_lcs_bits_span_the_shorter_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 100k-token answer against a 5-token reference: the bit vector is 5 bits
    wide (before, 100k: every step an operation on 100k-bit integers)."""
    widths: list[int] = []
    real = answers._lcs

    def counted(masks: dict[str, int], size: int, other: Any) -> int:
        widths.append(size)
        return real(masks, size, other)

    monkeypatch.setattr(answers, "_lcs", counted)
    answer = ["a", "b", "c", "d", "e"] * 20_000
    scores = score_tokens(answer, [["e", "d", "c", "b", "a"]])
    # LCS 5: e, d, c, b, a from five repetitions; P = 5 / 100k, R = 1.
    assert scores is not None and scores.rouge_l_f1 == 2 * (5 / 100_000) / (5 / 100_000 + 1)
    assert lcs_length(answer, ["x", "c", "a"]) == 2
    assert widths == [5, 3]


def test_rouge_l_by_hand() -> None:
    # LCS("the cat sat", "the cat was sat") = 3: P = 3/3, R = 3/4.
    assert rouge_l_f1(["the", "cat", "sat"], ["the", "cat", "was", "sat"]) == pytest.approx(
        2 * 1 * (3 / 4) / (1 + 3 / 4))
    # Word order counts: the token F1 is 1, the LCS only 1.
    assert token_scores(["b", "a"], ["a", "b"])[2] == 1.0
    assert rouge_l_f1(["b", "a"], ["a", "b"]) == pytest.approx(1 / 2)


def test_rouge_l_empty_rules() -> None:
    assert rouge_l_f1([], []) == 1.0
    assert rouge_l_f1(["a"], []) == 0.0
    assert rouge_l_f1([], ["a"]) == 0.0
    assert rouge_l_f1(["a"], ["b"]) == 0.0


# --- several references --------------------------------------------------------------------------

def test_exact_match_when_any_reference_matches() -> None:
    scores = score_answer("January 16, 2024", ["16 January 2024", "january 16 2024"])
    assert scores is not None
    assert scores.exact_match == 1.0


def test_prf_come_from_the_first_reference_with_the_best_f1() -> None:
    # Reference 1: matched 1 of answer 2 / ref 1 -> P 1/2, R 1, F1 2/3.
    # Reference 2: matched 2 of 2 / 4        -> P 1,   R 1/2, F1 2/3 (a tie: not taken).
    # Reference 3: matched 1 of 2 / 3        -> F1 2 * (1/2) * (1/3) / (5/6) = 2/5.
    scores = score_answer("x y", ["x", "x y z w", "y q r"])
    assert scores is not None
    assert (scores.precision, scores.recall) == (1 / 2, 1.0)
    assert scores.f1 == pytest.approx(2 / 3)


def test_rouge_l_is_the_best_over_references_even_from_another_reference() -> None:
    # Token F1: ref 1 "b a" is 1.0 (chosen for P/R/F1), ref 2 "a" 2/3.
    # ROUGE-L: ref 1 LCS 1 -> 1/2; ref 2 LCS 1 -> P 1/2, R 1 -> 2/3.  Max: 2/3.
    scores = score_answer("a b", ["b a", "a"])
    assert scores is not None
    assert (scores.exact_match, scores.f1) == (0.0, 1.0)
    assert scores.rouge_l_f1 == pytest.approx(2 / 3)


def test_score_answer_without_references_is_none() -> None:
    assert score_answer("anything", []) is None
    assert score_tokens(["anything"], []) is None


def test_score_answer_empty_texts() -> None:
    assert score_answer("", [""]) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert score_answer("?!", ["a"]) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert score_answer("a", ["...", "a"]) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_score_answer_without_rouge() -> None:
    scores = score_answer("a b", ["a"], rouge=False)
    assert scores is not None
    assert scores.rouge_l_f1 != scores.rouge_l_f1  # NaN: not computed
    assert scores.f1 == pytest.approx(2 / 3)


@settings(max_examples=budget(300))
@given(WORDS, st.lists(WORDS, min_size=1, max_size=4))
def test_score_tokens_matches_the_single_metrics(answer: list[str], refs: list[list[str]]) -> None:
    scores = score_tokens(answer, refs)
    assert scores is not None
    singles = [token_scores(answer, ref) for ref in refs]
    best = max(range(len(refs)), key=lambda i: (singles[i][2], -i))
    assert (scores.precision, scores.recall, scores.f1) == singles[best]
    assert scores.rouge_l_f1 == max(rouge_l_f1(answer, ref) for ref in refs)
    assert scores.exact_match == float(any(ref == answer for ref in refs))


# --- required facts -------------------------------------------------------------------------------

def test_contains_run() -> None:
    assert contains_run(["within", "30", "days"], ["30", "days"])
    assert not contains_run(["30", "calendar", "days"], ["30", "days"])
    assert not contains_run(["a", "30"], ["3"])  # whole tokens only
    assert not contains_run(["a"], [])


@given(WORDS, st.lists(st.sampled_from("abcde"), max_size=4))
def test_contains_run_equals_a_slice_search(tokens: list[str], run: list[str]) -> None:
    expected = bool(run) and any(tokens[i:i + len(run)] == run for i in range(len(tokens)))
    assert contains_run(tokens, run) == expected


def test_fact_coverage() -> None:
    answer = answer_tokens("Refunds within 30-days, by Card.")
    # "30 days" matches "30-days"; "card" ignores case; "cash" is missing; "!" has no token.
    assert fact_coverage(answer, ["30 days", "card", "cash", "!"]) == 2 / 3
    assert fact_coverage(answer, ["", "..."]) is None
    assert fact_coverage([], ["x"]) == 0.0


# --- abstention -----------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "I don't know.", "Sorry, I do not know!", "I cannot answer that.", "We can't answer",
    "There is not enough information.", "No information available.", "", "?!",
    "I don\u2019t know",  # a typographic apostrophe separates tokens just the same
])
def test_default_phrases_abstain(answer: str) -> None:
    assert abstains(answer, DEFAULT_ABSTAIN_PHRASES)


@pytest.mark.parametrize("answer", [
    "I know: 30 days.", "The information is there.", "I cannot say", "no informations",
])
def test_answers_that_do_not_abstain(answer: str) -> None:
    assert not abstains(answer, DEFAULT_ABSTAIN_PHRASES)


def test_custom_phrases_and_phrases_without_token() -> None:
    assert abstains("Not in the documents, sorry.", ["not in the documents"])
    assert not abstains("I don't know", ["not in the documents"])
    assert not abstains("anything", ["", "..."])  # no token: ignored, never matches everything
    assert abstains("", [])  # no token in the answer
    assert abstains(["i", "don", "t", "know"], DEFAULT_ABSTAIN_PHRASES)  # a token list


# --- numbers --------------------------------------------------------------------------------------

def test_numbers_with_commas_and_decimals() -> None:
    assert numbers("2,500 requests, v3.4, 1,234.5 or 7.") == ["2500", "3.4", "1234.5", "7"]
    assert numbers("9.50 vs 9.5") == ["9.50", "9.5"]  # compared as strings
    assert numbers("1.2.3, 4,5") == ["1.2.3", "45"]
    assert numbers("no digits") == []
    assert numbers("x12y") == ["12"]
