"""First occurrences of many needles in one long text, in time linear overall.

``text.find(needle)`` scans the text up to the needle's first occurrence, so
placing every chunk of a long document by its text (framework objects
without offsets, in ranked lists) costs the number of chunks times the
document's length.  :class:`FirstOccurrences` hashes every window of
:data:`WINDOW` code points once (a polynomial hash with 64-bit wrapping
arithmetic, from prefix sums), and sorts the windows by hash, keeping
positions in ascending order within a hash.  A needle's candidates are the
windows whose hash is that of its first :data:`WINDOW` code points, in
ascending order; the first candidate where the text starts with the whole
needle is its first occurrence.  Every answer is compared with the text,
so it is exactly ``text.find(needle)``: after :data:`MAX_CANDIDATES` candidates that
fail (a text that repeats itself), the search goes on with ``text.find``
from there.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from .tokens import code_points

__all__ = ["MAX_CANDIDATES", "WINDOW", "FirstOccurrences"]

#: Code points hashed per window; shorter needles go to ``str.find``.
WINDOW: Final = 32
#: Candidates compared one by one before ``str.find`` takes over.
MAX_CANDIDATES: Final = 64
#: An odd multiplier (so it has an inverse modulo 2**64) and its inverse.
_BASE: Final = 0x100000001B3
_INVERSE: Final = pow(_BASE, -1, 1 << 64)
_MASK: Final = (1 << 64) - 1


class FirstOccurrences:
    """``find(needle)`` equals ``text.find(needle)``; see the module."""

    def __init__(self, text: str) -> None:
        self.text = text
        #: How many candidates were compared with the text (for tests: linear work).
        self.compared = 0
        windows = len(text) - WINDOW + 1
        if windows <= 0:
            self._hashes = np.zeros(0, dtype=np.uint64)
            self._positions = np.zeros(0, dtype=np.int64)
            self._inverse_powers: list[int] = []
            return
        # In place where it can be: a few 8-byte arrays of the text's length at a time.
        weighted = code_points(text).astype(np.uint64)
        inverse = np.full(len(text), _INVERSE, dtype=np.uint64)
        inverse[0] = 1
        np.cumprod(inverse, out=inverse)  # wraps modulo 2**64, as wanted
        self._inverse_powers = [int(value) for value in inverse[:WINDOW]]
        weighted *= inverse
        del inverse
        sums = np.zeros(len(text) + 1, dtype=np.uint64)
        np.cumsum(weighted, out=sums[1:])
        del weighted
        # Window i: sum of c[j] * inverse^(j - i) over its code points.
        hashes = sums[WINDOW:] - sums[:windows]
        del sums
        forward = np.full(windows, _BASE, dtype=np.uint64)
        forward[0] = 1
        np.cumprod(forward, out=forward)
        hashes *= forward
        del forward
        order = np.argsort(hashes, kind="stable")  # ascending positions within a hash
        self._hashes = hashes[order]
        self._positions = order

    def _hash(self, needle: str) -> int:
        return sum(ord(char) * power for char, power in
                   zip(needle[:WINDOW], self._inverse_powers)) & _MASK

    def find(self, needle: str) -> int:
        """The first position where ``text`` holds ``needle``, or -1 (``str.find``)."""
        text = self.text
        if len(needle) < WINDOW or not self._inverse_powers:
            return text.find(needle)
        key = np.uint64(self._hash(needle))
        lo = int(np.searchsorted(self._hashes, key, side="left"))
        hi = int(np.searchsorted(self._hashes, key, side="right"))
        candidates = self._positions[lo:min(hi, lo + MAX_CANDIDATES)].tolist()
        for count, position in enumerate(candidates):
            self.compared += 1
            if text.startswith(needle, position):
                return int(position)
            if count == MAX_CANDIDATES - 1:  # a repetitive text: str.find from here on
                return text.find(needle, position + 1)
        return -1
