"""Workload 1, ranking: P, R, F1, MRR, nDCG, hit and AP at K = 10.

100,000 queries (at scale 1), each with 100 retrieved ids and 10 graded gold
ids (grades 0 to 3, at least one above 0).  About half of the gold ids are
placed in the list, mostly near the top; about 3% of the list entries repeat
an id from higher up.  Every id is its own ``str`` object, as ids read from a
retriever's output are.

The peers take ``{query: {doc: score}}``: the conversion from the list gives
rank ``r`` (from 0) the score ``100 - r`` and keeps the first rank of a
repeated id, which is pytest-rag's rule, so every side ranks the same
de-duplicated list.  Input conversion is timed on every side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from bench_harness import Goal, Metrics, Side

NAME = "ranking"
K = 10
QUERIES = 100_000
LIST_LENGTH = 100
GOLD = 10
SEED = 20241

_MEASURES = {"P@10": "P_10", "R@10": "recall_10", "hit@10": "success_10", "AP@10": "map_cut_10"}
_PYTREC_ALSO = ("ndcg_cut_10", "recip_rank")  # timed, not compared (other definitions)
_RANX = {"P@10": "precision@10", "R@10": "recall@10", "F1@10": "f1@10", "MRR@10": "mrr@10",
         "nDCG@10": "ndcg_burges@10", "hit@10": "hit_rate@10", "AP@10": "map@10"}
_RAG = {"P@10": "precision_at_k", "R@10": "recall_at_k", "F1@10": "f1_at_k", "MRR@10": "mrr_at_k",
        "nDCG@10": "ndcg_at_k", "hit@10": "hit_at_k", "AP@10": "average_precision_at_k"}
#: Scores from the bottom of a list up: ``zip(reversed(ids), _SCORES)``.
_SCORES = tuple(float(score) for score in range(1, LIST_LENGTH + 1))


@dataclass(frozen=True)
class Inputs:
    query_ids: list[str]
    run: dict[str, list[str]]
    qrels: dict[str, dict[str, int]]

    def size(self) -> str:
        return f"{len(self.query_ids):,} queries x {LIST_LENGTH} ids"


def make(scale: float) -> Inputs:
    """The workload at ``scale`` (1 = 100,000 queries), always the same for one scale."""
    count = max(int(QUERIES * scale), 20)
    pool = 10 * count
    rng = np.random.default_rng(SEED)
    gold = rng.integers(0, pool, size=(count, GOLD))
    grades = rng.integers(0, 4, size=(count, GOLD))
    grades[:, 0] = np.maximum(grades[:, 0], 1)
    ranked = rng.integers(0, pool, size=(count, LIST_LENGTH))
    placed_rows, placed_cols = np.nonzero(rng.random((count, GOLD)) < 0.5)
    ranks = (rng.random((count, GOLD)) ** 2 * LIST_LENGTH).astype(np.int64)
    ranked[placed_rows, ranks[placed_rows, placed_cols]] = gold[placed_rows, placed_cols]
    repeat = rng.random((count, LIST_LENGTH)) < 0.03
    repeat[:, 0] = False
    source = (rng.random((count, LIST_LENGTH)) * np.arange(LIST_LENGTH)).astype(np.int64)
    ranked = np.where(repeat, np.take_along_axis(ranked, source, axis=1), ranked)
    query_ids = [f"q{i}" for i in range(count)]
    run = {query: [f"d{doc}" for doc in row] for query, row in zip(query_ids, ranked.tolist())}
    qrels = {query: {f"d{doc}": grade for doc, grade in zip(docs, row)}
             for query, docs, row in zip(query_ids, gold.tolist(), grades.tolist())}
    return Inputs(query_ids, run, qrels)


def _scores(ids: list[str]) -> dict[str, float]:
    """Rank ``r`` gets ``len - r``; a repeated id keeps its first (highest) score."""
    return dict(zip(reversed(ids), _SCORES))


# -- pytest-rag ------------------------------------------------------------------
def _rag(inputs: Inputs) -> Any:
    from pytest_rag import RetrievalEvaluator

    return RetrievalEvaluator(k=K).evaluate(retrieved_ids=inputs.run, relevant=inputs.qrels)


def _rag_metrics(report: Any, inputs: Inputs) -> Metrics:
    assert list(report.query_ids) == inputs.query_ids
    return {name: report.query_values[key] for name, key in _RAG.items()}


# -- pytrec_eval -----------------------------------------------------------------
def _pytrec(inputs: Inputs) -> Any:
    import pytrec_eval

    run = {query: _scores(ids) for query, ids in inputs.run.items()}
    measures = {*_MEASURES.values(), *_PYTREC_ALSO}
    return pytrec_eval.RelevanceEvaluator(inputs.qrels, measures).evaluate(run)


def _pytrec_metrics(result: Any, inputs: Inputs) -> Metrics:
    return {name: np.array([result[query][measure] for query in inputs.query_ids])
            for name, measure in _MEASURES.items()}


# -- ranx --------------------------------------------------------------------------
def _ranx(inputs: Inputs) -> Any:
    from ranx import Qrels, Run, evaluate

    qrels = Qrels(inputs.qrels)
    run = Run({query: _scores(ids) for query, ids in inputs.run.items()})
    scores = evaluate(qrels, run, list(_RANX.values()), return_mean=False,
                      save_results_in_run=False)
    return run.get_query_ids(), scores


def _ranx_metrics(result: Any, inputs: Inputs) -> Metrics:
    order, scores = result
    where = {query: i for i, query in enumerate(order)}
    rows = np.array([where[query] for query in inputs.query_ids])
    return {name: np.asarray(scores[metric])[rows] for name, metric in _RANX.items()}


def sides() -> list[Side]:
    """pytest-rag, then pytrec_eval and ranx."""
    goal = Goal(0.5, "<= 0.5 x the faster peer", fastest_peer=True)
    return [
        Side("pytest-rag", _rag, _rag_metrics, ("pytest_rag",)),
        Side("pytrec_eval", _pytrec, _pytrec_metrics, ("pytrec_eval",),
             shared=("P@10", "R@10", "hit@10", "AP@10"),
             not_shared=("nDCG: ndcg_cut gains the grade, not 2^g - 1; MRR: recip_rank has no "
                         "cut-off; F1: no measure.  AP coincides because every query has <= K "
                         "gold ids (map_cut divides by #relevant, pytest-rag by "
                         "min(#relevant, K))"),
             goal=goal),
        Side("ranx", _ranx, _ranx_metrics, ("ranx",),
             shared=tuple(_RANX),
             not_shared=("nDCG compared as ranx ndcg_burges (gain 2^g - 1).  AP coincides because "
                         "every query has <= K gold ids (map@k divides by #relevant)"),
             goal=goal),
    ]
