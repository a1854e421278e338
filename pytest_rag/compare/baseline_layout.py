"""How a baseline entry's per-query values are laid out in the file.

In memory (and in version 1 files) an entry holds ``per_query`` as
``{metric: {query: value}}`` and its gold fingerprints as
``gold.queries = {query: digest}``: one line of the file per query per
metric.  A version 2 file holds one row per query instead, the query id once::

    "per_query": {
      "columns": ["#gold", "mrr_at_k", "recall_at_k"],
      "rows": {
"q1":["iIMyRWJLL9s",1,0.5],
"q2":["eS8k0NjKj8U",0.5,null]
      }
    }

``columns`` names each position of a row: ``"#gold"`` (present when the entry
has gold fingerprints) is the query's gold digest, every other column a
metric, in sorted order; ``null`` is "not measured" (or no fingerprint).
Rows are sorted by query id, so one changed query is one changed line and two
branches that change different queries merge cleanly.  Everything else of the
file keeps the layout of :func:`json.dumps` with ``indent=2, sort_keys=True``.

A row is written compactly, since the rows are nearly all of a big file: at
the start of its line, without spaces; a value that is a whole number as one
(``1`` for ``1.0``; the reader gives floats back, and ``-0.0`` keeps its
fraction so that its sign survives); and a gold digest of pytest-rag (16 hex
digits, 64 bits) as the 11 characters of the same 64 bits in unpadded URL-safe
base64 (:func:`pack_digest`).  No value changes: every float is written with
the shortest text that reads back to the same float.  Files whose rows hold
``1.0`` or 16-hex digests (the first version 2 writer's) read the same.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any

__all__ = ["GOLD_COLUMN", "dumps_baseline", "first_layout", "pack_digest", "pack_entry",
           "unpack_digest", "unpack_entry"]

#: The column of the gold fingerprint (not a metric name: those are identifiers).
GOLD_COLUMN = "#gold"

Bad = Callable[[str, str], Exception]

#: A gold digest as pytest-rag makes it (:func:`pytest_rag.dataset.model._digest`).
_HEX_DIGEST = re.compile(r"[0-9a-f]{16}")
#: Such a digest in a row: 64 bits in 11 base64 characters, the last one holding
#: 4 bits and 2 zero bits (so only every fourth letter of the alphabet ends one).
_PACKED_DIGEST = re.compile(r"[A-Za-z0-9_-]{10}[AEIMQUYcgkosw048]")


def pack_digest(digest: str) -> str:
    """A gold digest as a row holds it: 16 hex digits as the unpadded URL-safe base64 of
    the same 8 bytes (11 characters); any other string as it is."""
    if len(digest) == 16 and _HEX_DIGEST.fullmatch(digest):
        return base64.urlsafe_b64encode(bytes.fromhex(digest))[:11].decode("ascii")
    return digest


def unpack_digest(text: str) -> str:
    """The digest of a row's gold cell (:func:`pack_digest` undone): 11 base64 characters
    are 16 hex digits again; any other string (the 16 hex digits of the first version 2
    writer) is the digest as it is.  A string that is not pytest-rag's never equals the
    digest a run computes, read either way."""
    if len(text) == 11 and _PACKED_DIGEST.fullmatch(text):
        return base64.urlsafe_b64decode(text + "=").hex()
    return text


#: A column of hex digests, joined (checked at once, then encoded at once).
_HEX_DIGESTS = re.compile(r"[0-9a-f]*")


def _packed(digest: Any) -> Any:
    """A gold cell's value as written (:func:`pack_digest` of a string)."""
    return pack_digest(digest) if type(digest) is str else digest


def _pack_digests(digests: Sequence[Any]) -> list[Any]:
    """:func:`_packed` of each digest; a column of 16-hex digests in one base64 call (each
    padded with a zero byte to 9 bytes, so that it is 12 characters, the last one 'A')."""
    if (set(map(type, digests)) == {str} and set(map(len, digests)) == {16}
            and _HEX_DIGESTS.fullmatch("".join(digests))):
        text = base64.urlsafe_b64encode(bytes.fromhex("00".join(digests) + "00")).decode("ascii")
        return [text[start:start + 11] for start in range(0, len(text), 12)]
    return list(map(_packed, digests))


def _unpack_digests(cells: Sequence[Any]) -> list[Any]:
    """:func:`unpack_digest` of each string cell (other cells as they are, for the checks);
    a column of packed digests in one base64 call (:func:`_pack_digests` undone)."""
    if set(map(type, cells)) == {str} and set(map(len, cells)) == {11}:
        padded = "A".join(cells) + "A"
        try:
            raw = base64.urlsafe_b64decode(padded)  # skips a character out of the alphabet
        except ValueError:  # not ASCII, or a length that is no whole number of bytes
            raw = b""
        # Encoded back to the same text only when every character was of the alphabet; the
        # ninth byte of each cell zero only when its last character held two zero bits
        # (what unpack_digest checks one at a time).
        if (base64.urlsafe_b64encode(raw).decode("ascii") == padded
                and raw[8::9] == bytes(len(cells))):
            hexed = raw.hex()
            return [hexed[start:start + 16] for start in range(0, len(hexed), 18)]
    return [unpack_digest(cell) if type(cell) is str else cell for cell in cells]


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
    if names[:1] == [GOLD_COLUMN]:
        columns[0] = _pack_digests(columns[0])
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
    if set(map(type, rows.values())) - {list} or set(map(len, rows.values())) - {width}:
        for query, row in rows.items():
            if not isinstance(row, list) or len(row) != width:
                raise bad(f"{where}.rows[{query!r}]", f"expected a list of {width} values "
                                                      f"(one per column)")
    unpacked = {name: value for name, value in entry.items() if name != "per_query"}
    per_query: dict[str, dict[str, Any]] = {}
    queries = list(rows)
    cells_of = list(zip(*rows.values())) if rows else [() for _ in columns]
    for name, cells in zip(columns, cells_of):
        if name == GOLD_COLUMN:
            values = dict(zip(queries, _unpack_digests(cells)))
        else:
            values = dict(zip(queries, cells))
        if None in cells:
            values = {query: value for query, value in values.items() if value is not None}
        kinds = set(map(type, values.values())) if name != GOLD_COLUMN else set()
        if int in kinds and kinds <= {int, float}:
            # Whole numbers are written as such: floats again (one beyond the float range
            # stays, for the check to refuse it).
            try:
                values = dict(zip(values, map(float, values.values())))
            except OverflowError:
                values = {query: _float(value) for query, value in values.items()}
        if name == GOLD_COLUMN:
            gold = entry.get("gold", {})
            if not isinstance(gold, Mapping):
                raise bad(f"{place}.gold", "expected an object")
            unpacked["gold"] = {**gold, "queries": values}
        else:
            per_query[name] = values
    unpacked["per_query"] = per_query
    return unpacked


def first_layout(entry: Mapping[str, Any]) -> bool:
    """Whether a version 2 file entry (of the shape :func:`unpack_entry` accepts) is of the
    first writer's layout: its gold column holds digests as 16 hex digits.  (Entries
    without gold fingerprints cannot tell; they read the same either way.)"""
    packed = entry.get("per_query", {})
    columns = packed.get("columns", [])
    if GOLD_COLUMN not in columns:
        return False
    index = columns.index(GOLD_COLUMN)
    return any(type(cell) is str and len(cell) == 16
               for cell in map(itemgetter(index), packed.get("rows", {}).values()))


def _float(value: Any) -> Any:
    """``float(value)`` of an integer within the float range; any other value as it is."""
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            pass
    return value


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


def _whole(texts: list[str]) -> list[str]:
    """``texts`` with a whole number's ``.0`` left out (``1.0`` -> ``1``; ``1e+16`` has
    none), except ``-0.0``: ``-0`` would read back as the integer 0, without its sign."""
    return [text[:-2] if text[-2:] == ".0" and text != "-0.0" else text for text in texts]


def _rows_text(order: list[str], names: list[str], sources: list[Mapping[str, Any]],
               indent: str) -> str:
    """The ``rows`` object: one line per query, each at the start of its line (the
    object's closing brace at ``indent``)."""
    if not order:
        return "{}"
    columns = [_column_texts(_pack_digests(list(map(source.get, order))))
               if name == GOLD_COLUMN else _whole(_column_texts(list(map(source.get, order))))
               for name, source in zip(names, sources)]
    cells = zip(*columns) if columns else ([] for _ in order)
    lines = [f"{encode_basestring(query)}:[{','.join(row)}]" for query, row in zip(order, cells)]
    return "{\n" + ",\n".join(lines) + f"\n{indent}}}"


def dumps_baseline(data: Mapping[str, Any]) -> str:
    """The text of a baseline file: sorted keys, two-space indents, one line per row.

    ``data`` is ``{"format": ..., "version": ..., "tests": ...}`` with the entries in
    their in-memory form; the text is that of :func:`json.dumps` with
    ``indent=2, sort_keys=True`` of the file form (:func:`pack_entry`), except
    that each row of ``per_query.rows`` is on one line, at its start, without
    spaces, whole numbers without ``.0``.
    """
    marker = "\x00" + secrets.token_hex(8) + ":"
    blocks: list[tuple[list[str], list[str], list[Mapping[str, Any]]]] = []

    def skeleton(entry: Mapping[str, Any]) -> dict[str, Any]:
        rest, names, order, sources = _split(entry)
        blocks.append((order, names, sources))
        return {**rest, "per_query": {"columns": names, "rows": f"{marker}{len(blocks) - 1}"}}

    tests = {nodeid: {stage: skeleton(entry) for stage, entry in stages.items()}
             for nodeid, stages in data["tests"].items()}
    text = json.dumps({**data, "tests": tests}, indent=2, sort_keys=True, ensure_ascii=False,
                      allow_nan=False)
    escaped = re.escape(json.dumps(marker)[1:-1])

    def rows(match: re.Match[str]) -> str:
        order, names, sources = blocks[int(match[3])]
        return f"{match[1]}{match[2]}{_rows_text(order, names, sources, match[1])}"

    return re.sub(f'^( *)("rows": )"{escaped}([0-9]+)"', rows, text, flags=re.MULTILINE) + "\n"
