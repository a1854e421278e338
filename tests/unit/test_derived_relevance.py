"""Relevance grades derived from evidence spans (``relevance_from_evidence``), by hand."""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag import EmbeddingEvaluator, RerankingEvaluator, RetrievalEvaluator
from pytest_rag.dataset.arguments import resolve_inputs
from pytest_rag.dataset.fields import gold_attributes
from pytest_rag.kernels.positions import positions_of
from pytest_rag.kernels.relevance import relevance_from_evidence, touching_pairs

TEXT = "alpha beta gamma. delta epsilon zeta. eta theta iota."
# tokens: alpha 0-5, beta 6-10, gamma 11-16, delta 18-23, epsilon 24-31, zeta 32-36,
#         eta 38-41, theta 42-47, iota 48-52
OTHER = "one two three four"
# tokens: one 0-3, two 4-7, three 8-13, four 14-18
CHUNKS = [{"id": "c0", "doc_id": "d", "start": 0, "end": 17},
          {"id": "c1", "doc_id": "d", "start": 18, "end": 37},
          {"id": "c2", "doc_id": "d", "start": 38, "end": 53},
          {"id": "e0", "doc_id": "e", "start": 0, "end": 8},
          {"id": "e1", "doc_id": "e", "start": 8, "end": 18}]
DOCUMENTS = {"d": TEXT, "e": OTHER}


def span(doc: str, start: int, end: int) -> dict[str, Any]:
    return {"doc_id": doc, "start": start, "end": end}


def derived(evidence: dict[str, list[dict[str, Any]]], chunks: list[dict[str, Any]] | None = None,
            **inputs: Any) -> dict[str, Any]:
    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": CHUNKS if chunks is None
                                 else chunks, "expected_evidence": evidence, **inputs})
    result = relevance_from_evidence(data)
    return {query.id: None if query.relevant is None else dict(query.relevant)
            for query in result.queries}


def test_whole_partial_and_no_overlap() -> None:
    grades = derived({
        "whole": [span("d", 6, 10)],            # "beta": inside c0
        "partial": [span("d", 12, 24)],         # "gamma. delta": c0 and c1, neither whole
        "none": [span("d", 17, 18)],            # ". " between c0 and c1: no token
    })
    assert grades["whole"] == {"c0": 2}
    assert grades["partial"] == {"c0": 1, "c1": 1}
    assert grades["none"] is None  # no span with a token: nothing derived


def test_grade_is_the_maximum_over_spans_and_spans_cross_documents() -> None:
    grades = derived({"q": [span("d", 12, 24),    # touches c0 and c1
                            span("d", 24, 31),    # "epsilon": whole in c1
                            span("e", 4, 13)]})   # "two three": e0 and e1, partly
    assert grades["q"] == {"c0": 1, "c1": 2, "e0": 1, "e1": 1}
    assert list(grades["q"]) == ["c0", "c1", "e0", "e1"]  # chunk order


def test_a_span_cut_inside_a_word_touches_both_chunks() -> None:
    # Chunks split "three" (8..13) at 10: the token belongs to both chunks.
    chunks = [{"id": "a", "doc_id": "e", "start": 0, "end": 10},
              {"id": "b", "doc_id": "e", "start": 10, "end": 18}]
    grades = derived({"q": [span("e", 8, 13)], "r": [span("e", 0, 7)]}, chunks)
    assert grades["q"] == {"a": 2, "b": 2}  # each holds the span's only position
    assert grades["r"] == {"a": 2}


def test_explicit_relevant_is_kept() -> None:
    grades = derived({"q": [span("d", 6, 10)], "r": [span("d", 6, 10)]},
                     relevant={"q": {"c2": 3}})
    assert grades["q"] == {"c2": 3}
    assert grades["r"] == {"c0": 2}


def test_spans_without_tokens_are_ignored() -> None:
    grades = derived({"q": [span("d", 17, 18), span("d", 38, 41)]})  # ". " and "eta"
    assert grades["q"] == {"c2": 2}


def test_no_chunks_derives_nothing() -> None:
    data = resolve_inputs(None, {"documents": DOCUMENTS,
                                 "expected_evidence": {"q": [span("d", 6, 10)]}})
    assert relevance_from_evidence(data) is data


def test_empty_chunks_never_touch() -> None:
    chunks = [{"id": "empty", "doc_id": "d", "start": 6, "end": 6}, *CHUNKS[:1]]
    assert derived({"q": [span("d", 6, 10)]}, chunks)["q"] == {"c0": 2}


def test_spans_touching_no_chunk_leave_the_query_alone() -> None:
    chunks = [CHUNKS[2]]
    assert derived({"q": [span("d", 6, 10)]}, chunks)["q"] is None


def test_positions_are_reused() -> None:
    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": CHUNKS,
                                 "expected_evidence": {"q": [span("d", 6, 10)]}})
    positions = positions_of(data)
    assert positions_of(relevance_from_evidence(data)) is positions


# -- invariance under re-chunking ---------------------------------------------------

def test_rechunking_keeps_grade_two_for_the_chunk_holding_the_span() -> None:
    evidence = {"q": [span("d", 19, 31)]}  # "delta epsilon"
    fine = [{"id": f"w{i}", "doc_id": "d", "start": start, "end": end}
            for i, (start, end) in enumerate([(0, 17), (18, 32), (33, 53)])]
    coarse = [{"id": "all", "doc_id": "d", "start": 0, "end": 53}]
    overlapping = [{"id": "x", "doc_id": "d", "start": 0, "end": 22},
                   {"id": "y", "doc_id": "d", "start": 11, "end": 45}]
    assert derived(evidence, CHUNKS)["q"] == {"c1": 2}
    assert derived(evidence, fine)["q"] == {"w1": 2}
    assert derived(evidence, coarse)["q"] == {"all": 2}
    assert derived(evidence, overlapping)["q"] == {"x": 1, "y": 2}
    # The same gold scores each chunking's own list: the chunk holding the span first.
    for chunks, best in ((CHUNKS, "c1"), (fine, "w1"), (coarse, "all"), (overlapping, "y")):
        report = RetrievalEvaluator(k=1, relevance_from_evidence=True).evaluate(
            documents=DOCUMENTS, chunks=chunks, expected_evidence=evidence,
            retrieved_ids={"q": [best]})
        assert report.ndcg_at_k == 1.0 and report.mrr_at_k == 1.0


# -- through the evaluators ---------------------------------------------------------

GOLD = {"q1": [span("d", 6, 10), span("d", 12, 24)],   # c0: 2, c1: 1
        "q2": [span("e", 4, 13)],                      # e0: 1, e1: 1
        "q3": [span("d", 38, 41)]}                     # c2: 2, but q3 has relevant


def test_retrieval_metrics_with_derived_grades() -> None:
    kwargs: dict[str, Any] = {
        "documents": DOCUMENTS, "chunks": CHUNKS, "expected_evidence": GOLD,
        "relevant": {"q3": ["c0"]},
        "retrieved_ids": {"q1": ["c2", "c1"], "q2": ["e1", "c0"], "q3": ["c0", "c2"]}}
    report = RetrievalEvaluator(k=2, relevance_from_evidence=True).evaluate(**kwargs)
    assert report.settings == {"k": 2, "relevance_from_evidence": True}
    # q1: 1 of {c0, c1}; q2: 1 of {e0, e1}; q3: its own relevant c0 at rank 1.
    assert report.per_query["recall_at_k"] == {"q1": 0.5, "q2": 0.5, "q3": 1.0}
    assert report.recall_at_k == pytest.approx(2 / 3)
    assert report.per_query["mrr_at_k"] == {"q1": 0.5, "q2": 1.0, "q3": 1.0}
    # q1: DCG (2^1 - 1) / log2(3); IDCG (2^2 - 1) / 1 + (2^1 - 1) / log2(3).
    ndcg_q1 = (1 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert report.per_query["ndcg_at_k"]["q1"] == pytest.approx(ndcg_q1)
    # Token metrics do not depend on the setting.
    plain = RetrievalEvaluator(k=2).evaluate(**kwargs)
    assert plain.settings == {"k": 2}
    assert plain.per_query["recall_at_k"] == {"q1": None, "q2": None, "q3": 1.0}
    assert plain.token_recall == report.token_recall


def test_reranking_with_derived_grades() -> None:
    report = RerankingEvaluator(k=2, relevance_from_evidence=True).evaluate(
        documents=DOCUMENTS, chunks=CHUNKS, expected_evidence={"q": GOLD["q1"]},
        retrieved_ids={"q": ["c2", "c1", "c0"]}, reranked_ids={"q": ["c0", "c2", "c1"]})
    # Before: first relevant c1 at rank 2 (MRR 1/2); after: c0 at rank 1.
    assert report.mrr_at_k == 1.0
    assert report.mrr_gain == 0.5
    assert report.first_relevant_rank_change == 2 - 1
    idcg = 3 + 1 / math.log2(3)
    assert report.ndcg_at_k == pytest.approx(3 / idcg)
    assert report.ndcg_gain == pytest.approx(3 / idcg - (1 / math.log2(3)) / idcg)
    assert RerankingEvaluator(k=2).evaluate(
        documents=DOCUMENTS, chunks=CHUNKS, expected_evidence={"q": GOLD["q1"]},
        retrieved_ids={"q": ["c2"]}, reranked_ids={"q": ["c0"]}).values["mrr_gain"] is None


def test_embedding_with_derived_grades() -> None:
    vectors = {"c0": [1.0, 0.0], "c1": [0.0, 1.0], "c2": [-1.0, 0.0],
               "e0": [0.0, -1.0], "e1": [1.0, 1.0]}
    report = EmbeddingEvaluator(k=1, relevance_from_evidence=True).evaluate(
        documents=DOCUMENTS, chunks=CHUNKS, expected_evidence={"q": GOLD["q1"]},
        chunk_vectors=vectors, query_vector={"q": [1.0, 0.0]})
    # Gold {c0, c1}; the exact top 1 is c0: recall 1/2.
    assert report.query_topk_recall == 0.5
    assert report.positive_similarity == pytest.approx((1.0 + 0.0) / 2)
    assert report.negative_similarity == pytest.approx((-1.0 + 0.0 + 1 / math.sqrt(2)) / 3)
    assert report.settings == {"k": 1, "relevance_from_evidence": True}


def test_setting_is_validated_and_none_leaves_it_to_params() -> None:
    assert RetrievalEvaluator(relevance_from_evidence=None).relevance_from_evidence is None
    with pytest.raises(ValueError, match=r"^relevance_from_evidence: expected true or false, "
                                         r"got a number 1$"):
        RetrievalEvaluator(relevance_from_evidence=1)  # type: ignore[arg-type]
    for cls in (RetrievalEvaluator, RerankingEvaluator, EmbeddingEvaluator):
        assert "relevance_from_evidence" in cls.settings_names


# -- the vectorized pairs against a brute force -------------------------------------

intervals = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 40)), max_size=25)


@settings(max_examples=budget(300), derandomize=True, deadline=None, database=None)
@given(chunks=intervals, spans=intervals)
def test_touching_pairs_matches_brute_force(chunks: list[tuple[int, int]],
                                            spans: list[tuple[int, int]]) -> None:
    def arrays(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        lo = np.asarray([a for a, _ in pairs], dtype=np.int64)
        return lo, lo + np.asarray([b for _, b in pairs], dtype=np.int64)

    c_lo, c_hi = arrays(chunks)
    s_lo, s_hi = arrays(spans)
    rows, cols, grades = touching_pairs(c_lo, c_hi, s_lo, s_hi)
    got = sorted(zip(rows.tolist(), cols.tolist(), grades.tolist()))
    expected = sorted(
        (s, c, 2 if c_lo[c] <= s_lo[s] and c_hi[c] >= s_hi[s] else 1)
        for s in range(len(spans)) for c in range(len(chunks))
        if s_hi[s] > s_lo[s] and c_hi[c] > c_lo[c]
        and set(range(c_lo[c], c_hi[c])) & set(range(s_lo[s], s_hi[s])))
    assert got == expected


@pytest.mark.parametrize("relevant", [None, {}])
def test_derived_queries_fingerprint_their_gold_as_written(relevant: Any) -> None:
    """Derived grades are not gold: a derived query's fingerprint is that of a query
    built fresh with its fields, whether or not the original had computed its own."""
    from pytest_rag.dataset.model import Query

    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": CHUNKS,
                                 "expected_evidence": {"q": [span("d", 18, 23)]}})
    original = data.queries[0]
    if relevant is not None:
        original = Query(original.id, relevant=relevant,
                         expected_evidence=original.expected_evidence)
        data = resolve_inputs(data, {"queries": [original]})
    for computed_first in (False, True):
        if computed_first:
            assert original.fingerprint
        query = relevance_from_evidence(data).queries[0]
        assert query.relevant == {"c1": 2}  # c1 holds the span whole
        fresh = Query(query.id, relevant=query.relevant, expected_evidence=query.expected_evidence,
                      relevant_from_evidence=True)
        assert query.fingerprint == fresh.fingerprint


def test_the_gold_fingerprints_of_every_chunking_are_computed_once() -> None:
    """A sweep derives grades once per chunking: each derived copy reads its
    fingerprints from the query as written, where they are computed and kept once."""
    from pytest_rag.dataset.model import Query

    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": CHUNKS,
                                 "expected_evidence": {"q": [span("d", 18, 23)]}})
    original = data.queries[0]
    names = gold_attributes("retrieval")
    first, second = (relevance_from_evidence(data).queries[0] for _ in range(2))
    assert first is not second and first.relevant == second.relevant == {"c1": 2}
    digest = first.fingerprint_of(names)
    key = "fingerprint:" + ",".join(names)
    assert vars(original)[key] == digest and key not in vars(first)  # kept with the gold
    vars(original)[key] = "kept"
    assert second.fingerprint_of(names) == "kept"  # read there, not computed again
    del vars(original)[key]
    fresh = Query(first.id, relevant=first.relevant, expected_evidence=first.expected_evidence,
                  relevant_from_evidence=True)
    assert second.fingerprint_of(names) == fresh.fingerprint_of(names) == digest
    assert second.fingerprint == fresh.fingerprint == original.fingerprint


def test_a_sweeps_datasets_share_their_gold_fingerprints() -> None:
    """The stage records of every variant read the gold fingerprints of one table,
    built once; a dataset whose written gold differs builds its own."""
    from pytest_rag.compare.gold import gold_fingerprints, whole_gold_fingerprints
    from pytest_rag.dataset.model import Query

    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": CHUNKS,
                                 "expected_evidence": {"q": [span("d", 18, 23)]}})
    first, second = (relevance_from_evidence(data) for _ in range(2))
    built = gold_fingerprints(first, "retrieval")
    assert built == {"q": data.queries[0].fingerprint_of(gold_attributes("retrieval"))}
    [table] = [value for key, value in vars(data)["derived-written-gold"].items()
               if key != "fingerprint"]
    table["q"] = "kept"
    assert gold_fingerprints(second, "retrieval") == {"q": "kept"}  # the shared table
    assert gold_fingerprints(data, "retrieval") == {"q": "kept"}
    gold_fingerprints(second, "retrieval")["q"] = "changed"  # each record gets a copy
    assert table["q"] == "kept"
    assert whole_gold_fingerprints(first) == {"q": data.queries[0].fingerprint}
    # Written grades ({} is "none given", yet written) are replaced: other gold, whose
    # digests the derived dataset computes itself instead of reading the written ones.
    written = resolve_inputs(data, {"queries": [Query("q", relevant={},
                                                      expected_evidence=data.queries[0]
                                                      .expected_evidence)]})
    as_written = gold_fingerprints(written, "retrieval")
    derived = relevance_from_evidence(written)
    assert gold_fingerprints(derived, "retrieval") != as_written
    assert gold_fingerprints(derived, "retrieval") == {
        "q": derived.queries[0].fingerprint_of(gold_attributes("retrieval"))}


def test_every_cache_of_a_query_is_listed() -> None:
    """relevance_from_evidence carries a query's caches over to its derived copy
    (they describe the gold as written); each must be listed to be checked."""
    import functools

    from pytest_rag.dataset.model import QUERY_CACHES, Query

    cached = {name for name, value in vars(Query).items()
              if isinstance(value, functools.cached_property)}
    assert cached == QUERY_CACHES == {"fingerprint"}


class _Retrieved:
    """A retriever's copy of a chunk, as a LangChain ``Document`` carries it."""

    def __init__(self, chunk: dict[str, Any], text: str) -> None:
        self.page_content = text[chunk["start"]:chunk["end"]]
        self.metadata = {"doc_id": chunk["doc_id"], "start_index": chunk["start"]}
        self.id = chunk["id"]


_WORDS = st.lists(st.sampled_from(["a", "bb", "ccc", "dd", "e"]), min_size=1, max_size=12)


@st.composite
def _retrieval_case(draw: st.DrawFn) -> tuple[dict[str, str], list[dict[str, Any]],
                                             dict[str, Any], dict[str, list[str]], int]:
    """Documents, chunks that cover them (cut anywhere, overlaps allowed), evidence
    spans anywhere (some without a token), ranked lists of some chunks, and K."""
    documents: dict[str, str] = {}
    chunks: list[dict[str, Any]] = []
    for d in range(draw(st.integers(1, 3))):
        text = " ".join(draw(_WORDS))
        doc_id = f"d{d}"
        documents[doc_id] = text
        cuts = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), max_size=4))
                          if len(text) > 1 else []))
        edges = [0, *cuts, len(text)]
        for lo, hi in pairwise(edges):
            back = draw(st.integers(0, lo))  # an overlap with what came before
            chunks.append({"id": f"{doc_id}-{len(chunks)}", "doc_id": doc_id,
                           "start": lo - back, "end": hi})
    evidence: dict[str, Any] = {}
    ranked: dict[str, list[str]] = {}
    ids = [chunk["id"] for chunk in chunks]
    for q in range(draw(st.integers(1, 5))):
        spans = []
        for _ in range(draw(st.integers(1, 2))):
            doc_id = draw(st.sampled_from(sorted(documents)))
            size = len(documents[doc_id])
            start = draw(st.integers(0, size - 1))
            spans.append(span(doc_id, start, draw(st.integers(start + 1, size))))
        evidence[f"q{q}"] = spans
        if draw(st.booleans()) or q == 0:  # q0 retrieves something: chunks are known
            ranked[f"q{q}"] = draw(st.lists(st.sampled_from(ids), min_size=q == 0, max_size=6))
    return documents, chunks, evidence, ranked, draw(st.integers(1, 4))


@settings(max_examples=150, deadline=None)
@given(_retrieval_case())
def test_only_the_retrieved_chunks_give_exact_hit_mrr_and_precision(
        case: tuple[dict[str, str], list[dict[str, Any]], dict[str, Any],
                    dict[str, list[str]], int]) -> None:
    """Graded against the retrieved chunks alone (no ``chunks=``), a query whose list
    misses its evidence is a miss, not "not measured": hit, MRR and precision equal
    those computed with the full chunk list, query by query.  The metrics that
    count the corpus's relevant chunks are None for every such query, with the
    reason."""
    documents, chunks, evidence, ranked, k = case
    by_id = {chunk["id"]: chunk for chunk in chunks}
    retrieved = {query_id: [_Retrieved(by_id[chunk_id], documents[by_id[chunk_id]["doc_id"]])
                            for chunk_id in listed] for query_id, listed in ranked.items()}
    queries = [{"id": query_id, "expected_evidence": spans}
               for query_id, spans in evidence.items()]
    evaluator = RetrievalEvaluator(k=k, relevance_from_evidence=True)
    full = evaluator.evaluate(documents=documents, queries=queries, chunks=chunks,
                              retrieved_ids=ranked)
    seen = evaluator.evaluate(documents=documents, queries=queries, retrieved_ids=retrieved)
    for key in ("hit_at_k", "mrr_at_k", "precision_at_k"):
        assert seen.values[key] == full.values[key], key
        assert np.array_equal(seen.query_values[key], full.query_values[key], equal_nan=True)
    measured = not np.isnan(full.query_values["hit_at_k"]).all()
    for key in ("recall_at_k", "f1_at_k", "ndcg_at_k", "average_precision_at_k"):
        assert np.isnan(seen.query_values[key]).all(), key
        assert seen.values[key] is None, key
        if measured:
            assert seen.missing[key] == ("pass chunks=, the full chunk list, to count the "
                                         "relevant chunks")


def test_needs_relevant_points_to_relevance_from_evidence_when_evidence_is_there() -> None:
    # Evidence spans but no relevant: the reason names the setting that measures it.
    kwargs: dict[str, Any] = {"documents": DOCUMENTS, "chunks": CHUNKS,
                              "expected_evidence": GOLD, "retrieved_ids": {"q1": ["c0"]}}
    for evaluator in (RetrievalEvaluator(k=1), RerankingEvaluator(k=1)):
        extra = {"reranked_ids": {"q1": ["c0"]}} if evaluator.stage == "reranking" else {}
        report = evaluator.evaluate(**kwargs, **extra)
        reason = report.missing["ndcg_at_k"]
        assert reason == ("needs relevant; the queries have expected_evidence: "
                          "relevance_from_evidence=True (ini rag_relevance_from_evidence "
                          "= true) grades the chunks from it")
    # With the setting on it is measured; without evidence the reason stays short.
    assert RetrievalEvaluator(k=1, relevance_from_evidence=True).evaluate(
        **kwargs).ndcg_at_k is not None
    bare = RetrievalEvaluator(k=1).evaluate(retrieved_ids={"q1": ["c0"]})
    assert bare.missing["ndcg_at_k"] == "needs relevant"
    # On, with ids alone (no chunk to grade): the reason says to pass the chunks.
    ids_only = RetrievalEvaluator(k=1, relevance_from_evidence=True).evaluate(
        documents=DOCUMENTS, expected_evidence=GOLD, retrieved_ids={"q1": ["c0"]})
    for key in ("ndcg_at_k", "hit_at_k"):
        assert ids_only.missing[key] == (
            "needs relevant; relevance_from_evidence is on, but no chunk is known to grade "
            "from expected_evidence: give the full chunk list (chunks=, or the dataset's "
            "chunks), or retrieved chunk objects instead of ids")


def test_derived_queries_are_the_one_at_a_time_copies() -> None:
    """The bulk copies of relevance_from_evidence are what copying each query alone
    gives: the same fields and caches, in the same order, the gold source last; a
    query whose written grades are empty is replaced (no cache carried over)."""
    from pytest_rag.dataset.model import GOLD_SOURCE, Query, assemble, copies_with

    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": CHUNKS,
                                 "expected_evidence": {"q1": [span("d", 0, 5)],
                                                       "q2": [span("e", 4, 13)],
                                                       "q3": [span("d", 18, 23)]},
                                 "relevant": {"q3": {}}})
    before = data.queries
    for query in before:
        assert query.fingerprint  # cached in the instance dictionary
    result = relevance_from_evidence(data).queries
    for old, new in zip(before, result):
        assert new is not old
        assert new.relevant_from_evidence
        if old.relevant is None:
            wanted = {**vars(old), "relevant": new.relevant, "relevant_from_evidence": True,
                      GOLD_SOURCE: old}
            assert list(vars(new).items()) == list(wanted.items())
        else:
            assert "fingerprint" not in vars(new) and GOLD_SOURCE not in vars(new)
    assert [dict(query.relevant or {}) for query in result] == [
        {"c0": 2}, {"e0": 1, "e1": 1}, {"c1": 2}]
    assert copies_with([], {"relevant": []}) == []
    one = assemble(Query, {"id": "x"})
    copy = copies_with([one], {"question": iter(["why?"]), "extra": ["kept last"]})[0]
    assert type(copy) is Query and copy.question == "why?" and one.question is None
    assert list(vars(copy))[-1] == "extra"
