"""junit-xml: ``rag.<stage>.<key>`` properties of each test case, regressions as failures."""

from __future__ import annotations

import pytest
from ragproject import ASSERTING_TEST, MEASURED, WORSE, junit_cases, junit_properties, set_inputs

FAMILIES = pytest.mark.parametrize("family", ["xunit1", "xunit2"])
CASE = "test_rag::test_retrieval"


@FAMILIES
def test_properties_of_every_recorded_metric(rag_pytester: pytest.Pytester, family: str) -> None:
    xml = rag_pytester.path / "junit.xml"
    result = rag_pytester.runpytest("-p", "no:cacheprovider", f"--junitxml={xml}",
                                    "-o", f"junit_family={family}")
    result.assert_outcomes(passed=1)
    case = junit_cases(xml)[CASE]
    properties = junit_properties(case)
    assert [name for name in properties if not name.startswith("rag.")] == []
    assert float(properties["rag.retrieval.recall_at_k"]) == pytest.approx(2 / 3)
    assert float(properties["rag.retrieval.p95_latency_ms"]) == pytest.approx(385.0)
    assert properties["rag.retrieval.token_recall"] == "not measured"
    assert {f"rag.retrieval.{key}" for key in MEASURED} <= set(properties)
    assert not any(name.endswith((".baseline", ".delta")) for name in properties)
    assert case.find("failure") is None


@FAMILIES
def test_baseline_and_delta_and_regression_as_failure(rag_pytester: pytest.Pytester,
                                                      family: str) -> None:
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    xml = rag_pytester.path / "junit.xml"
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline",
                                    f"--junitxml={xml}", "-o", f"junit_family={family}")
    result.assert_outcomes(failed=1)
    case = junit_cases(xml)[CASE]
    properties = junit_properties(case)
    # (1 + 1/3 + 0 + 1) / 4 against (1 + 2/3 + 0 + 1) / 4.
    assert float(properties["rag.retrieval.recall_at_k"]) == pytest.approx(7 / 12)
    assert float(properties["rag.retrieval.recall_at_k.baseline"]) == pytest.approx(2 / 3)
    assert float(properties["rag.retrieval.recall_at_k.delta"]) == pytest.approx(-1 / 12)
    assert float(properties["rag.retrieval.hit_at_k.delta"]) == 0.0
    assert "rag.retrieval.token_recall.baseline" not in properties  # not measured either time
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith(
        "RAG checks failed: retrieval.precision_at_k 0.500 -> 0.375, worse than the baseline "
        "(rag-baseline.json) (+4 more below)")
    assert properties["rag.retrieval.recall_at_k.status"] == "regressed"
    assert properties["rag.retrieval.hit_at_k.status"] == "unchanged"
    assert "queries worse in recall_at_k: q2 0.667 -> 0.333" in (failure.text or "")
    assert case.find("error") is None


def test_threshold_failure_is_a_failure_of_its_case(rag_pytester: pytest.Pytester) -> None:
    xml = rag_pytester.path / "junit.xml"
    rag_pytester.makepyfile(test_other="def test_plain():\n    pass\n")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", f"--junitxml={xml}",
                                    "--rag-threshold", "retrieval.recall_at_k >= 0.9")
    result.assert_outcomes(passed=1, failed=1)
    cases = junit_cases(xml)
    failure = cases[CASE].find("failure")
    assert failure is not None
    assert failure.get("message", "").splitlines() == [
        "RAG checks failed: retrieval.recall_at_k = 0.667, expected >= 0.9 (cli threshold)",
    ]
    assert junit_properties(cases["test_other::test_plain"]) == {}


@FAMILIES
def test_own_assertion_and_regression_both_reach_the_failure_text(
        rag_pytester: pytest.Pytester, family: str) -> None:
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.makepyfile(test_rag=ASSERTING_TEST)
    xml = rag_pytester.path / "junit.xml"
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline",
                                    f"--junitxml={xml}", "-o", f"junit_family={family}")
    result.assert_outcomes(failed=1)
    case = junit_cases(xml)[CASE]
    failure = case.find("failure")
    assert failure is not None
    # The test's own assertion leads; the gate's verdict is in the same text.
    assert failure.get("message", "").startswith(
        "AssertionError: retrieval.recall_at_k = 0.583, expected >= 0.800")
    text = failure.text or ""
    assert "AssertionError: retrieval.recall_at_k = 0.583, expected >= 0.800" in text
    assert ("RAG checks failed: retrieval.precision_at_k 0.500 -> 0.375, worse than the "
            "baseline (rag-baseline.json) (+4 more below)") in text
    assert "queries worse in recall_at_k: q2 0.667 -> 0.333" in text
    assert junit_properties(case)["rag.retrieval.recall_at_k.status"] == "regressed"
    # The terminal shows the verdict once.
    assert result.stdout.str().count("worse than the baseline (rag-baseline.json), "
                                     "worst first") == 1
