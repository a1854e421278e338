"""The documented ROUGE-L difference from rouge-score (README, "How the numbers compare"):
two texts without a token score 1 here and 0 there; one empty side scores 0 in both."""

from __future__ import annotations

import pytest

from pytest_rag.stages.generation import GenerationEvaluator

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")


@pytest.mark.parametrize(("answer", "reference", "here", "there"), [
    ("", "", 1.0, 0.0),
    ("...", "!!", 1.0, 0.0),
    ("", "thirty days", 0.0, 0.0),
    ("thirty days", "", 0.0, 0.0),
])
def test_rouge_l_of_empty_texts(answer: str, reference: str, here: float,
                                there: float) -> None:
    report = GenerationEvaluator().evaluate(queries=[{"id": "q", "reference_answer": reference}],
                                            answer={"q": answer})
    assert report.values["rouge_l_f1"] == here
    scored = rouge_scorer.RougeScorer(["rougeL"]).score(reference, answer)
    assert scored["rougeL"].fmeasure == there
