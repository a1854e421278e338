"""A run file beside the gold: ini ``rag_run``, ``--rag-run`` and the marker's ``run=``."""

from __future__ import annotations

import pytest

GOLD = ("documents: [{id: d, text: alpha beta gamma}]\n"
        "chunks: [{id: a, doc_id: d, start: 0, end: 5}, {id: b, doc_id: d, start: 6, end: 10}]\n"
        "queries: [{id: q1, relevant: {a: 1}}]\n"
        "run: {q1: {retrieved_ids: [a, b]}}\n")
TEST = """
def test_run(rag, rag_dataset):
    assert rag_dataset.run["q1"].retrieved_ids == {expected!r}
    rag.retrieval()
"""


@pytest.mark.parametrize(("ini", "args", "expected"), [
    ("", (), ("a", "b")),                                  # the gold's own run
    ("rag_run = run.yaml\n", (), ("b", "a")),
    ("", ("--rag-run", "run.yaml"), ("b", "a")),
    ("rag_run = none.yaml\n", ("--rag-run", "run.yaml"), ("b", "a")),  # the option wins
])
def test_a_configured_run_file_replaces_the_run(pytester: pytest.Pytester, ini: str,
                                                args: tuple[str, ...],
                                                expected: tuple[str, ...]) -> None:
    pytester.makefile(".yaml", gold=GOLD, run="q1: {retrieved_ids: [b, a]}\n")
    pytester.makeini(f"[pytest]\nrag_dataset = gold.yaml\n{ini}")
    pytester.makepyfile(test_run=TEST.format(expected=expected))
    pytester.runpytest("-p", "no:cacheprovider", *args).assert_outcomes(passed=1)


def test_the_marker_takes_a_run_file(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", gold=GOLD, run="run:\n  q1: {retrieved_ids: [b]}\n")
    pytester.makepyfile(test_run="""
import pytest


@pytest.mark.rag_dataset("gold.yaml", run="run.yaml")
def test_marked(rag_dataset):
    assert rag_dataset.run["q1"].retrieved_ids == ("b",)


@pytest.mark.rag_dataset("gold.yaml")
def test_own_run(rag_dataset):
    assert rag_dataset.run["q1"].retrieved_ids == ("a", "b")
""")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_a_bad_run_file_fails_the_test_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", gold=GOLD, run="q1: {retrieved_ids: [b, 7]}\n")
    pytester.makeini("[pytest]\nrag_dataset = gold.yaml\nrag_run = run.yaml\n")
    pytester.makepyfile(test_run=TEST.format(expected=()))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)  # the rag_dataset fixture fails: the test cannot start
    result.stdout.fnmatch_lines([f"pytest-rag: {pytester.path / 'run.yaml'}: "
                                 "q1.retrieved_ids[[]1[]]: expected a string, got a number 7"])
