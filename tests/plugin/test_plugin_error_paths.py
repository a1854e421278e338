"""Every documented error path through pytest, with the exact message.

The cases are shared with ``tests/unit/test_error_paths.py``
(``tests/error_cases.py``): the same cause gives the same message as
``pytest-rag``.  Through pytest a bad dataset fails the test that asks for the
data (``pytest-rag: <message>``, exit status 1, the other tests still run);
a bad baseline, option or ini value is a usage error (exit status 4) before
any test runs.  (This module is not named ``test_error_paths.py``: the unit
test of that name would clash with it under pytest's default import mode.)
"""

from __future__ import annotations

import pytest
from error_cases import (
    BASELINE_CASES,
    DATASET_CASES,
    RESTORE_HINT,
    BaselineCase,
    DatasetCase,
    exact,
    write_baseline,
)
from ragproject import BASELINE, write_ini

RUN = ("-p", "no:cacheprovider")
#: The inner test: every stage the dataset allows, so that load and evaluation errors show.
TEST_DATASET = """\
def test_dataset(rag):
    rag.evaluate()


def test_other():
    pass
"""


def dataset_project(pytester: pytest.Pytester, case: DatasetCase, *ini: str) -> str:
    path = case.write(pytester.path)
    pytester.makefile(".ini", pytest="\n".join(["[pytest]", f"rag_dataset = {case.name}", *ini])
                      + "\n")
    pytester.makepyfile(test_dataset=TEST_DATASET)
    return case.expected(path)


@pytest.mark.parametrize("case", DATASET_CASES, ids=lambda case: case.id)
def test_bad_dataset_fails_the_test_that_asks_with_the_cli_message(
        pytester: pytest.Pytester, case: DatasetCase) -> None:
    message = dataset_project(pytester, case)
    result = pytester.runpytest(*RUN)
    if case.text is None:  # a configured dataset that does not exist: one usage error
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([exact(f"ERROR: pytest-rag: {message} (ini rag_dataset "
                                           "in pytest.ini)")])
        return
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines([exact(f"pytest-rag: {message}")])
    result.stdout.no_fnmatch_line("*Traceback*")


@pytest.mark.parametrize("case", [case for case in DATASET_CASES if case.allowed_by_outside_paths],
                         ids=lambda case: case.id)
def test_ini_allow_outside_paths_accepts_the_document(pytester: pytest.Pytester,
                                                      case: DatasetCase) -> None:
    dataset_project(pytester, case, "rag_allow_outside_paths = true")
    pytester.runpytest(*RUN).assert_outcomes(passed=2)


@pytest.mark.parametrize("case", BASELINE_CASES, ids=lambda case: case.id)
def test_bad_baseline_is_a_usage_error_with_the_cli_message(rag_pytester: pytest.Pytester,
                                                            case: BaselineCase) -> None:
    path = rag_pytester.path / BASELINE
    write_baseline(path, case.text)
    result = rag_pytester.runpytest(*RUN, "--rag-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    where = f"baseline file {str(path)!r}"
    result.stderr.fnmatch_lines(
        [exact(f"ERROR: pytest-rag: {case.pytest.replace('{where}', where)}")])
    if case.cli_kind == "baseline file":  # the same words as pytest-rag diff, then the fix
        assert case.pytest in (case.cli, case.cli + RESTORE_HINT)


# -- options and ini values ----------------------------------------------------------------
@pytest.mark.parametrize(("args", "message"), [
    (["--rag-tolerance", "-1"], "argument --rag-tolerance: must be a finite number >= 0, got '-1'"),
    (["--rag-tolerance", "inf"], "argument --rag-tolerance: must be a finite number >= 0, "
                                 "got 'inf'"),
    (["--rag-significance", "1"], "argument --rag-significance: must be between 0 and 1, got '1'"),
    (["--rag-significance", "x"], "argument --rag-significance: expected a number, got 'x'"),
    (["--rag-scorecard", "loud"], "argument --rag-scorecard: invalid choice: 'loud' (choose from "
                                  "'off', 'summary', 'full')"),
], ids=["negative-tolerance", "infinite-tolerance", "significance-out-of-range",
        "significance-not-a-number", "unknown-scorecard-mode"])
def test_bad_option_value_is_a_usage_error(rag_pytester: pytest.Pytester, args: list[str],
                                           message: str) -> None:
    result = rag_pytester.runpytest(*RUN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # The same words as pytest-rag's --tolerance and --significance (pytest_rag.compare.argtypes).
    result.stderr.fnmatch_lines(["*: error: " + exact(message)])


@pytest.mark.parametrize(("line", "message"), [
    ("rag_tolerance = nan", "ini rag_tolerance: must be a finite number >= 0, got 'nan'"),
    ("rag_relative_tolerance = -0.1",
     "ini rag_relative_tolerance: must be a finite number >= 0, got '-0.1'"),
    ("rag_significance = 2", "ini rag_significance: must be between 0 and 1, got '2'"),
    ("rag_significance = often", "ini rag_significance: expected a number, got 'often'"),
    ("rag_max_context_tokens = 1.5", "ini rag_max_context_tokens: expected a whole number, "
                                     "got '1.5'"),
    ("rag_boundary_tolerance = x", "ini rag_boundary_tolerance: expected a whole number, got 'x'"),
    ("rag_tolerances = retrieval.recall_at_k -1",
     "pytest-rag: ini rag_tolerances: 'retrieval.recall_at_k -1': a tolerance must be a "
     "finite number >= 0"),
], ids=["nan-tolerance", "negative-relative-tolerance", "significance-out-of-range",
        "significance-not-a-number", "context-tokens-not-whole", "boundary-not-a-number",
        "negative-metric-tolerance"])
def test_bad_ini_value_is_a_usage_error(rag_pytester: pytest.Pytester, line: str,
                                        message: str) -> None:
    write_ini(rag_pytester, line)
    result = rag_pytester.runpytest(*RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([exact(f"ERROR: {message}")])
    result.stderr.no_fnmatch_line("*Traceback*")


@pytest.mark.parametrize("name", ["rag_allow_outside_paths", "rag_relevance_from_evidence"])
def test_bad_boolean_ini_value_is_a_usage_error(rag_pytester: pytest.Pytester, name: str) -> None:
    write_ini(rag_pytester, f"{name} = maybe")
    result = rag_pytester.runpytest(*RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: ini {name}: *'maybe'*"])


@pytest.mark.parametrize(("args", "ini", "source"), [
    (["--rag-threshold", "retrieval.recall_at_k >= high"], None, "--rag-threshold"),
    ([], "rag_thresholds = retrieval.recall_at_k >= high", "ini rag_thresholds"),
    ([], "rag_tolerances = retrieval.recall_at_k high", "ini rag_tolerances"),
], ids=["option", "ini-thresholds", "ini-tolerances"])
def test_bad_threshold_names_where_it_was_given(rag_pytester: pytest.Pytester, args: list[str],
                                                ini: str | None, source: str) -> None:
    if ini:
        write_ini(rag_pytester, ini)
    result = rag_pytester.runpytest(*RUN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: *{source}*'high' is not a number*"])


def test_bad_setting_in_a_call_fails_that_test(rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag="def test_retrieval(rag):\n    rag.retrieval(k=0)\n")
    result = rag_pytester.runpytest(*RUN)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["pytest-rag: rag.retrieval(): k: must be >= 1, got 0"])


def test_unknown_chunk_passed_from_python_names_the_argument(pytester: pytest.Pytester) -> None:
    # The gold file has no run section: the typo is in the test's argument.
    pytester.makefile(".yaml", gold="documents: [{id: d, text: 'alpha beta gamma'}]\n"
                                    "chunks: [{id: c0, start: 0, end: 10}]\n"
                                    "queries: [{id: q1, expected_evidence: "
                                    "[{start: 0, end: 5}]}]\n")
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.yaml\n")
    pytester.makepyfile(test_rag="def test_retrieval(rag):\n"
                                 "    rag.retrieval(retrieved_ids={'q1': ['c9']})\n")
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([exact("pytest-rag: <arguments>: retrieved_ids['q1'][0]: "
                                       "unknown chunk 'c9': token metrics need its span")])
    result.stdout.no_fnmatch_line("*run.q1*")
