"""Reranking metrics by hand."""

from __future__ import annotations

import math

import pytest

from pytest_rag import RerankingEvaluator


def test_gains_and_rank_change_by_hand() -> None:
    report = RerankingEvaluator(k=2).evaluate(
        retrieved_ids={"q": ["x", "y", "a"]}, reranked_ids={"q": ["a", "x"]},
        relevant={"q": {"a": 2}})
    assert report.ndcg_at_k == 1.0 and report.mrr_at_k == 1.0
    assert report.ndcg_gain == 1.0 and report.mrr_gain == 1.0
    assert report.precision_gain == pytest.approx(1 / 2)
    assert report.first_relevant_rank_change == 3 - 1  # whole lists, not cut at K
    assert report.candidate_set_preservation_rate == 0.0  # the reranker cut "y"


def test_reordering_only_preserves_the_candidate_set_without_gold() -> None:
    report = RerankingEvaluator().evaluate(retrieved_ids={"q": ["a", "b", "b"]},
                                           reranked_ids={"q": ["b", "a"]})
    assert report.candidate_set_preservation_rate == 1.0
    assert (report.values["ndcg_gain"] is None
            and report.values["first_relevant_rank_change"] is None)


def test_rank_change_is_none_when_either_list_misses_every_relevant_id() -> None:
    report = RerankingEvaluator(k=2).evaluate(
        retrieved_ids={"q": ["a", "b"]}, reranked_ids={"q": ["b"]}, relevant={"q": ["a"]})
    assert report.values["first_relevant_rank_change"] is None
    assert report.mrr_gain == -1.0
    discount = 1 / math.log2(2)
    assert report.ndcg_gain == pytest.approx(0 - discount / discount)
