"""End-to-end metrics: final answers, task success, latency percentiles, cost and tokens."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_rag import EndToEndEvaluator, GenerationEvaluator, Report, parse_dataset


def evaluate(**inputs: Any) -> Report:
    return EndToEndEvaluator().evaluate(**inputs)


def test_answers_as_in_generation() -> None:
    inputs = {"answer": {"q1": "Refunds within 30 days", "q2": "16 January 2024", "q3": "x"},
              "reference_answer": {"q1": "30 days", "q2": ["January 16, 2024", "16 january 2024"]}}
    report = evaluate(**inputs)
    generation = GenerationEvaluator().evaluate(**inputs)
    # q1: P 2/4, R 1; q2: matches the second reference; q3: no reference.
    assert report.per_query["answer_exact_match"] == {"q1": 0.0, "q2": 1.0, "q3": None}
    assert report.answer_f1 == pytest.approx((2 * (1 / 2) / (3 / 2) + 1) / 2)
    assert report.answer_exact_match == generation.exact_match
    assert report.answer_f1 == generation.answer_f1


def test_task_success_rate() -> None:
    report = evaluate(task_success={"q1": True, "q2": False, "q3": True, "q4": None})
    assert report.task_success_rate == pytest.approx(2 / 3)
    assert report.per_query["task_success_rate"] == {"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": None}


def test_latency_percentiles_interpolate_linearly() -> None:
    report = evaluate(latency_ms={"q1": 100, "q2": 300, "q3": None})
    # The reference's example: P50 = 200, P95 = 100 + 0.95 * 200 = 290.
    assert report.p50_latency_ms == pytest.approx(200.0)
    assert report.p95_latency_ms == pytest.approx(290.0)
    one = evaluate(latency_ms={"q": 42.5})
    assert (one.p50_latency_ms, one.p95_latency_ms) == (42.5, 42.5)


def test_means_over_the_queries_that_have_a_value() -> None:
    report = evaluate(cost_usd={"q1": 0.002, "q2": 0.004, "q3": None},
                      total_tokens={"q1": 1000, "q3": 3000, "q4": 0})
    assert report.mean_cost_usd == pytest.approx((0.002 + 0.004) / 2)
    assert report.mean_total_tokens == pytest.approx((1000 + 3000 + 0) / 3)
    assert report.per_query["mean_cost_usd"] == {"q1": 0.002, "q2": 0.004, "q3": None, "q4": None}


def test_none_without_inputs() -> None:
    report = evaluate()
    assert all(value is None for value in report.values.values())
    assert report.missing["mean_cost_usd"] == "needs cost_usd"
    assert report.missing["p50_latency_ms"] == "needs latency_ms"


def test_queries_without_run_entry() -> None:
    raw = {"queries": [{"id": "q1", "reference_answer": "x"},
                       {"id": "q2", "reference_answer": "x"}],
           "run": {"q2": {"answer": "x y", "latency_ms": 10, "cost_usd": 0.5, "total_tokens": 7}}}
    report = EndToEndEvaluator().evaluate(parse_dataset(raw))
    for values in report.per_query.values():
        assert values["q1"] is None
    assert (report.answer_exact_match, report.mean_total_tokens) == (0.0, 7.0)
    assert report.answer_f1 == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))
    assert report.p95_latency_ms == 10.0


def test_only_its_inputs_are_accepted() -> None:
    with pytest.raises(TypeError, match="context_ids"):
        evaluate(context_ids={"q": ["c1"]})
