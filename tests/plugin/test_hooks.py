"""The hooks ``pytest_rag_register_metrics``, ``pytest_rag_compute_metrics`` and
``pytest_rag_scorecard``.
"""

from __future__ import annotations

import json

import pytest
from ragproject import (
    BASELINE,
    FEWER_PLUGINS,
    TEST_RAG,
    WORSE,
    junit_cases,
    junit_properties,
    set_inputs,
)

CUSTOM = """
from pytest_rag import Direction, MetricSpec


def pytest_rag_register_metrics(config):
    return [MetricSpec("retrieval", "mean_found", "Mean Found", Direction.HIGHER,
                       "mean number of relevant ids in the whole list", "mean |R ∩ L|",
                       ("retrieved_ids", "relevant"), unit="score", high=float("inf"))]


def pytest_rag_compute_metrics(stage, report, dataset):
    if stage != "retrieval":
        return None
    found = [len(set(dataset.run[q.id].retrieved_ids) & set(q.relevant or {}))
             for q in dataset.queries if q.id in dataset.run]
    return {"mean_found": sum(found) / len(found) if found else None}
"""
CHECKED = """
import json
import pathlib

from pytest_rag import assert_metric


def inputs():
    path = pathlib.Path(__file__).parent / "inputs.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_retrieval(rag):
    report = rag.retrieval(**inputs())
    assert report["mean_found"] == 1.0             # (1 + 2 + 0 + 1) / 4
    assert_metric(report.mean_found >= 0.5)
"""


@pytest.fixture
def custom(rag_pytester: pytest.Pytester) -> pytest.Pytester:
    rag_pytester.makeconftest(CUSTOM)
    rag_pytester.makepyfile(test_rag=CHECKED)
    return rag_pytester


def test_custom_metric_is_recorded_everywhere(custom: pytest.Pytester) -> None:
    result = custom.runpytest("-p", "no:cacheprovider", "--rag-update-baseline",
                              "--rag-report=report.json", "--junitxml=junit.xml",
                              "--rag-scorecard=full")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*mean_found *1.000 *>= 0.5 *ok"])  # in the scorecard
    metric = json.loads((custom.path / BASELINE).read_text())["tests"][
        "test_rag.py::test_retrieval"]["retrieval"]["metrics"]["mean_found"]
    assert metric == {"value": 1.0, "direction": "higher", "tolerance": 0.01, "relative": False}
    report = json.loads((custom.path / "report.json").read_text())
    assert report["tests"]["test_rag.py::test_retrieval"]["retrieval"]["metrics"][
        "mean_found"]["threshold"] == ">= 0.5"
    properties = junit_properties(junit_cases(custom.path / "junit.xml")[
        "test_rag::test_retrieval"])
    assert properties["rag.retrieval.mean_found"] == "1.0"


def test_custom_metric_takes_thresholds_and_baselines(custom: pytest.Pytester) -> None:
    custom.makepyfile(test_rag=TEST_RAG)  # no check of its own
    custom.runpytest("-p", "no:cacheprovider", "--rag-update-baseline").assert_outcomes(passed=1)
    set_inputs(custom, retrieved_ids=WORSE)  # q2 finds 1 instead of 2: (1 + 1 + 0 + 1) / 4
    result = custom.runpytest("-p", "no:cacheprovider", "--rag-baseline", "--rag-threshold",
                              "retrieval.mean_found >= 0.9", "-v")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "retrieval.mean_found = 0.750, expected >= 0.9 (cli threshold)",
        "  mean_found              1.000       0.750      -0.250   0.010        higher",
        "*mean_found *0.750 *>= 0.9 *1.000 *-0.250 *FAIL",
    ])


def test_numpy_numbers_are_computed_metric_values(custom: pytest.Pytester) -> None:
    """A numpy integer or float from the hook is a number (issue 24: numpy scalars)."""
    custom.makeconftest(CUSTOM.replace("sum(found) / len(found) if found else None",
                                       "__import__('numpy').int64(1)"))
    result = custom.runpytest("-p", "no:cacheprovider", "--rag-update-baseline",
                              "--rag-report=report.json")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(("conftest", "message"), [
    (CUSTOM.replace('return {"mean_found"', 'return {"mean_lost"'),
     "pytest-rag: custom metric retrieval.mean_lost was not declared with "
     "pytest_rag_register_metrics"),
    (CUSTOM.replace("sum(found) / len(found) if found else None", "'many'"),
     "pytest-rag: custom metric retrieval.mean_found must be a number or None, got a string "
     "'many'"),
    (CUSTOM.replace("sum(found) / len(found) if found else None", "float('inf')"),
     "pytest-rag: custom metric retrieval.mean_found must be a finite number or None, got a "
     "number inf"),
    # Beyond the float range: a clear message, not an internal OverflowError (issue 24).
    (CUSTOM.replace("sum(found) / len(found) if found else None", "10**400"),
     "pytest-rag: custom metric retrieval.mean_found must be a finite number or None, got a number "
     "100000000000000000...0000000000000000000"),
])
def test_bad_computed_metric_fails_the_test(custom: pytest.Pytester, conftest: str,
                                            message: str) -> None:
    custom.makeconftest(conftest)
    result = custom.runpytest("-p", "no:cacheprovider", "--rag-update-baseline",
                              "--rag-report=report.json")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([message])
    result.stdout.no_fnmatch_line("*During handling*")


@pytest.mark.parametrize(("conftest", "message"), [
    ("def pytest_rag_register_metrics(config):\n    return ['retrieval.mine']\n",
     "ERROR: pytest_rag_register_metrics must return MetricSpec objects, got 'retrieval.mine'"),
    ("from pytest_rag import REGISTRY\n\n\ndef pytest_rag_register_metrics(config):\n"
     "    return [REGISTRY['retrieval.recall_at_k']]\n",
     "ERROR: pytest-rag: custom metric retrieval.recall_at_k is already defined"),
])
def test_bad_registration_is_a_usage_error(rag_pytester: pytest.Pytester, conftest: str,
                                           message: str) -> None:
    rag_pytester.makeconftest(conftest)
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


SCORECARD_HOOK = """
import json


def pytest_rag_scorecard(config, scorecard):
    with open("scorecards.log", "a") as log:
        log.write(json.dumps(scorecard.to_json()["summary"], sort_keys=True) + "\\n")
"""
TWO_TESTS = """
def test_one(rag):
    rag.retrieval()


def test_two(rag):
    rag.retrieval(k=1)
"""


@pytest.mark.parametrize("workers", ["0", "2"])  # "2": the fast run's one xdist check
def test_scorecard_hook_is_called_once(rag_pytester: pytest.Pytester, workers: str) -> None:
    rag_pytester.makeconftest(SCORECARD_HOOK)
    rag_pytester.makepyfile(test_rag=TWO_TESTS)
    result = rag_pytester.runpytest_subprocess("-p", "no:cacheprovider", *FEWER_PLUGINS,
                                               "-n", workers)
    result.assert_outcomes(passed=2)
    assert (rag_pytester.path / "scorecards.log").read_text().splitlines() == [
        '{"not measured": 8, "ok": 18, "stages": 2}']
