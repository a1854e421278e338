"""Chunk grades derived from gold evidence spans (the ``relevance_from_evidence`` setting).

For a query that has ``expected_evidence`` but no ``relevant``, each chunk of
the dataset gets a grade from the query's gold spans: 2 when the chunk holds a
whole span (its positions include all of the span's positions, the rule of
``evidence_completeness``), 1 when it only shares a position with one, else 0
(left out of the mapping).  The grade is the maximum over the query's spans.
Gold written once as spans so stays valid when the chunker changes.

When the chunks are only those found in ranked lists (framework objects in
``retrieved_ids=`` without ``chunks=``), the grades of the retrieved chunks
are still exact, but not how many chunks of the corpus are relevant: such a
query is marked (:func:`uncounted_queries`) even when none of its retrieved
chunks touches a span, so that hit, MRR and precision count it as a miss
while recall, nDCG and AP are ``None`` for it (:data:`UNCOUNTED_REASON`).

Everything is interval arithmetic on the global token line of
:mod:`pytest_rag.kernels.positions`: chunks are grouped by length class (lengths in
``[2^j, 2^(j+1))``) and sorted by start; per class, the chunks that can touch a
span are one slice of that order (a chunk starting at or after the span's end
cannot, nor can one starting more than the class's longest length before its
start), found for all spans at once with ``searchsorted``.  Within a class
every candidate is at least half as long as the longest, so the candidates
that turn out not to touch stay few.
"""

from __future__ import annotations

import dataclasses
from itertools import repeat
from typing import Final

import numpy as np
import numpy.typing as npt

from ..dataset.model import GOLD_SOURCE, Dataset, copies_with, replaced
from .positions import positions_of

__all__ = ["UNCOUNTED_REASON", "relevance_from_evidence", "touching_pairs",
           "uncounted_queries"]

_IntArray = npt.NDArray[np.int64]

#: Candidate (span, chunk) pairs materialised at a time (bounds memory).
_PAIRS_PER_BATCH: Final = 1 << 22
#: Cached properties of a dataset that do not depend on ``relevant``.
_KEPT_CACHES: Final = ("chunk_index", "document_by_id")
#: Why a metric that divides by the relevant chunks of the corpus is ``None``
#: for a query graded against the retrieved chunks alone.
UNCOUNTED_REASON: Final = "pass chunks=, the full chunk list, to count the relevant chunks"


def retrieved_only(dataset: Dataset) -> bool:
    """Whether the dataset's chunks are only those found in ranked lists (framework
    objects), none given (``chunks=``, the file's ``chunks``)."""
    return 0 < dataset.discovered_chunks == len(dataset.chunks)


def uncounted_queries(dataset: Dataset) -> npt.NDArray[np.bool_]:
    """Per query: its grades were derived from evidence against the retrieved chunks
    alone, so the number of its relevant chunks in the corpus is not known."""
    queries = dataset.queries
    if not retrieved_only(dataset):
        return np.zeros(len(queries), dtype=bool)
    return np.fromiter((query.relevant_from_evidence for query in queries), dtype=bool,
                       count=len(queries))


def touching_pairs(chunk_lo: _IntArray, chunk_hi: _IntArray, span_lo: _IntArray,
                   span_hi: _IntArray) -> tuple[_IntArray, _IntArray, _IntArray]:
    """Every (span, chunk) pair of intervals that share a position, and its grade.

    Returns ``(span_row, chunk_row, grade)``: grade 2 when the chunk holds the
    whole span, else 1.  Empty chunks and empty spans take part in no pair.
    Pairs come grouped by length class, not in any particular order.
    """
    empty = np.zeros(0, dtype=np.int64)
    length = chunk_hi - chunk_lo
    live = np.flatnonzero(length > 0)
    spans = np.flatnonzero(span_hi > span_lo)
    if live.shape[0] == 0 or spans.shape[0] == 0:
        return empty, empty, empty
    s_lo, s_hi = span_lo[spans], span_hi[spans]
    # floor(log2(length)) + 1, exact for lengths below 2^53.
    klass = np.frexp(length[live].astype(np.float64))[1]
    span_out: list[_IntArray] = []
    chunk_out: list[_IntArray] = []
    grade_out: list[_IntArray] = []
    for value in np.unique(klass).tolist():
        members = live[klass == value]
        order = members[np.argsort(chunk_lo[members], kind="stable")]
        lo_sorted = chunk_lo[order]
        longest = int(length[order].max())
        # A touching chunk has lo < span_hi and hi > span_lo, so lo > span_lo - longest.
        first = np.searchsorted(lo_sorted, s_lo - longest + 1, side="left")
        last = np.searchsorted(lo_sorted, s_hi, side="left")
        counts = np.maximum(last - first, 0).astype(np.int64)
        ends = np.cumsum(counts)
        start = 0
        while start < spans.shape[0]:
            # Spans start:stop hold at most _PAIRS_PER_BATCH candidates (at least one span).
            done = int(ends[start - 1]) if start else 0
            stop = max(int(np.searchsorted(ends, done + _PAIRS_PER_BATCH, side="right")),
                       start + 1)
            part = counts[start:stop]
            rows = np.repeat(np.arange(start, stop, dtype=np.int64), part)
            offsets = (np.arange(rows.shape[0], dtype=np.int64)
                       - np.repeat(np.cumsum(part) - part, part)
                       + np.repeat(first[start:stop], part))
            chunks = order[offsets]
            touch = chunk_hi[chunks] > s_lo[rows]
            rows, chunks = rows[touch], chunks[touch]
            whole = (chunk_lo[chunks] <= s_lo[rows]) & (chunk_hi[chunks] >= s_hi[rows])
            span_out.append(spans[rows])
            chunk_out.append(chunks)
            grade_out.append(1 + whole.astype(np.int64))
            start = stop
    return np.concatenate(span_out), np.concatenate(chunk_out), np.concatenate(grade_out)


def _wanted(dataset: Dataset) -> npt.NDArray[np.bool_]:
    """Which queries get derived grades: no ``relevant``, some ``expected_evidence``."""
    queries = dataset.queries
    wanted = np.fromiter((not query.relevant and bool(query.expected_evidence)
                          for query in queries), dtype=bool, count=len(queries))
    wanted.setflags(write=False)
    return wanted


def relevance_from_evidence(dataset: Dataset) -> Dataset:
    """``dataset`` with ``relevant`` derived from ``expected_evidence`` where it is absent.

    Only queries without ``relevant`` (``None`` or empty) and with at least one
    gold span holding a token are changed; their ``relevant`` becomes chunk id
    to grade (2: holds a whole span, 1: touches one; chunks of grade 0 are left
    out), in chunk order.  A query whose spans touch no chunk keeps its empty
    ``relevant``, except when the chunks are only those found in ranked lists
    (:func:`retrieved_only`): then it gets an empty derived mapping, marked as
    derived, so that its list counts as a miss (:func:`uncounted_queries`).
    Chunks are all of the dataset's chunks, of any document.  Without chunks, or
    with nothing to derive, ``dataset`` itself is returned.
    """
    queries = dataset.queries
    if not dataset.chunks:
        return dataset
    wanted = dataset.gold_cached("relevance_wanted", _wanted)
    if not wanted.any():
        return dataset
    positions = positions_of(dataset)
    keep = np.flatnonzero(wanted[positions.evidence_query]
                          & (positions.evidence_hi > positions.evidence_lo))
    if keep.shape[0] == 0:
        return dataset
    span_rows, chunk_rows, grades = touching_pairs(
        positions.chunk_lo, positions.chunk_hi,
        positions.evidence_lo[keep], positions.evidence_hi[keep])
    # Only the retrieved chunks are known: every query with a span holding a
    # token is graded, an empty grade mapping saying "none of them is relevant".
    graded = ([] if not retrieved_only(dataset) else
              np.unique(positions.evidence_query[keep]).tolist())
    if span_rows.shape[0] == 0 and not graded:
        return dataset
    chunk_count = len(dataset.chunks)
    key = positions.evidence_query[keep][span_rows] * chunk_count + chunk_rows
    # Sorted codes: per (query, chunk) key, grade 2 (low bit 0) sorts before grade 1.
    codes = np.unique(key * 2 + (grades == 1))
    key = codes >> 1
    first = np.ones(key.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    key = key[first]
    best = 2 - (codes[first] & 1)
    owner, chunk = np.divmod(key, chunk_count)
    bounds = np.flatnonzero(np.diff(owner)) + 1
    ids = list(dataset.chunk_index)  # in chunk order: every chunk of a dataset has an id
    derived = list(queries)
    if key.shape[0]:
        starts = [0, *bounds.tolist()]
        stops = [*bounds.tolist(), int(key.shape[0])]
        owners = owner[starts].tolist()
    else:
        starts = stops = owners = []
    chunk_ids = list(map(ids.__getitem__, chunk.tolist()))
    best_list = best.tolist()
    found = set(owners)
    missed = [index for index in graded if index not in found]
    rows = [*owners, *missed]
    grade_maps = [*map(dict, map(zip, map(chunk_ids.__getitem__, map(slice, starts, stops)),
                                  map(best_list.__getitem__, map(slice, starts, stops)))),
                  *({} for _ in missed)]
    written = list(map(queries.__getitem__, rows))
    # Derived grades are not gold: what a query without written grades caches (its
    # fingerprint, QUERY_CACHES) is that of the query as written, and stays valid; its
    # fingerprints are kept with the query as written (GOLD_SOURCE), so the next
    # chunking's copy finds them there.  Such queries are copied in bulk.
    fresh = [slot for slot, query in enumerate(written) if query.relevant is None]
    fresh_queries = list(map(written.__getitem__, fresh))
    copies = copies_with(fresh_queries, {
        "relevant": map(grade_maps.__getitem__, fresh),
        "relevant_from_evidence": repeat(True),
        GOLD_SOURCE: map(dict.get, map(vars, fresh_queries), repeat(GOLD_SOURCE),
                         fresh_queries)})
    for slot, copy in zip(fresh, copies):
        derived[rows[slot]] = copy
    gold_kept = len(fresh) == len(rows)  # every query keeps the gold of the one it copies
    for slot, query in enumerate(written):
        if query.relevant is not None:  # its written (empty) grades are replaced
            derived[rows[slot]] = replaced(query, {"relevant": grade_maps[slot],
                                                   "relevant_from_evidence": True})
    result = dataclasses.replace(dataset, queries=tuple(derived))
    if gold_kept:
        result.share_written_gold(dataset)
    for name in _KEPT_CACHES:  # chunks, documents and evidence are unchanged
        if name in vars(dataset):
            vars(result)[name] = vars(dataset)[name]
    result.share_corpus_cache(dataset)
    result.cached("positions", lambda _: positions)  # the same chunks and evidence
    return result
