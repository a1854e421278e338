"""Answer text metrics: normalisation, token overlap, ROUGE-L, facts, numbers, abstention.

Pure functions on strings and token lists, shared by the generation and end
to end stages.  A token is the project's token (:func:`pytest_rag.text.tokens.text_tokens`):
a maximal match of ``\\w+``, lowercased.  ``norm(x)`` is the token list of
``x`` joined by single spaces.

Differences from the usual implementations
------------------------------------------
* The SQuAD v1.1 script lowercases, deletes punctuation *inside* words
  (``"don't"`` becomes ``"dont"``), drops the articles ``a``, ``an``,
  ``the`` and splits on whitespace.  Here nothing is dropped and every
  non-word character separates tokens (``"don't"`` is ``don``, ``t``), so
  :func:`token_scores` applies SQuAD's formulas to different tokens and can
  give different numbers.
* The ``rouge-score`` package's ``rougeL`` keeps only ``[a-z0-9]`` runs and
  may stem; here the tokens are the project's (Unicode ``\\w``, no stemming).

Speed: every text is tokenized once and its tokens serve every metric.  An
ASCII text is tokenized by one ``str.translate`` (non-word characters to
spaces), ``lower`` and ``split``; other text by one regex pass and one
``lower`` of the joined tokens.  ``norm(A) = norm(Y)`` is a comparison of the
token lists.  The multiset intersection is the size of the set intersection,
plus a correction counted only for tokens repeated on both sides.  ROUGE-L
computes the longest common subsequence bit-parallel (Hyyrö's algorithm, with
Python integers as bit vectors): match masks of the answer's tokens, then
one pass over the reference with a few integer operations per token, instead
of an ``O(mn)`` table.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple

from ..text.words import WORD

__all__ = [
    "DEFAULT_ABSTAIN_PHRASES",
    "NUMBER",
    "AnswerScores",
    "abstains",
    "answer_tokens",
    "contains_run",
    "fact_coverage",
    "lcs_length",
    "matched_tokens",
    "normalize",
    "numbers",
    "rouge_l_f1",
    "score_answer",
    "score_tokens",
    "token_scores",
]

#: Phrases that mark an abstention when ``abstain_phrases`` is not set.
DEFAULT_ABSTAIN_PHRASES: Final[tuple[str, ...]] = (
    "i don't know",
    "i do not know",
    "cannot answer",
    "can't answer",
    "not enough information",
    "no information",
)

#: A number: digits, optionally grouped or with decimals by ``.`` or ``,``.
NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")

_findall = WORD.findall

#: ASCII fast path: every ASCII character that ``\\w`` does not match becomes a
#: space (for ASCII text ``\\w`` is exactly ``[A-Za-z0-9_]``).
_ASCII_WORDS: Final = "".join(
    char if char.isalnum() or char == "_" else " " for char in map(chr, range(128)))


def answer_tokens(text: str) -> list[str]:
    """The lowercase tokens of ``text`` (same as :func:`pytest_rag.text.tokens.text_tokens`).

    Examples
    --------
    >>> answer_tokens("Hi, Bob! It's 2,500.")
    ['hi', 'bob', 'it', 's', '2', '500']
    """
    if text.isascii():
        return text.translate(_ASCII_WORDS).lower().split()
    # Lowercasing the space-joined tokens equals lowercasing each token: a
    # space is neither cased nor case-ignorable, so no context (final sigma)
    # crosses it, and lowercasing never yields whitespace.
    return " ".join(_findall(text)).lower().split()


def normalize(text: str) -> str:
    """``norm(text)``: the lowercase tokens of ``text`` joined by single spaces.

    Examples
    --------
    >>> normalize("  The  Refund-window: 30 DAYS!")
    'the refund window 30 days'
    """
    return " ".join(answer_tokens(text))


def matched_tokens(answer: Sequence[str], reference: Sequence[str]) -> int:
    """Size of the multiset intersection of two token lists.

    A token counts ``min(count in answer, count in reference)`` times.

    Examples
    --------
    >>> matched_tokens(["a", "a", "b", "c", "c"], ["a", "c", "a", "a"])
    3
    """
    set_a, set_r = set(answer), set(reference)
    common = set_a & set_r
    if not common:
        return 0
    if len(set_a) == len(answer) or len(set_r) == len(reference):
        return len(common)
    return _add_repeats(len(common), _repeats(answer), reference, set_r)


def _repeats(tokens: Sequence[str]) -> dict[str, int]:
    """The tokens that occur more than once, with their counts."""
    return {token: count for token, count in Counter(tokens).items() if count > 1}


def _add_repeats(matched: int, repeats: dict[str, int], reference: Sequence[str],
                 reference_set: set[str]) -> int:
    # Every common token counts once in ``matched``; a token repeated on both
    # sides counts min(count_a, count_r) - 1 more times.  Repeated tokens are
    # few, and list.count runs in C.
    for token in repeats.keys() & reference_set:
        count = reference.count(token)
        if count > 1:
            mine = repeats[token]
            matched += (mine if mine < count else count) - 1
    return matched


def token_scores(answer: Sequence[str], reference: Sequence[str]) -> tuple[float, float, float]:
    """Answer token precision, recall and F1 (SQuAD's formulas on this project's tokens).

    ``matched`` is the size of the multiset intersection; precision is
    ``matched / len(answer)``, recall ``matched / len(reference)``.  Both
    lists empty: ``(1, 1, 1)``; exactly one empty: ``(0, 0, 0)``; F1 is 0
    when ``matched`` is 0.

    Examples
    --------
    >>> token_scores(["refunds", "within", "30", "days"], ["30", "days"])
    (0.5, 1.0, 0.6666666666666666)
    """
    if not answer or not reference:
        return (1.0, 1.0, 1.0) if not answer and not reference else (0.0, 0.0, 0.0)
    matched = matched_tokens(answer, reference)
    if matched == 0:
        return 0.0, 0.0, 0.0
    precision = matched / len(answer)
    recall = matched / len(reference)
    return precision, recall, 2 * precision * recall / (precision + recall)


#: ``1 << i``, for the match masks of token lists without a repeat.
_POWERS: Final = tuple(1 << i for i in range(1024))


def _masks(tokens: Sequence[str]) -> dict[str, int]:
    """Bit ``i`` of ``masks[w]`` is set when ``tokens[i] == w``."""
    if len(tokens) <= len(_POWERS):
        masks = dict(zip(tokens, _POWERS))  # one bit per token when no token repeats
        if len(masks) == len(tokens):
            return masks
    masks = {}
    get = masks.get
    bit = 1
    for token in tokens:
        masks[token] = get(token, 0) | bit
        bit <<= 1
    return masks


def _lcs(masks: dict[str, int], size: int, other: Iterable[str]) -> int:
    # Hyyrö (2004), bit-vector LCS: v starts as ``size`` one bits; each token
    # of ``other`` that occurs in the first sequence updates v with its match
    # mask (other tokens leave v unchanged); the LCS length is the number of
    # zero bits among the low ``size`` bits at the end.  Bits above ``size``
    # only collect carries, which never flow back down.
    full = (1 << size) - 1
    v = full
    for m in filter(None, map(masks.get, other)):
        u = v & m
        v = (v + u) | (v - u)
    return size - (v & full).bit_count()


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    Bit-parallel: ``O(max(len(a), len(b)))`` big-integer operations of
    ``min(len(a), len(b))`` bits (the LCS is symmetric, so the bits span the
    shorter list), instead of the ``O(len(a) * len(b))`` dynamic-programming table.

    Examples
    --------
    >>> lcs_length(["a", "b", "c", "b", "d"], ["b", "d", "c", "b"])
    3
    """
    if not a or not b:
        return 0
    if len(b) < len(a):  # the bit vector spans the shorter list: fewer, shorter words
        a, b = b, a
    return _lcs(_masks(a), len(a), b)


def _f1_of_lcs(lcs: int, answer_size: int, reference_size: int) -> float:
    if lcs == 0:
        return 0.0
    precision = lcs / answer_size
    recall = lcs / reference_size
    return 2 * precision * recall / (precision + recall)


def rouge_l_f1(answer: Sequence[str], reference: Sequence[str]) -> float:
    """ROUGE-L F1 of two token lists.

    ``P = LCS / len(answer)``, ``R = LCS / len(reference)``, F1 their
    harmonic mean; 0 when the LCS is 0.  Both lists empty: 1; exactly one
    empty: 0.  Unlike ``rouge-score``'s ``rougeL``: no stemming, and the
    project's tokens (Unicode ``\\w+``, lowercased).

    Examples
    --------
    >>> rouge_l_f1(["the", "cat", "sat"], ["the", "cat", "was", "sat"])  # LCS 3
    0.8571428571428571
    """
    if not answer or not reference:
        return 1.0 if not answer and not reference else 0.0
    return _f1_of_lcs(lcs_length(answer, reference), len(answer), len(reference))


class AnswerScores(NamedTuple):
    """The answer-against-reference metrics of one answer.

    A named tuple, not a dataclass: one is built per scored answer, and a
    tuple of floats is cheap to build and soon untracked by the garbage
    collector (100,000 dataclass instances slow every collection).

    Attributes
    ----------
    exact_match:
        1.0 when ``norm(answer)`` equals ``norm`` of any reference, else 0.0.
    precision, recall, f1:
        Token scores against the first reference with the highest token F1.
    rouge_l_f1:
        The highest ROUGE-L F1 over the references.
    """

    exact_match: float
    precision: float
    recall: float
    f1: float
    rouge_l_f1: float


def score_answer(answer: str, references: Sequence[str], *, rouge: bool = True
                 ) -> AnswerScores | None:
    """Score an answer against its acceptable reference answers.

    Parameters
    ----------
    answer:
        The generated answer.
    references:
        The acceptable answers; ``None`` is returned when there is none.
    rouge:
        Compute ROUGE-L (``False`` leaves ``rouge_l_f1`` at NaN, for callers
        that do not need it).

    Returns
    -------
    AnswerScores or None
        ``exact_match`` is 1 when any reference matches; precision, recall
        and F1 come from the first reference with the highest token F1;
        ROUGE-L is the maximum over the references.  Each text is tokenized
        once and its tokens serve every metric.

    Examples
    --------
    >>> s = score_answer("It is 30 days.", ["thirty days", "30 days"])
    >>> s.exact_match, s.precision, s.recall, s.f1   # 2 of 4 tokens match the 2nd
    (0.0, 0.5, 1.0, 0.6666666666666666)
    """
    if not references:
        return None
    return score_tokens(answer_tokens(answer), [answer_tokens(ref) for ref in references],
                        rouge=rouge)


def score_tokens(answer: Sequence[str], references: Sequence[Sequence[str]], *,
                 rouge: bool = True) -> AnswerScores | None:
    """:func:`score_answer` on token lists (from :func:`answer_tokens`).

    ``norm(A) = norm(Y)`` is the equality of the token lists, since a token
    never holds a space.
    """
    if not references:
        return None
    size = len(answer)
    token_set = set(answer)
    answer_unique = len(token_set) == size
    repeats: dict[str, int] | None = None
    masks: dict[str, int] | None = None
    exact = False
    best_f = -1.0
    best_p = best_r = 0.0
    best_rouge = 0.0 if rouge else float("nan")
    for ref in references:
        if not ref or not size:
            if not ref and not size:
                exact = True
                p = r = f = rl = 1.0
            else:
                p = r = f = rl = 0.0
        else:
            if ref == answer:
                exact = True
            ref_set = set(ref)
            common = token_set & ref_set
            if not common:
                p = r = f = rl = 0.0
            else:
                matched = len(common)
                if not answer_unique and len(ref_set) != len(ref):
                    if repeats is None:
                        repeats = _repeats(answer)
                    matched = _add_repeats(matched, repeats, ref, ref_set)
                p = matched / size
                r = matched / len(ref)
                f = 2 * p * r / (p + r)
                rl = 0.0
                if rouge:
                    if len(ref) < size:  # the bits span the shorter list (LCS is symmetric)
                        lcs = _lcs(_masks(ref), len(ref), answer)
                    else:
                        if masks is None:
                            masks = _masks(answer)
                        lcs = _lcs(masks, size, ref)
                    rl = _f1_of_lcs(lcs, size, len(ref))
        if f > best_f:
            best_f, best_p, best_r = f, p, r
        if rouge and rl > best_rouge:
            best_rouge = rl
    return AnswerScores(1.0 if exact else 0.0, best_p, best_r, best_f, best_rouge)


def contains_run(tokens: Sequence[str], run: Sequence[str]) -> bool:
    """Whether ``run`` occurs as a contiguous run of ``tokens`` (an empty run: False).

    Examples
    --------
    >>> contains_run(["within", "30", "days"], ["30", "days"])
    True
    >>> contains_run(["30", "calendar", "days"], ["30", "days"])
    False
    """
    n = len(run)
    if n == 0 or n > len(tokens):
        return False
    # A space never occurs inside a token, so a run of tokens is a substring
    # of the joined text exactly when it is aligned on token boundaries.
    return f" {' '.join(run)} " in f" {' '.join(tokens)} "


def fact_coverage(answer: Sequence[str], facts: Iterable[str]) -> float | None:
    """Share of the facts whose token list occurs as a contiguous run of ``answer``.

    Facts without a token are ignored; ``None`` when no fact is left.

    Examples
    --------
    >>> fact_coverage(answer_tokens("Refunds within 30 days, by card."), ["30 days", "cash", "!"])
    0.5
    """
    joined = f" {' '.join(answer)} "
    present = total = 0
    for fact in facts:
        norm = normalize(fact)
        if not norm:
            continue
        total += 1
        present += f" {norm} " in joined
    return None if total == 0 else present / total


def abstains(answer: str | Sequence[str], phrases: Iterable[str]) -> bool:
    """Whether an answer abstains: no token, or a phrase's tokens as a contiguous run.

    ``answer`` is the text or its token list.  A phrase without a token is
    ignored.

    Examples
    --------
    >>> abstains("Sorry, I don't know.", DEFAULT_ABSTAIN_PHRASES)
    True
    >>> abstains("...", DEFAULT_ABSTAIN_PHRASES), abstains("I know", DEFAULT_ABSTAIN_PHRASES)
    (True, False)
    """
    norm = normalize(answer) if isinstance(answer, str) else " ".join(answer)
    if not norm:
        return True
    joined = f" {norm} "
    return any((phrase_norm := normalize(phrase)) and f" {phrase_norm} " in joined
               for phrase in phrases)


def numbers(text: str) -> list[str]:
    """The numbers of ``text``: maximal ``\\d+(?:[.,]\\d+)*`` matches, commas removed.

    Examples
    --------
    >>> numbers("2,500 requests, v3.4, 1,234.5 or 7.")
    ['2500', '3.4', '1234.5', '7']
    """
    return [match.replace(",", "") for match in NUMBER.findall(text)]
