"""How a baseline entry's per-query values are laid out in the file.

In memory (and in version 1 files) an entry holds ``per_query`` as
``{metric: {query: value}}`` and its gold fingerprints as
``gold.queries = {query: digest}``: one line of the file per query per
metric.  A version 2 file holds one row per query instead, the query id once::

    "per_query": {
      "columns": ["#gold", "mrr_at_k", "recall_at_k"],
      "rows": {
        "q1": ["88833245624b2fdb",1.0,0.5],
        "q2": ["792f24d0d8ca8fc5",0.5,null]
      }
    }

``columns`` names each position of a row: ``"#gold"`` (present when the entry
has gold fingerprints) is the query's gold digest, every other column a
metric, in sorted order; ``null`` is "not measured" (or no fingerprint).
Rows are sorted by query id, so one changed query is one changed line and two
branches that change different queries merge cleanly.  Everything else of the
file keeps the layout of :func:`json.dumps` with ``indent=2, sort_keys=True``.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any

__all__ = ["GOLD_COLUMN", "dumps_baseline", "pack_entry", "unpack_entry"]

#: The column of the gold fingerprint (not a metric name: those are identifiers).
GOLD_COLUMN = "#gold"

Bad = Callable[[str, str], Exception]


def _gold_queries(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    gold = entry.get("gold")
    queries = gold.get("queries") if isinstance(gold, Mapping) else None
    return queries if isinstance(queries, Mapping) else None


def _split(entry: Mapping[str, Any]
           ) -> tuple[dict[str, Any], list[str], list[str], list[Mapping[str, Any]]]:
    """An entry without its per-query values and gold digests, and those as the
    row layout's column names, sorted query ids and one mapping per column."""
    per_query: Mapping[str, Mapping[str, Any]] = entry.get("per_query", {})
    gold = _gold_queries(entry)
    keys = sorted(per_query)
    names = ([GOLD_COLUMN] if gold is not None else []) + keys
    sources = ([gold] if gold is not None else []) + [per_query[key] for key in keys]
    queries: set[str] = set()
    for source in sources:
        queries.update(source)
    rest = {name: value for name, value in entry.items() if name != "per_query"}
    if gold is not None:
        others = {name: value for name, value in entry["gold"].items() if name != "queries"}
        if others:
            rest["gold"] = others
        else:
            del rest["gold"]
    return rest, names, sorted(queries), sources


def pack_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The file form of an in-memory entry: per-query values and gold digests as rows."""
    rest, names, order, sources = _split(entry)
    columns = [list(map(source.get, order)) for source in sources]
    rows = (dict(zip(order, map(list, zip(*columns)))) if columns
            else {query: [] for query in order})
    return {**rest, "per_query": {"columns": names, "rows": rows}}


def unpack_entry(entry: Mapping[str, Any], place: str, bad: Bad) -> dict[str, Any]:
    """The in-memory form of a version 2 file entry (:func:`pack_entry` undone).

    Raises ``bad(place, problem)`` for rows of the wrong shape; the values
    themselves are checked by the caller, in the in-memory form.
    """
    packed = entry.get("per_query", {"columns": [], "rows": {}})
    where = f"{place}.per_query"
    if not isinstance(packed, Mapping):
        raise bad(where, "expected an object with 'columns' and 'rows'")
    columns = packed.get("columns")
    rows = packed.get("rows")
    if (not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)
            or len(set(columns)) != len(columns)):
        raise bad(f"{where}.columns", "expected a list of distinct names")
    if not isinstance(rows, Mapping):
        raise bad(f"{where}.rows", "expected an object of query id to row")
    width = len(columns)
    for query, row in rows.items():
        if not isinstance(row, list) or len(row) != width:
            raise bad(f"{where}.rows[{query!r}]", f"expected a list of {width} values "
                                                  f"(one per column)")
    unpacked = {name: value for name, value in entry.items() if name != "per_query"}
    per_query: dict[str, dict[str, Any]] = {}
    for index, name in enumerate(columns):
        values = {query: row[index] for query, row in rows.items() if row[index] is not None}
        if name == GOLD_COLUMN:
            gold = entry.get("gold", {})
            if not isinstance(gold, Mapping):
                raise bad(f"{place}.gold", "expected an object")
            unpacked["gold"] = {**gold, "queries": values}
        else:
            per_query[name] = values
    unpacked["per_query"] = per_query
    return unpacked


def _value_text(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)`` of one row value."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return encode_basestring(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _column_texts(values: list[Any]) -> list[str]:
    """The JSON text of each value of a column (what :func:`_value_text` gives), floats
    and nulls without a call each."""
    try:
        texts = ["null" if value is None else float.__repr__(value) for value in values]
    except TypeError:  # a string (the gold column) or an integer
        return list(map(_value_text, values))
    if not _NOT_JSON.isdisjoint(texts):
        raise ValueError("Out of range float values are not JSON compliant")
    return texts


_NOT_JSON = frozenset({"nan", "inf", "-inf"})


def _rows_text(order: list[str], sources: list[Mapping[str, Any]], indent: str) -> str:
    """The ``rows`` object: one line per query, at ``indent`` + 2 spaces."""
    if not order:
        return "{}"
    columns = [_column_texts(list(map(source.get, order))) for source in sources]
    cells = zip(*columns) if columns else ([] for _ in order)
    lines = [f"{indent}  {encode_basestring(query)}: [{','.join(row)}]"
             for query, row in zip(order, cells)]
    return "{\n" + ",\n".join(lines) + f"\n{indent}}}"


def dumps_baseline(data: Mapping[str, Any]) -> str:
    """The text of a baseline file: sorted keys, two-space indents, one line per row.

    ``data`` is ``{"format": ..., "version": ..., "tests": ...}`` with the entries in
    their in-memory form; the text is that of :func:`json.dumps` with
    ``indent=2, sort_keys=True`` of the file form (:func:`pack_entry`), except
    that each row of ``per_query.rows`` is on one line, without spaces.
    """
    marker = "\x00" + secrets.token_hex(8) + ":"
    blocks: list[tuple[list[str], list[Mapping[str, Any]]]] = []

    def skeleton(entry: Mapping[str, Any]) -> dict[str, Any]:
        rest, names, order, sources = _split(entry)
        blocks.append((order, sources))
        return {**rest, "per_query": {"columns": names, "rows": f"{marker}{len(blocks) - 1}"}}

    tests = {nodeid: {stage: skeleton(entry) for stage, entry in stages.items()}
             for nodeid, stages in data["tests"].items()}
    text = json.dumps({**data, "tests": tests}, indent=2, sort_keys=True, ensure_ascii=False,
                      allow_nan=False)
    escaped = re.escape(json.dumps(marker)[1:-1])

    def rows(match: re.Match[str]) -> str:
        order, sources = blocks[int(match[3])]
        return f"{match[1]}{match[2]}{_rows_text(order, sources, match[1])}"

    return re.sub(f'^( *)("rows": )"{escaped}([0-9]+)"', rows, text, flags=re.MULTILINE) + "\n"
