"""What an evaluation read, written back as a dataset file (``--rag-export``).

:func:`dataset_json` turns the :class:`~pytest_rag.dataset.model.Dataset` a stage
report read (its ``dataset``: the arguments resolved against the gold file) and
the report's settings into FORMAT v1 data: documents with their text, chunks,
expected chunks and metadata, the vectors, the queries' gold and the run.  Grades
derived from evidence are not written: ``params.relevance_from_evidence`` derives
them again.  Vectors are written as the floats they hold (``repr`` round-trips).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Chunk, Dataset, Query, RunEntry, Vectors
from ..parser import PARAM_KEYS, RUN_KEYS

__all__ = ["UNSUPPORTED", "dataset_json"]

#: Stages whose inputs an export does not hold, with the reason (none today).
UNSUPPORTED: dict[str, str] = {}


def _chunk(chunk: Chunk) -> dict[str, Any]:
    data: dict[str, Any] = {} if chunk.id is None else {"id": chunk.id}
    data.update(doc_id=chunk.doc_id, start=chunk.start, end=chunk.end)
    if chunk.metadata is not None:
        data["metadata"] = dict(chunk.metadata)
    return data


def _query(query: Query) -> dict[str, Any]:
    data: dict[str, Any] = {"id": query.id}
    if query.question is not None:
        data["question"] = query.question
    if query.relevant is not None and not query.relevant_from_evidence:
        data["relevant"] = dict(query.relevant)
    if query.expected_evidence:
        data["expected_evidence"] = [{"doc_id": s.doc_id, "start": s.start, "end": s.end}
                                     for s in query.expected_evidence]
    if query.reference_answers:
        data["reference_answer"] = list(query.reference_answers)
    if query.required_facts:
        data["required_facts"] = list(query.required_facts)
    if query.expected_citations:
        data["expected_citations"] = list(query.expected_citations)
    if query.answerable is not None:
        data["answerable"] = query.answerable
    return data


def _run_entry(entry: RunEntry) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key in RUN_KEYS:
        value = getattr(entry, key)
        if value is None:
            continue
        if key == "verified_claims":
            value = [{"claim": claim.claim, "supported": claim.supported} for claim in value]
        elif key == "query_vector":
            value = [float(x) for x in value]
        elif isinstance(value, tuple):
            value = list(value)
        data[key] = value
    return data


def _vectors(vectors: Vectors) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if vectors.chunk_ids and vectors.chunk_matrix is not None:
        data["chunks"] = {chunk_id: row.tolist()
                          for chunk_id, row in zip(vectors.chunk_ids, vectors.chunk_matrix)}
    if vectors.sentences is not None:
        data["sentences"] = {chunk_id: matrix.tolist()
                             for chunk_id, matrix in vectors.sentences.items()}
    if vectors.indexed_ids is not None:
        data["indexed_ids"] = list(vectors.indexed_ids)
    return data


def _param(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def dataset_json(dataset: Dataset, settings: Mapping[str, Any]) -> dict[str, Any]:
    """FORMAT v1 data holding what ``dataset`` gave an evaluator run with ``settings``
    (the report's settings become ``params``)."""
    from ..parser import FORMAT_ID

    data: dict[str, Any] = {"format": FORMAT_ID}
    params = {key: _param(settings[key]) for key in PARAM_KEYS if settings.get(key) is not None}
    if params:
        data["params"] = params
    if dataset.documents:
        data["documents"] = [
            {"id": doc.id, "text": doc.text,
             **({} if doc.metadata is None else {"metadata": dict(doc.metadata)})}
            for doc in dataset.documents]
    if dataset.chunks:
        data["chunks"] = [_chunk(chunk) for chunk in dataset.chunks]
    if dataset.expected_chunks:
        data["expected_chunks"] = [_chunk(chunk) for chunk in dataset.expected_chunks]
    if dataset.expected_metadata is not None:
        data["expected_metadata"] = {key: dict(value)
                                     for key, value in dataset.expected_metadata.items()}
    if dataset.vectors is not None:
        vectors = _vectors(dataset.vectors)
        if vectors:
            data["vectors"] = vectors
    data["queries"] = [_query(query) for query in dataset.queries]
    run = {query_id: _run_entry(entry) for query_id, entry in dataset.run.items()}
    run = {query_id: entry for query_id, entry in run.items() if entry}
    if run:
        data["run"] = run
    return data
