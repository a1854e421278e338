"""Column-by-column validation of plain sections: the parser's fast paths.

Besides ``queries`` and ``run`` (below), the chunks (:func:`plain_chunks`), a
query's evidence spans (:func:`plain_spans`) and the chunk vectors
(:func:`stack_vectors`) have a fast path here, each returning ``None`` on any
doubt so that the parser's own rule decides and names the problem.

A large file's queries and run entries are almost always plain: dicts of the
format's keys whose values have the exact types a JSON file gives.  Checking
them one query at a time costs a few Python calls per field; here every field
of every query is checked at once, one column at a time, in C-level passes
(``set(map(type, column))``, ``chain.from_iterable``), and the objects are
filled by dictionary updates (:func:`~pytest_rag.dataset.model.assemble`'s way).

The fast path never decides anything the item-by-item path of
:class:`~pytest_rag.dataset.parser.FormatRules` would decide differently: a column
whose cheap check fails is converted value by value with the parser's own
converter, and on any doubt (an item that is not a plain dict, an unknown or
non-string key, a duplicate or empty id, a converter that refuses a value)
the functions return ``None``.  The parser then takes its item-by-item path,
which finds the first problem in file order and names its place, so every
message stays what it was.  Any other exception is a bug, and is not hidden.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, Final

from ..errors import DatasetError
from .fields import QUERY, RUN, Field, Kind
from .model import (
    ChunkTable,
    EvidenceSpan,
    Query,
    RunEntry,
    assemble_columns,
    field_defaults,
)

__all__ = ["COLUMN_RULES", "plain_chunks", "plain_column", "plain_queries", "plain_run",
           "plain_spans", "stack_vectors"]

#: A value converter of the parser: ``(field, value) -> converted`` (raises on a bad value).
Convert = Callable[[str, Any], Any]

_NONE: Final[type] = type(None)
_STR: Final[frozenset[type]] = frozenset({str})
_STR_OR_NONE: Final[frozenset[type]] = frozenset({str, _NONE})
_BOOL_OR_NONE: Final[frozenset[type]] = frozenset({bool, _NONE})
_LIST_OR_NONE: Final[frozenset[type]] = frozenset({list, tuple, _NONE})
_NUMBER_OR_NONE: Final[frozenset[type]] = frozenset({int, float, _NONE})
_ANSWERS: Final[frozenset[type]] = frozenset({str, list, tuple, _NONE})
_INT: Final[frozenset[type]] = frozenset({int})
_PLAIN_CHUNK_KEYS: Final = ("id", "doc_id", "start", "end")
_plain_chunk_columns: Final = tuple(map(operator.itemgetter, _PLAIN_CHUNK_KEYS))
_plain_span_fields: Final = operator.itemgetter("doc_id", "start", "end")

_QUERY_BASE: Final = field_defaults(Query)


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
    """``relevant`` values: plain grade mappings and id lists, as
    :meth:`FormatRules.relevant` makes them."""
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
    if not (_types(keys) <= _STR and keys <= QUERY.keys()):
        return None
    ids = _column(queries, "id")
    if not (_types(ids) == {str} and all(ids) and len(set(ids)) == len(ids)):
        return None
    columns: dict[str, list[Any]] = {"id": ids}
    try:
        for key in sorted(keys - {"id"}):
            column = _column(queries, key)
            attribute = QUERY[key].attribute
            default = _QUERY_BASE[attribute]
            plain = plain_column(QUERY[key], column, max_grade)
            columns[attribute] = (plain if plain is not None
                                  else _one_by_one(column, key, convert, default))
    except DatasetError:  # the item-by-item path raises it, or an earlier problem, in order
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
    if not (_types(keys) <= _STR and keys <= RUN.keys()):
        return None
    columns: dict[str, list[Any]] = {}
    try:
        for key in sorted(keys):
            column = _column(entries, key)
            plain = plain_column(RUN[key], column, 0)
            if plain is None and RUN[key].kind in _ONLY_PLAIN:
                return None
            columns[key] = plain if plain is not None else _one_by_one(column, key, convert, None)
    except DatasetError:  # the item-by-item path raises it, or an earlier problem, in order
        return None
    return dict(zip(query_ids, assemble_columns(RunEntry, columns, len(entries))))


def _vectors(raws: list[Any], _: int) -> list[Any] | None:
    """``parser.run_field("query_vector", ...)`` of every value (``None`` stays ``None``)
    when each is a one-dimensional float32 or float64 numpy array, all of one
    dtype and one length, with only finite values, checked at once; else ``None``.

    Those are the vectors ``FormatRules.matrix`` converts to float64 without a
    message (a float64 one is kept as it is), so the values are the same.
    """
    import numpy as np

    given = [raw for raw in raws if raw is not None]
    stacked = stack_vectors(given) if given else None
    if stacked is None:
        return None
    rows = iter(given if stacked.dtype == np.float64 else stacked.astype(np.float64))
    return [None if raw is None else next(rows) for raw in raws]


#: A whole column of a field's values checked at once, by the field's kind (the
#: second argument is the largest grade): the converted values, ``None`` kept for
#: an absent value, or ``None`` when the column is not plain (then each value goes
#: through the parser's converter).  A kind not here always goes value by value.
COLUMN_RULES: Final[dict[Kind, Callable[[list[Any], int], list[Any] | None]]] = {
    "text": lambda column, _: _exact(column, _STR_OR_NONE),
    "boolean": lambda column, _: _exact(column, _BOOL_OR_NONE),
    "grades": _grades,
    "answers": lambda column, _: _answers(column),
    "strings": lambda column, _: _string_lists(column),
    "ids": lambda column, _: _string_lists(column),
    "ranked_ids": lambda column, _: _string_lists(column),
    "number": lambda column, _: _numbers(column),
    "vector": _vectors,
}


def plain_column(row: Field, column: list[Any], max_grade: int) -> list[Any] | None:
    """The values of field ``row`` checked at once (:data:`COLUMN_RULES`), an absent
    one (``None``) as the field's default; ``None`` when the column is not plain."""
    rule = COLUMN_RULES.get(row.kind)
    plain = None if rule is None else rule(column, max_grade)
    default = _QUERY_BASE[row.attribute] if row.section == "queries" else None
    if plain is not None and default is not None:
        plain = [default if value is None else value for value in plain]
    return plain


#: Kinds whose values are never converted one by one here: a ranked list may hold
#: chunk objects of a framework, which only the item-by-item path reads.
_ONLY_PLAIN: Final = frozenset({"ids", "ranked_ids"})


def plain_chunks(items: Sequence[Any], lengths: Mapping[str, int]) -> ChunkTable | None:
    """The chunks, checked column by column and kept as columns, when every
    item is a plain ``{"id", "doc_id", "start", "end"}`` dict that passes every rule
    (``lengths``: each document's text length).

    ``None`` otherwise: the item-by-item path then finds (and names) the
    first problem, so this changes no result and no message.
    """
    if (not items or set(map(type, items)) != {dict}
            or set(map(len, items)) != {len(_PLAIN_CHUNK_KEYS)}):
        return None
    try:
        ids, doc_ids, starts, ends = (tuple(map(column, items))
                                      for column in _plain_chunk_columns)
    except KeyError:
        return None
    if not (_types(ids) <= _STR and _types(doc_ids) <= _STR and _types(starts) <= _INT
            and _types(ends) <= _INT and all(ids)):
        return None
    index = dict(zip(ids, range(len(ids))))
    if len(index) != len(ids):
        return None
    import numpy as np

    count = len(ids)
    try:  # every doc_id is a str, so only an unknown one fails
        limits = np.fromiter(map(lengths.__getitem__, doc_ids),
                             dtype=np.int64, count=count)
    except KeyError:
        return None
    try:
        low = np.fromiter(starts, dtype=np.int64, count=count)
        high = np.fromiter(ends, dtype=np.int64, count=count)
    except OverflowError:
        return None
    if not ((low >= 0) & (low <= high) & (high <= limits)).all():
        return None
    return ChunkTable.of(ids, doc_ids, starts, ends, index)


def plain_spans(items: Sequence[Any], lengths: Mapping[str, int]
                ) -> tuple[EvidenceSpan, ...] | None:
    """The spans when every item is a plain ``{"doc_id", "start", "end"}`` dict
    that passes every rule; ``None`` otherwise (then the item-by-item path
    finds and names the first problem).  ``lengths``: each document's text length."""
    spans: dict[EvidenceSpan, None] = {}
    for item in items:
        if type(item) is not dict or len(item) != 3:
            return None
        try:
            doc_id, start, end = _plain_span_fields(item)
        except KeyError:
            return None
        if (type(doc_id) is not str or type(start) is not int or type(end) is not int
                or not 0 <= start <= end <= lengths.get(doc_id, -1)):
            return None
        spans[EvidenceSpan(doc_id, start, end)] = None
    return tuple(spans)


def stack_vectors(rows: list[Any]) -> Any:
    """Same-dtype float vectors (numpy arrays of one length) stacked into one
    matrix, when they are all finite; ``None`` for anything else, which then
    goes row by row through :meth:`~pytest_rag.dataset.values.ValueRules.matrix` and its messages.

    float32 rows stay float32, as a float32 matrix does in
    :meth:`~pytest_rag.dataset.values.ValueRules.matrix`.
    """
    import numpy as np

    if set(map(type, rows)) != {np.ndarray}:
        return None
    dtypes = set(map(operator.attrgetter("dtype"), rows))
    shapes = set(map(operator.attrgetter("shape"), rows))
    if len(dtypes) != 1 or len(shapes) != 1:
        return None
    dtype, shape = dtypes.pop(), shapes.pop()
    if dtype not in (np.float32, np.float64) or len(shape) != 1 or shape[0] == 0:
        return None
    matrix = np.stack(rows)
    return matrix if np.isfinite(matrix).all() else None
