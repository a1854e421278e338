"""Turning an evaluator's keyword arguments into a validated :class:`Dataset`.

An input passed as a keyword argument replaces the dataset's input of that
name; everything else comes from the dataset (when one is given).  Keyword
arguments are checked by the same rules as a file, and errors name the
argument: ``retrieved_ids['q1'][2]: expected a string, got a number 7``.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any, Final, TypeVar

from ..errors import describe_value, unknown_names
from .columns import plain_column
from .fields import GOLD_FIELDS, RUN
from .model import (
    Chunk,
    Dataset,
    Document,
    Query,
    RunEntry,
    Vectors,
    assemble,
    chunk_ids,
    field_defaults,
    replaced,
)
from .parser import MAX_GRADE, FormatRules, validate_vector_dimensions

__all__ = ["GOLD_QUERY_INPUTS", "RUN_INPUTS", "SECTION_INPUTS", "resolve_inputs"]

SOURCE = "<arguments>"

_STR: Final = frozenset({str})
_LISTS: Final = frozenset({list, tuple})
_DICT: Final = frozenset({dict})
_INT: Final = frozenset({int})


def _plain_documents(value: Mapping[Any, Any]) -> tuple[Document, ...] | None:
    """``parser.documents_section`` of a ``{doc_id: text}`` dict whose ids are non-empty
    strings and texts strings (exact types, checked in C); else ``None``, and the
    parser checks each document with its message."""
    if type(value) is not dict or not (set(map(type, value)) <= _STR
                                       and set(map(type, value.values())) <= _STR
                                       and all(value)):
        return None
    return tuple(assemble(Document, {"id": doc_id, "text": text})
                 for doc_id, text in value.items())


_Item = TypeVar("_Item", Query, RunEntry)

#: Per-query gold inputs: keyword -> Query attribute.
GOLD_QUERY_INPUTS: dict[str, str] = {key: row.attribute for key, row in GOLD_FIELDS.items()
                                     if row.keyword}
#: Per-query run inputs (the format's names).
RUN_INPUTS: tuple[str, ...] = tuple(key for key, row in RUN.items() if row.keyword)
#: Whole-dataset inputs.
SECTION_INPUTS: tuple[str, ...] = (
    "documents", "chunks", "expected_chunks", "expected_metadata", "queries",
    "chunk_vectors", "sentence_vectors", "indexed_ids",
)
ALL_INPUTS: frozenset[str] = frozenset((*GOLD_QUERY_INPUTS, *RUN_INPUTS, *SECTION_INPUTS))


def _query_mapping(parser: FormatRules, name: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        parser.fail(name, f"expected a mapping of query id to value "
                          f"(like {{'q1': ...}}), got {describe_value(value)}")
    if not set(map(type, value)) <= _STR:  # a C-level check first; the loop names the culprit
        for query_id in value:
            if not isinstance(query_id, str):
                parser.fail(name, f"query ids must be strings, got {describe_value(query_id)}")
    return value


_ID: Final = operator.attrgetter("id")
_QUERY_DEFAULTS: Final = field_defaults(Query)


def _replaced(item: _Item, changes: Mapping[str, Any]) -> _Item:
    """``dataclasses.replace`` of a flat :class:`Query` or :class:`RunEntry`: the item
    itself when nothing changes."""
    return replaced(item, changes) if changes else item


def _chunk_vectors(parser: FormatRules, value: object, dataset: Dataset
                   ) -> tuple[tuple[str, ...], Any]:
    if isinstance(value, Mapping):
        return parser.chunk_vectors(value, "chunk_vectors")
    matrix = parser.matrix(value, "chunk_vectors", rows=True)
    ids = chunk_ids(dataset.chunks)
    if matrix.shape[0] != len(ids):
        parser.fail("chunk_vectors", f"an array of {matrix.shape[0]} rows needs one row per "
                                     f"chunk; there are {len(ids)} chunks (or pass a mapping "
                                     "of chunk id to vector)")
    return ids, matrix


def resolve_inputs(dataset: Dataset | None, inputs: Mapping[str, Any],
                   accepted: frozenset[str] | None = None, *,
                   doc_id_key: str | None = None) -> Dataset:
    """A dataset with ``inputs`` applied on top of ``dataset`` (or of an empty one).

    An input given as ``None`` is the same as one not given (as ``null`` in a
    file): the dataset's input of that name stays.  Per-query inputs name
    queries of the dataset; when the dataset has no queries (or there is no
    dataset), the queries are the ids the inputs name, in order of appearance.

    ``chunks`` and ``expected_chunks`` may hold chunk objects of LangChain,
    LlamaIndex or Haystack and plain strings besides mappings, and the ranked
    lists (``retrieved_ids``, ``reranked_ids``, ``context_ids``) those objects
    and ``(object, score)`` pairs besides ids (:mod:`.frameworks`);
    ``doc_id_key`` names the metadata key that holds a chunk's document.

    Raises
    ------
    TypeError
        For a ``dataset`` that is not a :class:`Dataset`, or a keyword argument
        that is not an input (of this stage).
    DatasetError
        For an input that breaks a rule of the format.
    """
    if dataset is not None and not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a pytest_rag.Dataset (read a file with "
                        f"pytest_rag.load_dataset(path)) or None, got {type(dataset).__name__}")
    allowed = ALL_INPUTS if accepted is None else accepted
    unknown = sorted(set(inputs) - allowed)
    if unknown:
        raise TypeError(f"unexpected input(s) {unknown_names(unknown, allowed)}; "
                        f"accepted: {', '.join(sorted(allowed))}")
    base = dataset if dataset is not None else Dataset()
    given = {name: value for name, value in inputs.items() if value is not None}
    if not given:
        return base
    parser = FormatRules(SOURCE, objects=True, doc_id_key=doc_id_key)

    documents = base.documents
    if "documents" in given:
        value = given["documents"]
        plain_documents = _plain_documents(value) if isinstance(value, Mapping) else None
        if plain_documents is not None:
            documents = plain_documents
            parser.documents.update((document.id, document) for document in documents)
        else:
            if isinstance(value, Mapping):
                value = [{"id": doc_id, "text": text} for doc_id, text in value.items()]
            documents = parser.documents_section(value, "documents")
    else:
        parser.documents.update(base.document_by_id)
    documents_changed = "documents" in given

    def chunks_of(name: str, current: Sequence[Chunk], ids_required: bool) -> Sequence[Chunk]:
        if name in given:
            return parser.chunks_section(given[name], name, ids_required=ids_required)
        if documents_changed and current:
            return parser.chunks_section(current, name, ids_required=ids_required)
        return current

    chunks = chunks_of("chunks", base.chunks, True)
    parser.use_chunks(chunks)
    expected_chunks = chunks_of("expected_chunks", base.expected_chunks, False)
    expected_metadata = (parser.expected_metadata(given["expected_metadata"])
                         if "expected_metadata" in given else base.expected_metadata)

    vectors = base.vectors
    if {"chunk_vectors", "sentence_vectors", "indexed_ids"} & given.keys():
        vectors = vectors or Vectors()
        changes: dict[str, Any] = {}
        if "chunk_vectors" in given:
            changes["chunk_ids"], changes["chunk_matrix"] = _chunk_vectors(
                parser, given["chunk_vectors"], dataclasses.replace(base, chunks=chunks))
        if "sentence_vectors" in given:
            changes["sentences"] = parser.sentence_vectors(given["sentence_vectors"],
                                                           "sentence_vectors")
        if "indexed_ids" in given:
            changes["indexed_ids"] = parser.ids(given["indexed_ids"], "indexed_ids")
        vectors = dataclasses.replace(vectors, **changes)

    queries = list(parser.queries_section(given["queries"]) if "queries" in given else base.queries)
    if documents_changed and "queries" not in given:
        queries = [dataclasses.replace(q, expected_evidence=parser.evidence(
            q.expected_evidence, f"queries[{i}].expected_evidence")) for i, q in enumerate(queries)]
    old_ids = list(map(_ID, queries))
    known = dict(zip(old_ids, range(len(old_ids))))
    if "queries" in given:
        stale = next((query_id for query_id in base.run if query_id not in known), None)
        if stale is not None:
            parser.fail("queries", f"the dataset's run has an entry for query {stale!r}, "
                                   "which is not in 'queries'")
    fixed_queries = bool(queries) or "queries" in given
    per_query = {name: _query_mapping(parser, name, value) for name, value in given.items()
                 if name in GOLD_QUERY_INPUTS or name in RUN_INPUTS}
    # Queries named only by the inputs are built once, with their gold.
    new_ids: list[str] = []
    if not fixed_queries:  # no query known yet: every id, in order of appearance, in C
        new_ids = list(dict.fromkeys(chain.from_iterable(per_query.values())))
        known.update(zip(new_ids, range(len(new_ids))))
    for name, mapping in per_query.items() if fixed_queries else ():
        for query_id in mapping:
            if query_id not in known:
                if fixed_queries:
                    parser.fail(f"{name}[{query_id!r}]",
                                f"query {query_id!r} is not in the dataset")
                known[query_id] = len(known)
                new_ids.append(query_id)
    query_ids = old_ids + new_ids

    # Each query's new gold fields are collected first (checked name by name,
    # query by query), so that every query is built once.
    gold_changes: list[dict[str, Any]] = [{} for _ in query_ids]
    for name, attribute in GOLD_QUERY_INPUTS.items():
        if name not in given:
            continue
        mapping = per_query.get(name, {})
        raws = list(map(mapping.get, query_ids))
        plain = plain_column(GOLD_FIELDS[name], raws, MAX_GRADE)
        if plain is not None:  # every value is plain: nothing to report
            for changes, value in zip(gold_changes, plain):
                changes[attribute] = value
            continue
        row, default = GOLD_FIELDS[name], _QUERY_DEFAULTS[attribute]
        for changes, query_id, raw in zip(gold_changes, query_ids, raws):
            changes[attribute] = (default if raw is None
                                  else parser.convert(row, raw, f"{name}[{query_id!r}]"))
    old_count = len(queries)
    queries = ([_replaced(query, changes) for query, changes in zip(queries, gold_changes)]
               + [assemble(Query, {"id": query_id, **changes})
                  for query_id, changes in zip(new_ids, gold_changes[old_count:])])

    run = dict(base.run)
    run_maps = [(name, per_query.get(name, {})) for name in RUN_INPUTS if name in given]
    # Each input's values in query order, converted at once where every one is
    # a plain list of strings (``None`` where that check fails: then each value
    # goes through the parser, with its message).
    columns: list[tuple[str, list[Any], list[Any] | None]] = []
    for name, mapping in run_maps:
        raws = list(map(mapping.get, query_ids))
        columns.append((name, raws, plain_column(RUN[name], raws, MAX_GRADE)))
    for index, query_id in enumerate(query_ids if run_maps else ()):
        fields: dict[str, Any] = {}
        for name, raws, plain in columns:
            if plain is not None:
                if plain[index] is not None:
                    fields[name] = plain[index]
                continue
            raw = raws[index]
            if raw is not None:
                fields[name] = parser.run_field(name, raw, f"{name}[{query_id!r}]")
        entry = run.get(query_id)
        if entry is not None:  # every given input replaces the entry's field
            run[query_id] = _replaced(entry, {name: fields.get(name) for name, _ in run_maps})
        elif fields:
            run[query_id] = assemble(RunEntry, fields)
    if "query_vector" in given or "chunk_vectors" not in given:
        validate_vector_dimensions(parser, vectors, run,
                                   lambda query_id: f"query_vector[{query_id!r}]")
    elif vectors is not None and vectors.chunk_matrix is not None:
        dim = vectors.chunk_matrix.shape[1]
        for query_id, entry in run.items():
            if entry.query_vector is not None and entry.query_vector.shape[0] != dim:
                parser.fail("chunk_vectors", f"has {dim} dimensions, the dataset's query "
                                             f"vector of {query_id!r} has "
                                             f"{entry.query_vector.shape[0]}")
    # The base's own tuple when no query changed, so that what is derived from
    # the queries (evidence positions) is known to be the same.
    same_queries = (len(queries) == len(base.queries)
                    and all(map(operator.is_, queries, base.queries)))
    all_chunks = parser.with_discovered(chunks)
    discovered = (len(all_chunks) - len(chunks)
                  + (base.discovered_chunks if chunks is base.chunks else 0))
    resolved = dataclasses.replace(
        base, source=base.source if dataset is not None else SOURCE,
        documents=documents, chunks=all_chunks, expected_chunks=expected_chunks,
        discovered_chunks=discovered,
        expected_metadata=expected_metadata, vectors=vectors,
        queries=base.queries if same_queries else tuple(queries), run=run,
        argument_inputs=base.argument_inputs | frozenset(given),
    )
    if dataset is not None and documents is base.documents:
        resolved.share_corpus_cache(base)  # the corpus work of a sweep is done once
    if dataset is not None and same_queries:
        resolved.share_written_gold(base)  # and the gold's fingerprints
    return resolved

