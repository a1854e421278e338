"""Word ids of the lexical chunking metrics: every token an integer, checked exact.

Step 1 of :mod:`pytest_rag.kernels.lexical`: each token (and each part of a
token that a chunk edge cuts) is a character range of its document; its
lowercase code points come from a lookup table of the code points present, its
id from a polynomial hash of them, grouped with ``numpy.unique`` and then
checked code point by code point against the first range of its group, so two
different words never share an id (a collision redoes the block with a Python
dictionary).  Capital sigma and code points whose lowercase is longer than one
code point are lowercased by ``str.lower`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ...dataset.model import Document
from ...text.tokens import code_points
from ..int_keys import group_starts as _group_starts
from ..int_keys import ranges as _ranges

__all__ = ["BlockWords", "HashPowers", "block_words", "cut_words", "expand", "sentence_starts",
           "unique_sorted"]

#: Odd multiplier of the polynomial hash (any odd number works: the ids are checked).
_BASE: int = 0x9E3779B97F4A7C15
_INVERSE: int = pow(_BASE, -1, 1 << 64)
#: Capital sigma: its lowercase depends on the letters around it.
_SIGMA: Final = 0x3A3

_IntArray = npt.NDArray[np.int64]
_Key = TypeVar("_Key", bound=np.integer[Any])
_U64 = npt.NDArray[np.uint64]


def expand(starts: _IntArray, lengths: _IntArray) -> tuple[_IntArray, _IntArray]:
    """``(owner, index)`` of every element of the ranges ``[start, start + length)``."""
    owner = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    index = np.arange(owner.shape[0], dtype=np.int64) - np.repeat(
        _group_starts(lengths) - starts, lengths)
    return owner, index


def unique_sorted(keys: npt.NDArray[_Key]) -> npt.NDArray[_Key]:
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
    # Not np.union1d: its hashed unique took seconds on millions of short sentences.
    starts: _IntArray = unique_sorted(np.concatenate((newline, stop))).astype(np.int64)
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


class HashPowers:
    """The powers of the hash's base and of its inverse, grown as longer ones are
    needed: made for one evaluation and shared by its documents and blocks (and by
    the threads doing blocks: each caller gets tables of at least its length)."""

    def __init__(self) -> None:
        self._tables = (_powers(1, _BASE), _powers(1, _INVERSE))

    def upto(self, count: int) -> tuple[_U64, _U64]:
        """Both tables with at least ``count`` powers."""
        tables = self._tables
        if tables[0].shape[0] < count:
            size = max(count, 2 * tables[0].shape[0])
            tables = (_powers(size, _BASE), _powers(size, _INVERSE))
            self._tables = tables  # another thread's may replace it: only ever longer needed
        return tables


def _block_ids(text: str, codes: npt.NDArray[np.uint32], lower: npt.NDArray[np.uint32],
               special: npt.NDArray[np.bool_], starts: _IntArray, ends: _IntArray,
               powers: HashPowers) -> tuple[_IntArray, int]:
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
               powers: HashPowers) -> tuple[_IntArray, int]:
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
        repeats = np.flatnonzero(first_of != np.arange(count))
        size = lengths[repeats]
        index = _ranges(starts[repeats], size)
        shift = np.repeat(starts[first_of[repeats]] - starts[repeats], size)
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


def _document_words(document: Document, powers: HashPowers) -> _DocumentWords:
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
class BlockWords:
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


def block_words(documents: Sequence[Document], block: Sequence[int],
                 powers: HashPowers) -> BlockWords:
    """The :class:`BlockWords` of the documents ``block``: each document's own word
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
    result = BlockWords(
        char_base, token_base, token_start, token_end,
        np.concatenate([item.sentence_rank for item in found]) if found else empty,
        np.concatenate([item.low for item in found]) if found else np.zeros(0, dtype=np.uint32),
        np.concatenate([item.special + base for item, base in
                        zip(found, char_base.tolist())]) if found else empty,
        word, _previous_of(word), vocabulary, vocabulary_starts)
    for array in vars(result).values():
        array.setflags(write=False)
    return result


def cut_words(words: BlockWords, documents: Sequence[Document], block: Sequence[int],
               cut_lo: _IntArray, cut_hi: _IntArray, powers: HashPowers
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

