"""Checks built from metric comparisons, and their messages."""

from __future__ import annotations

import pytest

import pytest_rag
from pytest_rag import RetrievalEvaluator
from pytest_rag.metrics import recall_at_k, retrieval
from pytest_rag.stages.checks import (
    Comparison,
    MetricValue,
    assert_metric,
    reset_context,
    use_context,
)


def report():
    return RetrievalEvaluator(k=2).evaluate(
        retrieved_ids={"q1": ["a", "b"], "q2": ["x", "a"], "q3": ["x", "y"]},
        relevant={"q1": ["a"], "q2": ["a", "b"], "q3": ["a"]})


def test_comparison_is_truthy_when_it_passes() -> None:
    rep = report()
    assert isinstance(rep.recall_at_k >= 0.5, Comparison)
    assert rep.recall_at_k >= 0.5  # (1 + 1/2 + 0) / 3 = 0.5
    assert not (rep.recall_at_k > 0.5)
    assert rep.recall_at_k == pytest.approx(0.5)
    assert rep.recall_at_k.value == pytest.approx(0.5)


def test_failure_message_names_metric_threshold_and_lowest_queries() -> None:
    with pytest.raises(AssertionError) as info:
        assert_metric(report().recall_at_k >= 0.8)
    assert str(info.value) == ("retrieval.recall_at_k = 0.500, expected >= 0.800; "
                               "lowest queries: q3 0.000, q2 0.500, q1 1.000")


def test_not_measured_never_passes() -> None:
    rep = report()
    assert not (rep.token_recall >= 0.0)
    with pytest.raises(AssertionError, match=r"retrieval\.token_recall not measured: "
                                             "needs expected_evidence, chunks"):
        assert_metric(rep.token_recall >= 0.0)
    assert rep.token_recall == None  # noqa: E711 - "is not measured"


def test_every_query_and_share_checks() -> None:
    rep = report()
    assert_metric(rep.recall_at_k.every >= 0.0)
    with pytest.raises(AssertionError, match=r"recall_at_k: expected >= 0\.600 for every query; "
                                             r"2 of 3 fail: q2 0\.500, q3 0\.000"):
        assert_metric(rep.recall_at_k.every >= 0.6)
    assert_metric(rep.recall_at_k.share(">=", 0.5) >= 2 / 3)
    with pytest.raises(AssertionError, match=r"share\(recall_at_k >= 0\.500\) = 0\.667, "
                                             r"expected >= 0\.900"):
        assert_metric(rep.recall_at_k.share(">=", 0.5) >= 0.9)


def test_lower_is_better_lists_the_highest_as_worst() -> None:
    value = MetricValue("augmentation", "context_noise", 0.5, {"a": 0.1, "b": 0.9}, "", "lower")
    assert value.lowest() == [("b", 0.9), ("a", 0.1)]


def test_metric_in_boolean_context_is_an_error() -> None:
    with pytest.raises(TypeError, match="not a truth value"):
        bool(report().recall_at_k)


def test_assert_metric_needs_a_comparison() -> None:
    with pytest.raises(TypeError, match="takes a comparison of a metric"):
        assert_metric(True)  # type: ignore[arg-type]


def test_two_reports_compare() -> None:
    better = RetrievalEvaluator(k=2).evaluate(retrieved_ids={"q": ["a"]}, relevant={"q": ["a"]})
    assert better.recall_at_k >= report().recall_at_k
    assert not (report().recall_at_k >= better.token_recall)  # None never passes


class _Context:
    def __init__(self) -> None:
        self.checks: list[Comparison] = []

    def resolve(self, key: str, stage: str | None) -> MetricValue:
        return report().metric(key)

    def baseline(self, stage: str, key: str) -> float | None:
        return 0.6

    def add_check(self, comparison: Comparison) -> None:
        self.checks.append(comparison)


def test_symbolic_names_resolve_through_the_context() -> None:
    context = _Context()
    token = use_context(context)
    try:
        assert_metric(recall_at_k >= 0.5)
        assert_metric(retrieval.recall_at_k <= 0.5)
        with pytest.raises(AssertionError, match=r"= 0\.500, expected >= 0\.800 "
                                                 r"\(baseline 0\.600, -0\.100\)"):
            assert_metric(recall_at_k >= 0.8)
    finally:
        reset_context(token)
    assert len(context.checks) == 3


def test_symbolic_names_outside_a_test_explain_themselves() -> None:
    token = use_context(None)
    try:
        with pytest.raises(RuntimeError, match="can only be checked inside a test"):
            assert_metric(recall_at_k >= 0.8)
    finally:
        reset_context(token)


def test_symbolic_names_before_any_report_explain_themselves(rag: pytest_rag.Rag) -> None:
    # The rag fixture installs the context, but this test recorded nothing.
    with pytest.raises(LookupError, match="'recall_at_k' was not recorded by this test "
                                          r"\(it evaluated: no stage yet\)"):
        assert_metric(recall_at_k >= 0.8)


def test_symbolic_names_without_the_rag_fixture_say_how_to_check() -> None:
    with pytest.raises(RuntimeError, match="can only be checked inside a test that evaluated "
                                           "a stage with the 'rag' fixture"):
        assert_metric(recall_at_k >= 0.8)


def test_unknown_operator() -> None:
    with pytest.raises(ValueError, match="unknown operator '=>'"):
        report().recall_at_k.share("=>", 0.5)


def test_numbers_are_printed_as_the_scorecard_prints_them() -> None:
    """One rule for numbers: a cost of 0.00012 is not ``0.000``, a count not ``12``."""
    from pytest_rag.formatting import number_text

    cost = MetricValue("end_to_end", "mean_cost_usd", 0.00012)
    with pytest.raises(AssertionError) as info:
        assert_metric(cost <= 0.0001)
    assert str(info.value) == (f"end_to_end.mean_cost_usd = {number_text(0.00012)}, "
                               f"expected <= {number_text(0.0001)}")
    assert "0.00012" in str(info.value)
