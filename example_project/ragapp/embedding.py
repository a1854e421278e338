"""A deterministic hashing embedder: no model, no download, the same vector everywhere.

Each text becomes the counts of its content words and of the character
trigrams of those words.  Every feature is hashed to one of ``dim`` buckets
with a random sign (the "hashing trick", a sparse random projection of the
huge count vector), counts are damped with ``log1p`` and the vector is
L2-normalised, so a dot product is a cosine.

The hashes are CRC-32 of the word and a 64-bit polynomial hash of the
trigram's code points, mixed with the SplitMix64 finaliser.  Python's own
``hash()`` is salted per process and would give every pytest-xdist worker
different vectors.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .text import content_terms

__all__ = ["FloatMatrix", "HashingEmbedder"]

FloatMatrix = npt.NDArray[np.float64]
_U64 = np.uint64


def _mix(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser: spreads every input bit over the whole word."""
    with np.errstate(over="ignore"):
        values = values ^ (values >> _U64(30))
        values = values * _U64(0xBF58476D1CE4E5B9)
        values = values ^ (values >> _U64(27))
        values = values * _U64(0x94D049BB133111EB)
        mixed: npt.NDArray[np.uint64] = values ^ (values >> _U64(31))
        return mixed


class HashingEmbedder:
    """Embed texts into ``dim`` dimensions from word and character n-gram counts.

    Parameters
    ----------
    dim:
        Output dimension.
    ngram:
        Length of the character n-grams taken inside each word (padded with a
        space on both sides, so short words still give one n-gram).
    char_weight:
        Weight of the n-gram counts against the word counts.

    Examples
    --------
    >>> embedder = HashingEmbedder()
    >>> vectors = embedder.embed(["gift cards", "Gift cards!"])
    >>> bool(np.allclose(vectors[0], vectors[1]))
    True
    """

    def __init__(self, dim: int = 256, *, ngram: int = 3, char_weight: float = 0.5) -> None:
        if dim < 2 or ngram < 1:
            raise ValueError(f"need dim >= 2 and ngram >= 1, got {dim=}, {ngram=}")
        self.dim = dim
        self.ngram = ngram
        self.char_weight = char_weight
        self._word_hashes: dict[str, int] = {}

    def _word_hash(self, word: str) -> int:
        value = self._word_hashes.get(word)
        if value is None:
            value = self._word_hashes[word] = zlib.crc32(word.encode("utf-8"))
        return value

    def _ngram_hashes(self, terms: Sequence[str]) -> npt.NDArray[np.uint64]:
        padded = " " + "  ".join(terms) + " "  # two spaces: no n-gram spans two words
        codes = np.frombuffer(padded.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        n = self.ngram
        if codes.shape[0] < n:
            return np.zeros(0, dtype=np.uint64)
        count = codes.shape[0] - n + 1
        hashes = np.zeros(count, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for offset in range(n):
                hashes = hashes * _U64(0x100000001B3) + codes[offset:offset + count]
        # Drop the n-grams that straddle the double space between two words.
        spaces = codes == _U64(32)
        straddle = np.zeros(count, dtype=bool)
        for offset in range(1, n):
            straddle |= spaces[offset:offset + count] & spaces[offset - 1:offset - 1 + count]
        return hashes[~straddle]

    def _accumulate(self, hashes: npt.NDArray[np.uint64], weight: float) -> FloatMatrix:
        mixed = _mix(hashes)
        buckets = (mixed % _U64(self.dim)).astype(np.intp)
        signs = np.where((mixed >> _U64(63)) == _U64(1), -weight, weight)
        return np.bincount(buckets, weights=signs, minlength=self.dim).astype(np.float64)

    def embed_one(self, text: str) -> FloatMatrix:
        """The unit vector of ``text``; the zero vector when it has no content word."""
        terms = content_terms(text)
        if not terms:
            return np.zeros(self.dim)
        words = np.fromiter((self._word_hash(t) for t in terms), dtype=np.uint64, count=len(terms))
        counts = self._accumulate(words, 1.0)
        counts += self._accumulate(self._ngram_hashes(terms), self.char_weight)
        vector = np.sign(counts) * np.log1p(np.abs(counts))
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """One row per text, shape ``(len(texts), dim)``."""
        matrix = np.zeros((len(texts), self.dim))
        for row, text in enumerate(texts):
            matrix[row] = self.embed_one(text)
        return matrix
