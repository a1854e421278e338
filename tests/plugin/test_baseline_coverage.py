"""What a baseline run covers: failed tests are not recorded, xfail and skipped tests are
named, stale entries fail ``--rag-strict``, and a run from a subfolder speaks for that
subfolder only (issue 24, items 2, 8, 11 and 13).
"""

from __future__ import annotations

import json

import pytest
from ragproject import BASELINE, FEWER_PLUGINS, GOLD, WORSE, baseline, set_inputs

RUN = ("-p", "no:cacheprovider")
UPDATE = (*RUN, "--rag-update-baseline")
COMPARE = (*RUN, "--rag-baseline")

# test_ok passes; test_flaky fails its own assert, test_broken raises, when the flag
# file of their name exists; all read inputs.json.
TESTS = """
import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


def inputs():
    path = HERE / "inputs.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_ok(rag):
    rag.retrieval(**inputs())


def test_flaky(rag):
    rag.retrieval(**inputs())
    assert not (HERE / "fail").exists(), "the pipeline broke"


def test_broken(rag):
    rag.retrieval(**inputs())
    if (HERE / "fail").exists():
        raise ConnectionError("the service is down")
"""


def recall(pytester: pytest.Pytester, nodeid: str) -> float:
    return baseline(pytester)["tests"][nodeid]["retrieval"]["metrics"]["recall_at_k"]["value"]


@pytest.fixture
def project(rag_pytester: pytest.Pytester) -> pytest.Pytester:
    rag_pytester.makepyfile(test_rag=TESTS)
    return rag_pytester


# -- item 2: an update does not record the numbers of a test that did not pass ----------
def test_an_update_keeps_the_entry_of_a_test_that_failed_and_names_it(
        project: pytest.Pytester) -> None:
    project.runpytest(*UPDATE).assert_outcomes(passed=3)
    before = baseline(project)["tests"]
    set_inputs(project, retrieved_ids=WORSE)
    (project.path / "fail").touch()
    result = project.runpytest(*UPDATE)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        ("pytest-rag: baseline entries not updated: test failed (--rag-update-failed "
        "records them anyway): test_rag.py::test_flaky, test_rag.py::test_broken")])
    after = baseline(project)["tests"]
    assert after["test_rag.py::test_flaky"] == before["test_rag.py::test_flaky"]
    assert after["test_rag.py::test_broken"] == before["test_rag.py::test_broken"]
    assert recall(project, "test_rag.py::test_ok") == pytest.approx(7 / 12)
    # A later real drop still fails against the old entry.
    (project.path / "fail").unlink()
    result = project.runpytest("test_rag.py::test_flaky", *COMPARE)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*RAG checks failed: retrieval.* worse than the baseline*"])


def test_a_failed_test_without_an_entry_gets_none(project: pytest.Pytester) -> None:
    (project.path / "fail").touch()
    result = project.runpytest(*UPDATE)
    result.assert_outcomes(passed=1, failed=2)
    assert sorted(baseline(project)["tests"]) == ["test_rag.py::test_ok"]
    result.stdout.fnmatch_lines(["pytest-rag: baseline entries not updated: test failed *"])


def test_update_failed_records_a_failed_test_anyway(project: pytest.Pytester) -> None:
    project.runpytest(*UPDATE).assert_outcomes(passed=3)
    set_inputs(project, retrieved_ids=WORSE)
    (project.path / "fail").touch()
    result = project.runpytest(*UPDATE, "--rag-update-failed")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.no_fnmatch_line("*not updated: test failed*")
    for nodeid in ("test_rag.py::test_ok", "test_rag.py::test_flaky",
                   "test_rag.py::test_broken"):
        assert recall(project, nodeid) == pytest.approx(7 / 12)


TEARDOWN_ERROR = """
import pytest


@pytest.fixture
def service():
    yield
    raise RuntimeError("the service did not shut down")


def test_torn(rag, service):
    rag.retrieval()
"""


def test_a_test_with_an_error_in_teardown_is_not_recorded(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=TEARDOWN_ERROR)
    result = rag_pytester.runpytest(*UPDATE)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([("pytest-rag: baseline entries not updated: test failed *"
                                 "test_rag.py::test_torn")])
    assert baseline(rag_pytester)["tests"] == {}


# -- item 11: a regression in an xfail test ------------------------------------------------
XFAIL = """
import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


@pytest.mark.xfail(reason="answers are not grounded yet")
def test_known_gap(rag):
    path = HERE / "inputs.json"
    rag.retrieval(**(json.loads(path.read_text()) if path.exists() else {}))
    assert False, "generation is not grounded yet"
"""


def test_a_regression_in_an_xfail_test_is_named_and_fails_strict(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=XFAIL)
    result = rag_pytester.runpytest(*UPDATE)
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["pytest-rag: baseline entries not updated: test failed "
                                 "*: test_rag.py::test_known_gap"])
    rag_pytester.runpytest(*UPDATE, "--rag-update-failed").assert_outcomes(xfailed=1)
    set_inputs(rag_pytester, retrieved_ids=WORSE)
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        ("pytest-rag: regressions in xfail tests (they do not fail; --rag-strict fails them): "
        "test_rag.py::test_known_gap [[]retrieval: *recall_at_k*]")])
    result = rag_pytester.runpytest(*COMPARE, "--rag-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*RAG checks failed: retrieval.* worse than the baseline*",
                                 "*a regression in an xfail test (--rag-strict)*"])


# -- item 8: under --rag-strict, what the gate did not cover fails -------------------------
SKIPPING = """
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


def test_a(rag):
    rag.retrieval()


@pytest.mark.skipif((HERE / "skip-b").exists(), reason="service down")
def test_b(rag):
    rag.retrieval()


def test_c(rag):
    if (HERE / "skip-c").exists():
        pytest.skip("no key")
    rag.retrieval()
"""


def test_a_skipped_gated_test_is_not_gated_and_fails_strict(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=SKIPPING)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=3)
    (rag_pytester.path / "skip-b").touch()
    (rag_pytester.path / "skip-c").touch()
    result = rag_pytester.runpytest(*COMPARE)
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == pytest.ExitCode.OK
    line = ("pytest-rag: not gated in this run (skipped; their baseline entries were not "
            "compared): test_rag.py::test_b, test_rag.py::test_c")
    result.stdout.fnmatch_lines([line])
    result = rag_pytester.runpytest(*COMPARE, "--rag-strict")
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([line + " (--rag-strict fails the run)"])


def test_stale_entries_fail_strict_on_a_run_of_the_whole_suite(
        rag_pytester: pytest.Pytester) -> None:
    rag_pytester.makepyfile(test_rag=SKIPPING)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=3)
    rag_pytester.makepyfile(test_rag=SKIPPING.split("@pytest.mark.skipif")[0])  # test_a only
    result = rag_pytester.runpytest(*COMPARE, "--rag-strict")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        ("pytest-rag: baseline entries of tests that no longer exist (remove with "
        "--rag-update-baseline --rag-prune-baseline on a full run): test_rag.py::test_b, "
        "test_rag.py::test_c (--rag-strict fails the run)")])
    # Not the whole suite: nothing is proven gone, nothing fails.
    result = rag_pytester.runpytest(*COMPARE, "--rag-strict", "-k", "test_a")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.no_fnmatch_line("*no longer exist*")


# -- item 13: a run started in a subfolder speaks for that subfolder -----------------------
def tree(pytester: pytest.Pytester) -> None:
    """tests/retrieval/test_r.py and tests/other/test_o.py, with the ini at the top."""
    pytester.makefile(".yaml", gold=GOLD)
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.yaml\n")
    for folder, name in (("retrieval", "test_r"), ("other", "test_o")):
        sub = pytester.path / "tests" / folder
        sub.mkdir(parents=True)
        (sub / f"{name}.py").write_text(f"def {name}(rag):\n    rag.retrieval()\n")


def entries(pytester: pytest.Pytester) -> list[str]:
    return sorted(json.loads((pytester.path / BASELINE).read_text())["tests"])


BOTH = ["tests/other/test_o.py::test_o", "tests/retrieval/test_r.py::test_r"]


def test_a_run_from_a_subfolder_prunes_only_what_it_covered(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    tree(pytester)
    pytester.runpytest(*UPDATE).assert_outcomes(passed=2)
    assert entries(pytester) == BOTH
    monkeypatch.chdir(pytester.path / "tests" / "retrieval")
    result = pytester.runpytest(*UPDATE, "--rag-prune-baseline")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*pruned*")
    result.stdout.fnmatch_lines(["pytest-rag: --rag-prune-baseline kept 1 entry outside the "
                                 "paths this run collected from, which it cannot tell are "
                                 "gone (run from the rootdir to prune them)"])
    assert entries(pytester) == BOTH
    # A test of this folder that is gone is pruned; the other folder's entry stays.
    (pytester.path / "tests" / "retrieval" / "test_r.py").write_text(
        "def test_r2(rag):\n    rag.retrieval()\n")
    result = pytester.runpytest(*UPDATE, "--rag-prune-baseline")
    result.stdout.fnmatch_lines([("pytest-rag: pruned baseline entries: "
                                 "tests/retrieval/test_r.py::test_r")])
    assert entries(pytester) == ["tests/other/test_o.py::test_o",
                                 "tests/retrieval/test_r.py::test_r2"]


def test_a_compare_run_from_a_subfolder_does_not_call_other_folders_stale(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    tree(pytester)
    pytester.runpytest(*UPDATE).assert_outcomes(passed=2)
    monkeypatch.chdir(pytester.path / "tests" / "retrieval")
    for strict in ((), ("--rag-strict",)):
        result = pytester.runpytest(*COMPARE, *strict)
        result.assert_outcomes(passed=1)
        assert result.ret == pytest.ExitCode.OK
        result.stdout.no_fnmatch_line("*no longer exist*")


# -- the same through pytest-xdist: the controller learns it from the workers' reports -----
XDIST_TESTS = SKIPPING + '''

def test_d(rag):
    rag.retrieval()
    assert not (HERE / "fail").exists()
'''


@pytest.mark.slow  # starts pytest-xdist workers
def test_under_xdist_the_controller_names_failed_and_skipped_tests(
        rag_pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    rag_pytester.makepyfile(test_rag=XDIST_TESTS)
    rag_pytester.runpytest(*UPDATE).assert_outcomes(passed=4)
    (rag_pytester.path / "skip-b").touch()
    (rag_pytester.path / "fail").touch()
    before = baseline(rag_pytester)["tests"]
    result = rag_pytester.runpytest_subprocess(*UPDATE, *FEWER_PLUGINS, "-n", "2")
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    result.stdout.fnmatch_lines([("pytest-rag: baseline entries not updated: test failed "
                                 "(--rag-update-failed records them anyway): "
                                 "test_rag.py::test_d")])
    assert baseline(rag_pytester)["tests"]["test_rag.py::test_d"] == before["test_rag.py::test_d"]
    (rag_pytester.path / "fail").unlink()  # every test that runs passes: only the skip fails
    result = rag_pytester.runpytest_subprocess(*COMPARE, *FEWER_PLUGINS, "--rag-strict",
                                               "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([("pytest-rag: not gated in this run (skipped; their baseline "
                                 "entries were not compared): test_rag.py::test_b "
                                 "(--rag-strict fails the run)")])
