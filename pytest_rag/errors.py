"""The one exception type for bad input data."""

from __future__ import annotations

__all__ = ["DatasetError"]


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
