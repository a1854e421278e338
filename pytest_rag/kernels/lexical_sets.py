"""The lexical chunking metrics with Python sets: the reference twin of :mod:`.lexical`.

:func:`lexical_metrics_sets` gives, with Python sets of words, what
:func:`pytest_rag.kernels.lexical.lexical_metrics` computes on integer word
ids; the chunking stage uses it where those integer keys would not fit an
int64, and the tests compare the two.  A chunk of more than
:data:`SET_PAIRS` sentence pairs goes through
:func:`pytest_rag.kernels.cohesion.set_cohesion` (its identical sentences
grouped, and its limit), not through a loop over every pair.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Final

import numpy as np
import numpy.typing as npt

from ..dataset.model import Dataset
from ..text.tokens import code_points, point_table
from .aggregate import mean_or_none
from .cohesion import set_cohesion
from .lexical import EDGE_TOKENS, LexicalMetrics, sentence_starts
from .positions import positions_of

__all__ = ["SET_PAIRS", "jaccard", "lexical_metrics_sets", "mean_pair_jaccard",
           "sentence_breaks"]

_IntArray = npt.NDArray[np.int64]
#: Sentence pairs of a chunk above which its cohesion is not a loop over the pairs.
SET_PAIRS: Final = 1 << 20


def jaccard(left: set[str], right: set[str]) -> float:
    """``|A ∩ B| / |A ∪ B|``; 0 for two empty sets."""
    inter = len(left & right)
    union = len(left) + len(right) - inter
    return inter / union if union else 0.0


def mean_pair_jaccard(parts: list[set[str]]) -> float:
    """Mean Jaccard overlap of all pairs of (non-empty) sets; at least 2 sets."""
    sizes = [len(part) for part in parts]
    total = 0.0
    for i, (part, size) in enumerate(zip(parts, sizes)):
        for other, other_size in zip(parts[i + 1:], sizes[i + 1:]):
            inter = len(part & other)
            total += inter / (size + other_size - inter)
    count = len(parts)
    return total / (count * (count - 1) / 2)


def sentence_breaks(text: str) -> _IntArray:
    """Character offsets where a new sentence starts (sorted).

    A sentence ends after ``.``, ``!`` or ``?`` followed by whitespace (the
    regular expression ``[.!?](?=\\s)``, Unicode whitespace) and at every
    newline.  Found on the array of code points, without a regex loop.
    """
    if not text:
        return np.zeros(0, dtype=np.int64)
    codes = code_points(text)
    return sentence_starts(codes, point_table(codes, str.isspace))


def lexical_metrics_sets(dataset: Dataset, scope: _IntArray,
                          pairs: tuple[_IntArray, _IntArray]) -> LexicalMetrics:
    """Word-overlap proxies over the tokens of each chunk's text, with Python sets.

    A chunk's tokens are the document's tokens it overlaps, the first and
    last cut to the chunk's characters: exactly the tokens of its text.
    Sentences come from the document's sentence breaks (a break never falls
    inside a token), so no chunk text is tokenized again.
    """
    positions = positions_of(dataset)
    n = len(dataset.chunks)
    all_sets: list[set[str]] = [set()] * n
    heads: list[set[str]] = [set()] * n
    tails: list[set[str]] = [set()] * n
    cohesion: list[float] = []
    unmeasured: list[tuple[int, int]] = []
    chunk_start = np.fromiter((c.start for c in dataset.chunks), dtype=np.int64, count=n)
    chunk_end = np.fromiter((c.end for c in dataset.chunks), dtype=np.int64, count=n)
    for doc in scope.tolist():
        document = dataset.documents[doc]
        text, table = document.text, document.tokens
        words = table.words
        rows = np.flatnonzero(positions.chunk_doc == doc)
        lo = positions.chunk_lo[rows] - positions.base[doc]
        hi = positions.chunk_hi[rows] - positions.base[doc]
        sentence = np.searchsorted(sentence_breaks(text), table.starts, side="right")
        new_sentence = (np.flatnonzero(sentence[1:] != sentence[:-1]) + 1).tolist()
        cut_from = np.searchsorted(new_sentence, lo, side="right").tolist()
        cut_to = np.searchsorted(new_sentence, hi, side="left").tolist()
        nonempty = hi > lo
        head_cut = np.zeros(rows.shape[0], dtype=bool)
        tail_cut = np.zeros(rows.shape[0], dtype=bool)
        head_cut[nonempty] = table.starts[lo[nonempty]] < chunk_start[rows[nonempty]]
        tail_cut[nonempty] = table.ends[hi[nonempty] - 1] > chunk_end[rows[nonempty]]
        cut_head, cut_tail = head_cut.tolist(), tail_cut.tolist()
        for k, (row, a, b) in enumerate(zip(rows.tolist(), lo.tolist(), hi.tolist())):
            if a == b:
                continue
            tokens = words[a:b]
            if cut_head[k] or cut_tail[k]:
                start, end = int(chunk_start[row]), int(chunk_end[row])
                if cut_head[k]:
                    tokens[0] = text[start:min(int(table.ends[a]), end)].lower()
                if cut_tail[k]:
                    tokens[-1] = text[max(int(table.starts[b - 1]), start):end].lower()
            all_sets[row] = set(tokens)
            heads[row] = set(tokens[:EDGE_TOKENS])
            tails[row] = set(tokens[-EDGE_TOKENS:])
            if cut_to[k] > cut_from[k]:
                edges = [0, *(cut - a for cut in new_sentence[cut_from[k]:cut_to[k]]), b - a]
                parts = [set(tokens[x:y]) for x, y in pairwise(edges)]
                if len(parts) * (len(parts) - 1) // 2 <= SET_PAIRS:
                    cohesion.append(mean_pair_jaccard(parts))
                    continue
                value, needed = set_cohesion(parts)
                if value is None:
                    unmeasured.append((row, needed))
                else:
                    cohesion.append(value)
    left, right = pairs[0].tolist(), pairs[1].tolist()
    clarity = [1.0 - jaccard(tails[i], heads[j]) for i, j in zip(left, right)]
    stickiness = [jaccard(all_sets[i], all_sets[j]) for i, j in zip(left, right)]
    unmeasured.sort()
    return LexicalMetrics({"lexical_cohesion": None if unmeasured else mean_or_none(cohesion),
                           "lexical_boundary_clarity": mean_or_none(clarity),
                           "lexical_chunk_stickiness": mean_or_none(stickiness)},
                          tuple(unmeasured))
