"""Column-by-column checks of plain ``queries`` and ``run`` sections: the parser's fast path.

A large file's queries and run entries are almost always plain: dicts of the
format's keys whose values have the exact types a JSON file gives.  Checking
them one query at a time costs a few Python calls per field; here every field
of every query is checked at once, one column at a time, in C-level passes
(``set(map(type, column))``, ``chain.from_iterable``), and the records are
filled by dictionary updates (:func:`~pytest_rag.dataset.model.assemble`'s way).

The fast path never raises and never decides anything the item-by-item path of
:class:`~pytest_rag.dataset.parser.Parser` would decide differently: a column
whose cheap check fails is converted value by value with the parser's own
converter, and on any doubt (an item that is not a plain dict, an unknown or
non-string key, a duplicate or empty id, a converter that raises) the
functions return ``None``.  The parser then takes its item-by-item path, which
finds the first problem in file order and names its place, so every message
stays what it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, Final

from .model import Query, RunEntry, assemble_columns, field_defaults

__all__ = ["plain_queries", "plain_run"]

#: A value converter of the parser: ``(field, value) -> converted`` (raises on a bad value).
Convert = Callable[[str, Any], Any]

_NONE: Final[type] = type(None)
_STR: Final[frozenset[type]] = frozenset({str})
_STR_OR_NONE: Final[frozenset[type]] = frozenset({str, _NONE})
_BOOL_OR_NONE: Final[frozenset[type]] = frozenset({bool, _NONE})
_LIST_OR_NONE: Final[frozenset[type]] = frozenset({list, tuple, _NONE})
_NUMBER_OR_NONE: Final[frozenset[type]] = frozenset({int, float, _NONE})
_ANSWERS: Final[frozenset[type]] = frozenset({str, list, tuple, _NONE})

#: A query's file key -> its :class:`Query` field.
QUERY_FIELDS: Final = {"id": "id", "question": "question", "relevant": "relevant",
                       "expected_evidence": "expected_evidence",
                       "reference_answer": "reference_answers",
                       "required_facts": "required_facts",
                       "expected_citations": "expected_citations", "answerable": "answerable"}
_QUERY_BASE: Final = field_defaults(Query)
_RUN_BASE: Final = field_defaults(RunEntry)
_ID_LISTS: Final = frozenset({"retrieved_ids", "reranked_ids", "context_ids", "cited_ids",
                              "ann_ids"})
_NUMBERS: Final = frozenset({"retrieval_latency_ms", "generation_latency_ms", "latency_ms",
                             "cost_usd", "total_tokens"})


def _types(column: Iterable[object]) -> set[type]:
    return set(map(type, column))


def _string_lists(column: list[Any]) -> list[Any] | None:
    """``None`` -> ``None``, a list of strings -> its tuple; ``None`` for anything else."""
    kinds = _types(column)
    if not kinds <= _LIST_OR_NONE:
        return None
    if _NONE not in kinds:
        return list(map(tuple, column)) if _types(chain.from_iterable(column)) <= _STR else None
    lists = [value for value in column if value is not None]
    if not _types(chain.from_iterable(lists)) <= _STR:
        return None
    return [None if value is None else tuple(value) for value in column]


def _grades(column: list[Any], max_grade: int) -> list[Any] | None:
    """``relevant`` values: plain grade mappings and id lists, as :meth:`Parser.relevant` makes them."""
    kinds = _types(column)
    if kinds <= {dict, _NONE}:
        mappings = [value for value in column if value is not None]
        keys = _types(chain.from_iterable(mappings))
        grades = list(chain.from_iterable(map(dict.values, mappings)))
        if not (keys <= _STR and _types(grades) <= {int}
                and (not grades or 0 <= min(grades) <= max(grades) <= max_grade)):
            return None
        return [dict(value) or None if value is not None else None for value in column]
    if kinds <= _LIST_OR_NONE:
        lists = _string_lists(column)
        if lists is None:
            return None
        return [None if value is None else dict.fromkeys(value, 1) or None for value in lists]
    return None


def _answers(column: list[Any]) -> list[Any] | None:
    """``reference_answer``: a string is one answer, a list of strings several."""
    if not _types(column) <= _ANSWERS:
        return None
    lists = [value for value in column if type(value) is list or type(value) is tuple]
    if not _types(chain.from_iterable(lists)) <= _STR:
        return None
    return [() if value is None else (value,) if type(value) is str else tuple(value)
            for value in column]


def _numbers(column: list[Any]) -> list[Any] | None:
    """Finite numbers >= 0 as floats (``bool`` is not a number); ``None`` stays ``None``."""
    if not _types(column) <= _NUMBER_OR_NONE:
        return None
    try:
        converted = [None if value is None else float(value) for value in column]
    except OverflowError:
        return None
    present = [value for value in converted if value is not None]
    if not all(map(math.isfinite, present)) or (present and min(present) < 0):
        return None
    return converted


def _exact(column: list[Any], kinds: frozenset[type]) -> list[Any] | None:
    return column if _types(column) <= kinds else None


def _one_by_one(column: list[Any], name: str, convert: Convert, default: Any) -> list[Any]:
    """The parser's converter value by value (it raises on a bad value)."""
    return [default if value is None else convert(name, value) for value in column]


def _column(items: Sequence[dict[str, Any]], key: str) -> list[Any]:
    return list(map(dict.get, items, repeat(key)))


def plain_queries(items: object, convert: Convert, max_grade: int) -> tuple[Query, ...] | None:
    """The queries of a list of plain query dicts, or ``None`` (then the item-by-item path).

    ``convert(key, value)`` is the parser's converter of one query field (by
    its file key), used for a column that is not plain.
    """
    if type(items) is not list and type(items) is not tuple:
        return None
    queries: Sequence[Any] = items
    if not queries or _types(queries) != {dict}:
        return None
    keys = set(chain.from_iterable(queries))
    if not (_types(keys) <= _STR and keys <= QUERY_FIELDS.keys()):
        return None
    ids = _column(queries, "id")
    if not (_types(ids) == {str} and all(ids) and len(set(ids)) == len(ids)):
        return None
    columns: dict[str, list[Any]] = {"id": ids}
    try:
        for key in sorted(keys - {"id"}):
            column = _column(queries, key)
            default = _QUERY_BASE[QUERY_FIELDS[key]]
            if key == "question":
                plain = _exact(column, _STR_OR_NONE)
            elif key == "answerable":
                plain = _exact(column, _BOOL_OR_NONE)
            elif key == "relevant":
                plain = _grades(column, max_grade)
            elif key == "reference_answer":
                plain = _answers(column)
            elif key in ("required_facts", "expected_citations"):
                plain = _string_lists(column)
                if plain is not None:
                    plain = [default if value is None else value for value in plain]
            else:
                plain = None
            columns[QUERY_FIELDS[key]] = (plain if plain is not None
                                          else _one_by_one(column, key, convert, default))
    except Exception:  # the item-by-item path raises it, or an earlier problem, in order
        return None
    return assemble_columns(Query, columns, len(queries))


def plain_run(raw: object, known: Iterable[str], convert: Convert
              ) -> dict[str, RunEntry] | None:
    """The run of a plain ``{query id: entry dict}`` mapping, or ``None`` (then the
    item-by-item path).  A null entry is left out, as there.

    ``convert(field, value)`` is the parser's converter of one run field, used
    for a column that is not plain; the ranked id lists are never converted
    that way (chunk objects of a framework go the item-by-item path).
    """
    if type(raw) is not dict:
        return None
    run: Mapping[Any, Any] = raw
    known_ids = known if isinstance(known, (set, frozenset)) else set(known)
    if not (_types(run) <= _STR and run.keys() <= known_ids):
        return None
    entries = list(run.values())
    query_ids = list(run)
    kinds = _types(entries)
    if _NONE in kinds:
        query_ids = [query_id for query_id, entry in zip(query_ids, entries) if entry is not None]
        entries = [entry for entry in entries if entry is not None]
        kinds.discard(_NONE)
    if not kinds <= {dict}:
        return None
    keys = set(chain.from_iterable(entries))
    if not (_types(keys) <= _STR and keys <= _RUN_BASE.keys()):
        return None
    columns: dict[str, list[Any]] = {}
    try:
        for key in sorted(keys):
            column = _column(entries, key)
            if key in _ID_LISTS:
                plain = _string_lists(column)
                if plain is None:
                    return None
            elif key in _NUMBERS:
                plain = _numbers(column)
            elif key == "answer":
                plain = _exact(column, _STR_OR_NONE)
            elif key in ("abstained", "task_success"):
                plain = _exact(column, _BOOL_OR_NONE)
            else:
                plain = None
            columns[key] = plain if plain is not None else _one_by_one(column, key, convert, None)
    except Exception:  # the item-by-item path raises it, or an earlier problem, in order
        return None
    return dict(zip(query_ids, assemble_columns(RunEntry, columns, len(entries))))

