"""Token positions of a dataset as global integer intervals.

Documents are laid end to end on one line of positions: document ``d``'s
token ``i`` is position ``base[d] + i``.  A chunk, an evidence span or a
structural block is then one interval ``[lo, hi)`` on that line, and set
operations on positions become interval arithmetic (:mod:`pytest_rag.text.intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..dataset.model import Chunk, Dataset, EvidenceSpan, chunk_spans

__all__ = ["Positions", "build_positions", "positions_of"]

_IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Positions:
    """Global token intervals of a dataset's chunks and gold evidence.

    Attributes
    ----------
    doc_index:
        Document id to its index in ``dataset.documents``.
    base:
        ``base[d]`` is the first position of document ``d``; ``base[-1]`` the total.
    chunk_lo, chunk_hi, chunk_doc:
        Interval and document index of each chunk of ``dataset.chunks``.
    evidence_lo, evidence_hi, evidence_query:
        Interval of each gold span of each query and the query's index.
    """

    doc_index: dict[str, int]
    base: _IntArray
    chunk_lo: _IntArray
    chunk_hi: _IntArray
    chunk_doc: _IntArray
    evidence_lo: _IntArray
    evidence_hi: _IntArray
    evidence_query: _IntArray

    def doc_tokens(self, doc: int) -> int:
        return int(self.base[doc + 1] - self.base[doc])


def intervals_of(dataset: Dataset, doc_index: dict[str, int], base: _IntArray,
                 spans: Sequence[Chunk | EvidenceSpan]) -> tuple[_IntArray, _IntArray, _IntArray]:
    """Global ``(lo, hi, doc)`` of character spans, tokenizing each document once."""
    count = len(spans)
    docs = np.fromiter((doc_index[span.doc_id] for span in spans), dtype=np.int64, count=count)
    starts = np.fromiter((span.start for span in spans), dtype=np.int64, count=count)
    ends = np.fromiter((span.end for span in spans), dtype=np.int64, count=count)
    return _place(dataset, base, docs, starts, ends)


def _place(dataset: Dataset, base: _IntArray, docs: _IntArray, starts: _IntArray,
           ends: _IntArray) -> tuple[_IntArray, _IntArray, _IntArray]:
    """Global ``(lo, hi, doc)`` of the character spans ``[starts, ends)`` of documents ``docs``.

    The token boundaries of the documents that hold a span are laid end to end
    on one character line (each document one character past the previous
    one's end), so that one ``searchsorted`` per side places every span, as
    :func:`~pytest_rag.text.tokens.span_intervals` would document by document:
    the tokens of earlier documents all end before a span's start and those of
    later ones all start after its end.  Time and memory are linear in the
    spans and in the tokens of those documents.
    """
    count = docs.shape[0]
    if count == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), docs
    involved = np.unique(docs).tolist()
    tables = [dataset.documents[doc].tokens for doc in involved]
    lengths = np.fromiter((len(table.text) + 1 for table in tables), dtype=np.int64,
                          count=len(tables))
    sizes = np.fromiter((table.starts.shape[0] for table in tables), dtype=np.int64,
                        count=len(tables))
    char_base = np.cumsum(lengths) - lengths
    token_base = np.cumsum(sizes) - sizes
    line_starts = np.concatenate([table.starts for table in tables]) + np.repeat(char_base, sizes)
    line_ends = np.concatenate([table.ends for table in tables]) + np.repeat(char_base, sizes)
    slot = np.searchsorted(np.asarray(involved, dtype=np.int64), docs)
    shift = char_base[slot]
    lo = np.searchsorted(line_ends, starts + shift, side="right").astype(np.int64)
    hi = np.searchsorted(line_starts, ends + shift, side="left").astype(np.int64)
    hi = np.where(ends <= starts, lo, np.maximum(hi, lo))
    offset = base[docs] - token_base[slot]
    return lo + offset, hi + offset, docs


def build_positions(dataset: Dataset) -> Positions:
    """Tokenize (once per document object) and place every chunk and gold span."""
    doc_index = {doc.id: i for i, doc in enumerate(dataset.documents)}
    sizes = np.fromiter((len(doc.tokens) for doc in dataset.documents), dtype=np.int64,
                        count=len(dataset.documents))
    base = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(sizes)])
    chunk_lo, chunk_hi, chunk_doc = _chunk_intervals(dataset, doc_index, base)
    # The gold side depends on the documents and queries alone: a sweep of
    # chunkings places the evidence once.
    evidence = dataset.gold_cached("evidence_positions",
                                    lambda _: _evidence_intervals(dataset, doc_index, base))
    return Positions(doc_index, base, chunk_lo, chunk_hi, chunk_doc, *evidence)


def _chunk_intervals(dataset: Dataset, doc_index: dict[str, int], base: _IntArray
                     ) -> tuple[_IntArray, _IntArray, _IntArray]:
    """``(lo, hi, doc)`` of every chunk, read from the chunks' columns.

    The last chunks placed are kept with the corpus with their columns: when
    ``rag.chunking(chunks=...)`` and ``rag.retrieval(chunks=...)`` get the same
    chunks, the second call compares the columns (equal validated strings and
    integers) instead of placing them again.
    """
    columns = chunk_spans(dataset.chunks)

    def place(_: Dataset) -> tuple[_IntArray, _IntArray, _IntArray]:
        doc_ids, starts, ends = columns
        count = len(doc_ids)
        docs = np.fromiter(map(doc_index.__getitem__, doc_ids), dtype=np.int64, count=count)
        intervals = _place(dataset, base, docs, np.fromiter(starts, dtype=np.int64, count=count),
                           np.fromiter(ends, dtype=np.int64, count=count))
        for array in intervals:
            array.setflags(write=False)
        return intervals

    return dataset.corpus_cached_for("chunk_intervals", columns, place)


def _evidence_intervals(dataset: Dataset, doc_index: dict[str, int], base: _IntArray
                        ) -> tuple[_IntArray, _IntArray, _IntArray]:
    """``(lo, hi, query)`` of every gold span of every query."""
    spans: list[EvidenceSpan] = []
    owners: list[int] = []
    for index, query in enumerate(dataset.queries):
        spans.extend(query.expected_evidence)
        owners.extend([index] * len(query.expected_evidence))
    evidence_lo, evidence_hi, _ = intervals_of(dataset, doc_index, base, spans)
    owner = np.asarray(owners, dtype=np.int64)
    for array in (evidence_lo, evidence_hi, owner):
        array.setflags(write=False)
    return evidence_lo, evidence_hi, owner


def positions_of(dataset: Dataset) -> Positions:
    """The :class:`Positions` of ``dataset``, built once per dataset object and kept with it."""
    return dataset.cached("positions", build_positions)
