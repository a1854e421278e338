"""What the JSON decoder lets through or reports without a place, found in the text.

Python's decoder accepts an escaped lone surrogate (``"q\\ud800"``), which
decodes to a string that cannot be written as UTF-8: a baseline, report or
scorecard holding it would fail when written.  It refuses an integer of more
digits than Python converts (4300 by default) without saying where.  Both are
found here with their line and column.  The scans are linear, and the
surrogate scan only runs when the text has a ``\\u`` escape at all.
"""

from __future__ import annotations

import re
import sys

from ..text.locate import line_column

__all__ = ["big_integer_place", "lone_surrogate_place"]

# A string (skipped whole, so digits and escapes inside it are not numbers) or a number.
# An integer, not the digits of a float (``1.5``, ``1e5``), which convert at any length.
_STRING_OR_LONG_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\d.eE+])(-?\d{%d,})(?![\d.eE])')
# An escape sequence inside a string: \\ (skipped) or a \u escape of a surrogate.
_ESCAPE = re.compile(r"\\\\|\\u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
                     r"|\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def lone_surrogate_place(text: str) -> str | None:
    """Where the first ``\\u`` escape of a lone surrogate is, or ``None``.

    A high surrogate followed by a low one is a valid pair (one character
    beyond the Basic Multilingual Plane); either half alone is not text.
    """
    # One character is searched with memchr (1 ms in 24 MiB of JSON), two about
    # 20 times slower: the second search runs only when there is a backslash.
    if "\\" not in text or "\\u" not in text:
        return None
    for match in _ESCAPE.finditer(text):
        if match.group(0) == "\\\\" or (match.group(1) and match.group(2)):
            continue  # an escaped backslash, or a valid pair
        return line_column(text, match.start())
    return None


def big_integer_place(text: str) -> tuple[int, str] | None:
    """``(digits, "line L, column C")`` of the first integer with more digits than Python
    converts, or ``None`` (also when the interpreter has no such limit)."""
    get_limit = getattr(sys, "get_int_max_str_digits", None)
    limit = get_limit() if get_limit is not None else 0
    if not limit:
        return None
    pattern = re.compile(_STRING_OR_LONG_NUMBER.pattern % (limit + 1))
    for match in pattern.finditer(text):
        if match.group(1):
            return len(match.group(1).lstrip("-")), line_column(text, match.start(1))
    return None
