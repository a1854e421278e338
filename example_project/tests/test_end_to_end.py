"""End to end: what a user gets per request, how long it takes and what it costs."""

from __future__ import annotations

import pytest

from pytest_rag import assert_metric
from ragapp import Trace
from support import BOTH, Bench, expected_citations


def task_success(bench: Bench) -> dict[str, bool]:
    """Our verdict per request: decline the unanswerable; otherwise cite the evidence's document."""
    wanted = expected_citations(bench.gold)
    verdicts = {}
    for query in bench.gold.queries:
        trace: Trace = bench.traces[query.id]
        if query.answerable is False:
            verdicts[query.id] = trace.answer.abstained
        elif query.id in wanted:
            verdicts[query.id] = bool(set(trace.answer.cited_ids) & set(wanted[query.id]))
    return verdicts


@pytest.mark.parametrize("bench", BOTH, indirect=True)
def test_requests(bench: Bench, rag) -> None:
    report = rag.end_to_end(
        answer=bench.run(lambda t: t.answer.text),
        task_success=task_success(bench),
        latency_ms=bench.run(lambda t: t.total_ms),
        cost_usd=bench.run(lambda t: t.answer.cost_usd),
        total_tokens=bench.run(lambda t: t.answer.total_tokens),
    )
    assert_metric(report.task_success_rate >= 0.5)
    assert_metric(report.mean_total_tokens <= 1200)
