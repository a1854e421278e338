"""EmbeddingEvaluator: hand-computed cases, the tie rule, and the blocked scan.

Expected values are written as arithmetic on the cosines of the vectors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import budget

from pytest_rag.dataset.model import Dataset, Params, Query, RunEntry, Vectors
from pytest_rag.errors import DatasetError
from pytest_rag.kernels import vector_scan
from pytest_rag.kernels.vector_scan import (
    NonFiniteVector,
    count_distinct,
    scan_vectors,
    tie_order,
)
from pytest_rag.stages.embedding import EmbeddingEvaluator

R2 = math.sqrt(2.0)
DOC = {"d": "alpha beta gamma delta"}
CHUNKS = [
    {"id": "a", "doc_id": "d", "start": 0, "end": 5},
    {"id": "b", "doc_id": "d", "start": 6, "end": 10},
    {"id": "c", "doc_id": "d", "start": 11, "end": 16},
]


def unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1)
    out = np.zeros_like(matrix)
    np.divide(matrix, norms[:, None], out=out, where=norms[:, None] > 0)
    return out


def naive_top(vectors: np.ndarray, queries: np.ndarray, k: int,
              order: np.ndarray | None = None) -> np.ndarray:
    """Full-matrix reference: sort by (-round(cos, 9), tie position)."""
    count = vectors.shape[0]
    place = np.arange(count) if order is None else np.argsort(order)
    scores = np.round(unit(queries) @ unit(vectors).T, 9)
    return np.array([np.lexsort((place, -row))[:min(k, count)] for row in scores],
                    dtype=np.int64).reshape(len(queries), min(k, count))


# -- hand-computed values ------------------------------------------------------

def test_hand_computed_case() -> None:
    report = EmbeddingEvaluator(k=2).evaluate(
        chunk_vectors={"c1": [1.0, 0.0], "c2": [0.0, 1.0], "c3": [1.0, 1.0]},
        indexed_ids=["c1", "c2", "stale"],
        query_vector={"q1": [1.0, 0.0], "q2": [0.0, 2.0]},
        relevant={"q1": {"c1": 1, "c3": 2}, "q2": {"c3": 0}},
        ann_ids={"q1": ["c2", "c2", "c1", "c3"]},
    )
    # cos(q1, .) = 1, 0, 1/sqrt2; cos(q2, .) = 0, 1, 1/sqrt2.
    assert report.zero_norm_rate == 0.0
    assert report.duplicate_vector_rate == 0.0
    assert report.mean_vector_norm == pytest.approx((1 + 1 + R2) / 3, abs=1e-12)
    assert report.index_coverage == pytest.approx(2 / 3)
    # E_q1 = {c1, c3} holds both gold ids; q2 has no gold of grade > 0.
    assert report.query_topk_recall == 1.0
    assert report.per_query["query_topk_recall"]["q2"] is None
    # First 2 distinct ann ids of q1: c2, c1; only c1 is in E_q1.
    assert report.ann_recall_at_k == pytest.approx(1 / 2)
    assert report.per_query["ann_recall_at_k"]["q2"] is None
    pos_q1 = (1 + 1 / R2) / 2
    neg_q1 = 0.0                       # c2 only
    neg_q2 = (0 + 1 + 1 / R2) / 3      # grade-0 c3 is a negative
    assert report.positive_similarity == pytest.approx(pos_q1, abs=1e-12)
    assert report.negative_similarity == pytest.approx((neg_q1 + neg_q2) / 2, abs=1e-12)
    assert report.similarity_margin == pytest.approx(pos_q1 - neg_q1, abs=1e-12)
    assert report.per_query["positive_similarity"]["q2"] is None
    assert report.per_query["negative_similarity"]["q2"] == pytest.approx(neg_q2, abs=1e-12)


def test_grade_zero_is_not_gold() -> None:
    report = EmbeddingEvaluator(k=1).evaluate(
        chunk_vectors={"a": [1.0, 0.0], "b": [0.0, 1.0]},
        query_vector={"q": [1.0, 0.0]}, relevant={"q": {"a": 0, "b": 1}})
    assert report.query_topk_recall == 0.0          # E = {a}, gold = {b}
    assert report.positive_similarity == 0.0        # cos(q, b)
    assert report.negative_similarity == 1.0        # cos(q, a)
    assert report.similarity_margin == -1.0


def test_gold_without_vector_is_a_miss_and_not_a_positive() -> None:
    report = EmbeddingEvaluator(k=2).evaluate(
        chunk_vectors={"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [-1.0, 0.0]},
        query_vector={"q": [1.0, 1.0]}, relevant={"q": ["a", "ghost"]})
    assert report.query_topk_recall == 1 / 2
    assert report.positive_similarity == pytest.approx(1 / R2)
    assert report.negative_similarity == pytest.approx((1 / R2 - 1 / R2) / 2, abs=1e-15)


def test_only_ghost_gold_gives_no_positive() -> None:
    report = EmbeddingEvaluator(k=1).evaluate(
        chunk_vectors={"a": [1.0, 0.0]}, query_vector={"q": [1.0, 0.0]},
        relevant={"q": ["ghost"]})
    assert report.query_topk_recall == 0.0
    assert report.values["positive_similarity"] is None
    assert report.negative_similarity == 1.0
    assert report.values["similarity_margin"] is None


def test_every_vector_gold_leaves_no_negative() -> None:
    report = EmbeddingEvaluator(k=5).evaluate(
        chunk_vectors={"a": [1.0, 0.0], "b": [1.0, 1.0]}, query_vector={"q": [1.0, 0.0]},
        relevant={"q": ["a", "b"]}, ann_ids={"q": ["b", "x", "a"]})
    # K = 5 > |V| = 2: |E| = 2.
    assert report.query_topk_recall == 1.0
    assert report.ann_recall_at_k == 1.0
    assert report.positive_similarity == pytest.approx((1 + 1 / R2) / 2)
    assert report.values["negative_similarity"] is None
    assert report.values["similarity_margin"] is None


# -- ties ----------------------------------------------------------------------

def test_ties_go_to_chunk_order_then_non_chunk_ids() -> None:
    # Vectors given in another order than the chunks; "x" is not a chunk.
    vectors = {"x": [1.0, 0.0], "c": [1.0, 0.0], "a": [2.0, 0.0], "b": [0.0, 1.0]}
    common = {"documents": DOC, "chunks": CHUNKS, "chunk_vectors": vectors,
              "query_vector": {"q1": [1.0, 0.0], "q2": [1.0, 0.0]}}
    # x, c and a all have cos 1: chunk order puts a, then c, then x.
    report = EmbeddingEvaluator(k=2).evaluate(relevant={"q1": ["x"], "q2": ["c"]},
                                              ann_ids={"q1": ["x", "a"]}, **common)
    assert report.per_query["query_topk_recall"] == {"q1": 0.0, "q2": 1.0}
    assert report.per_query["ann_recall_at_k"]["q1"] == 1 / 2
    report = EmbeddingEvaluator(k=3).evaluate(relevant={"q1": ["x"], "q2": ["b"]}, **common)
    assert report.per_query["query_topk_recall"] == {"q1": 1.0, "q2": 0.0}


def test_non_chunk_ids_keep_their_given_order() -> None:
    report = EmbeddingEvaluator(k=1).evaluate(
        documents=DOC, chunks=CHUNKS[:1],
        chunk_vectors={"y": [1.0, 0.0], "x": [1.0, 0.0], "a": [0.0, 1.0]},
        query_vector={"q1": [1.0, 0.0], "q2": [1.0, 0.0]}, relevant={"q1": ["x"], "q2": ["y"]})
    assert report.per_query["query_topk_recall"] == {"q1": 0.0, "q2": 1.0}


def test_rounding_to_nine_decimals_makes_a_tie() -> None:
    # cos(q, a) = 1 / sqrt(1 + 1e-12) is 5e-13 below cos(q, b) = 1: equal after
    # rounding to 9 decimals, so a wins by chunk order (unrounded, b would win).
    eps = 1e-6
    report = EmbeddingEvaluator(k=1).evaluate(
        documents=DOC, chunks=CHUNKS[:2],
        chunk_vectors={"a": [1.0, eps], "b": [1.0, 0.0]}, query_vector={"q": [1.0, 0.0]},
        relevant={"q": ["a"]})
    assert 0.0 < 1.0 - 1.0 / math.sqrt(1 + eps * eps) < 1e-9
    assert report.query_topk_recall == 1.0  # a comes first in chunk order
    report = EmbeddingEvaluator(k=1).evaluate(
        documents=DOC, chunks=CHUNKS[:2],
        chunk_vectors={"b": [1.0, 0.0], "a": [1.0, eps]}, query_vector={"q": [1.0, 0.0]},
        relevant={"q": ["a"]})
    assert report.query_topk_recall == 1.0  # the mapping order does not matter


def test_tie_order_helper() -> None:
    index = {"a": 0, "b": 1, "c": 2}
    assert tie_order(["a", "b", "c"], index) is None
    assert tie_order(["a", "c", "zz"], index) is None
    order = tie_order(["x", "c", "a", "b"], index)
    assert order is not None and order.tolist() == [2, 3, 1, 0]
    assert tie_order(["y", "x"], {}) is None


# -- zero vectors and duplicates --------------------------------------------------

def test_zero_vectors() -> None:
    report = EmbeddingEvaluator(k=1).evaluate(
        chunk_vectors={"a": [0.0, 0.0], "b": [0.0, 0.0], "c": [3.0, 4.0]},
        query_vector={"up": [0.0, 1.0], "left": [-1.0, 0.0], "zero": [0.0, 0.0]},
        relevant={"up": ["c"], "left": ["b"], "zero": ["c"]})
    assert report.zero_norm_rate == 2 / 3
    assert report.duplicate_vector_rate == 1 / 3      # a == b
    assert report.mean_vector_norm == 5 / 3
    # up: cos = 0, 0, 4/5 -> E = {c}; left: 0, 0, -3/5 -> tie a, b -> E = {a};
    # zero query: every cos is 0 -> E = {a}.
    assert report.per_query["query_topk_recall"] == {"up": 1.0, "left": 0.0, "zero": 0.0}
    assert report.per_query["positive_similarity"] == pytest.approx(
        {"up": 4 / 5, "left": 0.0, "zero": 0.0})
    assert report.per_query["negative_similarity"] == pytest.approx(
        {"up": 0.0, "left": (0 - 3 / 5) / 2, "zero": 0.0})


def test_duplicates_compare_by_value() -> None:
    report = EmbeddingEvaluator().evaluate(chunk_vectors={
        "a": [0.0, -0.0], "b": [-0.0, 0.0], "c": [1.0, 2.0], "d": [1.0, 2.0],
        "e": [1.0, 2.0000000001], "f": [2.0, 1.0]})
    # Distinct: zero, (1, 2), (1, 2.0000000001), (2, 1).
    assert report.duplicate_vector_rate == (6 - 4) / 6
    assert report.zero_norm_rate == 2 / 6


def test_hash_collisions_are_resolved_by_value() -> None:
    matrix = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [0.0, -0.0], [-0.0, 0.0],
                       [2.0, 2.0], [-1.0, -1.0]])
    for block_rows in (1, 2, 3, 100):
        same_hash = np.zeros(matrix.shape[0], dtype=np.uint64)
        assert count_distinct(matrix, same_hash, block_rows) == 4
        # Equal rows share a hash (the precondition); unequal rows collide.
        two_groups = np.array([0, 0, 0, 1, 1, 1, 0], dtype=np.uint64)
        assert count_distinct(matrix, two_groups, block_rows) == 4


def test_tiny_and_huge_vectors_keep_their_direction() -> None:
    report = EmbeddingEvaluator(k=1).evaluate(
        chunk_vectors={"tiny": [3e-200, 4e-200], "huge": [3e200, -4e200]},
        query_vector={"q": [3.0, 4.0]}, relevant={"q": ["tiny"]})
    assert report.zero_norm_rate == 0.0
    assert report.mean_vector_norm == pytest.approx((5e-200 + 5e200) / 2)
    assert report.positive_similarity == pytest.approx(1.0)
    assert report.negative_similarity == pytest.approx((9 - 16) / 25)
    assert report.query_topk_recall == 1.0


def test_non_finite_vector_is_an_error() -> None:
    with pytest.raises(NonFiniteVector) as info:
        scan_vectors(np.array([[1.0, 0.0], [np.nan, 1.0]]), np.zeros((0, 2)), 1)
    assert info.value.row == 1
    with pytest.raises(DatasetError, match="finite"):
        EmbeddingEvaluator().evaluate(chunk_vectors={"a": [1.0, math.inf]})
    # A Dataset built by hand is not validated again: the stage still refuses.
    vectors = Vectors(("a", "b"), np.array([[1.0, 0.0], [0.0, np.nan]]))
    with pytest.raises(DatasetError, match=r"vectors\.chunks\['b'\]: must hold finite"):
        EmbeddingEvaluator().evaluate(Dataset(vectors=vectors))
    good = Vectors(("a",), np.array([[1.0, 0.0]]))
    dataset = Dataset(vectors=good, queries=(Query("q"),),
                      run={"q": RunEntry(query_vector=np.array([np.inf, 0.0]))})
    with pytest.raises(DatasetError, match=r"run\['q'\]\.query_vector"):
        EmbeddingEvaluator().evaluate(dataset)


# -- inputs and None -------------------------------------------------------------

def test_array_aligned_with_chunks_equals_mapping() -> None:
    rows = np.array([[1.0, 2.0], [2.0, -1.0], [0.5, 0.5]])
    common = {"documents": DOC, "chunks": CHUNKS, "query_vector": {"q": [1.0, 1.0]},
              "relevant": {"q": {"c": 2}}, "ann_ids": {"q": ["a", "c"]},
              "indexed_ids": ["a", "b"]}
    by_array = EmbeddingEvaluator(k=2).evaluate(chunk_vectors=rows, **common)
    by_mapping = EmbeddingEvaluator(k=2).evaluate(
        chunk_vectors={"a": rows[0].tolist(), "b": rows[1].tolist(), "c": rows[2].tolist()},
        **common)
    by_float32 = EmbeddingEvaluator(k=2).evaluate(chunk_vectors=rows.astype(np.float32), **common)
    assert by_array.values == by_mapping.values
    assert by_float32.values == pytest.approx(by_array.values)
    # cos: a = 3 / sqrt10, b = 1 / sqrt10, c = 1: E = {c, a}.
    assert by_array.query_topk_recall == 1.0
    assert by_array.ann_recall_at_k == 1.0
    assert by_array.index_coverage == 2 / 3
    assert by_array.similarity_margin == pytest.approx(1 - (3 + 1) / math.sqrt(10) / 2)


def test_k_comes_from_the_constructor_then_params_then_default() -> None:
    vectors = Vectors(("a", "b"), np.array([[1.0, 0.0], [0.0, 1.0]]))
    queries = (Query("q", relevant={"b": 1}),)
    run = {"q": RunEntry(query_vector=np.array([1.0, 0.0]))}
    with_k1 = Dataset(params=Params(k=1), vectors=vectors, queries=queries, run=run)
    assert EmbeddingEvaluator().evaluate(with_k1).query_topk_recall == 0.0
    assert EmbeddingEvaluator(k=2).evaluate(with_k1).query_topk_recall == 1.0
    assert EmbeddingEvaluator().evaluate(Dataset(vectors=vectors)).settings == {"k": 5}
    with pytest.raises(ValueError, match=r"^k: must be >= 1, got 0$"):
        EmbeddingEvaluator(k=0)


def test_without_vectors_everything_is_none() -> None:
    report = EmbeddingEvaluator().evaluate(query_vector={"q": [1.0]}, relevant={"q": ["a"]})
    assert all(value is None for value in report.values.values())
    assert "chunk_vectors" in report.missing["zero_norm_rate"]


def test_query_without_vector_has_no_value() -> None:
    report = EmbeddingEvaluator(k=1).evaluate(
        chunk_vectors={"a": [1.0, 0.0], "b": [0.0, 1.0]},
        query_vector={"q1": [0.0, 1.0]}, relevant={"q1": ["b"], "q2": ["a"]},
        ann_ids={"q2": ["a"]})
    assert report.per_query["query_topk_recall"] == {"q1": 1.0, "q2": None}
    assert report.per_query["ann_recall_at_k"] == {"q1": None, "q2": None}
    assert report.per_query["negative_similarity"] == {"q1": 0.0, "q2": None}
    assert report.values["index_coverage"] is None


# -- the blocked scan ----------------------------------------------------------------

@pytest.mark.parametrize("block_rows", [1, 2, 7, 64, 1000])
@pytest.mark.parametrize("block_queries", [1, 3, 1024])
@pytest.mark.parametrize("quantized", [False, True])
def test_blocked_scan_equals_full_matrix(block_rows: int, block_queries: int,
                                         quantized: bool) -> None:
    rng = np.random.default_rng(block_rows * 31 + block_queries + quantized)
    if quantized:  # many exact ties, duplicates and zero rows
        vectors = rng.integers(-1, 2, size=(300, 4)).astype(np.float64)
        queries = rng.integers(-1, 2, size=(20, 4)).astype(np.float64)
    else:
        vectors = rng.standard_normal((300, 16))
        queries = rng.standard_normal((20, 16))
    order = rng.permutation(300)
    for k in (1, 5, 40):
        for tie in (None, order):
            scan = scan_vectors(vectors, unit(queries), k, tie, block_rows=block_rows,
                                block_queries=block_queries)
            np.testing.assert_array_equal(scan.top, naive_top(vectors, queries, k, tie))
            np.testing.assert_allclose(scan.norms, np.linalg.norm(vectors, axis=1))
            np.testing.assert_allclose(scan.unit_sum, unit(vectors).sum(axis=0), atol=1e-12)
            assert scan.distinct == np.unique(vectors + 0.0, axis=0).shape[0]


def test_evaluator_does_not_depend_on_block_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.integers(-2, 3, size=(120, 5)).astype(np.float64)
    queries = rng.integers(-2, 3, size=(30, 5)).astype(np.float64)
    ids = [f"v{i}" for i in range(120)]
    inputs = {
        "chunk_vectors": {ids[i]: vectors[i].tolist() for i in rng.permutation(120)},
        "query_vector": {f"q{j}": queries[j].tolist() for j in range(30)},
        "relevant": {f"q{j}": {ids[i]: int(g) for i, g in zip(rng.choice(120, 3, replace=False),
                                                              rng.integers(0, 3, 3))}
                     for j in range(30)},
        "ann_ids": {f"q{j}": [ids[i] for i in rng.choice(120, 8)] for j in range(30)},
    }
    expected = EmbeddingEvaluator(k=6).evaluate(**inputs)
    monkeypatch.setattr(vector_scan, "_BLOCK_ROWS", 7)
    monkeypatch.setattr(vector_scan, "_BLOCK_QUERIES", 4)
    monkeypatch.setattr(vector_scan, "_PAIRS_PER_SLICE", 3)
    blocked = EmbeddingEvaluator(k=6).evaluate(**inputs)
    assert blocked.values == pytest.approx(expected.values, abs=1e-12)
    assert blocked.values["query_topk_recall"] == expected.values["query_topk_recall"]
    assert blocked.values["ann_recall_at_k"] == expected.values["ann_recall_at_k"]


@settings(max_examples=budget(60), deadline=None)
@given(
    vectors=hnp.arrays(np.float64, st.tuples(st.integers(1, 40), st.just(3)),
                       elements=st.sampled_from([-1.0, -0.5, 0.0, -0.0, 0.5, 1.0, 2.0])),
    queries=hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.just(3)),
                       elements=st.sampled_from([-1.0, 0.0, 1.0, 3.0])),
    k=st.integers(1, 12),
    block_rows=st.integers(1, 9),
)
def test_scan_matches_full_matrix_property(vectors: np.ndarray, queries: np.ndarray, k: int,
                                           block_rows: int) -> None:
    scan = scan_vectors(vectors, unit(queries), k, block_rows=block_rows, block_queries=2)
    np.testing.assert_array_equal(scan.top, naive_top(vectors, queries, k))
    assert scan.distinct == np.unique(vectors + 0.0, axis=0).shape[0]


def test_scale_smoke() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((20_000, 64)).astype(np.float32)
    vectors[::1000] = 0.0
    vectors[1::1000] = vectors[2::1000]
    queries = rng.standard_normal((50, 64))
    scan = scan_vectors(vectors, unit(queries), 10)
    np.testing.assert_array_equal(scan.top, naive_top(vectors.astype(np.float64), queries, 10))
    ids = [f"c{i}" for i in range(20_000)]
    report = EmbeddingEvaluator(k=10).evaluate(
        chunk_vectors=dict(zip(ids, vectors.astype(np.float64))),
        query_vector={f"q{j}": queries[j] for j in range(50)},
        relevant={f"q{j}": [ids[int(i)] for i in scan.top[j, :5]] for j in range(50)},
        ann_ids={f"q{j}": [ids[int(i)] for i in scan.top[j, ::2]] for j in range(50)},
        indexed_ids=ids[:19_000])
    assert report.zero_norm_rate == 20 / 20_000
    assert report.duplicate_vector_rate == (19 + 20) / 20_000   # zero rows + copied rows
    assert report.index_coverage == 19_000 / 20_000
    assert report.query_topk_recall == 1.0
    assert report.ann_recall_at_k == 5 / 10
    assert report.values["similarity_margin"] is not None and report.similarity_margin > 0
