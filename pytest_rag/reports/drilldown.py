"""Per-query details of one stage report, for the drill-down of the HTML report.

:func:`build_details` reads the data an evaluator used (``report.dataset``:
the resolved inputs, with grades derived from evidence where the evaluator
derived them) and returns plain JSON values, so that the details travel from
pytest-xdist workers to the controller inside a :class:`~pytest_rag.compare.records.StageRecord`.

What a stage's details hold:

* ranked stages (retrieval, reranking, embedding): per query the question,
  the stage's ranked ids cut at ``k`` (``retrieved_ids``, ``reranked_ids``
  and, for embedding, the ANN list ``ann_ids``; each id once, at its first
  rank, as the metrics count it; reranking also keeps the ``retrieved_ids``
  it started from) and the gold grades;
* augmentation: the ``context_ids`` in prompt order and the gold grades;
* generation and end to end: the answer, the reference answers and (for
  generation) the required facts, citations and context ids;
* chunking: how many chunks have each size in tokens, ``|C_i|`` of the
  chunking metrics (the source tokens a chunk overlaps by at least one
  character), and the ``size_limits``.

At most ``limit`` queries are kept per report.  Queries that got worse
against the baseline come first (those worse in a metric whose aggregate
regressed before the others), then the rest in dataset order; ``omitted``
says how many were left out.  Per-query metric values are not repeated here:
they are in the record's ``per_query``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..compare.comparison import query_got_worse
from ..registry import Direction

if TYPE_CHECKING:
    from ..dataset.model import Dataset, Query, RunEntry
    from ..stages.report import Report

__all__ = ["DRILLDOWN_LIMIT", "ID_LIMIT", "TEXT_LIMIT", "build_details", "worse_keys"]

#: Queries kept per report for the drill-down.
DRILLDOWN_LIMIT: Final = 50
#: Characters kept of a question, an answer or a reference answer.
TEXT_LIMIT: Final = 1500
#: Ids kept of a list (gold grades, context ids, citations) that has no ``k``.
ID_LIMIT: Final = 50

#: The run field whose ids each ranked stage scores at K.
RANKED_FIELDS: Final[Mapping[str, str]] = {
    "retrieval": "retrieved_ids",
    "reranking": "reranked_ids",
    "embedding": "ann_ids",
}


def _text(value: str | None) -> str | None:
    if value is None or len(value) <= TEXT_LIMIT:
        return value
    return value[:TEXT_LIMIT] + "…"


def _top(ids: Sequence[str] | None, k: int) -> list[str] | None:
    """The first ``k`` distinct ids (each at its first rank), or ``None`` when not given."""
    if ids is None:
        return None
    from ..kernels.ranking import (
        top_k,  # numpy: already loaded by the evaluation that made the report
    )

    return top_k(ids, k)


def _capped(ids: Sequence[str] | None) -> list[str] | None:
    return None if ids is None else list(ids[:ID_LIMIT])


def worse_keys(before: Mapping[str, Mapping[str, float | None]],
               after: Mapping[str, Mapping[str, float | None]], query_id: str,
               directions: Mapping[str, str]) -> dict[str, float]:
    """The metrics in which ``query_id`` got worse: ``{key: its baseline value}``.

    ``before`` and ``after`` are ``{key: {query id: value}}`` (baseline and
    current).  Worse means a value that moved against the metric's direction
    (``directions[key]``: ``"higher"`` or ``"lower"``; informational metrics
    never get worse), by the rule of the baseline's regression messages
    (:func:`pytest_rag.compare.baseline.query_got_worse`: rounding is not a change;
    a baseline value no longer measured is).
    """
    worse: dict[str, float] = {}
    for key, old_values in before.items():
        old = old_values.get(query_id)
        if old is None:
            continue
        try:
            direction = Direction(directions.get(key, "info"))
        except ValueError:
            continue
        if direction is Direction.INFO:
            continue
        if query_got_worse(direction, old, after.get(key, {}).get(query_id)):
            worse[key] = old
    return worse


def _grades(query: Query) -> list[list[Any]]:
    """``[[id, grade], ...]`` of the gold grades, highest grade first, then in given order."""
    items = list((query.relevant or {}).items())
    order = sorted(range(len(items)), key=lambda i: (-items[i][1], i))
    return [[items[i][0], items[i][1]] for i in order[:ID_LIMIT]]


def _query_details(stage: str, query: Query, entry: RunEntry | None, k: int | None
                   ) -> dict[str, Any]:
    out: dict[str, Any] = {"id": query.id, "question": _text(query.question)}
    if entry is None:
        out["no_run"] = True
    if stage in RANKED_FIELDS:
        size = k if k is not None else ID_LIMIT
        ranked = _top(getattr(entry, RANKED_FIELDS[stage]) if entry is not None else None, size)
        if ranked is not None:
            out["ranked"] = ranked
        if stage == "reranking" and entry is not None and entry.retrieved_ids is not None:
            out["before"] = _top(entry.retrieved_ids, size)
    if stage in ("retrieval", "reranking", "embedding", "augmentation") and query.relevant:
        out["relevant"] = _grades(query)
        out["relevant_total"] = len(query.relevant)
    if stage in ("augmentation", "generation") and entry is not None \
            and entry.context_ids is not None:
        out["context"] = _capped(entry.context_ids)
        out["context_total"] = len(entry.context_ids)
    if stage in ("generation", "end_to_end"):
        if entry is not None and entry.answer is not None:
            out["answer"] = _text(entry.answer)
        if query.reference_answers:
            out["references"] = [_text(ref) for ref in query.reference_answers[:ID_LIMIT]]
    if stage == "generation":
        if query.required_facts:
            out["required_facts"] = [_text(fact) for fact in query.required_facts[:ID_LIMIT]]
        if query.expected_citations:
            out["expected_citations"] = _capped(query.expected_citations)
        if entry is not None and entry.cited_ids is not None:
            out["cited"] = _capped(entry.cited_ids)
    return out


def _chunk_details(report: Report, dataset: Dataset) -> dict[str, Any]:
    limits = report.settings.get("size_limits")
    out: dict[str, Any] = {
        "kind": "chunks",
        "chunks": len(dataset.chunks),
        "size_limits": None if limits is None else [int(limits[0]), int(limits[1])],
        "chunk_sizes": [],
    }
    if dataset.chunks:
        import numpy as np

        from ..kernels.positions import positions_of

        positions = positions_of(dataset)
        sizes, counts = np.unique(positions.chunk_hi - positions.chunk_lo, return_counts=True)
        out["chunk_sizes"] = [[int(size), int(count)]
                              for size, count in zip(sizes.tolist(), counts.tolist())]
    return out


def build_details(report: Report, *,
                  baseline_per_query: Mapping[str, Mapping[str, float | None]] | None = None,
                  directions: Mapping[str, str] | None = None,
                  regressed: Collection[str] = (),
                  limit: int = DRILLDOWN_LIMIT) -> dict[str, Any]:
    """The drill-down details of ``report`` as plain JSON values (empty without data).

    Parameters
    ----------
    report:
        A stage report; its ``dataset`` (set by the evaluator) is read.  A
        report without one (built by hand) has no details: ``{}``.
    baseline_per_query:
        The baseline's ``{key: {query id: value}}`` of this test and stage,
        to put the queries that got worse first and to name the metrics in
        which they did (``"worse": {key: baseline value}``).
    directions:
        ``{key: "higher" | "lower" | "info"}`` of the stage's metrics.
    regressed:
        Keys whose aggregate regressed: queries worse in one of them come first.
    limit:
        Queries kept.

    Returns
    -------
    dict
        For chunking ``{"kind": "chunks", "chunks", "size_limits", "chunk_sizes":
        [[tokens, count], ...]}``; for the other stages ``{"kind": "queries",
        "total", "omitted", "k", "worse", "queries": [...]}`` (``worse``: how
        many of all the queries got worse against the baseline).
    """
    dataset = report.dataset
    if dataset is None:
        return {}
    if report.stage == "chunking":
        return _chunk_details(report, dataset)
    k = report.settings.get("k")
    k = int(k) if isinstance(k, int) and not isinstance(k, bool) else None
    before = baseline_per_query or {}
    after = report.per_query
    wanted = set(regressed)
    ranked: list[tuple[int, int, int, Query, dict[str, float]]] = []
    for index, query in enumerate(dataset.queries):
        worse = worse_keys(before, after, query.id, directions or {}) if before else {}
        in_regressed = sum(1 for key in worse if key in wanted)
        ranked.append((-in_regressed, -len(worse), index, query, worse))
    ranked.sort(key=lambda item: item[:3])
    queries = []
    for _, _, _, query, worse in ranked[:max(limit, 0)]:
        details = _query_details(report.stage, query, dataset.run.get(query.id), k)
        if worse:
            details["worse"] = dict(sorted(worse.items()))
        queries.append(details)
    return {"kind": "queries", "total": len(dataset.queries),
            "omitted": len(dataset.queries) - len(queries), "k": k,
            "worse": sum(1 for item in ranked if item[4]), "queries": queries}
