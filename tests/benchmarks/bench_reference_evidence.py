"""The readable reference of the token evidence metrics: plain Python, sets of positions.

Written from ``shared/spec/SEMANTICS.md`` alone, without numpy and without
pytest-rag, so that the benchmark checks pytest-rag's interval arithmetic
against the definitions read literally:

* A token is a maximal ``\\w+`` match, compared in lowercase; a position is a
  token of a document.  Positions are numbered on one line (document ``d``'s
  token ``i`` is ``base[d] + i``), which is the pair ``(doc_id, i)`` as one
  integer.
* A chunk or a gold span holds the tokens whose characters it overlaps by at
  least one character (found with two binary searches over the token offsets).
* Retrieval: ``R`` is the union of the positions of the first K distinct
  retrieved ids, ``G`` that of the query's gold spans; recall ``|R∩G|/|G|``,
  precision ``|R∩G|/|R|`` (0 when ``R`` is empty), IoU ``|R∩G|/|R∪G|``, and
  complete evidence recall: the share of gold spans held whole by one top-K
  chunk.  A query whose spans hold no token has none of these.
* Chunking, over the documents that have a chunk: coverage, overlap, chunk
  sizes, size compliance, evidence completeness and fragmentation over the
  distinct gold spans, and the lexical cohesion, boundary clarity and
  stickiness of the chunk texts.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from statistics import fmean, pstdev
from typing import Any

WORD = re.compile(r"\w+")
#: Sentence breaks: after ``.``, ``!`` or ``?`` followed by whitespace, and at newlines.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])(?=\s)|\n")
EDGE_TOKENS = 12

Span = tuple[str, int, int]  # (doc_id, start, end)


def jaccard(left: set[str], right: set[str]) -> float:
    union = len(left | right)
    return len(left & right) / union if union else 0.0


class Corpus:
    """Documents tokenized once, and the positions of any character span."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self.text = dict(documents)
        self.starts: dict[str, list[int]] = {}
        self.ends: dict[str, list[int]] = {}
        self.base: dict[str, int] = {}
        total = 0
        for doc_id, text in documents.items():
            matches = list(WORD.finditer(text))
            self.starts[doc_id] = [match.start() for match in matches]
            self.ends[doc_id] = [match.end() for match in matches]
            self.base[doc_id] = total
            total += len(matches)

    def tokens(self, doc_id: str) -> int:
        return len(self.starts[doc_id])

    def positions(self, doc_id: str, start: int, end: int) -> set[int]:
        """The positions of the tokens that ``[start, end)`` overlaps by a character."""
        if start >= end:
            return set()
        first = bisect_right(self.ends[doc_id], start)  # first token ending after start
        stop = bisect_left(self.starts[doc_id], end)  # first token starting at or after end
        base = self.base[doc_id]
        return set(range(base + first, base + max(first, stop)))


def retrieval(corpus: Corpus, chunks: Sequence[Mapping[str, Any]],
              evidence: Mapping[str, Sequence[Mapping[str, Any]]],
              retrieved: Mapping[str, Sequence[str]], k: int) -> dict[str, dict[str, float | None]]:
    """Per query: token recall, precision, IoU and complete evidence recall."""
    chunk_positions = {chunk["id"]: corpus.positions(chunk["doc_id"], chunk["start"],
                                                          chunk["end"]) for chunk in chunks}
    out: dict[str, dict[str, float | None]] = {}
    for query_id, spans in evidence.items():
        distinct = dict.fromkeys((s["doc_id"], s["start"], s["end"]) for s in spans)
        gold_spans = [p for p in (corpus.positions(*span) for span in distinct) if p]
        ranked = retrieved.get(query_id)
        if not gold_spans or ranked is None:
            out[query_id] = dict.fromkeys(("recall", "precision", "iou", "complete"))
            continue
        top = [chunk_positions[chunk_id] for chunk_id in list(dict.fromkeys(ranked))[:k]]
        listed = set().union(*top)
        gold = set().union(*gold_spans)
        inter = len(listed & gold)
        out[query_id] = {
            "recall": inter / len(gold),
            "precision": inter / len(listed) if listed else 0.0,
            "iou": inter / len(listed | gold),
            "complete": sum(any(span <= chunk for chunk in top) for span in gold_spans)
            / len(gold_spans),
        }
    return out


def chunking(corpus: Corpus, chunks: Sequence[Mapping[str, Any]],
             evidence: Mapping[str, Sequence[Mapping[str, Any]]],
             size_limits: tuple[int, int]) -> dict[str, float | None]:
    """The pooled chunking metrics that token positions and chunk texts define."""
    docs = list(dict.fromkeys(chunk["doc_id"] for chunk in chunks))
    sets = [corpus.positions(c["doc_id"], c["start"], c["end"])
            for c in chunks]
    sizes = [len(s) for s in sets]
    covered = len(set().union(*sets))
    source = sum(corpus.tokens(doc_id) for doc_id in docs)
    mean = fmean(sizes)
    low, high = size_limits
    values: dict[str, float | None] = {
        "coverage": covered / source if source else None,
        "overlap_ratio": (sum(sizes) - covered) / covered if covered else None,
        "mean_chunk_tokens": mean,
        "min_chunk_tokens": float(min(sizes)),
        "max_chunk_tokens": float(max(sizes)),
        "size_cv": pstdev(sizes) / mean if mean else None,
        "size_compliance": sum(low <= size <= high for size in sizes) / len(sizes),
    }
    by_doc: dict[str, list[set[int]]] = {}
    for chunk, positions in zip(chunks, sets):
        by_doc.setdefault(chunk["doc_id"], []).append(positions)
    gold = dict.fromkeys((s["doc_id"], s["start"], s["end"])
                         for spans in evidence.values() for s in spans)
    spans = [(doc_id, positions) for (doc_id, start, end) in gold if doc_id in by_doc
             if (positions := corpus.positions(doc_id, start, end))]
    values["evidence_completeness"] = (fmean(any(p <= c for c in by_doc[d]) for d, p in spans)
                                       if spans else None)
    values["evidence_fragmentation"] = (fmean(sum(not p.isdisjoint(c) for c in by_doc[d])
                                              for d, p in spans) if spans else None)
    values.update(_lexical(corpus, chunks))
    return values


def _lexical(corpus: Corpus, chunks: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    texts = [corpus.text[c["doc_id"]][c["start"]:c["end"]] for c in chunks]
    tokens = [[word.lower() for word in WORD.findall(text)] for text in texts]
    cohesion = []
    for text in texts:
        sentences = [set(map(str.lower, words)) for piece in SENTENCE_BREAK.split(text)
                     if (words := WORD.findall(piece))]
        if len(sentences) >= 2:
            pairs = [jaccard(a, b) for i, a in enumerate(sentences) for b in sentences[i + 1:]]
            cohesion.append(fmean(pairs))
    last_of_doc: dict[str, int] = {}
    clarity, stickiness = [], []
    for i, chunk in enumerate(chunks):
        previous = last_of_doc.get(chunk["doc_id"])
        if previous is not None:
            left, right = tokens[previous], tokens[i]
            clarity.append(1.0 - jaccard(set(left[-EDGE_TOKENS:]), set(right[:EDGE_TOKENS])))
            stickiness.append(jaccard(set(left), set(right)))
        last_of_doc[chunk["doc_id"]] = i
    return {
        "lexical_cohesion": fmean(cohesion) if cohesion else None,
        "lexical_boundary_clarity": fmean(clarity) if clarity else None,
        "lexical_chunk_stickiness": fmean(stickiness) if stickiness else None,
    }
