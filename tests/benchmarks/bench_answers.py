"""Workload 4, answers: exact match, token P/R/F1 and ROUGE-L F1.

At scale 1: 100,000 answer and reference pairs of about 30 tokens (20 to 40
words).  An answer is its reference with about a quarter of the words
replaced, a tenth of the answers are the reference itself (up to case and
punctuation), and some drop or add a few words.  The words are ASCII, with
punctuation only between words and without articles, so that the three
definitions coincide: SQuAD's normalisation (which deletes punctuation inside
words and drops articles), rouge-score's tokens (``[a-z0-9]+`` runs) and
pytest-rag's (``\\w+``, lowercase).

pytest-rag's side is ``GenerationEvaluator().evaluate(answer=...,
reference_answer=...)``, which computes EM, P, R, F1 and ROUGE-L together
(and the stage's other metrics, ``None`` here); a second pytest-rag row times
the kernels of ``pytest_rag/answers.py`` alone (``score_answer`` per pair), to
show the stage's own cost.  The goals are judged on the stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from bench_harness import Goal, Metrics, Side

NAME = "answers"
PAIRS = 100_000
SEED = 20244

_WORDS = (
    "of to in and is was for on that with as by at from it be this are which or his her "
    "their has have had not but were been one two three city river year years first new "
    "state after during between under about more most other than 1996 2004 42 team film "
    "music school season population water system century government company world war time "
    "north south east west great early late high low museum bridge station island lake"
).split() + [f"name{i}" for i in range(2000)]
_STAGE = {"EM": "exact_match", "P": "answer_precision", "R": "answer_recall", "F1": "answer_f1",
          "ROUGE-L F1": "rouge_l_f1"}


@dataclass(frozen=True)
class Inputs:
    query_ids: list[str]
    answers: dict[str, str]
    references: dict[str, list[str]]

    def size(self) -> str:
        return f"{len(self.query_ids):,} pairs"


def _sentence(words: list[str], rng: np.random.Generator) -> str:
    marks = rng.choice(["", "", "", "", "", "", ",", "."], size=len(words)).tolist()
    text = " ".join(word + mark for word, mark in zip(words, marks))
    return text[:1].upper() + text[1:].rstrip(",.") + "."


def make(scale: float) -> Inputs:
    """The workload at ``scale`` (1 = 100,000 pairs), always the same for one scale."""
    rng = np.random.default_rng(SEED)
    count = max(int(PAIRS * scale), 50)
    vocabulary = np.array(_WORDS, dtype=object)
    query_ids = [f"q{i}" for i in range(count)]
    answers: dict[str, str] = {}
    references: dict[str, list[str]] = {}
    for query_id, length in zip(query_ids, rng.integers(20, 41, size=count).tolist()):
        reference = vocabulary[rng.integers(0, len(_WORDS), size=length)].tolist()
        answer = list(reference)
        if rng.random() >= 0.1:
            for i in np.flatnonzero(rng.random(length) < 0.25).tolist():
                answer[i] = _WORDS[int(rng.integers(0, len(_WORDS)))]
            if rng.random() < 0.3:
                answer = answer[int(rng.integers(0, 5)):]
            if rng.random() < 0.3:
                answer += vocabulary[rng.integers(0, len(_WORDS), size=3)].tolist()
        references[query_id] = [_sentence(reference, rng)]
        answers[query_id] = _sentence(answer, rng)
    return Inputs(query_ids, answers, references)


# -- pytest-rag ------------------------------------------------------------------
def _stage(inputs: Inputs) -> Any:
    from pytest_rag import GenerationEvaluator

    return GenerationEvaluator().evaluate(answer=inputs.answers, reference_answer=inputs.references)


def _stage_metrics(report: Any, inputs: Inputs) -> Metrics:
    assert list(report.query_ids) == inputs.query_ids
    return {name: report.query_values[key] for name, key in _STAGE.items()}


def _kernels(inputs: Inputs) -> Any:
    from pytest_rag.kernels.answers import score_answer

    references = inputs.references
    return [score_answer(answer, references[query]) for query, answer in inputs.answers.items()]


def _kernel_metrics(scores: Any, inputs: Inputs) -> Metrics:
    columns = np.array([tuple(score) for score in scores], dtype=np.float64)
    return {name: columns[:, i] for i, name in enumerate(_STAGE)}


# -- peers -------------------------------------------------------------------------
def _squad(inputs: Inputs) -> Any:
    from bench_reference_squad import evaluate

    return evaluate(inputs.answers, inputs.references)


def _squad_metrics(result: Any, inputs: Inputs) -> Metrics:
    pairs = np.array([result[query] for query in inputs.query_ids])
    return {"EM": pairs[:, 0], "F1": pairs[:, 1]}


def _rouge(inputs: Inputs) -> Any:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer(["rougeL"])
    references = inputs.references
    return [scorer.score(references[query][0], answer)["rougeL"].fmeasure
            for query, answer in inputs.answers.items()]


def _rouge_metrics(result: Any, inputs: Inputs) -> Metrics:
    return {"ROUGE-L F1": np.array(result)}


def sides() -> list[Side]:
    """pytest-rag's stage and kernels, then the SQuAD logic and rouge-score."""
    return [
        Side("pytest-rag", _stage, _stage_metrics, ("pytest_rag",)),
        Side("pytest-rag answers.py kernels", _kernels, _kernel_metrics, ("pytest_rag",),
             shared=tuple(_STAGE), rag=True),
        Side("SQuAD v1.1 logic (EM + F1)", _squad, _squad_metrics, shared=("EM", "F1"),
             not_shared=("SQuAD gives no P and R; its normalisation differs from pytest-rag's "
                         "on articles and punctuation inside words, which this text has none of"),
             goal=Goal(0.7, "<= 0.7")),
        Side("rouge-score rougeL", _rouge, _rouge_metrics, ("rouge_score",),
             shared=("ROUGE-L F1",),
             not_shared=("rouge-score keeps [a-z0-9] runs only (pytest-rag: Unicode \\w+); the "
                         "same tokens on this ASCII text"),
             goal=Goal(0.2, "<= 0.2 (>= 5 x faster)")),
    ]
