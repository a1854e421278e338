"""Untrusted text (test ids, query ids, settings) made safe for a terminal and for Markdown.

A parametrize id or a query id comes from whoever wrote the test or the gold
file.  Written raw, an ESC sequence rewrites the terminal, U+202E turns the
rest of a line around, a backtick or ``<img ...>`` in a Markdown job summary
becomes markup, and a ``|`` splits a table row.  Each medium gets its rule:

* terminal (and logs): control characters (C0, DEL, C1) and the bidirectional
  controls are shown as visible escapes (``\\x1b``, ``\\u202e``); everything
  else is kept.  Every line the plugin and the command line print passes
  through :func:`terminal_text` (one line) or :func:`terminal_lines` (a text
  whose own line breaks stay), at the place it is written, so an id formatted
  anywhere is covered;
* messages: a value quoted in a message (an id, a quote, a file's line) is
  cut to :data:`SHOWN_CHARACTERS` with the count of what was left out
  (:func:`clipped`, :func:`quoted`, :func:`shown_id`), so a multi-megabyte
  id makes a readable line, not a 20 MB one;
* Markdown: the same, then the text goes into an HTML ``<code>`` element with
  ``& < > " ' | ` `` written as character references, so nothing in it is
  markup and a table cell stays one cell; prose that holds ids (a sweep's
  verdict) gets the same references without the ``<code>`` element.
"""

from __future__ import annotations

import re

__all__ = ["SHOWN_CHARACTERS", "clipped", "markdown_code", "markdown_text", "quoted", "shown_id",
           "terminal_lines", "terminal_text"]

#: C0 controls, DEL, C1 controls, and the Unicode bidirectional formatting characters.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MARKDOWN_REFERENCES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
                        "|": "&#124;", "`": "&#96;", "\\": "&#92;", "*": "&#42;",
                        "_": "&#95;", "[": "&#91;", "]": "&#93;"}
_MARKDOWN_SPECIAL = re.compile("[" + re.escape("".join(_MARKDOWN_REFERENCES)) + "]")
#: Outside ``<code>``, ``#`` could also start a heading.
_PROSE_REFERENCES = {**_MARKDOWN_REFERENCES, "#": "&#35;"}
_PROSE_SPECIAL = re.compile("[" + re.escape("".join(_PROSE_REFERENCES)) + "]")


#: How many characters of one value a message shows; the rest is counted, not shown.
SHOWN_CHARACTERS = 200


def clipped(text: str, limit: int = SHOWN_CHARACTERS) -> str:
    """``text``, or, when longer than ``limit``, its beginning and end around the count of
    the characters left out between them.

    >>> clipped("a" * 10 + "b" * 90 + "c" * 10, 20)
    'aaaaaaaaaabbb…(90 characters left out)…ccccccc'
    """
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit - limit * 2 // 3
    return f"{text[:head]}…({len(text) - head - tail:,} characters left out)…{text[-tail:]}"


def quoted(value: object, limit: int = SHOWN_CHARACTERS) -> str:
    """A value for a message: a string quoted as Python quotes it (so control
    characters are escapes) and :func:`clipped`; anything else as :func:`repr` gives it.

    >>> quoted("q\\x1b1")
    "'q\\\\x1b1'"
    """
    if isinstance(value, str):
        return repr(clipped(value, limit))
    return clipped(repr(value), limit)


def shown_id(value: object, limit: int = SHOWN_CHARACTERS) -> str:
    """An id for a terminal line, unquoted: :func:`clipped`, then :func:`terminal_text`."""
    return terminal_text(clipped(str(value), limit))


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: object) -> str:
    """``text`` with control and bidirectional characters shown as escapes.

    >>> terminal_text("q1\\x1b[2J\\u202e")
    'q1\\\\x1b[2J\\\\u202e'
    """
    return _UNSAFE.sub(_visible, str(text))


def terminal_lines(text: object) -> str:
    """:func:`terminal_text` of every line of ``text``, its ``\\n`` line breaks kept.

    >>> terminal_lines("a\\x07\\nb")
    'a\\\\x07\\nb'
    """
    return "\n".join(terminal_text(line) for line in str(text).split("\n"))


def markdown_text(text: object) -> str:
    """``text`` as plain prose of GitHub Markdown: the characters of
    :func:`markdown_code`, and ``#``, as character references, so ids in it are no
    markup, yet the prose reads as prose (not as code).

    >>> markdown_text("recommended: big (t.py::test[a|b])")
    'recommended: big (t.py::test&#91;a&#124;b&#93;)'
    """
    return _PROSE_SPECIAL.sub(lambda m: _PROSE_REFERENCES[m.group(0)], terminal_text(text))


def markdown_code(text: object) -> str:
    """``text`` as an inline ``<code>`` element of GitHub Markdown that no character in
    it can break out of (nor split a table cell).

    >>> markdown_code("t.py::test[a|b]")
    '<code>t.py::test&#91;a&#124;b&#93;</code>'
    """
    safe = _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN_REFERENCES[m.group(0)], terminal_text(text))
    return f"<code>{safe}</code>"
