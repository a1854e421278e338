"""Stage 5, augmentation: the chunks packed into the prompt, against the evidence."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dataset.model import Dataset
from ..kernels.aggregate import ratio
from ..kernels.evidence import evidence_query_indices, list_overlap
from ..kernels.ranking import scatter
from ..settings import validate_setting
from ._base import ReportBuilder, StageEvaluator, StageSettings

__all__ = ["AugmentationEvaluator", "AugmentationSettings"]


@dataclass(frozen=True)
class AugmentationSettings(StageSettings):
    """The settings of augmentation (see :class:`AugmentationEvaluator`); ``None``:
    no budget, ``budget_compliant`` is not measured."""

    max_context_tokens: int | None = None


class AugmentationEvaluator(StageEvaluator[AugmentationSettings]):
    """Context metrics of ``context_ids`` (the prompt's chunks, in prompt order).

    Parameters
    ----------
    max_context_tokens:
        Token budget of the context.  ``None``: the dataset's
        ``params.max_context_tokens``; without one ``budget_compliant`` is ``None``.

    Notes
    -----
    ``context_ids`` are not de-duplicated: context tokens are the sum of the
    entries' token counts, and a repeated chunk is what ``duplicate_ratio``
    measures.  ``duplicate_ratio`` and ``budget_compliant`` need no gold; the
    other metrics are ``None`` for a query without ``expected_evidence``.
    ``context_precision`` of an empty context is 0.  ``evidence_edge_placement``
    averages ``|2p - 1|`` over the entries that touch the evidence, with
    ``p = index / (entries - 1)`` (1 for a one-entry context); ``None`` when no
    entry touches it.  Every context id must be a known chunk.
    """

    stage = "augmentation"
    inputs = frozenset({"documents", "chunks", "queries", "expected_evidence", "context_ids"})
    settings_type = AugmentationSettings

    def __init__(self, *, max_context_tokens: int | None = None) -> None:
        self.max_context_tokens: int | None = validate_setting("max_context_tokens",
                                                               max_context_tokens)

    def _compute(self, dataset: Dataset, settings: AugmentationSettings,
                 builder: ReportBuilder) -> None:
        queries = dataset.queries
        count = len(queries)
        contexts = [(i, entry.context_ids) for i, query in enumerate(queries)
                    if (entry := dataset.run.get(query.id)) is not None
                    and entry.context_ids is not None]
        if not contexts or not dataset.chunks:
            return
        indices = [i for i, _ in contexts]
        found = list_overlap(dataset, indices, [ids for _, ids in contexts], "context_ids")
        rows = np.asarray(indices, dtype=np.int64)

        repeated = ratio(found.listed_total - found.listed, found.listed_total)
        builder.set_per_query("duplicate_ratio", scatter(repeated, rows, count))
        budget = settings.max_context_tokens
        if budget is not None:
            builder.set_per_query("budget_compliant",
                                  scatter((found.listed_total <= budget).astype(np.float64),
                                          rows, count))

        has_gold = evidence_query_indices(dataset)[rows]
        gold_rows = rows[has_gold]
        precision = ratio(found.inter, found.listed)
        precision[found.listed == 0] = 0.0
        precision = precision[has_gold]
        builder.set_per_query("context_precision", scatter(precision, gold_rows, count))
        builder.set_per_query("context_noise", scatter(1.0 - precision, gold_rows, count))
        builder.set_per_query("context_recall",
                              scatter(ratio(found.inter, found.gold)[has_gold], gold_rows, count))
        builder.set_per_query("context_sufficient", scatter(
            (found.spans_whole == found.spans).astype(np.float64)[has_gold], gold_rows, count))

        lengths = np.bincount(found.entry_slot, minlength=len(indices))
        touching = found.entry_meets_gold
        slot = found.entry_slot[touching]
        span = np.maximum(lengths[slot] - 1, 1)
        edge = np.abs(2.0 * found.entry_rank[touching] / span - 1.0)
        edge[lengths[slot] == 1] = 1.0
        per_slot = ratio(np.bincount(slot, weights=edge, minlength=len(indices)),
                         np.bincount(slot, minlength=len(indices)))
        builder.set_per_query("evidence_edge_placement",
                              scatter(per_slot[has_gold], gold_rows, count))
