"""Tokens and spans.

A token is a maximal match of ``\\w+`` (Python ``re``, Unicode) in the original
text, compared in lowercase (``str.lower()`` of the match).  Token offsets are
character offsets into the original text.

Documents are tokenized without a per-token Python loop: the text becomes an
array of code points, a lookup table built from the code points present says
which are word characters (``str.isalnum()`` or ``_``, exactly the set ``\\w``
matches), and token starts and ends are where that mask changes.  A character
span ``[start, end)`` then maps to the half-open token interval of the tokens
it overlaps by at least one character, with two binary searches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .words import WORD, text_tokens

__all__ = ["WORD", "TokenTable", "code_points", "point_table", "span_intervals", "text_tokens",
           "tokenize"]

_IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TokenTable:
    """The tokens of one text: ``starts[i]:ends[i]`` is token ``i``.

    ``text`` is kept so that :attr:`words` can be produced on demand.
    """

    text: str
    starts: _IntArray
    ends: _IntArray

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    @functools.cached_property
    def words(self) -> list[str]:
        """The lowercase tokens, in order.

        The tokens are joined by spaces, lowercased at once and split again:
        the same as lowercasing each token, since a space is neither cased
        nor case-ignorable (no final-sigma context crosses it) and
        lowercasing never yields whitespace.
        """
        return " ".join(WORD.findall(self.text)).lower().split()


def code_points(text: str) -> npt.NDArray[np.uint32]:
    """The code points of ``text`` (a lone surrogate kept as its own code point)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def point_table(codes: npt.NDArray[np.uint32], test: Callable[[str], bool]
                ) -> npt.NDArray[np.bool_]:
    """``test(chr(point))`` for each code point present in ``codes``, indexed by code
    point (``False`` for the others): the text's characters are tested once each."""
    present = np.zeros(int(codes.max(initial=0)) + 1, dtype=bool)
    present[codes] = True
    points = np.flatnonzero(present)
    table = np.zeros(present.shape[0], dtype=bool)
    table[points] = np.fromiter(map(test, map(chr, points.tolist())), dtype=bool,
                                count=points.shape[0])
    return table


def _is_word_character(char: str) -> bool:
    return char.isalnum() or char == "_"  # exactly what ``\w`` matches


def _word_mask(text: str) -> npt.NDArray[np.bool_]:
    codes = code_points(text)
    mask: npt.NDArray[np.bool_] = point_table(codes, _is_word_character)[codes]
    return mask


def tokenize(text: str) -> TokenTable:
    """Split ``text`` into tokens, as character offsets.

    Examples
    --------
    >>> table = tokenize("Hi, Bob!")
    >>> table.starts.tolist(), table.ends.tolist(), table.words
    ([0, 4], [2, 7], ['hi', 'bob'])
    """
    if not text:
        empty = np.zeros(0, dtype=np.int64)
        return TokenTable(text, empty, empty)
    mask = _word_mask(text).view(np.int8)
    edges = np.diff(mask, prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1).astype(np.int64)
    ends = np.flatnonzero(edges == -1).astype(np.int64)
    return TokenTable(text, starts, ends)


def span_intervals(
    table: TokenTable, starts: npt.ArrayLike, ends: npt.ArrayLike
) -> tuple[_IntArray, _IntArray]:
    """Token index intervals ``[lo, hi)`` of character spans ``[start, end)``.

    A token belongs to a span when their character ranges overlap by at least
    one character (``tok.start < end and tok.end > start``); an empty span
    holds no token (``lo == hi``).
    """
    start_arr = np.asarray(starts, dtype=np.int64)
    end_arr = np.asarray(ends, dtype=np.int64)
    lo = np.searchsorted(table.ends, start_arr, side="right").astype(np.int64)
    hi = np.searchsorted(table.starts, end_arr, side="left").astype(np.int64)
    hi = np.where(end_arr <= start_arr, lo, np.maximum(hi, lo))
    return lo, hi
