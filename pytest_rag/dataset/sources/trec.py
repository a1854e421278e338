"""TREC qrels and run files.

qrels: ``topic iteration docno relevance`` per line.  A document is relevant
when its relevance is at least ``relevance_level`` (1 by default, trec_eval's
``-l``); it keeps its grade.  run: ``topic Q0 docno rank score tag`` per line,
ordered as trec_eval orders it: by score, highest first, ties by docno in
descending order (the ``rank`` column is ignored).  Topics of the run that
the qrels do not judge are left out, as trec_eval leaves them out.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...errors import DatasetError
from .lines import numbered_lines

__all__ = ["trec_dataset", "trec_run"]


def _fields(path: Path, number: int, line: str, count: int, shape: str) -> list[str]:
    fields = line.split()
    if len(fields) < count:
        raise DatasetError(str(path), f"line {number}",
                           f"expected {count} fields ({shape}), got {len(fields)}: {line[:60]!r}")
    return fields


def _number(path: Path, number: int, text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise DatasetError(str(path), f"line {number}", f"{what} {text!r} is not a finite number")
    return value


def read_qrels(path: Path, relevance_level: int = 1) -> dict[str, dict[str, int]]:
    """Topic to ``{docno: grade}`` of its relevant documents, in file order."""
    judged: dict[str, dict[str, int]] = {}
    for number, line in numbered_lines(path):
        topic, _, docno, grade_text = _fields(path, number, line, 4,
                                              "topic iteration docno relevance")[:4]
        grade = _number(path, number, grade_text, "relevance")
        if grade != int(grade):
            raise DatasetError(str(path), f"line {number}",
                               f"relevance {grade_text!r} is not a whole number")
        grades = judged.setdefault(topic, {})
        if docno in grades:
            raise DatasetError(str(path), f"line {number}",
                               f"document {docno!r} is judged twice for topic {topic!r}")
        grades[docno] = int(grade)
    return {topic: {docno: grade for docno, grade in grades.items() if grade >= relevance_level}
            for topic, grades in judged.items()}


def trec_run(path: Path) -> dict[str, list[str]]:
    """Topic to its ranked docnos, in trec_eval's order."""
    scored: dict[str, dict[str, float]] = {}
    for number, line in numbered_lines(path):
        topic, _, docno, _, score_text = _fields(path, number, line, 5,
                                                 "topic Q0 docno rank score [tag]")[:5]
        score = _number(path, number, score_text, "score")
        docs = scored.setdefault(topic, {})
        if docno in docs:
            raise DatasetError(str(path), f"line {number}",
                               f"document {docno!r} is ranked twice for topic {topic!r}")
        docs[docno] = score
    ranked = {}
    for topic, docs in scored.items():
        # Highest score first; ties by docno, descending (trec_eval's comp_sim_docno).
        by_docno = sorted(docs, reverse=True)
        ranked[topic] = sorted(by_docno, key=lambda docno: -docs[docno])
    return ranked


def trec_dataset(qrels: Path, run: Path | None = None, *,
                 relevance_level: int = 1) -> dict[str, Any]:
    """FORMAT v1 data: one query per qrels topic, and the run of those topics."""
    relevant = read_qrels(qrels, relevance_level)
    data: dict[str, Any] = {
        "format": "pytest-rag/v1",
        "queries": [{"id": topic, "relevant": grades} for topic, grades in relevant.items()],
    }
    if run is not None:
        data["run"] = {topic: {"retrieved_ids": docnos}
                       for topic, docnos in trec_run(run).items() if topic in relevant}
    return data
