"""ragas datasets: rows of ``user_input``, ``retrieved_contexts``, ``reference_contexts``,
``response`` and ``reference``, as JSON Lines or CSV.

Every distinct context text becomes a document and one chunk spanning it,
both with the id ``ctx-`` + 32 hex digits of the text's BLAKE2b digest, so
the same text always gets the same id and different texts never share one
(:func:`context_id`): retrieved contexts that are reference
contexts are relevant, and the ranking, context and answer metrics are exact
and deterministic.  Each row becomes a query (``id`` from the row's ``id``
column when it has one, else ``row-<n>``): ``user_input`` the question,
``reference_contexts`` its relevant chunks and its evidence (each whole
context), ``reference`` its reference answer; its run: ``retrieved_contexts``
as both the retrieved and the context ids, ``response`` as the answer.  The
older column names ``question``, ``contexts``, ``answer`` and
``ground_truth`` are read too.  In CSV, a list column holds a JSON list or a
Python list literal, as pandas writes it.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...errors import DatasetError
from ...escaping import quoted
from .lines import json_lines, read_dataset_text

__all__ = ["context_id", "ragas_dataset"]

#: Older ragas column names and the current ones they stand for.
ALIASES = {"question": "user_input", "contexts": "retrieved_contexts", "answer": "response",
           "ground_truth": "reference"}
COLUMNS = ("user_input", "retrieved_contexts", "reference_contexts", "response", "reference")


def _digest(text: str) -> str:
    """32 hex digits (128 bits) of the text's BLAKE2b digest."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def context_id(text: str, known: Mapping[str, str] | None = None) -> str:
    """``ctx-`` and 32 hex digits of the text's digest: equal texts, equal ids.

    ``known`` maps the ids handed out so far to their texts.  Different texts
    never share an id: when the digest's id is known for another text (a
    collision), the text gets the first of ``<id>-2``, ``<id>-3``, ... that is
    free or already its own.
    """
    base = "ctx-" + _digest(text)
    if known is None:
        return base
    candidate, number = base, 1
    while (other := known.get(candidate)) is not None and other != text:
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def _rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(place, row)`` of every row: ``line N`` of JSON Lines, ``row N`` of CSV."""
    if path.suffix.lower() == ".csv":
        text = read_dataset_text(path)
        reader = csv.DictReader(io.StringIO(text, newline=""))
        # A cell may be as long as the file (a long context): the csv module's own limit
        # (131,072 characters) is lifted while this file is read, then restored.
        limit = csv.field_size_limit(max(len(text), csv.field_size_limit()))
        try:
            for index, row in enumerate(reader, start=1):
                yield f"row {index} (line {reader.line_num})", dict(row)
        except csv.Error as error:
            raise DatasetError(str(path), f"line {reader.line_num + 1}",
                               f"invalid CSV: {error}") from None
        finally:
            csv.field_size_limit(limit)
        return
    for number, row in json_lines(path):
        yield f"line {number}", row


def _list(path: Path, place: str, column: str, value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):  # CSV: a JSON list, or a Python literal as pandas writes it
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            try:
                value = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                # TypeError: a literal that cannot be built ({[1]: 2}); too deep: the others
                raise DatasetError(str(path), place, f"{column}: expected a list of strings, "
                                                     f"got {quoted(value, 60)}") from None
    if not isinstance(value, list):
        raise DatasetError(str(path), place, f"{column}: expected a list of strings, got "
                                             f"{_kind(value)}")
    bad = next((i for i, item in enumerate(value) if not isinstance(item, str)), None)
    if bad is not None:
        raise DatasetError(str(path), place, f"{column}: expected a list of strings, got "
                                             f"{_kind(value[bad])} at [{bad}]")
    if any(not item.strip() for item in value):
        raise DatasetError(str(path), place, f"{column}: an empty context")
    return value


def _kind(value: Any) -> str:
    """What a value is, for a message, without printing it (it may be deeply nested)."""
    if isinstance(value, str):
        return f"the string {quoted(value, 60)}"
    if isinstance(value, (bool, int, float)) or value is None:
        return f"{type(value).__name__} {quoted(value, 60)}"
    return f"a {'list' if isinstance(value, list) else type(value).__name__}"


def _text(path: Path, place: str, column: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise DatasetError(str(path), place, f"{column}: expected a string, got {_kind(value)}")
    return value


def ragas_dataset(path: Path) -> dict[str, Any]:
    """FORMAT v1 data of a ragas JSON Lines or CSV file."""
    documents: dict[str, str] = {}
    queries: list[dict[str, Any]] = []
    run: dict[str, dict[str, Any]] = {}
    for index, (place, raw) in enumerate(_rows(path), start=1):
        row = {ALIASES.get(key, key): value for key, value in raw.items()}
        if not any(column in row for column in COLUMNS):
            raise DatasetError(str(path), place, f"no ragas column ({', '.join(COLUMNS)}); "
                                                 f"found: {', '.join(map(quoted, raw))}")
        query_id = _text(path, place, "id", row.get("id")) or f"row-{index}"
        if query_id in run:
            raise DatasetError(str(path), place, f"duplicate id {query_id!r}")
        retrieved = _list(path, place, "retrieved_contexts", row.get("retrieved_contexts"))
        reference = _list(path, place, "reference_contexts", row.get("reference_contexts"))
        for text in (*retrieved, *reference):
            documents.setdefault(context_id(text, documents), text)
        query: dict[str, Any] = {"id": query_id}
        question = _text(path, place, "user_input", row.get("user_input"))
        if question is not None:
            query["question"] = question
        if reference:
            query["relevant"] = {context_id(text, documents): 1 for text in reference}
            query["expected_evidence"] = [{"doc_id": context_id(text, documents), "start": 0,
                                           "end": len(text)} for text in reference]
        answer = _text(path, place, "reference", row.get("reference"))
        if answer is not None:
            query["reference_answer"] = answer
        queries.append(query)
        entry: dict[str, Any] = {}
        if retrieved:
            ids = [context_id(text, documents) for text in retrieved]
            entry["retrieved_ids"] = ids
            entry["context_ids"] = ids
        response = _text(path, place, "response", row.get("response"))
        if response is not None:
            entry["answer"] = response
        run[query_id] = entry
    return {
        "format": "pytest-rag/v1",
        "documents": [{"id": doc_id, "text": text} for doc_id, text in documents.items()],
        "chunks": [{"id": doc_id, "doc_id": doc_id, "start": 0, "end": len(text)}
                   for doc_id, text in documents.items()],
        "queries": queries,
        "run": run,
    }
