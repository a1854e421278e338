"""Token positions: every span placed on the global line, documents in any order."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.dataset.arguments import resolve_inputs
from pytest_rag.kernels import positions
from pytest_rag.kernels.positions import positions_of
from pytest_rag.text.tokens import span_intervals


def _place_per_document(dataset: Any, base: Any, docs: Any, starts: Any, ends: Any) -> Any:
    """The placement as it was written first: one scan of every span per document."""
    lo = np.zeros(docs.shape[0], dtype=np.int64)
    hi = np.zeros(docs.shape[0], dtype=np.int64)
    for doc in np.unique(docs).tolist():
        rows = np.flatnonzero(docs == doc)
        doc_lo, doc_hi = span_intervals(dataset.documents[doc].tokens, starts[rows], ends[rows])
        lo[rows] = doc_lo + base[doc]
        hi[rows] = doc_hi + base[doc]
    return lo, hi, docs


@st.composite
def _dataset(draw: st.DrawFn) -> Any:
    texts = draw(st.lists(st.lists(st.sampled_from(["ab", "c", "dd e", "f."]), max_size=6)
                          .map(" ".join), min_size=1, max_size=6))
    documents = {f"d{i}": text for i, text in enumerate(texts)}
    chunks = []
    for n in range(draw(st.integers(0, 12))):
        doc = draw(st.sampled_from(sorted(documents)))
        size = len(documents[doc])
        start = draw(st.integers(0, size))
        chunks.append({"id": f"c{n}", "doc_id": doc, "start": start,
                       "end": draw(st.integers(start, size))})
    return resolve_inputs(None, {"documents": documents, "chunks": chunks})


@settings(max_examples=150, deadline=None)
@given(_dataset())
def test_one_sort_places_every_span_as_the_per_document_scan(dataset: Any) -> None:
    """Chunks of many documents, interleaved: the same intervals as placing them
    document by document with a scan of all spans each time."""
    found = positions_of(dataset)
    count = len(dataset.chunks)
    docs = np.fromiter((found.doc_index[c.doc_id] for c in dataset.chunks), np.int64, count)
    starts = np.fromiter((c.start for c in dataset.chunks), np.int64, count)
    ends = np.fromiter((c.end for c in dataset.chunks), np.int64, count)
    lo, hi, doc = _place_per_document(dataset, found.base, docs, starts, ends)
    assert np.array_equal(found.chunk_lo, lo)
    assert np.array_equal(found.chunk_hi, hi)
    assert np.array_equal(found.chunk_doc, doc)


def test_each_span_is_looked_at_once_whatever_the_number_of_documents(
        monkeypatch: Any) -> None:
    """5,000 documents of one chunk each: the spans are compared with a document
    id in one sort, not once per document (5,000 x 5,000 comparisons before)."""
    compared: list[int] = []
    real = np.ndarray.__eq__

    class Counting(np.ndarray):  # type: ignore[type-arg]
        def __eq__(self, other: object) -> Any:  # type: ignore[override]
            compared.append(self.size)
            return real(np.asarray(self), other)

    real_fromiter = np.fromiter

    def fromiter(*args: Any, **kwargs: Any) -> Any:
        return real_fromiter(*args, **kwargs).view(Counting)

    documents = {f"d{i}": f"word{i} other" for i in range(5_000)}
    chunks = [{"id": f"c{i}", "doc_id": f"d{i}", "start": 0, "end": 4} for i in range(5_000)]
    dataset = resolve_inputs(None, {"documents": documents, "chunks": chunks})
    monkeypatch.setattr(positions.np, "fromiter", fromiter)
    found = positions_of(dataset)
    assert found.chunk_hi.shape[0] == 5_000
    assert sum(compared) < 50_000
