"""The integer-array lexical chunking metrics against the Python-set definitions."""

from __future__ import annotations

import dataclasses
import random
import re
from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from pytest_rag.dataset.model import Dataset, Document
from pytest_rag.dataset.parser import parse_dataset
from pytest_rag.kernels import cohesion, int_keys, lexical, lexical_sets
from pytest_rag.kernels.lexical import words as word_ids
from pytest_rag.kernels.positions import positions_of
from pytest_rag.stages import chunking

#: Words with capital sigma (context-dependent lowercase), a code point whose
#: lowercase is two code points, anagrams, cased and uncased letters.
WORDS = ["ΟΔΟΣ", "ΣΑΣ", "Σ", "İstanbul", "i̇stanbul", "ab", "ba", "AB", "Straße", "STRASSE",
         "x_1", "naïve", "NAÏVE", "dž", "ǅ", "Ǆ", "ﬁ", "word", "Word", "wor", "d", "𝒜b"]
GAPS = [" ", ". ", "! ", "?\n", "\n", ", ", " ... ", ".", "'"]


def _text(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(WORDS) + rng.choice(GAPS) for _ in range(words))


def _dataset(seed: int) -> object:
    rng = random.Random(seed)
    documents = {f"d{i}": _text(rng, rng.randint(0, 40)) for i in range(rng.randint(1, 5))}
    chunks = []
    for doc_id, text in documents.items():
        # The first document always has a chunk: every seed compares something.
        for c in range(rng.randint(1 if doc_id == "d0" else 0, 6)):
            start = rng.randint(0, len(text))
            end = rng.randint(start, min(len(text), start + 60))
            chunks.append({"id": f"{doc_id}#{c}", "doc_id": doc_id, "start": start, "end": end})
    rng.shuffle(chunks)
    return parse_dataset({"documents": [{"id": d, "text": t} for d, t in documents.items()],
                          "chunks": chunks})


def _both(dataset: object) -> tuple[dict[str, float | None] | None, dict[str, float | None]]:
    positions = positions_of(dataset)
    scope = np.unique(positions.chunk_doc)
    pairs = chunking._neighbour_pairs(positions.chunk_doc)
    found = lexical.lexical_metrics(dataset, scope, pairs)  # type: ignore[arg-type]
    assert found is None or not found.unmeasured
    sets = lexical_sets.lexical_metrics_sets(dataset, scope, pairs)  # type: ignore[arg-type]
    return None if found is None else found.values, sets.values


def _close(new: dict[str, float | None] | None, old: dict[str, float | None]) -> None:
    assert new is not None
    assert new.keys() == old.keys()
    for key, value in old.items():
        if value is None:
            assert new[key] is None, key
        else:
            assert new[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


@pytest.mark.parametrize("seed", range(60))
def test_integer_ids_match_python_sets(seed: int) -> None:
    _close(*_both(_dataset(seed)))


@pytest.mark.parametrize("seed", range(10))
def test_small_blocks_match_python_sets(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(lexical, "BLOCK_CHARS", 16)  # a block per document or two
    _close(*_both(_dataset(seed)))


@pytest.mark.parametrize("seed", range(12))
def test_blocks_done_in_threads_give_the_values_of_one_thread(monkeypatch: pytest.MonkeyPatch,
                                                              seed: int) -> None:
    """Two threads doing the blocks (a machine of two cores or more) and one doing
    them all give the same values bit for bit, in the same order."""
    monkeypatch.setattr(lexical, "BLOCK_CHARS", 16)  # a block per document or two
    found = {}
    for cores in (1, 2):
        monkeypatch.setattr(lexical, "_cores", lambda cores=cores: cores)
        dataset = _dataset(seed)  # a fresh one: no cached word ids
        positions = positions_of(dataset)
        result = lexical.lexical_metrics(
            dataset, np.unique(positions.chunk_doc),  # type: ignore[arg-type]
            chunking._neighbour_pairs(positions.chunk_doc))
        assert result is not None
        found[cores] = result
    assert found[1] == found[2]
    assert repr(found[1].values) == repr(found[2].values)  # NaN and -0.0 alike


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_the_blocks_stop_at_the_first_that_needs_the_sets(monkeypatch: pytest.MonkeyPatch,
                                                          cores: int) -> None:
    """A block whose keys do not fit (the set-based path takes over) stops the others:
    at most one block per thread was under way, and what a block under way raises
    then is not looked at; the blocks before it are all done, in order."""
    import threading

    monkeypatch.setattr(lexical, "_cores", lambda: cores)
    started: list[int] = []
    lock = threading.Lock()

    def work(number: int) -> int:
        with lock:
            started.append(number)
        if number == 3:
            raise RuntimeError("a block after the stop")
        return number

    assert lexical._in_threads(work, 8, lambda found: found == 2) == [0, 1, 2]
    assert sorted(started) == list(range(len(started)))
    assert len(started) <= 3 + min(cores, lexical.THREADS) - 1
    assert lexical._in_threads(work, 3, lambda found: False) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="after the stop"):
        lexical._in_threads(work, 5, lambda found: False)


def test_hash_powers_shared_by_threads_give_each_caller_its_length() -> None:
    """Threads growing one table set: every caller gets tables of at least the length
    it asked for, with the right values, whichever thread's tables are kept."""
    from concurrent.futures import ThreadPoolExecutor

    powers = word_ids.HashPowers()
    counts = [random.Random(i).randint(1, 5000) for i in range(64)]

    def ask(count: int) -> bool:
        power, inverse = powers.upto(count)
        return (power.shape[0] >= count and inverse.shape[0] >= count
                and bool((power[:count] == word_ids._powers(count, word_ids._BASE)).all()))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(ask, counts))


@pytest.mark.parametrize("seed", range(10))
def test_hash_collisions_fall_back_to_strings(monkeypatch: pytest.MonkeyPatch,
                                              seed: int) -> None:
    # Base 1: a range's hash is the sum of its code points, so the anagrams
    # "ab" and "ba" collide; the check must catch it and give exact ids.
    monkeypatch.setattr(word_ids, "_BASE", 1)
    monkeypatch.setattr(word_ids, "_INVERSE", 1)
    _close(*_both(_dataset(seed)))


def test_anagrams_are_different_words_even_when_their_hashes_collide(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word_ids, "_BASE", 1)
    monkeypatch.setattr(word_ids, "_INVERSE", 1)
    text = "ab ba. ab"
    codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
    lower, special, _ = word_ids._code_tables(codes)
    starts, ends = np.array([0, 3, 7]), np.array([2, 5, 9])
    ids, count = word_ids._block_ids(text, codes, lower, special, starts, ends,
                                    word_ids.HashPowers())
    assert count == 2
    assert ids[0] == ids[2] != ids[1]


def test_case_and_special_lowercase() -> None:
    text = "ΟΔΟΣ οδος İx i̇x ΣΑΣ σας"
    tokens = [(0, 4), (5, 9), (10, 12), (13, 16), (17, 20), (21, 24)]
    codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
    lower, special, _ = word_ids._code_tables(codes)
    starts = np.array([a for a, _ in tokens])
    ends = np.array([b for _, b in tokens])
    ids, _ = word_ids._block_ids(text, codes, lower, special, starts, ends,
                                word_ids.HashPowers())
    words = [text[a:b].lower() for a, b in tokens]
    for i in range(len(tokens)):
        for j in range(len(tokens)):
            assert (ids[i] == ids[j]) == (words[i] == words[j]), (words[i], words[j])


@pytest.mark.parametrize("seed", range(10))
def test_chunkings_of_one_corpus_hash_each_document_once(monkeypatch: pytest.MonkeyPatch,
                                                         seed: int) -> None:
    """A sweep: several chunkings of the same document objects reuse each document's
    word ids (computed once), and every chunking still matches the Python sets."""
    calls: list[str] = []
    original = word_ids._document_words

    def counted(document: object, powers: object) -> object:
        calls.append(document.id)  # type: ignore[attr-defined]
        return original(document, powers)  # type: ignore[arg-type]

    monkeypatch.setattr(word_ids, "_document_words", counted)
    corpus = _dataset(seed)
    for variant in range(4):
        chunks = _dataset(seed * 100 + variant + 1).chunks  # type: ignore[attr-defined]
        ids = {doc.id for doc in corpus.documents}  # type: ignore[attr-defined]
        chunks = tuple(c for c in chunks if c.doc_id in ids
                       and c.end <= len(corpus.document_by_id[c.doc_id].text))  # type: ignore[attr-defined]
        if not chunks:
            continue
        _close(*_both(dataclasses.replace(corpus, chunks=chunks)))  # type: ignore[type-var]
    assert len(calls) == len(set(calls))


def test_a_sweep_through_the_evaluator_joins_each_block_once(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """``evaluate(dataset, chunks=...)`` shares the corpus cache of ``dataset``: the block
    word ids are built by the first chunking only, and the values stay those of a fresh
    dataset; a dataset with other documents does not share it."""
    calls: list[object] = []
    original = word_ids.block_words

    def counted(documents: object, block: object, powers: object) -> object:
        calls.append(block)
        return original(documents, block, powers)  # type: ignore[arg-type]

    monkeypatch.setattr(lexical, "block_words", counted)
    text = "Alpha beta. Gamma ALPHA delta!\nBeta beta gamma. Στάσις ΟΔΟΣ alpha."
    corpus = Dataset(documents=(Document("d", text),))
    chunkings = [[{"id": f"c{i}", "doc_id": "d", "start": a, "end": b}
                  for i, (a, b) in enumerate(pairwise(cuts))]
                 for cuts in ([0, 13, 40, len(text)], [0, 3, 29, 50, len(text)], [0, len(text)])]
    for chunks in chunkings:
        shared = chunking.ChunkingEvaluator().evaluate(corpus, chunks=chunks).values
        fresh = chunking.ChunkingEvaluator().evaluate(
            Dataset(documents=(Document("d", text),)), chunks=chunks).values
        assert shared == fresh
    assert len(calls) == 1 + len(chunkings)  # once shared, once per fresh dataset
    with pytest.raises(ValueError, match="same documents"):
        Dataset(documents=(Document("d", text),)).share_corpus_cache(corpus)


@pytest.mark.parametrize("divisor", [1, 2, 3, 8, 12, 1 << 20, (1 << 20) + 1])
def test_key_splitting_by_shift_or_division(divisor: int) -> None:
    values = np.array([0, 1, 7, 8, 9, 1 << 40, (1 << 61) + 5], dtype=np.int64)
    assert (int_keys.divide(values, divisor) == values // divisor).all()
    assert (int_keys.remainder(values, divisor) == values % divisor).all()


@pytest.mark.parametrize("seed", range(30))
def test_32_and_64_bit_keys_give_the_same_values(monkeypatch: pytest.MonkeyPatch,
                                                 seed: int) -> None:
    """Keys are 32-bit where they fit; forced to 64 bits, every value is the same."""
    narrow, _ = _both(_dataset(seed))
    monkeypatch.setattr(lexical, "_KEYS_32", 0)
    monkeypatch.setattr(cohesion, "_KEYS_32", 0)
    wide, old = _both(_dataset(seed))
    assert narrow == wide
    _close(wide, old)


def _windows(seed: int, cut_some: bool) -> object:
    """Token-aligned sliding windows (back to back, overlapping, with gaps, nested),
    some of them cutting an edge token when ``cut_some``."""
    rng = random.Random(seed)
    texts = {f"d{i}": _text(rng, rng.randint(5, 60)) for i in range(rng.randint(1, 4))}
    chunks = []
    for doc_id, text in texts.items():
        tokens = list(re.finditer(r"\w+", text))
        at, c = 0, 0
        while at < len(tokens) and c < 12:
            size = rng.randint(1, 8)
            last = min(at + size, len(tokens)) - 1
            start, end = tokens[at].start(), tokens[last].end()
            if cut_some and rng.random() < 0.3 and end - start > 2:
                start, end = (start + 1, end) if rng.random() < 0.5 else (start, end - 1)
            chunks.append({"id": f"{doc_id}#{c}", "doc_id": doc_id, "start": start, "end": end})
            at += rng.choice([size, max(size - 2, 1), size + 1, 0 if size > 1 else 1])
            c += 1
    return parse_dataset({"documents": [{"id": d, "text": t} for d, t in texts.items()],
                          "chunks": chunks})


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("cut_some", [False, True])
def test_neighbour_windows_without_a_sort_match_the_key_merge(monkeypatch: pytest.MonkeyPatch,
                                                              seed: int, cut_some: bool) -> None:
    """Pairs of windows that follow each other get their shared words from each token's
    previous occurrence, without the key merge: the values are those of the merge for
    every pair (bit for bit) and of the Python sets."""
    done: list[int] = []
    original = lexical._adjacent_overlap

    def counted(*args: Any) -> Any:
        fast, inter = original(*args)
        done.append(int(fast.sum()))
        return fast, inter

    monkeypatch.setattr(lexical, "_adjacent_overlap", counted)
    with_fast, old = _both(_windows(seed, cut_some))
    _close(with_fast, old)
    assert sum(done) > 0 or cut_some  # some pairs follow each other
    monkeypatch.setattr(lexical, "_adjacent_overlap", lambda previous, lo, hi, cut, left, right: (
        np.zeros(left.shape[0], dtype=bool), np.zeros(0, dtype=np.float64)))
    merged_only, _ = _both(_windows(seed, cut_some))
    assert with_fast == merged_only


@pytest.mark.parametrize("size", [0, 1, 2, 50, 1000])
def test_previous_occurrence_of_every_position(size: int) -> None:
    word = np.random.default_rng(size).integers(0, 9, size)
    last: dict[int, int] = {}
    expected = []
    for position, value in enumerate(word.tolist()):
        expected.append(last.get(value, -1))
        last[value] = position
    assert word_ids._previous_of(word).tolist() == expected


@pytest.mark.parametrize("seed", range(5))
def test_sentence_starts_are_those_of_the_regular_expression(seed: int) -> None:
    """After ``[.!?]`` followed by Unicode whitespace, and after every newline."""
    rng = random.Random(seed)
    pieces = ["a", " ", ".", "!", "?", "\n", "\u00a0", "\u2028", "b.", "x\n", "\u3002"]
    for _ in range(600):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
        expected = sorted({m.end() for m in re.finditer(r"[.!?](?=\s)|\n", text)})
        assert lexical.sentence_starts(codes, word_ids._code_tables(codes)[2]).tolist() == expected


def test_hash_powers_grow_and_keep_their_values() -> None:
    powers = word_ids.HashPowers()
    short = powers.upto(5)[0].copy()
    long_power, long_inverse = powers.upto(1000)
    assert long_power.shape[0] >= 1000 and (long_power[:5] == short).all()
    assert (long_power[:1000] == word_ids._powers(1000, word_ids._BASE)).all()
    assert (long_power * long_inverse == 1).all()  # inverses modulo 2**64
    assert powers.upto(10)[0] is long_power  # no shrinking, no recomputing


def _whole_documents(seed: int) -> object:
    """Documents of many sentences, some left whole as one chunk (many sentence pairs)."""
    rng = random.Random(seed)
    documents = {f"d{i}": _text(rng, rng.randint(0, 120)) for i in range(rng.randint(1, 4))}
    chunks = []
    for doc_id, text in documents.items():
        inner = (rng.randint(0, len(text)) for _ in range(rng.randint(0, 3)))
        cuts = sorted({0, len(text), *inner})
        chunks += [{"id": f"{doc_id}#{i}", "doc_id": doc_id, "start": a, "end": b}
                   for i, (a, b) in enumerate(pairwise(cuts))]
    return parse_dataset({"documents": [{"id": d, "text": t} for d, t in documents.items()],
                          "chunks": chunks})


@pytest.mark.parametrize("budget", [1, 5, 40])
@pytest.mark.parametrize("seed", range(25))
def test_cohesion_is_the_same_whatever_the_pair_budget(monkeypatch: pytest.MonkeyPatch,
                                                        seed: int, budget: int) -> None:
    """Runs of chunks and blocks of a chunk's parts sum each chunk's pairs in the
    same order as one pass: the values are identical, bit for bit."""
    for make in (_dataset, _whole_documents):
        whole, _ = _both(make(seed))
        monkeypatch.setattr(cohesion, "PAIR_BUDGET", budget)
        split, _ = _both(make(seed))
        monkeypatch.setattr(cohesion, "PAIR_BUDGET", 1 << 20)
        assert split == whole


def test_one_long_chunk_makes_at_most_the_budget_of_pair_keys_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 sentences sharing one word, in one chunk: 4.5 million sentence pairs.
    No array of pairs is ever longer than the budget (a single pass made all of
    them at once: 400 MB per sentence pair key array at 11,000 sentences)."""
    text = " ".join(f"the w{i} x{i % 7}." for i in range(3_000))
    dataset = parse_dataset({"documents": [{"id": "d", "text": text}],
                             "chunks": [{"id": "c", "doc_id": "d", "start": 0, "end": len(text)}]})
    longest: list[int] = []
    real_ranges = cohesion.ranges

    def counted(starts: Any, lengths: Any) -> Any:
        found = real_ranges(starts, lengths)
        longest.append(found.shape[0])
        return found

    monkeypatch.setattr(cohesion, "PAIR_BUDGET", 1 << 16)
    monkeypatch.setattr(cohesion, "ranges", counted)
    values = chunking.ChunkingEvaluator().evaluate(dataset).values
    assert max(longest) <= 1 << 16
    assert sum(longest) >= 3_000 * 2_999 // 2  # every pair was made, a budget at a time
    monkeypatch.setattr(cohesion, "PAIR_BUDGET", 1 << 30)  # one pass
    assert chunking.ChunkingEvaluator().evaluate(dataset).values == values
