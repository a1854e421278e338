"""Untrusted text (test ids, query ids, settings) made safe for a terminal and for Markdown.

A parametrize id or a query id comes from whoever wrote the test or the gold
file.  Written raw, an ESC sequence rewrites the terminal, U+202E turns the
rest of a line around, a backtick or ``<img ...>`` in a Markdown job summary
becomes markup, and a ``|`` splits a table row.  Each medium gets its rule:

* terminal: control characters (C0, DEL, C1) and the bidirectional controls
  are shown as visible escapes (``\\x1b``, ``\\u202e``); everything else is kept;
* Markdown: the same, then the text goes into an HTML ``<code>`` element with
  ``& < > " ' | ` `` written as character references, so nothing in it is
  markup and a table cell stays one cell.
"""

from __future__ import annotations

import re

__all__ = ["markdown_code", "terminal_text"]

#: C0 controls, DEL, C1 controls, and the Unicode bidirectional formatting characters.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MARKDOWN_REFERENCES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
                        "|": "&#124;", "`": "&#96;", "\\": "&#92;", "*": "&#42;",
                        "_": "&#95;", "[": "&#91;", "]": "&#93;"}
_MARKDOWN_SPECIAL = re.compile("[" + re.escape("".join(_MARKDOWN_REFERENCES)) + "]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: object) -> str:
    """``text`` with control and bidirectional characters shown as escapes.

    >>> terminal_text("q1\\x1b[2J\\u202e")
    'q1\\\\x1b[2J\\\\u202e'
    """
    return _UNSAFE.sub(_visible, str(text))


def markdown_code(text: object) -> str:
    """``text`` as an inline ``<code>`` element of GitHub Markdown that no character in
    it can break out of (nor split a table cell).

    >>> markdown_code("t.py::test[a|b]")
    '<code>t.py::test&#91;a&#124;b&#93;</code>'
    """
    safe = _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN_REFERENCES[m.group(0)], terminal_text(text))
    return f"<code>{safe}</code>"
