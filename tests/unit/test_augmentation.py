"""Augmentation (context) metrics by hand."""

from __future__ import annotations

import pytest

from pytest_rag import AugmentationEvaluator, DatasetError

TEXT = "one two three four five six seven eight"
#       0   4   8     14   19   24  28    34
CHUNKS = [{"id": "a", "start": 0, "end": 13}, {"id": "b", "start": 14, "end": 27},
          {"id": "c", "start": 28, "end": 39}]
GOLD = {"q": [{"start": 4, "end": 13}]}  # "two three": 2 tokens, inside chunk a


def evaluate(context: list[str], budget: int | None = None, **extra: object):
    return AugmentationEvaluator(max_context_tokens=budget).evaluate(
        documents={"d": TEXT}, chunks=CHUNKS, expected_evidence=GOLD,
        context_ids={"q": context}, **extra)


def test_by_hand() -> None:
    report = evaluate(["b", "a", "a"], budget=8)
    # context positions {3,4,5} | {0,1,2}; tokens counted 3 + 3 + 3 = 9
    assert report.context_precision == pytest.approx(2 / 6)
    assert report.context_noise == pytest.approx(1 - 2 / 6)
    assert report.context_recall == 1.0
    assert report.context_sufficient == 1.0
    assert report.duplicate_ratio == pytest.approx((9 - 6) / 9)
    assert report.budget_compliant == 0.0
    # evidence entries at indices 1 and 2 of 3: |2*(1/2)-1| = 0, |2*1-1| = 1
    assert report.evidence_edge_placement == pytest.approx(0.5)


def test_single_entry_and_empty_context() -> None:
    assert evaluate(["a"]).evidence_edge_placement == 1.0
    empty = evaluate([], budget=0)
    assert empty.context_precision == 0.0 and empty.context_recall == 0.0
    assert empty.context_sufficient == 0.0 and empty.budget_compliant == 1.0
    assert (empty.values["duplicate_ratio"] is None
            and empty.values["evidence_edge_placement"] is None)


def test_gold_free_metrics_without_evidence() -> None:
    report = AugmentationEvaluator(max_context_tokens=5).evaluate(
        documents={"d": TEXT}, chunks=CHUNKS, context_ids={"q": ["a", "a"]})
    assert report.duplicate_ratio == 0.5 and report.budget_compliant == 0.0
    assert report.values["context_precision"] is None
    assert report.missing["context_precision"] == "needs expected_evidence"


def test_budget_needs_a_setting() -> None:
    report = evaluate(["a"])
    assert report.values["budget_compliant"] is None
    assert report.missing["budget_compliant"] == "needs max_context_tokens"


def test_unknown_context_chunk_is_an_error() -> None:
    with pytest.raises(DatasetError, match=r"^<arguments>: context_ids\['q'\]\[1\]: "
                                           r"unknown chunk 'zz'"):
        evaluate(["a", "zz"])


def test_bad_budget() -> None:
    with pytest.raises(ValueError, match="max_context_tokens"):
        AugmentationEvaluator(max_context_tokens=-1)
