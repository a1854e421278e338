"""--rag-significance / ini rag_significance: regressions within noise do not fail."""

from __future__ import annotations

import json

import pytest
from ragproject import BASELINE, SAME, WORSE, set_inputs, write_ini

#: Three of the four queries lose their relevant chunks (q3 has none to lose).
ALL_WORSE = {"q1": ["x", "y"], "q2": ["x", "y"], "q3": ["x", "y"], "q4": ["x", "y"]}


def _baseline(rag_pytester: pytest.Pytester) -> None:
    set_inputs(rag_pytester, retrieved_ids=SAME)
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)


def test_one_query_worse_is_within_noise(rag_pytester: pytest.Pytester) -> None:
    _baseline(rag_pytester)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline").assert_outcomes(failed=1)
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline",
                                    "--rag-significance", "0.3", "--rag-report=r.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*recall_at_k*1.000*within noise*",
                                 "*worse but within noise*"])
    row = json.loads((rag_pytester.path / "r.json").read_text())["tests"][
        "test_rag.py::test_retrieval"]["retrieval"]["metrics"]["recall_at_k"]
    assert row["status"] == "within noise" and row["p_value"] == 1.0
    assert row["ci95"][0] <= row["delta"] <= row["ci95"][1]


def test_consistent_regression_still_fails(rag_pytester: pytest.Pytester) -> None:
    _baseline(rag_pytester)
    set_inputs(rag_pytester, retrieved_ids=ALL_WORSE)
    write_ini(rag_pytester, "rag_significance = 0.3")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*recall_at_k*REGRESSED*"])
    assert (rag_pytester.path / BASELINE).exists()


@pytest.mark.parametrize("value", ["0", "1", "x"])
def test_bad_level_is_a_usage_error(rag_pytester: pytest.Pytester, value: str) -> None:
    result = rag_pytester.runpytest("-p", "no:cacheprovider", f"--rag-significance={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    write_ini(rag_pytester, f"rag_significance = {value}")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*rag_significance*"])


def test_metric_without_per_query_values_is_judged_by_its_tolerance(
        rag_pytester: pytest.Pytester) -> None:
    """p95 latency has no per-query values: significance cannot be shown, so the
    tolerance decides (it was waved through as "within noise")."""
    slow = {"q1": 1000, "q2": 2000, "q3": 3000, "q4": 4000}
    _baseline(rag_pytester)
    set_inputs(rag_pytester, retrieved_ids=SAME, retrieval_latency_ms=slow)
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline",
                                    "--rag-significance", "0.05")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*p95_latency_ms*REGRESSED*"])


def test_a_single_query_is_judged_by_its_tolerance(rag_pytester: pytest.Pytester) -> None:
    """One paired query gives no p-value: it is not "within noise" either."""
    rag_pytester.makefile(".yaml", gold="params: {k: 2}\nqueries:\n  - {id: q1, relevant: [a]}\n")
    set_inputs(rag_pytester, retrieved_ids={"q1": ["a", "x"]})
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(
        passed=1)
    set_inputs(rag_pytester, retrieved_ids={"q1": ["x", "y"]})
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline",
                                    "--rag-significance", "0.05")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*recall_at_k*REGRESSED*"])


def test_the_json_report_keeps_every_p_value(rag_pytester: pytest.Pytester) -> None:
    """A metric that changed within its tolerance shows no p-value on the terminal (so
    none is computed there), but the JSON report, which shows every one, has it."""
    _baseline(rag_pytester)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    write_ini(rag_pytester, "rag_tolerance = 0.5")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-baseline",
                                    "--rag-report=r.json")
    result.assert_outcomes(passed=1)
    row = json.loads((rag_pytester.path / "r.json").read_text())["tests"][
        "test_rag.py::test_retrieval"]["retrieval"]["metrics"]["recall_at_k"]
    assert row["status"] == "ok" and row["p_value"] == 1.0 and row["ci95"] is not None
