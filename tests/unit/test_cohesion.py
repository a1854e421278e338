"""``lexical_cohesion`` of large chunks: identical sentences grouped, and the limit."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rag.dataset.parser import parse_dataset
from pytest_rag.kernels import cohesion
from pytest_rag.kernels.lexical_sets import jaccard, mean_pair_jaccard
from pytest_rag.stages import chunking
from pytest_rag.stages.chunking import ChunkingEvaluator

#: Parts of one chunk: non-empty sets of a few words, so that many are alike.
PARTS = st.lists(st.frozensets(st.integers(0, 4), min_size=1, max_size=4), min_size=2,
                 max_size=30)


def _keys(parts: list[frozenset[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The part of each distinct ``(word, part)``, sorted by word then part, and
    where each word's run starts: what the kernel reads of one chunk."""
    pairs = sorted((word, part) for part, words in enumerate(parts) for word in words)
    word = np.array([w for w, _ in pairs], dtype=np.int64)
    part = np.array([p for _, p in pairs], dtype=np.int64)
    first_of_word = np.ones(word.shape[0], dtype=bool)
    first_of_word[1:] = word[1:] != word[:-1]
    return part, first_of_word


def _pairwise_sum(parts: list[frozenset[int]]) -> float:
    """The Jaccard values of all pairs, added in ``(a, b)`` order."""
    total = 0.0
    for a, left in enumerate(parts):
        for right in parts[a + 1:]:
            total += jaccard(set(left), set(right))
    return total


@settings(max_examples=300, deadline=None)
@given(PARTS)
def test_grouped_identical_parts_give_the_pairwise_sum(parts: list[frozenset[int]]) -> None:
    part, first_of_word = _keys(parts)
    plain = cohesion._blocked_sum(part, first_of_word, len(parts))
    grouped, needed = cohesion._large_sum(part, first_of_word, len(parts))
    assert plain == _pairwise_sum(parts)  # same pairs, same order of additions
    assert grouped == pytest.approx(plain, rel=1e-12, abs=1e-12)
    distinct = list(dict.fromkeys(parts))
    assert needed == sum(len(a & b) for i, a in enumerate(distinct) for b in distinct[i + 1:])


@settings(max_examples=200, deadline=None)
@given(PARTS, st.booleans())
def test_identical_parts_are_grouped_only_when_alike(parts: list[frozenset[int]],
                                                     collide: bool) -> None:
    """Each part is grouped with the first part of the same set; when the mixed sums
    of different sets collide, the word-by-word check keeps them apart."""
    part, first_of_word = _keys(parts)
    word = np.cumsum(first_of_word) - 1
    with pytest.MonkeyPatch.context() as patch:
        if collide:
            patch.setattr(cohesion, "_mixed",
                          lambda values: np.zeros(values.shape[0], dtype=np.uint64))
        same_as = cohesion._identical_parts(part, word, len(parts)).tolist()
        grouped, _ = cohesion._large_sum(part, first_of_word, len(parts))
    for index, first in enumerate(same_as):
        assert parts[first] == parts[index] and first <= index
        if not collide:
            assert first == parts.index(parts[index])
    assert grouped == pytest.approx(_pairwise_sum(parts), rel=1e-12, abs=1e-12)


def _repetitive(seed: int) -> object:
    """Documents of a few short sentences, many repeated, in chunks of every size."""
    rng = random.Random(seed)
    sentences = ["A b.", "a B.", "c.", "b a c.", "Dd e.", "e dd!", "f?"]
    documents = {f"d{i}": " ".join(rng.choice(sentences) for _ in range(rng.randint(1, 60)))
                 for i in range(rng.randint(1, 4))}
    chunks = []
    for doc_id, text in documents.items():
        for c in range(rng.randint(1, 4)):
            start = rng.randint(0, len(text))
            chunks.append({"id": f"{doc_id}#{c}", "doc_id": doc_id, "start": start,
                           "end": rng.randint(start, len(text))})
    return parse_dataset({"documents": [{"id": d, "text": t} for d, t in documents.items()],
                          "chunks": chunks})


@pytest.mark.parametrize("above", [-1, 20])
@pytest.mark.parametrize("seed", range(30))
def test_grouping_every_chunk_keeps_the_values(monkeypatch: pytest.MonkeyPatch,
                                               seed: int, above: int) -> None:
    """Below the size that groups identical sentences the pairwise pass runs; grouped
    at every size (or from 20 counts, between runs of smaller chunks), each chunk's
    value agrees to 1e-12."""
    dataset = _repetitive(seed)
    pairwise = ChunkingEvaluator().evaluate(dataset)["lexical_cohesion"]
    monkeypatch.setattr(cohesion, "_GROUP_ABOVE", above)
    grouped = ChunkingEvaluator().evaluate(_repetitive(seed))["lexical_cohesion"]
    assert (grouped is None) == (pairwise is None)
    if pairwise is not None:
        assert grouped == pytest.approx(pairwise, rel=1e-12, abs=1e-12)


def _one_chunk_each(**texts: str) -> object:
    return parse_dataset({"documents": [{"id": d, "text": t} for d, t in texts.items()],
                          "chunks": [{"id": d, "doc_id": d, "start": 0, "end": len(t)}
                                     for d, t in texts.items()]})


def test_many_identical_sentences_are_measured_at_once() -> None:
    """30,000 sentences of 'a.' (450 million pairs, each sharing 'a'), and 10,000
    of three alternating sentences: exact values, without a pair made."""
    report = ChunkingEvaluator().evaluate(_one_chunk_each(a="a. " * 30_000,
                                                          b="x y. y z. z x. " * 10_000))
    # a: 1.0; b: pairs of one sentence (Jaccard 1) and of two (1/3), 29,999 pairs each.
    alike = 3 * (10_000 * 9_999 // 2)
    expected_b = (alike + (30_000 * 29_999 // 2 - alike) / 3) / (30_000 * 29_999 // 2)
    assert report["lexical_cohesion"] == pytest.approx((1.0 + expected_b) / 2, rel=1e-12)


def test_a_chunk_over_the_limit_is_not_measured_and_named() -> None:
    """25,000 different sentences sharing 'the': 312,487,500 counts, over the limit;
    lexical_cohesion is None (not the mean of the other chunks), the reason names
    the chunk, and the other lexical metrics are measured."""
    big = " ".join(f"the w{i}." for i in range(25_000))
    assert 25_000 * 24_999 // 2 > cohesion.PAIR_WORD_LIMIT
    dataset = _one_chunk_each(small="One two. Two three.", **{"big\x1bone": big})
    report = ChunkingEvaluator().evaluate(dataset)
    assert report["lexical_cohesion"] is None
    assert report.missing["lexical_cohesion"] == (
        "chunk 'big\\x1bone' has 312,487,500 (sentence pair, shared word) counts, over the "
        "limit of 200,000,000 per chunk (identical sentences counted once): not computed")
    assert report["lexical_chunk_stickiness"] is None  # no neighbours, as before
    assert ChunkingEvaluator().evaluate(_one_chunk_each(small="One two. Two three."))[
        "lexical_cohesion"] == pytest.approx(1 / 3)


@settings(max_examples=200, deadline=None)
@given(PARTS, st.booleans())
def test_sets_through_the_kernel_give_the_loop_over_pairs(parts: list[frozenset[int]],
                                                          grouped: bool) -> None:
    """The set path's large chunks: the kernel on one chunk of Python sets."""
    sets = [{f"w{word}" for word in part} for part in parts]
    with pytest.MonkeyPatch.context() as patch:
        if grouped:
            patch.setattr(cohesion, "_GROUP_ABOVE", -1)
        value, _ = cohesion.set_cohesion(sets)
    expected = mean_pair_jaccard(sets)
    if grouped:
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-12)
    else:
        assert value == expected


def test_the_set_path_groups_and_limits_as_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where integer keys would not fit an int64 the stage uses Python sets: a chunk of
    many sentences there is grouped and limited the same way, not looped over."""
    monkeypatch.setattr(chunking, "lexical_metrics", lambda *args: None)
    evaluator = ChunkingEvaluator()
    assert evaluator.evaluate(_one_chunk_each(a="a. " * 30_000))["lexical_cohesion"] == 1.0
    big = " ".join(f"the w{i}." for i in range(25_000))
    report = evaluator.evaluate(_one_chunk_each(small="One two.", big=big, other=big))
    assert report["lexical_cohesion"] is None
    assert report.missing["lexical_cohesion"].startswith(
        "chunk 'big' (and 1 more chunk) has 312,487,500 (sentence pair, shared word) counts")
