"""Declared thresholds: ini ``rag_thresholds``, ``--rag-threshold``, the ``rag_threshold`` marker.
"""

from __future__ import annotations

import pytest
from ragproject import write_ini

# recall_at_k is (1 + 2/3 + 0 + 1) / 4 = 0.667 and hit_at_k 3/4 = 0.750 on gold.yaml.
RECALL_FAILS = "retrieval.recall_at_k = 0.667, expected >= 0.9 ({source} threshold)"


def test_ini_thresholds_fail_the_test_that_recorded_the_stage(
        rag_pytester: pytest.Pytester) -> None:
    write_ini(rag_pytester, "rag_thresholds =", "    retrieval.recall_at_k >= 0.9",
              "    retrieval.hit_at_k >= 0.5", "    generation.answer_f1 >= 0.9")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        f"RAG checks failed: {RECALL_FAILS.format(source='ini')}",
        "FAILED test_rag.py::test_retrieval - RAG checks failed: retrieval.recall_at_k*",
    ])
    result.stdout.no_fnmatch_line(RECALL_FAILS.format(source="ini"))  # said once
    # hit_at_k passes; the generation threshold has no generation report to apply to.
    result.stdout.no_fnmatch_line("*hit_at_k = *expected*")
    result.stdout.no_fnmatch_line("*answer_f1*")


def test_cli_thresholds_are_repeatable(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest("-p", "no:cacheprovider",
                                    "--rag-threshold", "retrieval.recall_at_k>=0.9",
                                    "--rag-threshold=retrieval.hit_at_k > 0.8")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "RAG checks failed: retrieval.recall_at_k = 0.667, expected >= 0.9 (cli threshold) "
        "(+1 more below)",
        "retrieval.hit_at_k = 0.750, expected > 0.8 (cli threshold)",
    ])


def test_passing_thresholds_pass(rag_pytester: pytest.Pytester) -> None:
    write_ini(rag_pytester, "rag_thresholds = retrieval.recall_at_k >= 0.6")
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-threshold",
                                    "retrieval.p95_latency_ms <= 400")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK


def test_threshold_on_a_metric_not_measured_fails(rag_pytester: pytest.Pytester) -> None:
    result = rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-threshold",
                                    "retrieval.token_recall >= 0.5")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "RAG checks failed: retrieval.token_recall = not measured, expected >= 0.5 "
        "(cli threshold), not measured: needs expected_evidence, chunks",
    ])


MARKED = """
import pytest
from pytest_rag import assert_metric
from pytest_rag.metrics import recall_at_k

pytestmark = pytest.mark.rag_threshold("retrieval.recall_at_k >= 0.95")


def test_module_marker(rag):
    rag.retrieval()


@pytest.mark.rag_threshold("retrieval.recall_at_k >= 0.6")
def test_function_marker_beats_module_marker(rag):
    rag.retrieval()


@pytest.mark.rag_threshold("retrieval.recall_at_k >= 0.6")
class TestClass:
    def test_class_marker(self, rag):
        rag.retrieval()

    @pytest.mark.rag_threshold("retrieval.hit_at_k >= 0.8")
    def test_markers_of_other_metrics_add_up(self, rag):
        rag.retrieval()


def test_own_check_beats_every_declared_threshold(rag):
    report = rag.retrieval()
    assert_metric(report.recall_at_k >= 0.1)


def test_own_symbolic_check_beats_them_too(rag):
    rag.retrieval()
    assert_metric(recall_at_k >= 0.1)


def test_own_plain_assert_beats_them_too(rag):
    report = rag.retrieval()
    assert report.recall_at_k >= 0.1
"""


@pytest.fixture
def precedence(rag_pytester: pytest.Pytester) -> pytest.Pytester:
    """ini says 0.9, the command line 0.5 and the module marker 0.95 (all on recall_at_k)."""
    write_ini(rag_pytester, "rag_thresholds = retrieval.recall_at_k >= 0.9")
    rag_pytester.makepyfile(test_rag=MARKED)
    return rag_pytester


def test_precedence_test_over_marker_over_cli_over_ini(precedence: pytest.Pytester) -> None:
    result = precedence.runpytest("-p", "no:cacheprovider", "-rf", "--rag-threshold",
                                  "retrieval.recall_at_k >= 0.5", "--rag-scorecard=summary")
    result.assert_outcomes(passed=5, failed=2)
    result.stdout.fnmatch_lines([
        "RAG checks failed: retrieval.recall_at_k = 0.667, expected >= 0.95 (marker threshold)",
        "RAG checks failed: retrieval.hit_at_k = 0.750, expected >= 0.8 (marker threshold)",
        "FAILED test_rag.py::test_module_marker - *",
        "FAILED test_rag.py::TestClass::test_markers_of_other_metrics_add_up - *",
    ], consecutive=False)


def test_cli_beats_ini_and_ini_applies_alone(rag_pytester: pytest.Pytester) -> None:
    write_ini(rag_pytester, "rag_thresholds = retrieval.recall_at_k >= 0.9")
    rag_pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    rag_pytester.runpytest("-p", "no:cacheprovider", "--rag-threshold",
                           "retrieval.recall_at_k >= 0.5").assert_outcomes(passed=1)


def test_scorecard_shows_the_threshold_that_applied(precedence: pytest.Pytester) -> None:
    result = precedence.runpytest("-p", "no:cacheprovider", "-k", "symbolic or class_marker",
                                  "--rag-scorecard=full")  # thresholds that hold: quiet by default
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "test_rag.py::TestClass::test_class_marker [[]retrieval[]] (k=2)",
        "*recall_at_k *0.667 *>= 0.6 *ok",
        "test_rag.py::test_own_symbolic_check_beats_them_too [[]retrieval[]] (k=2)",
        "*recall_at_k *0.667 *>= 0.1 *ok",
    ])


@pytest.mark.parametrize(("args", "ini", "message"), [
    (["--rag-threshold", "recall_at_k>=0.8"], "",
     "ERROR: pytest-rag: --rag-threshold: 'recall_at_k>=0.8': expected 'stage.metric OP number', "
     "e.g. 'retrieval.recall_at_k >= 0.8' (OP: <, <=, >, >=, ==)"),
    (["--rag-threshold", "retrieval.recall >= 0.8"], "",
     "ERROR: pytest-rag: --rag-threshold: 'retrieval.recall >= 0.8': unknown metric 'recall' (did "
     "you mean 'recall_at_k'?) of stage 'retrieval'; known: precision_at_k, recall_at_k, *"),
    (["--rag-threshold", "retrival.recall_at_k >= 0.8"], "",
     "ERROR: pytest-rag: --rag-threshold: 'retrival.recall_at_k >= 0.8': unknown stage 'retrival' "
     "(did you mean 'retrieval'?); known: *"),
    (["--rag-threshold", "retrieval.recall_at_k >= high"], "",
     "ERROR: pytest-rag: --rag-threshold: 'retrieval.recall_at_k >= high': 'high' is not a number"),
    ([], "rag_thresholds = retrieval.recall_at_k => 0.8",
     "ERROR: pytest-rag: ini rag_thresholds: 'retrieval.recall_at_k => 0.8': expected "
     "'stage.metric OP number'*"),
    ([], "rag_thresholds = retrieval.recall_at_k >= nan",
     "ERROR: pytest-rag: ini rag_thresholds: 'retrieval.recall_at_k >= nan': the threshold must "
     "be a finite number"),
])
def test_bad_threshold_text_is_a_usage_error(rag_pytester: pytest.Pytester, args: list[str],
                                             ini: str, message: str) -> None:
    if ini:
        write_ini(rag_pytester, ini)
    result = rag_pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    result.stdout.no_fnmatch_line("*test_rag.py*")


def test_bad_marker_is_an_error_of_its_test(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag="""
import pytest


@pytest.mark.rag_threshold("retrieval.recall_at_k >> 0.8")
def test_text(rag):
    rag.retrieval()


@pytest.mark.rag_threshold(0.8)
def test_number(rag):
    rag.retrieval()
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([
        "*ERROR at setup of test_text*",
        "pytest-rag: @pytest.mark.rag_threshold('retrieval.recall_at_k >> 0.8'): "
        "'retrieval.recall_at_k >> 0.8': expected 'stage.metric OP number'*",
        "*ERROR at setup of test_number*",
        "pytest-rag: @pytest.mark.rag_threshold takes strings like "
        "'retrieval.recall_at_k >= 0.8', got 0.8",
    ], consecutive=False)


def test_misspelled_marker_metric_is_an_error_even_when_nothing_is_recorded(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag="""
import pytest


@pytest.mark.rag_threshold("retrieval.recal_at_k >= 0.5")
def test_records_nothing():
    pass


@pytest.mark.rag_threshold("generaton.answer_f1 >= 0.5")
def test_records_retrieval(rag):
    rag.retrieval()
""")
    result = rag_pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([
        "pytest-rag: @pytest.mark.rag_threshold('retrieval.recal_at_k >= 0.5'): *unknown "
        "metric 'recal_at_k' (did you mean 'recall_at_k'?)*",
        "pytest-rag: @pytest.mark.rag_threshold('generaton.answer_f1 >= 0.5'): *unknown "
        "stage 'generaton' (did you mean 'generation'?)*",
    ], consecutive=False)
