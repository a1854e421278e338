"""Generation metrics on cases small enough to check by hand, and every ``None`` rule."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_rag import DatasetError, GenerationEvaluator, Report, parse_dataset

TEXT = "Refunds are accepted within 30 days. The fee is 2,500 yen or 3.5 percent."
#       0         10        20        30   35   40        50        60        70


def evaluate(**inputs: Any) -> Report:
    return GenerationEvaluator().evaluate(**inputs)


def test_keyword_arguments_by_hand() -> None:
    report = evaluate(answer={"q1": "Refunds within 30 days", "q2": "b a"},
                      reference_answer={"q1": "30 days", "q2": ["a", "b"]})
    # q1: 2 of 4 answer tokens match the 2 reference tokens.
    # q2: reference "a" gives P 1/2, R 1, F1 2/3; "b" the same: the first is kept.
    f1_q1 = 2 * (2 / 4) * 1 / (2 / 4 + 1)
    assert report.exact_match == 0.0
    assert report.answer_precision == pytest.approx((2 / 4 + 1 / 2) / 2)
    assert report.answer_recall == 1.0
    assert report.answer_f1 == pytest.approx((f1_q1 + 2 / 3) / 2)
    # ROUGE-L: q1 LCS 2 as for the token F1; q2 LCS 1 with either reference.
    assert report.rouge_l_f1 == pytest.approx((f1_q1 + 2 / 3) / 2)
    assert report.per_query["exact_match"] == {"q1": 0.0, "q2": 0.0}


def test_exact_match_is_on_normalised_tokens() -> None:
    report = evaluate(answer={"q1": "  January 16, 2024!", "q2": "The 30 days"},
                      reference_answer={"q1": ["16 January 2024", "january 16 2024"],
                                        "q2": "30 days"})
    # No article removal: "the 30 days" differs from "30 days".
    assert report.per_query["exact_match"] == {"q1": 1.0, "q2": 0.0}


def test_word_order_separates_rouge_l_from_token_f1() -> None:
    report = evaluate(answer={"q": "days 30"}, reference_answer={"q": "30 days"})
    assert report.answer_f1 == 1.0
    assert report.rouge_l_f1 == pytest.approx(1 / 2)  # LCS 1: P = R = 1/2


def test_answer_metrics_need_an_answer_and_a_reference() -> None:
    report = evaluate(answer={"q1": "x", "q2": ""},
                      reference_answer={"q2": "", "q3": "y"})
    # q1: no reference; q2: both empty -> 1; q3: no answer.
    for key in ("exact_match", "answer_precision", "answer_recall", "answer_f1", "rouge_l_f1"):
        assert report.per_query[key] == {"q1": None, "q2": 1.0, "q3": None}
    empty = evaluate(answer={"q": "?"}, reference_answer={"q": "x"})
    assert (empty.answer_f1, empty.rouge_l_f1, empty.answer_precision) == (0.0, 0.0, 0.0)


def test_required_fact_coverage() -> None:
    report = evaluate(answer={"q1": "Refunds within 30-days, by CARD.", "q2": "x", "q3": None},
                      required_facts={"q1": ["30 days", "card", "cash", "!"], "q2": ["..."],
                                      "q3": ["x"]})
    # q1: 2 of the 3 facts with a token; q2: no fact with a token; q3: no answer.
    assert report.per_query["required_fact_coverage"] == {"q1": 2 / 3, "q2": None, "q3": None}


def test_citations() -> None:
    report = evaluate(
        cited_ids={"q1": ["d1", "d1", "d9"], "q2": [], "q3": ["d1"], "q4": ["d2"]},
        expected_citations={"q1": ["d1", "d2"], "q2": ["d1"], "q3": [], "q5": ["d1"]},
        answer={"q5": "no cited_ids given"})
    # q1: distinct cited {d1, d9}, 1 correct: P 1/2, R 1/2.  q2: nothing cited: P 0.
    # q3, q4: no expected citations; q5: cited_ids not given.
    per_query = report.per_query
    assert per_query["citation_precision"] == {"q1": 1 / 2, "q2": 0.0, "q3": None, "q4": None,
                                               "q5": None}
    assert per_query["citation_recall"]["q1"] == 1 / 2
    assert per_query["citation_recall"]["q2"] == 0.0
    assert per_query["citation_f1"]["q1"] == pytest.approx(1 / 2)
    assert per_query["citation_f1"]["q2"] == 0.0
    assert report.citation_precision == pytest.approx((1 / 2 + 0) / 2)


def test_annotated_claim_support() -> None:
    claims = [{"claim": "a", "supported": True}, {"claim": "b", "supported": False},
              {"claim": "c", "supported": True}]
    report = evaluate(verified_claims={"q1": claims, "q2": [], "q3": [claims[1]]})
    assert report.per_query["annotated_claim_support"] == {"q1": 2 / 3, "q2": None, "q3": 0.0}
    assert report.annotated_claim_support == pytest.approx((2 / 3 + 0) / 2)


def test_abstention_accuracy() -> None:
    report = evaluate(
        answerable={"a1": True, "a2": True, "u1": False, "u2": False, "u3": False, "n1": True,
                    "n2": False},
        answer={"a1": "30 days", "a2": "I don't know.", "u1": "Not enough information!",
                "u2": "Yes, 19 percent.", "u3": "30 days", "n3": "I don't know"},
        abstained={"u3": True, "a1": None})
    # a1 answers (right), a2 abstains (wrong), u1 abstains (right), u2 answers (wrong),
    # u3: the abstained flag wins over the answer (right).  n1, n2: no run entry;
    # n3: answerable not given.
    assert report.per_query["abstention_accuracy"] == {
        "a1": 1.0, "a2": 0.0, "u1": 1.0, "u2": 0.0, "u3": 1.0, "n1": None, "n2": None,
        "n3": None}
    assert report.abstention_accuracy == pytest.approx(3 / 5)


def test_abstention_needs_abstained_or_an_answer() -> None:
    report = evaluate(answerable={"q1": False, "q2": False},
                      abstained={"q1": True}, task_success={"q2": True})
    # q2 has a run entry, but neither abstained nor answer.
    assert report.per_query["abstention_accuracy"] == {"q1": 1.0, "q2": None}


def test_empty_answer_abstains() -> None:
    report = evaluate(answerable={"q": False}, answer={"q": " ... "})
    assert report.abstention_accuracy == 1.0


def test_abstain_phrases_constructor_params_and_default() -> None:
    raw = {"params": {"abstain_phrases": ["not in the documents"]},
           "queries": [{"id": "q1", "answerable": False}, {"id": "q2", "answerable": False}],
           "run": {"q1": {"answer": "Not in the documents."}, "q2": {"answer": "I don't know"}}}
    dataset = parse_dataset(raw)
    # The file's phrases replace the defaults.
    from_params = GenerationEvaluator().evaluate(dataset)
    assert from_params.per_query["abstention_accuracy"] == {"q1": 1.0, "q2": 0.0}
    assert from_params.settings["abstain_phrases"] == ("not in the documents",)
    # The constructor wins over the file.
    own = GenerationEvaluator(abstain_phrases=["don't know"]).evaluate(dataset)
    assert own.per_query["abstention_accuracy"] == {"q1": 0.0, "q2": 1.0}
    # An empty list: no phrase at all.
    none = GenerationEvaluator(abstain_phrases=[]).evaluate(dataset)
    assert none.abstention_accuracy == 0.0
    # Without params: the defaults.
    del raw["params"]
    default = GenerationEvaluator().evaluate(parse_dataset(raw))
    assert default.per_query["abstention_accuracy"] == {"q1": 0.0, "q2": 1.0}
    assert "no information" in default.settings["abstain_phrases"]


@pytest.mark.parametrize("phrases", ["i don't know", [1], 3])
def test_abstain_phrases_must_be_a_list_of_strings(phrases: Any) -> None:
    with pytest.raises(TypeError, match="abstain_phrases"):
        GenerationEvaluator(abstain_phrases=phrases)


def context_inputs(**inputs: Any) -> dict[str, Any]:
    chunks = [{"id": "c1", "text": "Refunds are accepted within 30 days."},
              {"id": "c2", "text": "The fee is 2,500 yen"}]
    return {"documents": {"doc": TEXT}, "chunks": chunks, **inputs}


def test_context_grounding_and_numbers_by_hand() -> None:
    report = evaluate(**context_inputs(
        answer={"q1": "Refunds within 30 days cost 2500 yen or 3.5 percent",
                "q2": "Within 45 days", "q3": "Refunds", "q4": "...", "q5": "30"},
        context_ids={"q1": ["c1", "c2"], "q2": ["c1"], "q3": [], "q4": ["c1"], "q5": None}))
    per_query = report.per_query
    # q1: 11 tokens; refunds, within, 30, days, yen are in c1 + c2 (c2 stops at "yen"), the
    # token 2500 is not (c2 has the tokens 2 and 500).  Numbers 30, 2500 (= "2,500" of c2),
    # 3.5: only 3.5 is unsupported.
    assert per_query["context_grounding"]["q1"] == pytest.approx(5 / 11)
    assert per_query["unsupported_number_rate"]["q1"] == pytest.approx(1 / 3)
    # q2: "within" and "days" of 3 tokens; 45 is not in c1.
    assert per_query["context_grounding"]["q2"] == pytest.approx(2 / 3)
    assert per_query["unsupported_number_rate"]["q2"] == 1.0
    # q3: empty context: nothing is grounded; no number: None.
    assert per_query["context_grounding"]["q3"] == 0.0
    assert per_query["unsupported_number_rate"]["q3"] is None
    # q4: an answer without a token; q5: no context_ids.
    assert per_query["context_grounding"]["q4"] is None
    assert per_query["context_grounding"]["q5"] is None
    assert report.context_grounding == pytest.approx((5 / 11 + 2 / 3 + 0) / 3)
    assert report.unsupported_number_rate == pytest.approx((1 / 3 + 1) / 2)


def test_context_counts_answer_token_occurrences() -> None:
    report = evaluate(**context_inputs(answer={"q": "days days nope"}, context_ids={"q": ["c1"]}))
    assert report.context_grounding == pytest.approx(2 / 3)


def test_context_chunk_text_is_the_document_slice() -> None:
    # A chunk cut inside a word: its text "ds are acc" has the tokens ds, are, acc.
    report = evaluate(documents={"doc": TEXT}, chunks=[{"id": "cut", "start": 5, "end": 15}],
                      answer={"q": "refunds are ds"}, context_ids={"q": ["cut"]})
    assert report.context_grounding == pytest.approx(2 / 3)


def test_unknown_context_chunk_is_an_error() -> None:
    with pytest.raises(DatasetError, match=r"^<arguments>: context_ids\['q1'\]\[1\].*"
                                           r"unknown chunk 'c9'"):
        evaluate(**context_inputs(answer={"q1": "x"}, context_ids={"q1": ["c1", "c9"]}))


def test_context_metrics_need_chunks() -> None:
    report = evaluate(answer={"q": "30 days"}, context_ids={"q": ["c1"]})
    assert report.values["context_grounding"] is None
    assert report.values["unsupported_number_rate"] is None
    assert report.missing["context_grounding"] == "needs chunks"


def test_task_success_and_latency() -> None:
    report = evaluate(task_success={"q1": True, "q2": False, "q3": True, "q4": None},
                      generation_latency_ms={"q1": 100, "q2": 300})
    assert report.task_success == pytest.approx(2 / 3)
    assert report.per_query["task_success"]["q4"] is None
    # Linear interpolation: 100 + 0.95 * (300 - 100).
    assert report.p95_latency_ms == pytest.approx(290.0)


def test_nothing_given_is_none_with_a_reason() -> None:
    report = evaluate()
    assert all(value is None for value in report.values.values())
    assert report.missing["exact_match"] == "needs answer, reference_answer"
    assert report.missing["p95_latency_ms"] == "needs generation_latency_ms"


def test_query_without_run_entry_has_no_run_metrics() -> None:
    raw = {"queries": [{"id": "q1", "reference_answer": "x", "required_facts": ["x"],
                        "expected_citations": ["d"], "answerable": True},
                       {"id": "q2", "reference_answer": "x"}],
           "run": {"q2": {"answer": "x"}}}
    report = GenerationEvaluator().evaluate(parse_dataset(raw))
    for key, values in report.per_query.items():
        assert values["q1"] is None, key
    assert report.exact_match == 1.0
