"""TREC qrels and run files, read as trec_eval reads them.

qrels: ``topic iteration docno relevance`` per line.  A document is relevant
when its relevance is at least ``relevance_level`` (1 by default, trec_eval's
``-l``); it keeps its grade.  run: ``topic Q0 docno rank score tag`` per line,
ordered as trec_eval orders it: by score, highest first, ties by docno in
descending order (the ``rank`` column is ignored).  Topics of the run that
the qrels do not judge are left out, as trec_eval leaves them out.

As in trec_eval: lines end at ``\\n``; fields are separated by ASCII
whitespace (space, tab, CR, VT, FF) only; a line starting with ``#`` is a
comment (in a run, also after spaces); a relevance is a whole number in ASCII
digits and a score a decimal number in ASCII digits.  Where trec_eval's
``atol``/``atof`` would read a prefix of something else (``1_0`` as 1, a
full-width digit one, U+FF11, as 0), the line is refused instead: no number is read other
than as written.  Blank lines are skipped.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ...errors import DatasetError
from ...escaping import quoted
from .lines import ASCII_SPACE, numbered_lines

__all__ = ["trec_dataset", "trec_run"]


#: A field: what lies between ASCII whitespace (C's ``isspace``, as trec_eval splits).
_FIELD = re.compile(f"[^{re.escape(ASCII_SPACE)}]+")
#: A relevance as ``atol`` reads all of it: an optional sign and ASCII digits.
_GRADE = re.compile(r"[+-]?[0-9]+")
#: A score as ``atof`` reads all of it, in ASCII digits (no ``_``, no other scripts).
_SCORE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _lines(path: Path, run: bool) -> list[tuple[int, str]]:
    """The lines trec_eval reads: comments (``#`` first; in a run, after spaces) left out."""
    return [(number, line) for number, line in numbered_lines(path)
            if not (line.lstrip(ASCII_SPACE) if run else line).startswith("#")]


def _fields(path: Path, number: int, line: str, count: int, shape: str) -> list[str]:
    fields = _FIELD.findall(line)
    if len(fields) < count:
        raise DatasetError(str(path), f"line {number}",
                           f"expected {count} fields ({shape}), got {len(fields)}: "
                           f"{quoted(line, 60)}")
    return fields


def _number(path: Path, number: int, text: str, what: str) -> float:
    value = float(text) if _SCORE.fullmatch(text) else math.nan
    if not math.isfinite(value):
        raise DatasetError(str(path), f"line {number}",
                           f"{what} {quoted(text, 60)} is not a finite number in ASCII digits")
    return value


def read_qrels(path: Path, relevance_level: int = 1) -> dict[str, dict[str, int]]:
    """Topic to ``{docno: grade}`` of its relevant documents, in file order."""
    judged: dict[str, dict[str, int]] = {}
    for number, line in _lines(path, run=False):
        topic, _, docno, grade_text = _fields(path, number, line, 4,
                                              "topic iteration docno relevance")[:4]
        if not _GRADE.fullmatch(grade_text) or len(grade_text) > 20:  # (int() of 5,000 digits)
            raise DatasetError(str(path), f"line {number}", f"relevance {quoted(grade_text, 60)} "
                                                            "is not a whole number in ASCII digits")
        grade = int(grade_text)
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
    for number, line in _lines(path, run=True):
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
