"""The gate on metrics whose per-query value the answer itself can leave undefined.

``generation.unsupported_number_rate`` is ``None`` for an answer without a number
although every input is there.  A new-user trial found two ways the gate got it
wrong: a number-free answer that became an unsupported number ("After ninety
days." -> "After 45 days.") passed, the query measured now only being ignored;
and a hallucinated number that became an abstention failed as a lost query.  Such
a metric is compared on what each side measured; a query the pipeline no longer
answered at all stays lost.
"""

from __future__ import annotations

import json

import pytest
from ragproject import scorecard_lines

RUN = ("-p", "no:cacheprovider")
UPDATE = (*RUN, "--rag-update-baseline")
COMPARE = (*RUN, "--rag-baseline")

GOLD = """\
documents:
  - {id: api, text: "Each token may make 600 requests per minute. Tokens expire after 90 days."}
chunks:
  - {id: c0, doc_id: api, start: 0, end: 44}
  - {id: c1, doc_id: api, start: 45, end: 73}
queries:
  - id: q1
    question: How many requests per minute?
    required_facts: ["600"]
    reference_answer: 600 requests per minute.
  - id: q2
    question: When do tokens expire?
    required_facts: ["90 days"]
    reference_answer: After 90 days.
  - id: q3
    question: Can I pay with bitcoin?
    answerable: false
"""

TEST_GEN = """\
import json
import pathlib


def test_generation(rag):
    answers = json.loads((pathlib.Path(__file__).parent / "answers.json").read_text())
    rag.generation(answer=answers, context_ids={query: ["c1" if query == "q2" else "c0"]
                                                for query in answers})
"""

ANSWERS = {"q1": "The limit is 600 requests per minute.", "q2": "After ninety days.",
           "q3": "I don't know."}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", gold=GOLD)
    pytester.makefile(".ini", pytest="[pytest]\nrag_dataset = gold.yaml\n")
    pytester.makepyfile(test_gen=TEST_GEN)
    return pytester


def answer(pytester: pytest.Pytester, **answers: str) -> None:
    (pytester.path / "answers.json").write_text(json.dumps(answers), encoding="utf-8")


def row(result: pytest.RunResult, key: str) -> list[str]:
    return next(line.split() for line in scorecard_lines(result) if line.split()[:1] == [key])


def said(result: pytest.RunResult) -> str:
    return " ".join(result.stdout.str().split())


def test_an_unsupported_number_in_an_answer_that_had_none_regresses(
        project: pytest.Pytester) -> None:
    answer(project, **ANSWERS)  # q2 has no number: unsupported_number_rate None for it
    project.runpytest(*UPDATE).assert_outcomes(passed=1)
    answer(project, **{**ANSWERS, "q2": "After 45 days."})  # 45 is not in the context
    result = project.runpytest(*COMPARE, "-v")
    result.assert_outcomes(failed=1)
    assert row(result, "unsupported_number_rate") == ["unsupported_number_rate", "0.500",
                                                      "0.000", "+0.500", "REGRESSED"]
    assert ("generation.unsupported_number_rate 0.000 -> 0.500, worse than the baseline"
            in said(result))
    assert "unsupported_number_rate: 1 query newly measured: q2" in said(result)
    assert "LOST" not in said(result)


def test_a_hallucinated_number_become_an_abstention_is_no_lost_query(
        project: pytest.Pytester) -> None:
    answer(project, **{**ANSWERS, "q3": "Bitcoin payments cost 5 EUR."})
    project.runpytest(*UPDATE).assert_outcomes(passed=1)
    answer(project, **ANSWERS)
    result = project.runpytest(*COMPARE, "-v")
    result.assert_outcomes(passed=1)
    # Each side's mean over what it measured: q1 0 and q3 1 before, q1 0 now.
    assert row(result, "unsupported_number_rate") == ["unsupported_number_rate", "0.000",
                                                      "0.500", "-0.500", "improved"]
    assert row(result, "abstention_accuracy")[-1] == "improved"
    assert ("unsupported_number_rate: 1 query no longer measurable (the answer has no "
            "number): q3") in said(result)
    assert "LOST" not in said(result) and "no longer measured" not in said(result)


def test_without_a_query_measured_on_both_sides_the_tolerance_decides(
        project: pytest.Pytester) -> None:
    answer(project, q1="Six hundred.", q2="After ninety days.", q3="I don't know.")
    project.runpytest(*UPDATE).assert_outcomes(passed=1)  # no number in any answer
    answer(project, q1="Six hundred.", q2="After 45 days.", q3="I don't know.")
    result = project.runpytest(*COMPARE, "--rag-significance=0.05")
    result.assert_outcomes(passed=1)  # no baseline value: new, as before
    assert row(result, "unsupported_number_rate") == ["unsupported_number_rate", "1.000",
                                                      "new"]

    answer(project, **ANSWERS)
    project.runpytest(*UPDATE).assert_outcomes(passed=1)  # q1 measured (0), q2 not
    answer(project, q1="Six hundred.", q2="After 45 days.", q3="I don't know.")
    result = project.runpytest(*COMPARE, "--rag-significance=0.05")
    result.assert_outcomes(failed=1)  # 0.0 -> 1.0, no query measured on both sides
    assert row(result, "unsupported_number_rate") == ["unsupported_number_rate", "1.000",
                                                      "0.000", "+1.000", "by", "tolerance",
                                                      "REGRESSED"]
    assert ("1 query newly measured: q2; 1 query no longer measurable (the answer has no "
            "number): q1") in said(result)


def test_a_query_no_longer_answered_at_all_is_lost(project: pytest.Pytester) -> None:
    answer(project, **{**ANSWERS, "q2": "After 90 days."})
    project.runpytest(*UPDATE).assert_outcomes(passed=1)
    answer(project, q1=ANSWERS["q1"], q3=ANSWERS["q3"])  # a partial run: q2 not answered
    result = project.runpytest(*COMPARE)
    result.assert_outcomes(failed=1)
    assert row(result, "unsupported_number_rate")[-1] == "LOST"
    assert row(result, "answer_f1")[-1] == "LOST"
    assert "unsupported_number_rate: 1 query no longer measured: q2" in said(result)
