"""The lexical chunking metrics on integer arrays: word ids, then sorting and counting.

``lexical_cohesion``, ``lexical_boundary_clarity`` and ``lexical_chunk_stickiness``
(their definitions are in :class:`~pytest_rag.stages.chunking.ChunkEvaluator`)
compare sets of lowercase tokens.  Here every token becomes an integer id, and
every set operation a sort of integer keys:

1. **Word ids.**  Each token (and each part of a token that a chunk edge cuts)
   is a character range of its document.  Its lowercase code points come from
   a lookup table of the code points present; its id from a polynomial hash of
   them (prefix sums, 64-bit wrapping arithmetic), grouped with
   ``numpy.unique``.  The ids are then *checked*: every range is compared,
   code point by code point, with the first range of its hash group, so two
   different words never share an id.  Should a check fail (a hash
   collision), that block of documents is done again with a Python
   dictionary of the lowercase strings.  The few ranges holding a code point
   whose lowercase is context dependent (capital sigma) or longer than one
   code point are lowercased by ``str.lower`` itself, so that every id stands
   for exactly ``token.lower()``.
2. **Sets and intersections.**  A chunk's tokens are the document's tokens it
   overlaps, its first and last replaced by their cut parts.  Distinct
   ``(set, word)`` keys come from one ``numpy.unique``; the intersection of
   two sets is the number of keys they share, counted by sorting both key
   lists together.  Neighbour pairs (stickiness, clarity) share keys through
   their pair number; the sentence pairs of a chunk (cohesion) through every
   pair of sentences that holds a word, generated per ``(chunk, word)`` group.

Documents are processed in blocks of about a million characters, so memory
stays a few arrays of that size whatever the corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ..dataset.model import Dataset, Document, chunk_spans
from ..text.tokens import code_points
from .aggregate import mean_or_none
from .cohesion import cohesion as _cohesion
from .int_keys import divide as _divide
from .int_keys import group_starts as _group_starts
from .int_keys import jaccard_counts as _jaccard
from .int_keys import ranges as _ranges
from .positions import positions_of

__all__ = ["EDGE_TOKENS", "lexical_metrics", "sentence_starts"]

#: Tokens on each side of a boundary for ``lexical_boundary_clarity``.
EDGE_TOKENS: Final = 12
#: Characters of documents hashed together (a larger document is a block of its own).
BLOCK_CHARS: Final = 1 << 20
#: Odd multiplier of the polynomial hash (any odd number works: the ids are checked).
_BASE: int = 0x9E3779B97F4A7C15
_INVERSE: int = pow(_BASE, -1, 1 << 64)
#: Capital sigma: its lowercase depends on the letters around it.
_SIGMA: Final = 0x3A3
#: Integer keys below this are 32-bit (half the memory traffic, faster sorts).
_KEYS_32: int = 2**31

_IntArray = npt.NDArray[np.int64]
_Key = TypeVar("_Key", bound=np.integer[Any])
#: Integer keys, 32 or 64-bit (see ``_KEYS_32``).
_Keys = npt.NDArray[np.signedinteger[Any]]
_U64 = npt.NDArray[np.uint64]


def _expand(starts: _IntArray, lengths: _IntArray) -> tuple[_IntArray, _IntArray]:
    """``(owner, index)`` of every element of the ranges ``[start, start + length)``."""
    owner = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    index = np.arange(owner.shape[0], dtype=np.int64) - np.repeat(
        _group_starts(lengths) - starts, lengths)
    return owner, index


def _unique_sorted(keys: npt.NDArray[_Key]) -> npt.NDArray[_Key]:
    """The distinct values of ``keys``, sorted (``np.sort`` and a comparison:
    several times faster than ``np.unique`` on large integer arrays here)."""
    keys = np.sort(keys)
    if keys.shape[0] < 2:
        return keys
    keep = np.empty(keys.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def _code_tables(codes: npt.NDArray[np.uint32]) -> tuple[npt.NDArray[np.uint32],
                                                          npt.NDArray[np.bool_],
                                                          npt.NDArray[np.bool_]]:
    """Per code point present: its one-code-point lowercase; whether it needs
    ``str.lower`` on the whole range instead (capital sigma, or a longer
    lowercase); and whether it is whitespace (``str.isspace``)."""
    size = int(codes.max(initial=0)) + 1
    present = np.zeros(size, dtype=bool)
    present[codes] = True
    points = np.flatnonzero(present).tolist()
    lower = np.zeros(size, dtype=np.uint32)
    special = np.zeros(size, dtype=bool)
    space = np.zeros(size, dtype=bool)
    for point in points:
        char = chr(point)
        mapped = char.lower()
        if len(mapped) == 1 and point != _SIGMA:
            lower[point] = ord(mapped)
        else:
            special[point] = True
        space[point] = char.isspace()
    return lower, special, space


def sentence_starts(codes: npt.NDArray[np.uint32], space: npt.NDArray[np.bool_]) -> _IntArray:
    """The offsets (ascending, in ``1 .. len(codes)``) where a new sentence of a text starts.

    A sentence ends after ``.``, ``!`` or ``?`` followed by whitespace (the
    regular expression ``[.!?](?=\\s)``, Unicode whitespace: ``space`` tells it
    per code point) and at every newline.  Only the few candidate offsets are
    looked at after one comparison pass per mark.
    """
    newline = np.flatnonzero(codes == 0x0A) + 1
    head = codes[:-1]
    stop = np.flatnonzero((head == 0x2E) | (head == 0x21) | (head == 0x3F))
    stop = stop[space[codes[stop + 1]]] + 1
    starts: _IntArray = np.union1d(newline, stop).astype(np.int64)
    return starts


def _sentence_ids(codes: npt.NDArray[np.uint32], space: npt.NDArray[np.bool_],
                  token_starts: _IntArray) -> _IntArray:
    """For each token, the number of sentence starts at or before it."""
    found: _IntArray = np.searchsorted(sentence_starts(codes, space), token_starts,
                                       side="right").astype(np.int64)
    return found


def _powers(count: int, base: int) -> _U64:
    out = np.empty(max(count, 1), dtype=np.uint64)
    out[0] = 1
    out[1:] = base
    return np.cumprod(out, dtype=np.uint64)  # wraps modulo 2**64


class _HashPowers:
    """The powers of the hash's base and of its inverse, grown as longer ones are
    needed: made for one evaluation and shared by its documents and blocks."""

    def __init__(self) -> None:
        self._tables = (_powers(1, _BASE), _powers(1, _INVERSE))

    def upto(self, count: int) -> tuple[_U64, _U64]:
        """Both tables with at least ``count`` powers."""
        if self._tables[0].shape[0] < count:
            size = max(count, 2 * self._tables[0].shape[0])
            self._tables = (_powers(size, _BASE), _powers(size, _INVERSE))
        return self._tables


def _block_ids(text: str, codes: npt.NDArray[np.uint32], lower: npt.NDArray[np.uint32],
               special: npt.NDArray[np.bool_], starts: _IntArray, ends: _IntArray,
               powers: _HashPowers) -> tuple[_IntArray, int]:
    """Ids of the lowercase strings ``text[starts[i]:ends[i]].lower()`` (equal
    strings, equal ids, numbered from 0), and the number of ids."""
    low, starts, ends = _lowercase(text, lower[codes], np.flatnonzero(special[codes]),
                                   starts, ends)
    return _range_ids(low, starts, ends, powers)


def _lowercase(text: str, low: npt.NDArray[np.uint32], special_at: _IntArray,
               starts: _IntArray, ends: _IntArray
               ) -> tuple[npt.NDArray[np.uint32], _IntArray, _IntArray]:
    """Lowercase code points and the ranges in them of ``text[starts[i]:ends[i]].lower()``.

    ``low`` are the code points of ``text`` through the one-code-point
    lowercase table, ``special_at`` the offsets (ascending) of those that need
    ``str.lower``: a range holding one is lowercased by ``str.lower`` and
    appended after the text, its range moved there.
    """
    starts, ends = starts.copy(), ends.copy()
    odd = np.zeros(0, dtype=np.int64)
    if starts.shape[0] and special_at.shape[0]:
        odd = np.flatnonzero(np.searchsorted(special_at, ends)
                             > np.searchsorted(special_at, starts))
    if odd.shape[0]:  # lowercased by str.lower, appended after the text
        pieces = [text[a:b].lower() for a, b in zip(starts[odd].tolist(), ends[odd].tolist())]
        tail = np.frombuffer("".join(pieces).encode("utf-32-le", "surrogatepass"), dtype="<u4")
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        starts[odd] = low.shape[0] + _group_starts(lengths)
        ends[odd] = starts[odd] + lengths
        low = np.concatenate([low, tail])
    return low, starts, ends


def _range_ids(low: npt.NDArray[np.uint32], starts: _IntArray, ends: _IntArray,
               powers: _HashPowers) -> tuple[_IntArray, int]:
    """Ids of the code point strings ``low[starts[i]:ends[i]]``: equal strings, equal
    ids, numbered from 0; and the number of ids.  Hashed, then checked exactly."""
    count = starts.shape[0]
    if count == 0:
        return np.zeros(0, dtype=np.int64), 0
    power, inverse = powers.upto(low.shape[0] + 1)
    values = low.astype(np.uint64)
    values *= power[:values.shape[0]]
    prefix = np.zeros(values.shape[0] + 1, dtype=np.uint64)
    np.cumsum(values, out=prefix[1:])
    hashes = (prefix[ends] - prefix[starts]) * inverse[starts]
    # The id of a range is the rank of its hash among the distinct hashes (from
    # one argsort: a binary search per range is several times slower); one
    # range of each id is the one every other range of the id is checked against.
    order = np.argsort(hashes)
    ordered = hashes[order]
    new = np.empty(count, dtype=np.int64)
    new[0] = 0
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    ids = np.empty(count, dtype=np.int64)
    ids[order] = np.cumsum(new)
    first = np.empty(int(new.sum()) + 1, dtype=np.int64)
    first[ids] = np.arange(count, dtype=np.int64)
    first_of = first[ids]
    lengths = ends - starts
    same = bool((lengths == lengths[first_of]).all())
    if same:  # code point by code point, against the range it shares an id with
        check = np.flatnonzero(first_of != np.arange(count))
        size = lengths[check]
        index = _ranges(starts[check], size)
        shift = np.repeat(starts[first_of[check]] - starts[check], size)
        same = bool((low[index] == low[index + shift]).all())
    if not same:  # a hash collision: exact ids from the strings themselves
        words = _strings(starts, ends, low)
        table: dict[str, int] = {}
        ids = np.fromiter((table.setdefault(word, len(table)) for word in words),
                          dtype=np.int64, count=count)
        return ids, len(table)
    return ids, int(first.shape[0])


@dataclass(frozen=True)
class _DocumentWords:
    """What the lexical metrics read of one document, whatever its chunks.

    Kept with the document (:meth:`~pytest_rag.dataset.caches.ObjectCache.cached`),
    so that a sweep of chunkings over one corpus hashes every token once.

    Attributes
    ----------
    low:
        The text's code points through the one-code-point lowercase table.
    special:
        Offsets (sorted) of the code points ``str.lower`` must do (capital
        sigma, a lowercase longer than one code point).
    word:
        Each token's word id, local to the document (numbered from 0).
    sentence_rank:
        Each token's sentence part number: equal for two tokens of one
        sentence, increasing along the document.
    vocabulary, vocabulary_starts:
        The lowercase code points of each local word, one after the other,
        and where each starts (one more entry: the end).
    """

    low: npt.NDArray[np.uint32]
    special: _IntArray
    word: _IntArray
    sentence_rank: _IntArray
    vocabulary: npt.NDArray[np.uint32]
    vocabulary_starts: _IntArray


def _vocabulary(low: npt.NDArray[np.uint32], starts: _IntArray, ends: _IntArray, ids: _IntArray,
                count: int) -> tuple[npt.NDArray[np.uint32], _IntArray]:
    """The code points of each of the ``count`` words (its first range ``low[starts:ends]``
    among those of its id), one after the other, and where each starts (one more
    entry: the end)."""
    first = np.empty(count, dtype=np.int64)
    first[ids[::-1]] = np.arange(ids.shape[0] - 1, -1, -1, dtype=np.int64)
    lengths = ends[first] - starts[first]
    vocabulary_starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(lengths, out=vocabulary_starts[1:])
    return low[_ranges(starts[first], lengths)], vocabulary_starts


def _document_words(document: Document, powers: _HashPowers) -> _DocumentWords:
    """The :class:`_DocumentWords` of a document (tokens, ids, sentences, in one pass)."""
    text, table = document.text, document.tokens
    codes = code_points(text)
    lower, special, space = _code_tables(codes)
    starts = np.asarray(table.starts, dtype=np.int64)
    ends = np.asarray(table.ends, dtype=np.int64)
    sentence = _sentence_ids(codes, space, starts)
    change = np.zeros(starts.shape[0], dtype=np.int64)
    change[1:] = sentence[1:] != sentence[:-1]
    sentence_rank = np.cumsum(change)
    text_low = lower[codes]
    special_at = np.flatnonzero(special[codes])
    low, range_starts, range_ends = _lowercase(text, text_low, special_at, starts, ends)
    word, count = _range_ids(low, range_starts, range_ends, powers)
    vocabulary, vocabulary_starts = _vocabulary(low, range_starts, range_ends, word, count)
    found = _DocumentWords(text_low, special_at, word,
                           sentence_rank, vocabulary, vocabulary_starts)
    for array in vars(found).values():
        array.setflags(write=False)
    return found


@dataclass(frozen=True)
class _BlockWords:
    """What the lexical metrics read of a block of documents (texts laid end to
    end), whatever its chunks: kept with the corpus (:meth:`Dataset.corpus_cached`).

    Attributes
    ----------
    char_base, token_base:
        Where each document's text and tokens start in the block.
    token_start, token_end, sentence_rank:
        Every token of the block: its characters (block offsets) and its
        sentence part number.
    low, special:
        The block's code points through the one-code-point lowercase table,
        and the offsets of those ``str.lower`` must do.
    word:
        Every token's word id in the block.
    previous:
        Every token's previous token of the same word in the block (-1: none).
    vocabulary, vocabulary_starts:
        The lowercase code points of each word of the block, one after the
        other, and where each starts (one more entry: the end).
    """

    char_base: _IntArray
    token_base: _IntArray
    token_start: _IntArray
    token_end: _IntArray
    sentence_rank: _IntArray
    low: npt.NDArray[np.uint32]
    special: _IntArray
    word: _IntArray
    previous: _IntArray
    vocabulary: npt.NDArray[np.uint32]
    vocabulary_starts: _IntArray


def _previous_of(word: _IntArray) -> _IntArray:
    """For each position, the previous position holding the same value (-1: none)
    (``word`` holds ids from 0: one sort of ``word * size + position`` keys)."""
    size = word.shape[0]
    if size == 0 or (int(word.max()) + 1) * size >= 2**63:
        order = np.argsort(word, kind="stable")
        grouped = word[order]
    else:
        keys = np.sort(word * size + np.arange(size, dtype=np.int64))
        order, grouped = keys % size, keys // size
    previous = np.full(size, -1, dtype=np.int64)
    same = grouped[1:] == grouped[:-1]
    previous[order[1:][same]] = order[:-1][same]
    return previous


def _block_words(documents: Sequence[Document], block: Sequence[int],
                 powers: _HashPowers) -> _BlockWords:
    """The :class:`_BlockWords` of the documents ``block``: each document's own word
    ids (:func:`_document_words`, kept with the document) joined into the block's
    by hashing only the documents' distinct words."""
    found = [documents[doc].cached("lexical_words", lambda document: _document_words(
        document, powers)) for doc in block]
    tables = [documents[doc].tokens for doc in block]
    empty = np.zeros(0, dtype=np.int64)
    char_base = _group_starts(np.fromiter((item.low.shape[0] for item in found),
                                          dtype=np.int64, count=len(found)))
    token_base = _group_starts(np.fromiter(map(len, tables), dtype=np.int64, count=len(tables)))
    token_start = np.concatenate([table.starts + base for table, base in
                                  zip(tables, char_base.tolist())]) if tables else empty
    token_end = np.concatenate([table.ends + base for table, base in
                                zip(tables, char_base.tolist())]) if tables else empty
    sizes = np.fromiter((item.vocabulary_starts.shape[0] - 1 for item in found), dtype=np.int64,
                        count=len(found))
    code_base = _group_starts(np.fromiter((item.vocabulary.shape[0] for item in found),
                                          dtype=np.int64, count=len(found))).tolist()
    codes = (np.concatenate([item.vocabulary for item in found]) if found
             else np.zeros(0, dtype=np.uint32))
    starts = np.concatenate([item.vocabulary_starts[:-1] + base
                             for item, base in zip(found, code_base)]) if found else empty
    ends = np.concatenate([item.vocabulary_starts[1:] + base
                           for item, base in zip(found, code_base)]) if found else empty
    ids, count = _range_ids(codes, starts, ends, powers)
    word = np.concatenate([ids[base:base + size][item.word] for item, base, size in
                           zip(found, _group_starts(sizes).tolist(), sizes.tolist())]
                          ) if found else empty
    vocabulary, vocabulary_starts = _vocabulary(codes, starts, ends, ids, count)
    result = _BlockWords(
        char_base, token_base, token_start, token_end,
        np.concatenate([item.sentence_rank for item in found]) if found else empty,
        np.concatenate([item.low for item in found]) if found else np.zeros(0, dtype=np.uint32),
        np.concatenate([item.special + base for item, base in
                        zip(found, char_base.tolist())]) if found else empty,
        word, _previous_of(word), vocabulary, vocabulary_starts)
    for array in vars(result).values():
        array.setflags(write=False)
    return result


def _cut_words(words: _BlockWords, documents: Sequence[Document], block: Sequence[int],
               cut_lo: _IntArray, cut_hi: _IntArray, powers: _HashPowers
               ) -> tuple[_IntArray, _IntArray, int]:
    """Word ids of the block's tokens and of the cut parts ``[cut_lo, cut_hi)`` (block
    offsets), and the number of distinct words among both.

    Only the block's distinct words and the cut parts are hashed here, so the
    work is that of the vocabulary and the chunks, not of the corpus again.
    """
    count = words.vocabulary_starts.shape[0] - 1
    if cut_lo.shape[0] == 0:  # no chunk edge cuts a token: the block's own ids
        return words.word, np.zeros(0, dtype=np.int64), count
    pieces: list[npt.NDArray[np.uint32]] = [words.vocabulary]
    at = words.vocabulary.shape[0]
    # The cut parts: their lowercase code points from the block's table, or
    # from str.lower where one holds a special code point.
    cut_len = cut_hi - cut_lo
    odd = np.searchsorted(words.special, cut_lo) < np.searchsorted(words.special, cut_hi)
    cut_start = np.zeros(cut_lo.shape[0], dtype=np.int64)
    plain = np.flatnonzero(~odd)
    if plain.shape[0]:
        pieces.append(words.low[_ranges(cut_lo[plain], cut_len[plain])])
        cut_start[plain] = at + _group_starts(cut_len[plain])
        at += int(cut_len[plain].sum())
    lengths = cut_len.copy()
    odd_rows = np.flatnonzero(odd)
    if odd_rows.shape[0]:
        owner = np.searchsorted(words.char_base, cut_lo[odd_rows], side="right") - 1
        texts = []
        for doc, a, b in zip(owner.tolist(), cut_lo[odd_rows].tolist(),
                             cut_hi[odd_rows].tolist()):
            base = int(words.char_base[doc])
            texts.append(documents[block[doc]].text[a - base:b - base].lower())
        odd_len = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        pieces.append(np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"),
                                    dtype="<u4"))
        cut_start[odd_rows] = at + _group_starts(odd_len)
        lengths[odd_rows] = odd_len
        at += int(odd_len.sum())
    starts = np.concatenate([words.vocabulary_starts[:-1], cut_start])
    ends = np.concatenate([words.vocabulary_starts[1:], cut_start + lengths])
    ids, distinct = _range_ids(np.concatenate(pieces), starts, ends, powers)
    return ids[:count][words.word], ids[count:], distinct


def _strings(starts: _IntArray, ends: _IntArray, low: npt.NDArray[np.uint32]) -> list[str]:
    """The lowercase strings of the ranges, read back from the lowercase code points."""
    data = low.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
    return [data[a:b] for a, b in zip(starts.tolist(), ends.tolist())]


def _blocks(docs: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    blocks: list[list[int]] = []
    used = BLOCK_CHARS
    for doc, size in zip(docs, sizes):
        if used + size > BLOCK_CHARS or not blocks:
            blocks.append([])
            used = 0
        blocks[-1].append(doc)
        used += size
    return blocks


def _pair_counts(left_keys: _Keys, right_keys: _Keys) -> _Keys:
    """Keys present in both lists (each list without repeats): the sorted shared keys.

    Each list is usually sorted already (chunks in document order), and a
    stable sort (timsort for 64-bit keys) then merges the two runs in linear time.
    """
    both = np.concatenate([left_keys, right_keys])
    both.sort(kind="stable")
    shared: _Keys = both[1:][both[1:] == both[:-1]]
    return shared


def lexical_metrics(dataset: Dataset, scope: _IntArray, pairs: tuple[_IntArray, _IntArray]
                    ) -> dict[str, float | None] | None:
    """``lexical_cohesion``, ``lexical_boundary_clarity`` and ``lexical_chunk_stickiness``.

    ``scope`` are the documents that have a chunk, ``pairs`` the ``(left, right)``
    chunk rows of the neighbour pairs (two chunks of one document).  Every set
    compared belongs to one document, so each block of documents is done on
    its own: memory and sort sizes stay those of one block, and time grows
    linearly with the corpus.  ``None`` when a block's integer keys would not
    fit an int64 (the caller then uses Python sets).
    """
    positions = positions_of(dataset)
    documents = dataset.documents
    _, starts, ends = chunk_spans(dataset.chunks)
    n = len(starts)
    chunk_start = np.fromiter(starts, dtype=np.int64, count=n)
    chunk_end = np.fromiter(ends, dtype=np.int64, count=n)
    lo, hi, doc_of = positions.chunk_lo, positions.chunk_hi, positions.chunk_doc
    scope_list = scope.tolist()
    blocks = _blocks(scope_list, [len(documents[doc].text) for doc in scope_list])
    # The chunks and the pairs of each block, found with one sort each.
    block_of_doc = np.full(len(documents), -1, dtype=np.int64)
    for number, block in enumerate(blocks):
        block_of_doc[block] = number
    chunk_order = np.argsort(block_of_doc[doc_of], kind="stable")
    chunk_edges = np.searchsorted(block_of_doc[doc_of][chunk_order], np.arange(len(blocks) + 1))
    left, right = pairs
    pair_order = np.argsort(block_of_doc[doc_of[left]], kind="stable")
    pair_edges = np.searchsorted(block_of_doc[doc_of[left]][pair_order],
                                 np.arange(len(blocks) + 1))
    local = np.full(n, -1, dtype=np.int64)
    token_base = np.zeros(len(documents), dtype=np.int64)  # global token -> block token
    char_of_doc = np.zeros(len(documents), dtype=np.int64)  # start of a text in its block
    powers = _HashPowers()  # shared by every document and block hashed below
    cohesion: list[npt.NDArray[np.float64]] = []
    clarity: list[npt.NDArray[np.float64]] = []
    stickiness: list[npt.NDArray[np.float64]] = []
    for number, block in enumerate(blocks):
        words = dataset.corpus_cached(f"lexical_words:{block}",
                                       lambda _: _block_words(documents, block, powers))
        token_base[block] = words.token_base - positions.base[block]
        char_base = words.char_base
        token_start, token_end = words.token_start, words.token_end

        rows = chunk_order[chunk_edges[number]:chunk_edges[number + 1]]
        local[rows] = np.arange(rows.shape[0])
        b_lo = lo[rows] + token_base[doc_of[rows]]  # block token intervals
        b_hi = hi[rows] + token_base[doc_of[rows]]
        char_of_doc[block] = char_base
        b_start = chunk_start[rows] + char_of_doc[doc_of[rows]]  # in the block's text
        b_end = chunk_end[rows] + char_of_doc[doc_of[rows]]
        sizes = b_hi - b_lo
        nonempty = np.flatnonzero(sizes > 0)
        # The cut parts of the edge tokens of the chunks.
        heads = nonempty[token_start[b_lo[nonempty]] < b_start[nonempty]]
        tails = nonempty[token_end[b_hi[nonempty] - 1] > b_end[nonempty]]
        cut_lo = np.concatenate([b_start[heads],
                                 np.maximum(token_start[b_hi[tails] - 1], b_start[tails])])
        cut_hi = np.concatenate([np.minimum(token_end[b_lo[heads]], b_end[heads]),
                                 b_end[tails]])
        word, cut_word, vocabulary = _cut_words(words, documents, block, cut_lo, cut_hi, powers)
        head_word, tail_word = cut_word[:heads.shape[0]], cut_word[heads.shape[0]:]
        sentence_rank = words.sentence_rank

        pair_rows = pair_order[pair_edges[number]:pair_edges[number + 1]]
        values = _block_metrics(word, words.previous, sentence_rank, b_lo, b_hi, heads,
                                head_word, tails, tail_word, local[left[pair_rows]],
                                local[right[pair_rows]], vocabulary)
        if values is None:
            return None  # keys would not fit an int64: the caller's set-based path
        cohesion.append(values[0])
        clarity.append(values[1])
        stickiness.append(values[2])
    return {"lexical_cohesion": _mean_of(cohesion), "lexical_boundary_clarity": _mean_of(clarity),
            "lexical_chunk_stickiness": _mean_of(stickiness)}


def _mean_of(parts: list[npt.NDArray[np.float64]]) -> float | None:
    return mean_or_none(np.concatenate(parts)) if parts else None


def _block_metrics(word: _IntArray, previous: _IntArray, sentence_rank: _IntArray,
                   lo: _IntArray, hi: _IntArray, heads: _IntArray, head_word: _IntArray,
                   tails: _IntArray, tail_word: _IntArray, left: _IntArray, right: _IntArray,
                   vocabulary: int
                   ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                              npt.NDArray[np.float64]] | None:
    """Cohesion of each chunk with two sentence parts or more, clarity and stickiness of
    each pair, for the chunks ``[lo, hi)`` (tokens of one block) and the pairs
    ``(left, right)`` of those chunks."""
    n = lo.shape[0]
    sizes = hi - lo
    # Every token of every chunk, its first and last replaced by their cut parts.
    owner, position = _expand(lo, sizes)
    occurrence = word[position]
    offsets = _group_starts(sizes)
    occurrence[offsets[heads]] = head_word
    occurrence[offsets[tails] + sizes[tails] - 1] = tail_word
    nonempty = sizes > 0
    piece = sentence_rank[position]
    piece -= np.repeat(sentence_rank[lo[nonempty]], sizes[nonempty])  # the part in the chunk
    pieces = np.zeros(n, dtype=np.int64)
    pieces[nonempty] = sentence_rank[hi[nonempty] - 1] - sentence_rank[lo[nonempty]] + 1
    most = max(int(pieces.max(initial=0)), 1)
    # Powers of two where the keys fit, so that splitting a key is a shift and
    # a mask instead of an integer division; the order of the keys, and so
    # every result, is the same with any span and parts large enough.
    span, parts = 1 << (max(vocabulary, 1) - 1).bit_length(), 1 << (most - 1).bit_length()
    if n * span * parts >= 2**62:
        span, parts = max(vocabulary, 1), most
        if n * span * parts >= 2**62:
            return None
    # 32-bit keys where they fit (a block is about a million characters, so
    # they mostly do): half the memory traffic, and sorts several times faster.
    key_type = np.int32 if n * span * parts < _KEYS_32 else np.int64
    token_key: _Keys = owner.astype(key_type)  # (chunk, word) of every token
    token_key *= span
    token_key += occurrence
    # One sort gives the distinct (chunk, word, part) keys, grouped by (chunk, word).
    keys = token_key * parts
    keys += piece
    keys = _unique_sorted(keys)
    chunk_word = _divide(keys, parts)
    first_of_word = np.empty(keys.shape[0], dtype=bool)
    if keys.shape[0]:
        first_of_word[0] = True
        np.not_equal(chunk_word[1:], chunk_word[:-1], out=first_of_word[1:])
    chunk_keys = chunk_word[first_of_word]  # distinct (chunk, word), sorted

    # Stickiness and clarity: the distinct words of each side of each neighbour pair.
    count_pairs = left.shape[0]
    as_left: _Keys = np.full(n, -1, dtype=key_type)
    as_right: _Keys = np.full(n, -1, dtype=key_type)
    as_left[left] = np.arange(count_pairs)
    as_right[right] = np.arange(count_pairs)
    key_chunk = _divide(chunk_keys, span)
    chunk_words = np.bincount(key_chunk, minlength=n).astype(np.float64)
    cut = np.zeros(n, dtype=bool)
    cut[heads] = True
    cut[tails] = True
    fast, fast_inter = _adjacent_overlap(previous, lo, hi, cut, left, right)
    inter = np.zeros(count_pairs, dtype=np.float64)
    inter[fast] = fast_inter
    if not fast.all():  # the other pairs: their keys, merged
        slow_left, slow_right = as_left.copy(), as_right.copy()
        slow_left[left[fast]] = -1
        slow_right[right[fast]] = -1
        inter += _shared_words(chunk_keys, key_chunk, slow_left, slow_right, span, count_pairs)
    stickiness = _jaccard(inter, chunk_words[left], chunk_words[right])
    edge = np.minimum(EDGE_TOKENS, sizes)
    tail_keys = _unique_sorted(token_key[_ranges(offsets + sizes - edge, edge)])
    head_keys = _unique_sorted(token_key[_ranges(offsets, edge)])
    tail_words = np.bincount(_divide(tail_keys, span), minlength=n).astype(np.float64)
    head_words = np.bincount(_divide(head_keys, span), minlength=n).astype(np.float64)
    clarity = 1.0 - _neighbour_jaccard(tail_keys, head_keys, as_left, as_right, span,
                                       count_pairs, tail_words[left], head_words[right])
    cohesion = _cohesion(keys, chunk_word, first_of_word, pieces, span, parts)
    if cohesion is None:
        return None
    return cohesion, clarity, stickiness


def _adjacent_overlap(previous: _IntArray, lo: _IntArray, hi: _IntArray,
                      cut: npt.NDArray[np.bool_], left: _IntArray, right: _IntArray
                      ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """The shared words of the neighbour pairs that follow each other, without sorting.

    A pair is done here when neither chunk has a cut edge token and the right
    chunk starts inside the left one or where it ends, and ends at or after it
    (``lo_L <= lo_R <= hi_L <= hi_R``, both holding a token): the usual
    sliding or back-to-back windows.  Then a word of the right chunk is also
    in the left one exactly when its first token ``t`` in the right chunk
    (``previous[t] < lo_R``) lies in the left one (``t < hi_L``) or its
    previous token does (``previous[t] >= lo_L``: the latest token of the word
    before ``lo_R``, and ``lo_R <= hi_L``).  Returns which pairs were done and
    their counts.
    """
    l_lo, l_hi, r_lo, r_hi = lo[left], hi[left], lo[right], hi[right]
    fast = (~cut[left] & ~cut[right] & (l_lo < l_hi) & (r_lo < r_hi)
            & (l_lo <= r_lo) & (r_lo <= l_hi) & (l_hi <= r_hi))
    rows = np.flatnonzero(fast)
    sizes = r_hi[rows] - r_lo[rows]
    token = _ranges(r_lo[rows], sizes)  # every token of the right chunks
    before = previous[token]
    shared = before < np.repeat(r_lo[rows], sizes)  # first in the right chunk...
    shared &= (token < np.repeat(l_hi[rows], sizes)) | (before >= np.repeat(l_lo[rows], sizes))
    owner = np.repeat(np.arange(rows.shape[0], dtype=np.int64), sizes)
    inter = np.bincount(owner[shared], minlength=rows.shape[0]).astype(np.float64)
    return fast, inter


def _shared_words(keys: _Keys, key_chunk: _Keys, as_left: _Keys, as_right: _Keys, span: int,
                  count: int) -> npt.NDArray[np.float64]:
    """Words shared by the two chunks of each pair (``as_left``/``as_right``: the pair of
    a chunk, -1 for none), from their sorted ``chunk * span + word`` keys."""
    word = keys - key_chunk * span
    left_pair, right_pair = as_left[key_chunk], as_right[key_chunk]
    shared = _pair_counts(left_pair[left_pair >= 0] * span + word[left_pair >= 0],
                          right_pair[right_pair >= 0] * span + word[right_pair >= 0])
    return np.bincount(_divide(shared, span), minlength=count).astype(np.float64)


def _neighbour_jaccard(left_keys: _Keys, right_keys: _Keys, as_left: _Keys, as_right: _Keys,
                       span: int, count: int, left_size: npt.NDArray[np.float64],
                       right_size: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Jaccard of the left chunk's ``left_keys`` set and the right chunk's ``right_keys`` set."""
    left_chunk, right_chunk = _divide(left_keys, span), _divide(right_keys, span)
    left_pair, right_pair = as_left[left_chunk], as_right[right_chunk]
    a, b = left_pair >= 0, right_pair >= 0
    shared = _pair_counts(left_pair[a] * span + (left_keys - left_chunk * span)[a],
                          right_pair[b] * span + (right_keys - right_chunk * span)[b])
    inter = np.bincount(_divide(shared, span), minlength=count).astype(np.float64)
    return _jaccard(inter, left_size, right_size)
