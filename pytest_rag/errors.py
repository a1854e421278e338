"""The one exception type for bad input data, and the "did you mean" hint of its messages."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["DatasetError", "did_you_mean", "unknown_names"]


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
