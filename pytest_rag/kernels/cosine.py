"""Cosines of chunk and sentence vectors for the chunking stage's semantic metrics."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from .aggregate import mean_or_none

__all__ = ["sentence_metrics", "unit_vectors"]

_IntArray = npt.NDArray[np.int64]
_FloatArray = npt.NDArray[np.float64]


def unit_vectors(matrix: _FloatArray) -> _FloatArray:
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


def sentence_metrics(sentences: Mapping[str, _FloatArray], chunk_ids: list[str | None],
                      left: _IntArray, right: _IntArray) -> dict[str, float | None]:
    """Cohesion and boundary clarity from each chunk's sentence vectors.

    The cosines of all sentence pairs of a chunk sum to
    ``(|sum u_i|^2 - sum |u_i|^2) / 2`` for the unit rows ``u_i``, so every
    chunk is done at once with one concatenation and one ``reduceat``.
    """
    owners: list[int] = []
    blocks: list[_FloatArray] = []
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
