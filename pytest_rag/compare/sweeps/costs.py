"""What a sweep variant costs, counted from the data its stage reports read.

* ``chunks``, ``index_tokens``: the chunks the variant indexed and their tokens
  (pytest-rag tokens of the chunk's span in its document), from the first report
  whose data has chunks placed in documents (the chunking report first).
* ``topk_tokens``: mean over the queries with a run of the tokens in the first
  ``k`` retrieved chunks (the retrieval report's ``k``; all when it has none).
* ``context_tokens``: mean over the queries with a context of the tokens of the
  context chunks, repeats counted (what the prompt carries).

Ids that name no chunk count 0 tokens.  A cost is left out when its stage was
not recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...dataset.model import Dataset
    from ...stages.report import Report

__all__ = ["variant_costs"]


def _chunk_tokens(dataset: Dataset) -> tuple[dict[str, int], list[int]] | None:
    if not dataset.chunks or not dataset.documents:
        return None
    from ...kernels.positions import positions_of

    positions = positions_of(dataset)
    sizes = (positions.chunk_hi - positions.chunk_lo).tolist()
    return dataset.chunk_index, sizes


def _mean_tokens(lists: Iterable[Sequence[str] | None], index: Mapping[str, int],
                 sizes: Sequence[int]) -> float | None:
    size_of = dict(zip(index, map(sizes.__getitem__, index.values()))).get
    kept = [ids for ids in lists if ids is not None]
    # One sum over every id of every list: integers, so the same total as per list.
    total = sum(map(size_of, chain.from_iterable(kept), repeat(0)))
    return total / len(kept) if kept else None


def variant_costs(reports: Iterable[Report]) -> dict[str, float]:
    """The costs of one variant from its stage reports (see the module's list)."""
    costs: dict[str, float] = {}
    ordered = sorted(reports, key=lambda r: r.stage != "chunking")
    for report in ordered:
        dataset = report.dataset
        if dataset is None:
            continue
        tokens = _chunk_tokens(dataset)
        if tokens is None:
            continue
        index, sizes = tokens
        if "chunks" not in costs:
            costs["chunks"] = float(len(sizes))
            costs["index_tokens"] = float(sum(sizes))
        entries = [dataset.run.get(query.id) for query in dataset.queries]
        if report.stage == "retrieval":
            k = report.settings.get("k")
            cut = k if isinstance(k, int) and not isinstance(k, bool) else None
            value = _mean_tokens((None if e is None or e.retrieved_ids is None
                                  else e.retrieved_ids[:cut] for e in entries), index, sizes)
            if value is not None:
                costs["topk_tokens"] = value
        elif report.stage == "augmentation":
            value = _mean_tokens((None if e is None else e.context_ids for e in entries),
                                 index, sizes)
            if value is not None:
                costs["context_tokens"] = value
    return costs
