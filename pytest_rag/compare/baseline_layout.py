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
import math
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


def pack_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The file form of an in-memory entry: per-query values and gold digests as rows."""
    per_query: Mapping[str, Mapping[str, Any]] = entry.get("per_query", {})
    gold = _gold_queries(entry)
    keys = sorted(per_query)
    columns = ([GOLD_COLUMN] if gold is not None else []) + keys
    queries: set[str] = set(gold or ())
    for values in per_query.values():
        queries.update(values)
    order = sorted(queries)
    sources = ([gold] if gold is not None else []) + [per_query[key] for key in keys]
    columns_of_values = [list(map(source.get, order)) for source in sources]
    rows = dict(zip(order, map(list, zip(*columns_of_values)))) if sources else {
        query: [] for query in order}
    packed = {name: value for name, value in entry.items() if name != "per_query"}
    if gold is not None:
        rest = {name: value for name, value in entry["gold"].items() if name != "queries"}
        if rest:
            packed["gold"] = rest
        else:
            del packed["gold"]
    packed["per_query"] = {"columns": columns, "rows": rows}
    return packed


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
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)`` of one row value,
    without its per-call set-up (a row is a digest, numbers and nulls)."""
    if value is None:
        return "null"
    if isinstance(value, float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        return float.__repr__(value)
    if isinstance(value, str):
        return encode_basestring(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def dumps_baseline(data: Mapping[str, Any]) -> str:
    """The text of a baseline file: sorted keys, two-space indents, one line per row.

    ``data`` is the file form (entries packed with :func:`pack_entry`).
    """
    marker = "\x00" + secrets.token_hex(8) + ":"
    texts: list[str] = []

    def rows_marked(rows: Mapping[str, list[Any]]) -> dict[str, str]:
        marked = {}
        for query, row in rows.items():
            marked[query] = f"{marker}{len(texts)}"
            texts.append("[" + ",".join(map(_value_text, row)) + "]")
        return marked

    tests = {nodeid: {stage: {**entry, "per_query": {
        **entry["per_query"], "rows": rows_marked(entry["per_query"]["rows"])}}
        for stage, entry in stages.items()} for nodeid, stages in data["tests"].items()}
    text = json.dumps({**data, "tests": tests}, indent=2, sort_keys=True, ensure_ascii=False,
                      allow_nan=False)
    escaped = re.escape(json.dumps(marker)[1:-1])
    return re.sub(f'"{escaped}([0-9]+)"', lambda match: texts[int(match[1])], text) + "\n"
