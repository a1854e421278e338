"""The one exception type for bad input data, and the parts of its messages: the "did you
mean" hint and the short description of a value that arrived."""

from __future__ import annotations

import datetime
import numbers
import reprlib
import sys
from collections.abc import Iterable, Mapping

__all__ = ["DatasetError", "describe_value", "did_you_mean", "is_bool", "show_value",
           "unknown_names"]


class DatasetError(ValueError):
    """Bad input: a malformed file, an unknown key, a wrong type, a bad offset.

    The message always names where the problem is: the file (or ``<arguments>``
    for data passed in Python) and the place inside it, e.g.
    ``gold.yaml: queries[3].expected_evidence[0].end: 5120 is past the end of
    document 'faq' (4096 characters)``.

    Attributes
    ----------
    source:
        The file, or ``"<arguments>"`` for keyword arguments of ``evaluate``.
    place:
        The location inside the source (``queries[3].relevant``), or ``""``.
    problem:
        What is wrong there.
    """

    def __init__(self, source: str, place: str, problem: str) -> None:
        self.source = source
        self.place = place
        self.problem = problem
        where = f"{source}: {place}" if place else source
        super().__init__(f"{where}: {problem}")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to ``name``, or ``""``.

    >>> did_you_mean("retreived_ids", ["reranked_ids", "retrieved_ids"])
    " (did you mean 'retrieved_ids'?)"
    """
    import difflib  # only when a message is made

    hint = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def unknown_names(names: Iterable[str], choices: Iterable[str]) -> str:
    """The unknown ``names`` for a message, each with its closest choice:
    ``'retreived_ids' (did you mean 'retrieved_ids'?), 'x'``."""
    known = list(choices)
    return ", ".join(f"{name!r}{did_you_mean(name, known)}" for name in names)


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
