"""The one exception type for bad input data, and the parts of its messages: the "did you
mean" hint and the short description of a value that arrived."""

from __future__ import annotations

import datetime
import itertools
import numbers
import os
import reprlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from .escaping import SHOWN_CHARACTERS, clipped, quoted

__all__ = ["DatasetError", "describe_value", "did_you_mean", "is_bool", "show_value",
           "similar_file", "unknown_names"]


#: The longest place and problem a message shows (values in them are also cut on their own
#: by :func:`~pytest_rag.escaping.quoted`, to 200 characters).
PLACE_CHARACTERS = 300
PROBLEM_CHARACTERS = 1_000
#: Beyond this many names, "did you mean" is not looked for.
MAX_CHOICES = 10_000


class DatasetError(ValueError):
    """Bad input: a malformed file, an unknown key, a wrong type, a bad offset.

    The message always names where the problem is: the file (or ``<arguments>``
    for data passed in Python) and the place inside it, e.g.
    ``gold.yaml: queries[3].expected_evidence[0].end (query 'q4', line 31): 5120 is
    past the end of document 'faq' (4096 characters)`` (the id and the line are added
    for a file: :func:`pytest_rag.dataset.loading.located`).

    Attributes
    ----------
    source:
        The file, or ``"<arguments>"`` for keyword arguments of ``evaluate``.
    place:
        The location inside the source (``queries[3].relevant``), or ``""``; cut to
        :data:`PLACE_CHARACTERS` (the count of the rest said).
    problem:
        What is wrong there; cut to :data:`PROBLEM_CHARACTERS` the same way.
    """

    def __init__(self, source: str, place: str, problem: str) -> None:
        # A multi-megabyte id quoted anywhere in it keeps the message readable: each part
        # is cut, with the count of what was left out (escaping.clipped).
        self.source = source
        self.place = clipped(place, PLACE_CHARACTERS)
        self.problem = clipped(problem, PROBLEM_CHARACTERS)
        place, problem = self.place, self.problem
        where = f"{source}: {place}" if place else source
        super().__init__(f"{where}: {problem}")


def _closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name`` (difflib's ratio of at least 0.6), or ``None``; not
    looked for beyond :data:`MAX_CHOICES` choices or for a name longer than an id."""
    import difflib  # only when a message is made

    if len(name) > SHOWN_CHARACTERS:  # no id is that long: no near match worth the time
        return None
    known = list(itertools.islice(choices, MAX_CHOICES + 1))
    if len(known) > MAX_CHOICES:  # a hint is not worth seconds of comparing
        return None
    hint = difflib.get_close_matches(name, known, n=1)
    return hint[0] if hint else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to ``name``, or ``""``.

    >>> did_you_mean("retreived_ids", ["reranked_ids", "retrieved_ids"])
    " (did you mean 'retrieved_ids'?)"
    """
    hint = _closest(name, choices)
    return "" if hint is None else f" (did you mean {quoted(hint)}?)"


def similar_file(path: Path, written: str) -> str:
    """`` (did you mean 'docs/intro.md'?)`` for a missing file ``path`` (written by the user
    as ``written``): the closest name in its folder, written the user's way; or ``""``."""
    try:
        names = [entry.name for entry in itertools.islice(os.scandir(path.parent),
                                                          MAX_CHOICES + 1)]
    except (OSError, ValueError):  # no such folder, or not one: nothing to suggest
        return ""
    hint = _closest(path.name, names)
    if hint is not None and _closest(Path(path.name).stem, [Path(hint).stem]) is None:
        hint = None  # alike only in the extension ('nope.yaml', 'gold.yaml'): no hint
    try:
        found = None if hint is None else str(Path(written).with_name(hint))
    except ValueError:  # written with no file name ('.'): nothing to put the hint in
        return ""
    return "" if found is None else f" (did you mean {quoted(found)}?)"


def unknown_names(names: Iterable[str], choices: Iterable[str]) -> str:
    """The unknown ``names`` for a message, each with its closest choice:
    ``'retreived_ids' (did you mean 'retrieved_ids'?), 'x'``."""
    known = list(choices)
    return ", ".join(f"{quoted(name)}{did_you_mean(name, known)}" for name in names)


def is_bool(value: object) -> bool:
    """``True`` for a boolean, also numpy's (which is not a number here)."""
    if isinstance(value, bool):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.bool_)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if is_bool(value):
        return "a boolean"
    if isinstance(value, numbers.Number):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (set, frozenset)):
        return "a set"
    if isinstance(value, datetime.datetime):
        return "a date and time"
    if isinstance(value, datetime.date):
        return "a date"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def show_value(value: object) -> str:
    """A short, safe rendering of a value for a message (dates as in the file)."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, str):
        text = repr(value[:60])
    elif isinstance(value, numbers.Number) and hasattr(value, "item"):
        text = repr(value.item())  # a numpy scalar, shown as the plain number
    else:
        try:
            text = _REPR.repr(value)
        except Exception:  # noqa: BLE001 - a foreign object whose repr fails in any way
            text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def describe_value(value: object) -> str:
    """``a number 7``, ``a string 'x'``, ``null``: what arrived, for a message."""
    if value is None:
        return "null"
    return f"{_type_name(value)} {show_value(value)}"
