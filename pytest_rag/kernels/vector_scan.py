"""Vector kernels: the embedding stage's scan (norms, duplicates, exact cosine top K)
and the chunking stage's cosines of chunk and sentence vectors (:func:`unit_vectors`,
:func:`sentence_metrics`).

One pass over the chunk vectors, block by block (:data:`_BLOCK_ROWS` vectors
times :data:`_BLOCK_QUERIES` queries), gives everything: per block its norms
(zero rows), row hashes (duplicates), the sum of its unit vectors and its
cosines with the queries.  The query-by-vector similarity matrix never exists
whole; extra memory is a few blocks.

- Exact top K ``E_q^K``: cosines in float64, rounded with
  ``numpy.round(cos, 9)``; a higher rounded cosine ranks first, equal ones by
  chunk order (the order of ``chunks``), vectors whose id is not a chunk after
  all chunks, in their given order.  ``numpy.round(x, 9)`` is
  ``rint(x * 1e9) / 1e9``, so the integer ``rint(x * 1e9)`` ranks the same.
  A running top K per query is merged block by block.  To keep the pass
  close to the cost of one float32 matrix product, each block is first
  screened in float32: a float32 dot product of unit vectors is within
  ``(d + 4) * 2**-24`` of the float64 one, so every column whose float64
  cosine could still enter the top K passes the screen, and only those
  columns get their float64 cosine.  The result is the float64 ranking.
- Duplicates: rows are grouped by a 64-bit hash of their values, and every
  row of a group is compared by value with the group's first row.
- Negative similarity: the sum of a query's cosines with all vectors is
  ``q . sum(unit vectors)``; minus the gold cosines, over the other vectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .aggregate import FloatArray, mean_or_none

__all__ = ["NonFiniteVector", "VectorScan", "count_distinct", "hits_in_top", "scan_vectors",
           "sentence_metrics", "tie_order", "unit_rows", "unit_vectors"]

IntArray = npt.NDArray[np.int64]

#: Vectors per block of the scan (tests lower it to force many blocks).  A
#: block this wide keeps the float32 screen product at BLAS speed; smaller
#: blocks cost up to twice as much per product.
_BLOCK_ROWS: Final = 8192
#: Unit vectors are summed this many rows at a time, in row order (the sum
#: of :attr:`VectorScan.unit_sum` does not depend on the block size).
_SUM_ROWS: Final = 2048
#: Columns whose K-th best float32 score bounds a block's top K (see ``_block_bound``).
_BOUND_COLUMNS: Final = 1024
#: Rows converted to float64, normalised and hashed at a time (a slice that
#: stays in a core's L2 cache through those few passes).
_CACHE_ROWS: Final = 512
#: Upper bound of the block size: keeps ``rounded cosine * width`` exact in float64.
_MAX_BLOCK_ROWS: Final = 2**22
#: Queries per block of the scan.
_BLOCK_QUERIES: Final = 1024
#: Query-vector pairs whose float64 cosine is computed at once (bounds memory).
_PAIRS_PER_SLICE: Final = 1024
#: Cosines are ranked by ``rint(cos * _SCALE)``, i.e. rounded to 9 decimals.
_SCALE: Final = 1e9
#: Norms outside this range are recomputed with scaling (no under/overflow).
_NORM_LOW: Final = 1e-150
_NORM_HIGH: Final = 1e150
#: Odd 64-bit multipliers of the row hash (fixed: results never depend on a seed).
_HASH_SEED: Final = 0x9E3779B97F4A7C15


class NonFiniteVector(ValueError):
    """A vector holds NaN or infinity (or its norm overflows); ``row`` says which."""

    def __init__(self, row: int) -> None:
        self.row = row
        super().__init__(f"vector {row} holds NaN or infinity, or its norm overflows")


def unit_rows(block: FloatArray, out: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """Euclidean norms of the rows of ``block`` and the rows scaled to norm 1.

    A zero row keeps norm 0 and stays zero.  Rows whose plain norm would
    underflow or overflow are recomputed after scaling by their largest
    absolute value; a row with NaN or infinity gets a non-finite norm.
    The unit rows are written to ``out`` when given (its shape is ``block``'s).
    """
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        bad = ~((norms > _NORM_LOW) & (norms < _NORM_HIGH))
        inverse = np.zeros_like(norms)
        np.divide(1.0, norms, out=inverse, where=~bad)
        unit = np.multiply(block, inverse[:, None], out=out)
        if bad.any():
            rows = block[bad]
            scale = np.abs(rows).max(axis=1)
            scaled = rows / np.where(scale > 0, scale, 1.0)[:, None]
            fixed = scale * np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
            norms[bad] = fixed
            unit[bad] = np.where(fixed[:, None] > 0, rows / fixed[:, None], 0.0)
    return norms, unit


def _hash_multipliers(dim: int) -> npt.NDArray[np.uint64]:
    rng = np.random.default_rng(_HASH_SEED)
    halves: npt.NDArray[np.uint64] = rng.integers(0, 2**63, size=dim, dtype=np.uint64)
    odd: npt.NDArray[np.uint64] = halves * np.uint64(2) + np.uint64(1)
    return odd


def _row_hashes(block: npt.NDArray[Any], multipliers: npt.NDArray[np.uint64]
                ) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row's values (``-0.0`` hashes as ``0.0``).

    Equal rows always get equal hashes; unequal rows rarely do, and
    :func:`count_distinct` checks every candidate pair by value.  The bits of
    each value are folded (``x ^ x >> 29``, or ``>> 13`` for the 32 bits of a
    float32 block, hashed as it is) before the weighted sum, so that round
    numbers, whose low mantissa bits are all zero, still spread over the
    whole hash.
    """
    if block.dtype == np.float32:
        bits32 = np.ascontiguousarray(block + np.float32(0.0)).view(np.uint32)
        bits32 ^= bits32 >> np.uint32(13)
        hashes32: npt.NDArray[np.uint64] = np.einsum("ij,j->i", bits32, multipliers)
        return hashes32
    bits = np.ascontiguousarray(np.asarray(block, dtype=np.float64) + 0.0).view(np.uint64)
    bits ^= bits >> np.uint64(29)
    # einsum, not ``@``: numpy has no BLAS for integers, and its einsum loop
    # is several times faster than its integer matmul (same wrapping sums).
    hashes: npt.NDArray[np.uint64] = np.einsum("ij,j->i", bits, multipliers)
    return hashes


def count_distinct(matrix: npt.NDArray[Any], hashes: npt.NDArray[np.uint64],
                    block_rows: int) -> int:
    """Number of distinct rows of ``matrix`` (equal value by value), given row hashes.

    Rows are grouped by hash; each row of a group is compared by value with
    the group's first row.  Only a group where that fails (a hash collision)
    is counted exactly with ``numpy.unique``.
    """
    order = np.argsort(hashes, kind="stable")
    sorted_hashes = hashes[order]
    repeat = np.zeros(sorted_hashes.shape[0], dtype=bool)
    repeat[1:] = sorted_hashes[1:] == sorted_hashes[:-1]
    distinct = int(sorted_hashes.shape[0] - np.count_nonzero(repeat))
    if not repeat.any():
        return distinct
    group = np.cumsum(~repeat) - 1
    first = order[np.flatnonzero(~repeat)]
    candidates = np.flatnonzero(repeat)
    collided: list[IntArray] = []
    for lo in range(0, candidates.shape[0], block_rows):
        part = candidates[lo:lo + block_rows]
        same = (matrix[order[part]] == matrix[first[group[part]]]).all(axis=1)
        collided.append(group[part][~same])
    bad_groups = np.unique(np.concatenate(collided))
    if bad_groups.shape[0]:
        members = np.flatnonzero(np.isin(group, bad_groups))
        for part in np.split(members, np.flatnonzero(np.diff(group[members])) + 1):
            values = np.asarray(matrix[order[part]], dtype=np.float64) + 0.0
            distinct += int(np.unique(values, axis=0).shape[0]) - 1
    return distinct


def _pair_dots(left: FloatArray, left_rows: IntArray, right: FloatArray,
               right_rows: IntArray) -> FloatArray:
    """``left[left_rows[i]] . right[right_rows[i]]`` for every ``i``, a slice at a time."""
    out = np.empty(left_rows.shape[0], dtype=np.float64)
    for lo in range(0, out.shape[0], _PAIRS_PER_SLICE):
        hi = lo + _PAIRS_PER_SLICE
        out[lo:hi] = np.einsum("ij,ij->i", left[left_rows[lo:hi]], right[right_rows[lo:hi]])
    return out


def _float32_below(values: FloatArray) -> npt.NDArray[np.float32]:
    """``values`` as float32, rounded down (so a ``>`` test stays a superset)."""
    low = values.astype(np.float32)
    return np.where(low > values, np.nextafter(low, np.float32(-np.inf)), low)


class _RunningTopK:
    """Exact top K per query over column blocks seen in position order.

    Keeps, per query, the K best ``(rint(cos * 1e9), position)`` pairs sorted
    best first: higher rounded cosine first, then lower position.  Each block
    is screened with a float32 product; the screen keeps every column whose
    float64 cosine could reach the top K (its error is at most
    :attr:`margin`), and only those columns get their float64 cosine.
    """

    def __init__(self, queries: FloatArray, k: int) -> None:
        count, dim = queries.shape
        self.queries = queries
        self.queries32 = queries.astype(np.float32)
        self.k = k
        self.seen = 0
        self.score = np.zeros((count, k), dtype=np.int64)
        self.position = np.zeros((count, k), dtype=np.int64)
        # |float32 dot - float64 dot| of unit vectors: rounding both inputs
        # (2u) plus a float32 sum of ``dim`` products (dim * u), u = 2^-24.
        self.margin = (dim + 4) * 2.0**-24 * 1.01 + 1e-12

    def update(self, first_query: int, end_query: int, unit: FloatArray,
               unit32: npt.NDArray[np.float32], first_position: int) -> None:
        """Merge one block of unit vectors (columns from ``first_position`` on)
        into the top K of the queries ``first_query:end_query``."""
        k = self.k
        queries = self.queries[first_query:end_query]
        approx = self.queries32[first_query:end_query] @ unit32.T
        count, width = approx.shape
        held = min(self.seen, k)
        worst: IntArray | None = None
        if held == k:
            worst = self.score[first_query:end_query, k - 1]
            bound = (worst + 0.49) / _SCALE - self.margin
            mask = approx > _float32_below(bound)[:, None]
            candidates = np.count_nonzero(mask)
            if candidates > 4 * count * k:
                bound = np.maximum(bound, self._block_bound(approx))
                mask = approx > _float32_below(bound)[:, None]
                candidates = np.count_nonzero(mask)
        else:
            mask = approx > _float32_below(self._block_bound(approx))[:, None]
            candidates = np.count_nonzero(mask)
        if candidates * 64 <= count * width:
            # Few candidates: their float64 cosines one by one.
            flat = np.flatnonzero(mask)
            hit_rows, hit_cols = np.divmod(flat, width)
            rounded = np.rint(_pair_dots(queries, hit_rows, unit, hit_cols) * _SCALE
                              ).astype(np.int64)
            if worst is not None:
                enters = rounded > worst[hit_rows]
                hit_rows, hit_cols, rounded = hit_rows[enters], hit_cols[enters], rounded[enters]
        else:
            # Many (exact ties near the K-th score): the block's float64 product,
            # then each query's K best by the exact key -rounded * width + column
            # (an integer below 2^53, see _MAX_BLOCK_ROWS).
            key = queries @ unit.T
            key *= _SCALE
            np.rint(key, out=key)
            if worst is not None:
                mask &= key > worst[:, None]
            key *= -width
            key += np.arange(width)
            key[~mask] = np.inf
            kk = min(k, width)
            best = np.argpartition(key, kk - 1, axis=1)[:, :kk]
            best_keys = np.take_along_axis(key, best, axis=1)
            valid = np.isfinite(best_keys)
            hit_rows = np.repeat(np.arange(count), kk)[valid.ravel()]
            hit_cols = best[valid]
            rounded = ((hit_cols - best_keys[valid]) / width).astype(np.int64)
        if hit_rows.shape[0] == 0:
            return
        touched, local = np.unique(hit_rows, return_inverse=True)
        targets = first_query + touched
        all_rows = np.concatenate([np.repeat(np.arange(touched.shape[0]), held), local])
        all_scores = np.concatenate([self.score[targets, :held].ravel(), rounded])
        all_positions = np.concatenate([self.position[targets, :held].ravel(),
                                        hit_cols + first_position])
        order = np.lexsort((all_positions, -all_scores, all_rows))
        sizes = np.bincount(all_rows, minlength=touched.shape[0])
        starts = np.cumsum(sizes) - sizes
        keep = min(k, self.seen + width)
        take = order[starts[:, None] + np.arange(keep)]
        self.score[targets, :keep] = all_scores[take]
        self.position[targets, :keep] = all_positions[take]

    def _block_bound(self, approx: npt.NDArray[np.float32]) -> FloatArray:
        """Per query, a bound below which no column can reach the block's own top K.

        The K-th best of the first :data:`_BOUND_COLUMNS` columns is no higher
        than the K-th best of the whole block, so it bounds as well (a little
        lower), for a fraction of the partition's cost.
        """
        width = min(approx.shape[1], max(_BOUND_COLUMNS, self.k))
        kk = min(self.k, width)
        kth = np.partition(approx[:, :width], width - kk, axis=1)[:, width - kk].astype(np.float64)
        # The kk best float32 scores are within margin of their float64 cosines,
        # and whatever rounds like the K-th best cosine is within 1e-9 of it.
        return kth - 2.0 * self.margin - 2.0 / _SCALE  # type: ignore[no-any-return]


@dataclass(frozen=True)
class VectorScan:
    """What one pass over the vectors gives.

    Attributes
    ----------
    norms:
        Euclidean norm of every vector, in row order.
    distinct:
        Number of distinct vectors (rows equal value by value).
    unit_sum:
        Sum of the unit vectors (zero vectors add nothing).
    top:
        Row indices of the exact top ``min(K, |V|)`` of each query, best first.
    """

    norms: FloatArray
    distinct: int
    unit_sum: FloatArray
    top: IntArray


def scan_vectors(matrix: npt.NDArray[Any], queries: FloatArray, k: int,
                 order: IntArray | None = None, *, block_rows: int | None = None,
                 block_queries: int | None = None) -> VectorScan:
    """One blocked pass over ``matrix``: norms, duplicates and exact cosine top K.

    Parameters
    ----------
    matrix:
        ``[n, d]`` vectors (any float dtype; computed in float64), ``n >= 1``.
    queries:
        ``[q, d]`` unit query vectors (zero rows allowed: every cosine is 0).
    k:
        Size of the top K; ``min(k, n)`` rows are returned per query.
    order:
        Tie order of the rows (a permutation); ``None``: row order.
    block_rows, block_queries:
        Block sizes; ``None``: the module defaults.

    Returns
    -------
    VectorScan
        ``top[i]`` ranks rows by ``numpy.round(cos, 9)`` descending, ties by
        their place in ``order``.

    Raises
    ------
    NonFiniteVector
        When a vector holds NaN or infinity (a ``ValueError``).
    """
    rows_per_block = min(block_rows or _BLOCK_ROWS, _MAX_BLOCK_ROWS)
    queries_per_block = block_queries or _BLOCK_QUERIES
    count, dim = matrix.shape
    keep = min(k, count)
    # A zero query has cosine 0 with everything: its top K is the first K in
    # tie order, so only the other queries are scanned.
    live = np.flatnonzero(queries.any(axis=1))
    tracker = _RunningTopK(queries[live], keep)
    multipliers = _hash_multipliers(dim)
    norms = np.empty(count, dtype=np.float64)
    hashes = np.empty(count, dtype=np.uint64)
    unit_sum = np.zeros(dim, dtype=np.float64)
    # Unit vectors of one block, in float64 (rescoring) and float32 (screen).
    unit = np.empty((min(rows_per_block, count), dim), dtype=np.float64)
    unit32 = np.empty(unit.shape, dtype=np.float32)
    for lo in range(0, count, rows_per_block):
        hi = min(lo + rows_per_block, count)
        width = hi - lo
        # Converted, normalised and hashed a cache-sized slice at a time:
        # every pass then reads the slice from cache, not from memory.
        for sub in range(lo, hi, _CACHE_ROWS):
            end = min(sub + _CACHE_ROWS, hi)
            rows = slice(sub, end) if order is None else order[sub:end]
            raw = matrix[rows]
            block = np.asarray(raw, dtype=np.float64)
            block_norms, block_unit = unit_rows(block, unit[sub - lo:end - lo])
            if not np.isfinite(block_norms).all():
                first_bad = int(np.flatnonzero(~np.isfinite(block_norms))[0])
                raise NonFiniteVector(sub + first_bad if order is None
                                      else int(order[sub + first_bad]))
            norms[rows] = block_norms
            hashes[rows] = _row_hashes(raw if raw.dtype == np.float32 else block, multipliers)
            unit32[sub - lo:end - lo] = block_unit
        for part in range(0, width, _SUM_ROWS):
            unit_sum += unit[part:min(part + _SUM_ROWS, width)].sum(axis=0)
        if live.shape[0]:
            for q_lo in range(0, live.shape[0], queries_per_block):
                tracker.update(q_lo, min(q_lo + queries_per_block, live.shape[0]),
                               unit[:width], unit32[:width], lo)
        tracker.seen = hi
    positions = np.tile(np.arange(keep, dtype=np.int64), (queries.shape[0], 1))
    positions[live] = tracker.position
    top = positions if order is None else order[positions]
    return VectorScan(norms, count_distinct(matrix, hashes, rows_per_block), unit_sum, top)


def hits_in_top(top: IntArray, row_of: Mapping[str, int], wanted: list[list[str]]
                 ) -> FloatArray:
    """Per row of ``top`` (a query's top-K rows), how many of its ``wanted`` ids
    have their row (``row_of``; an id without one is never found) in it."""
    owner = np.repeat(np.arange(len(wanted)), [len(ids) for ids in wanted])
    rows = np.fromiter(map(row_of.get, chain.from_iterable(wanted), repeat(-1)),
                       dtype=np.int64, count=owner.shape[0])
    found = (top[owner] == rows[:, None]).any(axis=1)
    counts: FloatArray = np.bincount(owner, weights=found, minlength=len(wanted)).astype(np.float64)
    return counts


def tie_order(vector_ids: Sequence[str], chunk_index: Mapping[str, int]) -> IntArray | None:
    """Rows of ``vector_ids`` in tie order, or ``None`` when that is their order.

    Tie order: vectors of chunks first, in chunk order, then the others in
    their given order.
    """
    count = len(vector_ids)
    chunks = len(chunk_index)
    if count == chunks and list(chunk_index) == list(vector_ids):
        return None
    keys = np.fromiter((chunk_index.get(vector_id, chunks + i)
                        for i, vector_id in enumerate(vector_ids)), dtype=np.int64, count=count)
    if count < 2 or bool((keys[1:] > keys[:-1]).all()):
        return None
    return np.argsort(keys, kind="stable")


# -- the chunking stage's cosines ------------------------------------------------
def unit_vectors(matrix: FloatArray) -> FloatArray:
    """Rows scaled to norm 1; a zero row stays zero (its cosine with anything is 0).

    Rows are first divided by their largest absolute entry, so that neither
    tiny nor huge entries underflow or overflow when squared.
    """
    largest = np.abs(matrix).max(axis=1, keepdims=True) if matrix.size else \
        np.zeros((matrix.shape[0], 1))
    scaled = np.zeros_like(matrix)
    np.divide(matrix, largest, out=scaled, where=largest > 0)
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    out = np.zeros_like(matrix)
    np.divide(scaled, norms, out=out, where=norms > 0)
    return out


def sentence_metrics(sentences: Mapping[str, FloatArray], chunk_ids: list[str | None],
                      left: IntArray, right: IntArray) -> dict[str, float | None]:
    """Cohesion and boundary clarity from each chunk's sentence vectors.

    The cosines of all sentence pairs of a chunk sum to
    ``(|sum u_i|^2 - sum |u_i|^2) / 2`` for the unit rows ``u_i``, so every
    chunk is done at once with one concatenation and one ``reduceat``.
    """
    owners: list[int] = []
    blocks: list[FloatArray] = []
    for row, chunk_id in enumerate(chunk_ids):
        matrix = sentences.get(chunk_id) if chunk_id is not None else None
        if matrix is not None and matrix.shape[0] > 0:
            owners.append(row)
            blocks.append(np.asarray(matrix, dtype=np.float64))
    if not blocks:
        return {}
    counts = np.fromiter((block.shape[0] for block in blocks), dtype=np.int64, count=len(blocks))
    unit = unit_vectors(np.concatenate(blocks))
    offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(counts)[:-1]])
    sums = np.add.reduceat(unit, offsets, axis=0)
    squares = np.add.reduceat(np.einsum("ij,ij->i", unit, unit), offsets)
    multi = counts >= 2
    pair_sums = (np.einsum("ij,ij->i", sums[multi], sums[multi]) - squares[multi]) / 2
    cohesion = np.clip(pair_sums / (counts[multi] * (counts[multi] - 1) / 2), -1.0, 1.0)
    slot = np.full(len(chunk_ids), -1, dtype=np.int64)
    slot[np.asarray(owners, dtype=np.int64)] = np.arange(len(owners))
    both = (slot[left] >= 0) & (slot[right] >= 0)
    last = unit[offsets[slot[left[both]]] + counts[slot[left[both]]] - 1]
    first = unit[offsets[slot[right[both]]]]
    clarity = 1.0 - np.clip(np.einsum("ij,ij->i", last, first), -1.0, 1.0)
    return {"semantic_cohesion": mean_or_none(cohesion),
            "semantic_boundary_clarity": mean_or_none(clarity)}
