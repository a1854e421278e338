"""Checks inside a test: ``assert_metric``, symbolic names, plain ``assert``, spread checks."""

from __future__ import annotations

import pytest
from ragproject import ASSERTING_TEST, WORSE, set_inputs

LOWEST = "lowest queries: q3 0.000, q2 0.333, q1 1.000, q4 1.000"


def test_assert_metric_message_with_baseline(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.makepyfile(test_rag=ASSERTING_TEST)
    # The test's own check fails first; the regression of the other metrics is listed after it.
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline")
    result.assert_outcomes(failed=1)
    # (1 + 1/3 + 0 + 1) / 4 = 0.583 against (1 + 2/3 + 0 + 1) / 4 = 0.667.
    result.stdout.fnmatch_lines([
        "E       AssertionError: retrieval.recall_at_k = 0.583, expected >= 0.800 "
        f"(baseline 0.667, -0.083); {LOWEST}",
        "*- RAG checks -*",
        "RAG checks failed: retrieval.precision_at_k 0.500 -> 0.375, worse than the baseline "
        "(rag-baseline.json) (+4 more below)",
        "retrieval: 5 metrics worse than the baseline (rag-baseline.json), worst first:",
    ])


def test_assert_metric_message_without_baseline(rag_pytester: pytest.Pytester) -> None:
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.makepyfile(test_rag="""
import json
import pathlib

from pytest_rag import assert_metric


def test_retrieval(rag):
    inputs = json.loads((pathlib.Path(__file__).parent / "inputs.json").read_text())
    assert_metric(rag.retrieval(**inputs).recall_at_k >= 0.8)
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"E       AssertionError: retrieval.recall_at_k = 0.583, expected >= 0.800; {LOWEST}",
    ])


CHECKS = """
import pytest
from pytest_rag import assert_metric
from pytest_rag.metrics import hit_at_k, recall_at_k, retrieval


def test_symbolic_passes(rag):
    rag.retrieval()
    assert_metric(recall_at_k >= 0.6)
    assert_metric(retrieval.recall_at_k >= 0.6)


def test_symbolic_uses_the_latest_report(rag):
    rag.retrieval()
    rag.retrieval(retrieved_ids={"q1": ["x"], "q2": ["x"], "q3": ["x"], "q4": ["x"]})
    assert_metric(hit_at_k >= 0.5)


def test_symbolic_without_report(rag):
    assert_metric(recall_at_k >= 0.5)


def test_not_measured(rag):
    report = rag.retrieval()
    assert_metric(report.token_recall >= 0.1)


def test_plain_assert(rag):
    report = rag.retrieval()
    assert report.recall_at_k >= 0.8


def test_plain_assert_symbolic(rag):
    rag.retrieval()
    assert recall_at_k >= 0.8


def test_plain_assert_every(rag):
    report = rag.retrieval()
    assert report.recall_at_k.every >= 0.5


def test_plain_assert_is_none(rag):
    report = rag.retrieval()
    assert report.recall_at_k is None


def test_every(rag):
    report = rag.retrieval()
    assert_metric(report.mrr_at_k.every >= 0.0)
    assert_metric(report.recall_at_k.every >= 0.5)


def test_share(rag):
    report = rag.retrieval()
    assert_metric(report.recall_at_k.share(">=", 0.5) == 0.75)
    assert_metric(report.recall_at_k.share(">=", 0.5) >= 0.9)


def test_approx(rag):
    report = rag.retrieval()
    assert_metric(report.recall_at_k == pytest.approx(2 / 3))
    assert report.recall_at_k == pytest.approx(2 / 3)
    assert_metric(report.p95_latency_ms == pytest.approx(400.0, abs=1))
"""


@pytest.fixture
def checks(rag_pytester: pytest.Pytester) -> pytest.RunResult:
    rag_pytester.makepyfile(test_rag=CHECKS)
    return rag_pytester.runpytest("-p", "no:cacheprovider", "-rf")


def test_outcomes_of_each_kind_of_check(checks: pytest.RunResult) -> None:
    checks.assert_outcomes(passed=1, failed=10)
    assert checks.ret == pytest.ExitCode.TESTS_FAILED


def test_symbolic_name_resolves_against_the_latest_report(checks: pytest.RunResult) -> None:
    # q1..q4 all miss in the second report: hit_at_k = 0.
    checks.stdout.fnmatch_lines([
        "E       AssertionError: retrieval.hit_at_k = 0.000, expected >= 0.500; "
        "lowest queries: q1 0.000, q2 0.000, q3 0.000, q4 0.000",
    ])


def test_symbolic_name_without_a_report_says_what_to_do(checks: pytest.RunResult) -> None:
    checks.stdout.fnmatch_lines([
        "E       LookupError: a report with metric 'recall_at_k' was not recorded by this test "
        "(it evaluated: no stage yet); call rag.<stage>(...) first",
    ])


def test_metric_not_measured_fails_and_says_why(checks: pytest.RunResult) -> None:
    checks.stdout.fnmatch_lines([
        "E       AssertionError: retrieval.token_recall not measured: needs expected_evidence, "
        "chunks (expected >= 0.100)",
    ])


def test_plain_assert_is_explained(checks: pytest.RunResult) -> None:
    checks.stdout.fnmatch_lines([
        ">       assert report.recall_at_k >= 0.8",
        "E       assert retrieval.recall_at_k=0.6666666666666666 >= 0.8",
        "E         ",
        "E         retrieval.recall_at_k = 0.667, expected >= 0.800",
        f"E         {LOWEST.replace('q2 0.333', 'q2 0.667')}",
    ])


def test_plain_assert_of_a_symbolic_name_is_explained(checks: pytest.RunResult) -> None:
    checks.stdout.fnmatch_lines([
        ">       assert recall_at_k >= 0.8",
        "E       assert retrieval.recall_at_k=0.6666666666666666 >= 0.8",
        "E         ",
        "E         retrieval.recall_at_k = 0.667, expected >= 0.800",
    ])


def test_plain_assert_of_every_query_is_explained(checks: pytest.RunResult) -> None:
    checks.stdout.fnmatch_lines([
        ">       assert report.recall_at_k.every >= 0.5",
        "E       assert retrieval.recall_at_k=0.6666666666666666.every >= 0.5",
        "E         ",
        "E         retrieval.recall_at_k: expected >= 0.500 for every query",
        "E         1 of 4 fail: q3 0.000",
    ])


def test_identity_is_a_plain_assertion_error(checks: pytest.RunResult) -> None:
    # "is None" is always false for a MetricValue; pytest's own message, no crash.
    checks.stdout.fnmatch_lines([
        ">       assert report.recall_at_k is None",
        "E       AssertionError: assert retrieval.recall_at_k=0.6666666666666666 is None",
    ])
    checks.stdout.no_fnmatch_line("*unknown operator*")


def test_every_lists_the_failing_queries(checks: pytest.RunResult) -> None:
    checks.stdout.fnmatch_lines([
        "E       AssertionError: retrieval.recall_at_k: expected >= 0.500 for every query; "
        "1 of 4 fail: q3 0.000",
    ])


def test_share_names_the_share(checks: pytest.RunResult) -> None:
    # q1, q2 and q4 reach 0.5: 3 of 4.
    checks.stdout.fnmatch_lines([
        "E       AssertionError: retrieval.share(recall_at_k >= 0.500) = 0.750, "
        "expected >= 0.900",
    ])


def test_approx_equality(checks: pytest.RunResult) -> None:
    # p95 of 100, 200, 300, 400 ms: 100 + 0.95 * 3 * 100 = 385.
    checks.stdout.fnmatch_lines([
        "E       AssertionError: retrieval.p95_latency_ms = 385.000, expected == 400.0 ± 1",
    ])


def test_a_misspelt_metric_shows_the_users_line_not_the_plugins(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_typo="""
def test_typo(rag):
    report = rag.retrieval(queries=[{"id": "q1"}], relevant={"q1": ["a"]},
                           retrieved_ids={"q1": ["a"]}, k=1)
    assert report.recal_at_k >= 0.5
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--tb=short")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["test_typo.py:4: in test_typo",
                                 "*has no metric 'recal_at_k' (did you mean 'recall_at_k'?)*"])
    assert "pytest_rag" not in result.stdout.str().split("RAG scorecard")[0]
