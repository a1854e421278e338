"""BEIR datasets: a folder with ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

Each corpus entry (``_id``, ``text``, optional ``title``) becomes a document
and one chunk spanning it, with the same id, so the qrels' corpus ids are the
chunk ids the retrieval metrics rank; the title goes to the document's
metadata.  The queries are those the split's qrels judge (``query-id``,
``corpus-id``, ``score``; a header line is allowed), with their ``text`` as
the question and every corpus id of score > 0 as relevant with that grade.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import DatasetError
from ...escaping import quoted
from .lines import json_lines, numbered_lines

__all__ = ["beir_dataset"]


def _text_field(path: Path, number: int, line_object: dict[str, Any], key: str,
                required: bool = True) -> str:
    value = line_object.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (key == "_id" and not value):
        raise DatasetError(str(path), f"line {number}",
                           f"{key!r} must be a{' non-empty' if key == '_id' else ''} string, "
                           f"got {value!r}"[:200])
    return value


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    for number, line in numbered_lines(path):
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) < 3:
            raise DatasetError(str(path), f"line {number}",
                               "expected 3 fields (query-id, corpus-id, score), got "
                               f"{quoted(line, 60)}")
        query_id, corpus_id, score_text = (field.strip() for field in fields[:3])
        try:
            score = int(score_text)
        except ValueError:
            if number == 1:  # the header: query-id corpus-id score
                continue
            raise DatasetError(str(path), f"line {number}",
                               f"score {score_text!r} is not a whole number") from None
        if score > 0:
            judged.setdefault(query_id, {})[corpus_id] = score
    return judged


def _inside(folder: Path, path: Path, allow_outside_paths: bool) -> Path:
    """``path``, refused when links lead it out of ``folder`` (the rule of ``path:``
    documents), so that no text from elsewhere is read, copied or echoed."""
    if allow_outside_paths:
        return path
    try:
        root, real = folder.resolve(), path.resolve()
    except (OSError, RuntimeError):  # a link loop: reading it says so
        return path
    if real != root and root not in real.parents:
        raise DatasetError(str(path), "", f"links lead it outside the dataset's folder "
                           f"{str(root)!r}, to {str(real)!r} (allow it with "
                           "allow_outside_paths=True, --allow-outside-paths or the ini option "
                           "rag_allow_outside_paths)")
    return path


def beir_dataset(folder: Path, *, split: str = "test",
                 allow_outside_paths: bool = False) -> dict[str, Any]:
    """FORMAT v1 data of the BEIR dataset in ``folder``, for the queries of ``split``.

    Its files must lie inside ``folder`` once links are followed, unless
    ``allow_outside_paths``."""
    qrels_file = _inside(folder, folder / "qrels" / f"{split}.tsv", allow_outside_paths)
    if not qrels_file.is_file():
        found = sorted(quoted(p.stem) for p in (folder / "qrels").glob("*.tsv"))
        raise DatasetError(str(folder), "", f"no qrels/{split}.tsv (a BEIR folder holds "
                           f"corpus.jsonl, queries.jsonl and qrels/<split>.tsv); splits found: "
                           f"{', '.join(found) or 'none'}")
    relevant = _qrels(qrels_file)
    corpus_file, queries_file = (_inside(folder, folder / name, allow_outside_paths)
                                 for name in ("corpus.jsonl", "queries.jsonl"))
    documents, chunks, seen = [], [], set()
    for number, line_object in json_lines(corpus_file):
        doc_id = _text_field(corpus_file, number, line_object, "_id")
        text = _text_field(corpus_file, number, line_object, "text")
        if doc_id in seen:
            raise DatasetError(str(corpus_file), f"line {number}", f"duplicate _id {doc_id!r}")
        seen.add(doc_id)
        title = _text_field(corpus_file, number, line_object, "title", required=False)
        documents.append({"id": doc_id, "text": text,
                          **({"metadata": {"title": title}} if title else {})})
        chunks.append({"id": doc_id, "doc_id": doc_id, "start": 0, "end": len(text)})
    questions = {}
    for number, line_object in json_lines(queries_file):
        questions[_text_field(queries_file, number, line_object, "_id")] = _text_field(
            queries_file, number, line_object, "text")
    queries = []
    for query_id, grades in relevant.items():
        unknown = next((doc for doc in grades if doc not in seen), None)
        if unknown is not None:
            raise DatasetError(str(qrels_file), "", f"query {query_id!r} judges corpus id "
                                                    f"{unknown!r}, which corpus.jsonl lacks")
        queries.append({"id": query_id, "question": questions.get(query_id),
                        "relevant": grades})
    return {"format": "pytest-rag/v1", "documents": documents, "chunks": chunks,
            "queries": queries}
