"""Retrieval metrics on cases small enough to check by hand."""

from __future__ import annotations

import math

import pytest

from pytest_rag import DatasetError, RetrievalEvaluator

TEXT = "alpha beta gamma. delta epsilon zeta. eta theta iota."
#        0    5    10    17 19    25      33 36 39    45  50
CHUNKS = [{"id": "c0", "start": 0, "end": 17}, {"id": "c1", "start": 18, "end": 37},
          {"id": "c2", "start": 38, "end": 53}]


def evaluate(k: int = 2, **inputs: object):
    return RetrievalEvaluator(k=k).evaluate(**inputs)


def test_binary_relevance_by_hand() -> None:
    report = evaluate(k=3, retrieved_ids={"q1": ["c9", "c1", "c2"], "q2": ["c0", "c1", "c2"]},
                      relevant={"q1": ["c1", "c2", "c5"], "q2": ["c2"]})
    # q1: hits at ranks 2 and 3 of 3 relevant; q2: a hit at rank 3 of 1 relevant.
    assert report.precision_at_k == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert report.recall_at_k == pytest.approx((2 / 3 + 1) / 2)
    assert report.mrr_at_k == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert report.hit_at_k == 1.0
    # AP: q1 (1/2 + 2/3) / min(3, 3); q2 (1/3) / min(1, 3).
    assert report.average_precision_at_k == pytest.approx(((1 / 2 + 2 / 3) / 3 + 1 / 3) / 2)
    f1_q1 = 2 * (2 / 3) * (2 / 3) / (4 / 3)
    f1_q2 = 2 * (1 / 3) * 1 / (4 / 3)
    assert report.f1_at_k == pytest.approx((f1_q1 + f1_q2) / 2)


def test_graded_ndcg_by_hand() -> None:
    report = evaluate(k=3, retrieved_ids={"q": ["b", "x", "a"]}, relevant={"q": {"a": 3, "b": 1}})
    dcg = (2**1 - 1) / math.log2(2) + (2**3 - 1) / math.log2(4)
    idcg = (2**3 - 1) / math.log2(2) + (2**1 - 1) / math.log2(3)
    assert report.ndcg_at_k == pytest.approx(dcg / idcg)


def test_duplicates_count_once_at_first_rank_and_short_lists_divide_by_k() -> None:
    report = evaluate(k=3, retrieved_ids={"q": ["a", "a", "a", "b"]}, relevant={"q": ["b"]})
    assert report.precision_at_k == pytest.approx(1 / 3)
    assert report.mrr_at_k == pytest.approx(1 / 2)
    short = evaluate(k=4, retrieved_ids={"q": ["b"]}, relevant={"q": ["b"]})
    assert short.precision_at_k == pytest.approx(1 / 4)
    assert short.recall_at_k == 1.0


def test_none_rules() -> None:
    report = evaluate(retrieved_ids={"q1": ["a"], "q2": ["a"]},
                      relevant={"q1": {"a": 0}, "q3": ["a"]})
    # q1 has no grade > 0, q2 no gold, q3 no run: nothing is scored.
    assert report.values["recall_at_k"] is None
    assert report.per_query["recall_at_k"] == {"q1": None, "q2": None, "q3": None}
    assert report.values["token_recall"] is None
    assert report.missing["token_recall"] == "needs expected_evidence, chunks"
    assert report.missing["p95_latency_ms"] == "needs retrieval_latency_ms"


def test_empty_list_scores_zero_not_none() -> None:
    report = evaluate(retrieved_ids={"q": []}, relevant={"q": ["a"]})
    assert report.recall_at_k == 0.0 and report.mrr_at_k == 0.0 and report.ndcg_at_k == 0.0


def test_token_metrics_by_hand() -> None:
    # Evidence "beta gamma. delta" = tokens 1..3 of 9; c0 holds tokens 0-2, c1 3-5.
    gold = {"q": [{"doc_id": "d", "start": 6, "end": 23}]}
    common = {"documents": {"d": TEXT}, "chunks": CHUNKS, "expected_evidence": gold}
    report = evaluate(k=1, retrieved_ids={"q": ["c0", "c1"]}, **common)
    assert report.token_recall == pytest.approx(2 / 3)
    assert report.token_precision == pytest.approx(2 / 3)
    assert report.token_iou == pytest.approx(2 / 4)
    assert report.complete_evidence_recall == 0.0
    both = evaluate(k=2, retrieved_ids={"q": ["c0", "c1"]}, **common)
    assert both.token_recall == 1.0 and both.token_precision == pytest.approx(3 / 6)
    assert both.complete_evidence_recall == 0.0  # no single chunk holds all of it
    none = evaluate(k=2, retrieved_ids={"q": []}, **common)
    assert none.token_precision == 0.0 and none.token_recall == 0.0


def test_unknown_chunk_is_an_error_only_within_k() -> None:
    common = {"documents": {"d": TEXT}, "chunks": CHUNKS,
              "expected_evidence": {"q": [{"doc_id": "d", "start": 0, "end": 5}]}}
    assert evaluate(k=1, retrieved_ids={"q": ["c0", "nope"]}, **common).token_recall == 1.0
    # Passed as an argument: the message names the argument, not a run section.
    with pytest.raises(DatasetError, match=r"^<arguments>: retrieved_ids\['q'\]\[1\]: unknown "
                                           r"chunk 'nope'"):
        evaluate(k=2, retrieved_ids={"q": ["c0", "nope"]}, **common)


def test_unknown_chunk_of_an_argument_names_the_argument_not_the_gold_file(tmp_path) -> None:
    from pytest_rag import load_dataset

    path = tmp_path / "gold.yaml"
    path.write_text("documents: [{id: d, text: 'alpha beta gamma delta'}]\n"
                    "chunks: [{id: c0, start: 0, end: 10}]\n"
                    "queries: [{id: q, expected_evidence: [{start: 0, end: 5}]}]\n"
                    "run: {q: {retrieved_ids: [c0, typo]}}\n", encoding="utf-8")
    gold = load_dataset(path)
    with pytest.raises(DatasetError, match=r"gold\.yaml: run\.q\.retrieved_ids\[1\]: unknown"):
        RetrievalEvaluator(k=2).evaluate(gold)
    with pytest.raises(DatasetError) as caught:
        RetrievalEvaluator(k=2).evaluate(gold, retrieved_ids={"q": ["c0", "c1"]})
    assert str(caught.value).startswith("<arguments>: retrieved_ids['q'][1]: unknown chunk 'c1'")


def test_latency_percentiles_interpolate_linearly() -> None:
    report = evaluate(retrieval_latency_ms={"q1": 100, "q2": 300})
    assert report.p50_latency_ms == 200.0
    assert report.p95_latency_ms == pytest.approx(290.0)


@pytest.mark.parametrize("k, message", [
    (0, "k: must be >= 1, got 0"), (-1, "k: must be >= 1, got -1"),
    (2.5, "k: expected a whole number, got a number 2.5"),
    (True, "k: expected a whole number, got a boolean True"),
    ("5", "k: expected a whole number, got a string '5'"),
])
def test_bad_k_is_a_value_error(k: object, message: str) -> None:
    with pytest.raises(ValueError) as error:
        RetrievalEvaluator(k=k)  # type: ignore[arg-type]
    assert str(error.value) == message


def test_unknown_input_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"unexpected input.*'retreived_ids' \(did you mean "
                                        r"'retrieved_ids'\?\); accepted"):
        RetrievalEvaluator().evaluate(retreived_ids={})
