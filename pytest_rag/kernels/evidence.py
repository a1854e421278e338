"""Chunk lists against gold evidence, as token-position interval arithmetic.

Retrieval (the top K) and augmentation (the packed context) both ask the same
questions of a list of chunk ids per query: how many positions it covers, how
many of them are gold evidence, which gold spans one listed chunk holds whole,
and which listed chunks touch the evidence.  :func:`list_overlap` answers all
of them for every query at once.  Queries are kept apart by shifting each
query's intervals by ``slot * line_length``, so one sort serves all queries.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np
import numpy.typing as npt

from ..dataset.model import Dataset
from ..errors import DatasetError
from ..text.intervals import containing, intersection_sizes, touching_count
from .positions import positions_of

__all__ = ["ListOverlap", "evidence_query_indices", "list_overlap"]

_IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ListOverlap:
    """Per listed query (``slot``) and per list entry, positions against gold.

    Per slot: ``listed`` = |L| (union of the listed chunks' positions),
    ``gold`` = |G|, ``inter`` = |L ∩ G|, ``union`` = |L ∪ G|, ``listed_total``
    = sum of the entries' sizes (repeats counted), ``spans_whole`` = gold spans
    held whole by one listed chunk, ``spans`` = gold spans (with a token).
    Per entry (flattened in list order): ``entry_slot``, ``entry_rank`` (0-based
    index in its list), ``entry_size`` and ``entry_meets_gold``.
    """

    listed: _IntArray
    gold: _IntArray
    inter: _IntArray
    union: _IntArray
    listed_total: _IntArray
    spans_whole: _IntArray
    spans: _IntArray
    entry_slot: _IntArray
    entry_rank: _IntArray
    entry_size: _IntArray
    entry_meets_gold: npt.NDArray[np.bool_]


def evidence_query_indices(dataset: Dataset) -> npt.NDArray[np.bool_]:
    """For each query, whether it has a gold span holding at least one token."""
    positions = positions_of(dataset)
    has = np.zeros(len(dataset.queries), dtype=bool)
    nonempty = positions.evidence_hi > positions.evidence_lo
    has[positions.evidence_query[nonempty]] = True
    return has


def list_overlap(dataset: Dataset, queries: Sequence[int], lists: Sequence[Collection[str]],
                 field: str) -> ListOverlap:
    """Overlap of ``lists[slot]`` (chunk ids of query ``queries[slot]``) with its gold.

    Raises
    ------
    DatasetError
        For a listed id that is not a known chunk: token metrics need its span.
    """
    positions = positions_of(dataset)
    index = dataset.chunk_index
    slots = len(queries)
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=slots)
    total = int(lengths.sum())
    chunk_rows = np.fromiter(map(index.get, chain.from_iterable(lists), repeat(-1, total)),
                             dtype=np.int64, count=total)
    entry_slot = np.repeat(np.arange(slots, dtype=np.int64), lengths)
    entry_rank = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths,
                                                              lengths)
    if (chunk_rows < 0).any():
        bad = int(np.flatnonzero(chunk_rows < 0)[0])
        query_id = dataset.queries[queries[int(entry_slot[bad])]].id
        unknown = list(lists[int(entry_slot[bad])])[int(entry_rank[bad])]
        raise DatasetError(*dataset.run_place(query_id, field, int(entry_rank[bad])),
                           f"unknown chunk {unknown!r}: token metrics need its span")

    slot_of_query = np.full(len(dataset.queries), -1, dtype=np.int64)
    slot_of_query[np.asarray(queries, dtype=np.int64)] = np.arange(slots)
    gold_slot = slot_of_query[positions.evidence_query]
    keep = (gold_slot >= 0) & (positions.evidence_hi > positions.evidence_lo)
    gold_slot = gold_slot[keep]

    line = int(positions.base[-1]) + 1
    gold_shift = gold_slot * line
    gold_lo = positions.evidence_lo[keep] + gold_shift
    gold_hi = positions.evidence_hi[keep] + gold_shift
    entry_shift = entry_slot * line
    entry_lo = positions.chunk_lo[chunk_rows] + entry_shift
    entry_hi = positions.chunk_hi[chunk_rows] + entry_shift

    listed, gold, inter, union = intersection_sizes(
        entry_lo, entry_hi, entry_slot, gold_lo, gold_hi, gold_slot, slots)
    whole = containing(entry_lo, entry_hi, gold_lo, gold_hi)
    entry_size = entry_hi - entry_lo
    return ListOverlap(
        listed=listed, gold=gold, inter=inter, union=union,
        listed_total=np.bincount(entry_slot, weights=entry_size, minlength=slots).astype(np.int64),
        spans_whole=np.bincount(gold_slot, weights=whole, minlength=slots).astype(np.int64),
        spans=np.bincount(gold_slot, minlength=slots).astype(np.int64),
        entry_slot=entry_slot, entry_rank=entry_rank, entry_size=entry_size,
        entry_meets_gold=touching_count(gold_lo, gold_hi, entry_lo, entry_hi) > 0,
    )
