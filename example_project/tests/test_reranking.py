"""Reranking: does the proximity reranker move relevant chunks up, without losing any?"""

from __future__ import annotations

import pytest

from pytest_rag import assert_metric
from support import BOTH, Bench


@pytest.mark.parametrize("bench", BOTH, indirect=True)
def test_reranker_improves_the_top(bench: Bench, rag) -> None:
    report = rag.reranking(chunks=bench.chunk_records(),
                           retrieved_ids=bench.run(lambda t: t.retrieved_ids),
                           reranked_ids=bench.run(lambda t: t.reranked_ids))
    assert_metric(report.ndcg_gain > 0)
    assert_metric(report.mrr_gain > 0)
    assert_metric(report.ndcg_at_k >= 0.75)
    assert_metric(report.candidate_set_preservation_rate >= 1.0)  # reorders, never drops
