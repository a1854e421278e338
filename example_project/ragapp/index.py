"""Vector indexes: an exact one, and a deliberately approximate one.

Both return ``(ids, scores)``, best first.  Scores are cosines (the vectors
are unit length) rounded to 9 decimals, and ties go to the vector added
first, so a ranking never depends on floating-point noise or on the BLAS
build of the machine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .embedding import FloatMatrix

__all__ = ["ExactIndex", "RandomProjectionIndex", "top_k"]


def top_k(scores: FloatMatrix, k: int, rows: npt.NDArray[np.intp] | None = None
          ) -> tuple[npt.NDArray[np.intp], FloatMatrix]:
    """Rows of the ``k`` highest ``scores`` (rounded to 9 decimals), ties by row number.

    ``rows`` names the row of each score when the scores cover a subset.
    """
    rounded = np.round(scores, 9)
    rows = np.arange(scores.shape[0]) if rows is None else rows
    order = np.lexsort((rows, -rounded))[:k]
    return rows[order], rounded[order]


class ExactIndex:
    """Brute force: the cosine of the query with every stored vector.

    Zero vectors (texts without a content word) are not stored; they could
    never be found, and :attr:`ids` shows which ids reached the index.
    """

    def __init__(self, ids: Sequence[str], vectors: FloatMatrix) -> None:
        if len(ids) != vectors.shape[0]:
            raise ValueError(f"{len(ids)} ids for {vectors.shape[0]} vectors")
        keep = np.flatnonzero(np.linalg.norm(vectors, axis=1) > 0)
        self.ids: tuple[str, ...] = tuple(ids[int(i)] for i in keep)
        self.vectors = vectors[keep]

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, query: FloatMatrix, k: int) -> tuple[list[str], FloatMatrix]:
        rows, scores = top_k(self.vectors @ query, k)
        return [self.ids[i] for i in rows], scores


class RandomProjectionIndex(ExactIndex):
    """Locality-sensitive hashing with random hyperplanes (a fixed seed).

    Each of ``tables`` hash tables signs the vector against ``bits`` random
    hyperplanes, which puts it in one of ``2**bits`` buckets.  A query is
    compared only with the vectors that share a bucket with it in some
    table; the true nearest neighbours outside those buckets are missed,
    which is what ``ann_recall_at_k`` measures.
    """

    def __init__(self, ids: Sequence[str], vectors: FloatMatrix, *, tables: int = 12,
                 bits: int = 4, seed: int = 20240601) -> None:
        super().__init__(ids, vectors)
        rng = np.random.default_rng(seed)
        self.planes = rng.standard_normal((tables, bits, vectors.shape[1]))
        self._weights = 1 << np.arange(bits)
        codes = self._codes(self.vectors)  # (tables, n)
        self._buckets: list[dict[int, npt.NDArray[np.intp]]] = []
        for table in codes:
            order = np.argsort(table, kind="stable")
            keys, starts = np.unique(table[order], return_index=True)
            groups = np.split(order, starts[1:])
            self._buckets.append({int(key): group for key, group in zip(keys, groups, strict=True)})

    def _codes(self, vectors: FloatMatrix) -> npt.NDArray[np.int64]:
        signs = np.einsum("tbd,nd->tnb", self.planes, vectors) > 0
        codes: npt.NDArray[np.int64] = (signs * self._weights).sum(axis=2)
        return codes

    def search(self, query: FloatMatrix, k: int) -> tuple[list[str], FloatMatrix]:
        codes = self._codes(query[None, :])[:, 0]
        found = [bucket.get(int(code)) for bucket, code in zip(self._buckets, codes, strict=True)]
        parts = [rows for rows in found if rows is not None]
        if not parts:
            return [], np.zeros(0)
        candidates = np.unique(np.concatenate(parts))
        rows, scores = top_k(self.vectors[candidates] @ query, k, candidates)
        return [self.ids[i] for i in rows], scores
