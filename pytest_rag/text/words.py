"""The token rule, without numpy: a token is a maximal ``\\w+`` match, in lowercase."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["WORD", "text_tokens"]

#: The token rule (Python ``re``, Unicode).
WORD: Final = re.compile(r"\w+")


def text_tokens(text: str) -> list[str]:
    """The lowercase tokens of a short text (an answer, a fact, a phrase).

    >>> text_tokens("Hi, Bob!")
    ['hi', 'bob']
    """
    return [match.lower() for match in WORD.findall(text)]
