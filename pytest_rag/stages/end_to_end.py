"""Stage 7, end to end: what the user got, how long it took and what it cost."""

from __future__ import annotations

import numpy as np

from ..dataset.model import Dataset
from ..kernels.aggregate import FloatArray, percentile
from ._base import ReportBuilder, StageEvaluator, StageSettings
from .generation import answer_metrics, task_success

__all__ = ["EndToEndEvaluator"]


def _per_query(dataset: Dataset, field: str) -> FloatArray:
    """A numeric run field per query; NaN without a run entry or a value."""
    run = dataset.run
    values = [None if (entry := run.get(query.id)) is None else getattr(entry, field)
              for query in dataset.queries]
    return np.fromiter((np.nan if value is None else float(value) for value in values),
                       dtype=np.float64, count=len(values))


class EndToEndEvaluator(StageEvaluator[StageSettings]):
    """End-to-end metrics of the final answers, latency and cost.  No settings.

    Notes
    -----
    * ``answer_exact_match`` and ``answer_f1``: the generation stage's
      ``exact_match`` and ``answer_f1`` (SQuAD's formulas on this project's
      tokens; several references: EM if any matches, F1 of the first
      reference with the best token F1).  ``None`` for a query without a
      reference answer or without a run ``answer``.
    * ``task_success_rate``: mean of the ``task_success`` labels.
    * ``p50_latency_ms``, ``p95_latency_ms``: numpy's linear percentiles of
      ``latency_ms`` (request to answer) over the run entries that have it.
    * ``mean_cost_usd``, ``mean_total_tokens``: means over the queries that
      have ``cost_usd`` (resp. ``total_tokens``); ``None`` when none has.

    Examples
    --------
    >>> report = EndToEndEvaluator().evaluate(
    ...     latency_ms={"q1": 100, "q2": 300}, cost_usd={"q1": 0.002})
    >>> report["p50_latency_ms"], report["p95_latency_ms"], report["mean_cost_usd"]
    (200.0, 290.0, 0.002)
    """

    stage = "end_to_end"
    inputs = frozenset({"queries", "reference_answer", "answer", "task_success", "latency_ms",
                        "cost_usd", "total_tokens"})
    settings_type = StageSettings

    def _compute(self, dataset: Dataset, settings: StageSettings,
                 builder: ReportBuilder) -> None:
        answers = answer_metrics(dataset, rouge=False)
        builder.set_per_query("answer_exact_match", answers["exact_match"])
        builder.set_per_query("answer_f1", answers["answer_f1"])
        builder.set_per_query("task_success_rate", task_success(dataset))
        latencies = [entry.latency_ms for entry in dataset.run.values()]
        builder.set("p50_latency_ms", percentile(latencies, 50))
        builder.set("p95_latency_ms", percentile(latencies, 95))
        builder.set_per_query("mean_cost_usd", _per_query(dataset, "cost_usd"))
        builder.set_per_query("mean_total_tokens", _per_query(dataset, "total_tokens"))
