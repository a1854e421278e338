"""Gold drift: which queries' gold changed since the baseline, and what still compares.

Gold datasets grow and get corrected.  Each baseline entry stores a
fingerprint of every query's gold and one of the documents
(:attr:`StageRecord.gold`, :attr:`StageRecord.documents`).  A query's
fingerprint covers only the gold fields that the entry's stage reads (the
field table, :mod:`pytest_rag.dataset.fields`): adding reference answers
edits nothing for a retrieval entry.  When they differ
from the current run's, a metric with per-query values is compared on the
queries whose gold is the same on both sides: its baseline and current values
become the means over those queries (the aggregate rule of every per-query
metric), so new, removed and edited queries move nothing.  A metric without
per-query values that reads the queries (evidence completeness, latency
percentiles) cannot be restricted: it is reported as ``gold changed`` and
never fails; one that reads only documents and chunks (coverage, chunk
sizes) compares as before while the documents are unchanged.  Entries written
before fingerprints existed compare as before; a query of an entry written
before fingerprints were per stage (a digest of all its gold) is unchanged
when none of its gold changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..dataset.fields import gold_attributes
from ..escaping import shown_id
from ..registry import MetricSpec, need_alternatives

if TYPE_CHECKING:
    from ..dataset.model import Dataset

__all__ = ["GoldChange", "gold_change", "gold_fingerprints", "mean_over", "reads_queries",
           "whole_gold_fingerprints"]


class Fingerprinted(Protocol):
    """What a run's record holds about its gold
    (:class:`~pytest_rag.compare.records.StageRecord`)."""

    @property
    def gold(self) -> Mapping[str, str]: ...

    @property
    def documents(self) -> str | None: ...

    @property
    def whole_gold(self) -> Mapping[str, str]: ...


def gold_fingerprints(dataset: Dataset | None, stage: str) -> dict[str, str]:
    """Query id -> the fingerprint of the gold that ``stage``'s metrics read (empty
    without a dataset): what a baseline entry of that stage records."""
    if dataset is None:
        return {}
    names = gold_attributes(stage)
    # Kept with the gold: a sweep's variants share it (a copy, since records keep theirs).
    return dict(dataset.written_gold_cached("fingerprints:" + ",".join(names), lambda data: {
        query.id: query.fingerprint_of(names) for query in data.queries}))


def whole_gold_fingerprints(dataset: Dataset | None) -> dict[str, str]:
    """Query id -> the fingerprint of all its gold: what entries written before the
    fingerprints were per stage hold (empty without a dataset)."""
    if dataset is None:
        return {}
    return dict(dataset.written_gold_cached("fingerprint", lambda data: {
        query.id: query.fingerprint for query in data.queries}))


#: Inputs that are not per query: a metric needing only these ignores the queries.
CORPUS_INPUTS = frozenset({"documents", "chunks", "size_limits", "expected_chunks",
                           "sentence_vectors", "chunk_vectors", "required_metadata",
                           "expected_metadata", "indexed_ids"})


def reads_queries(spec: MetricSpec | None) -> bool:
    """Whether a metric's value depends on the queries (an unknown metric: assume so)."""
    if spec is None:
        return True
    return any(alternative not in CORPUS_INPUTS for need in spec.needs
               for alternative in need_alternatives(need))

#: How many query ids a message names before it says "+N more".
SHOWN_IDS = 5


@dataclass(frozen=True)
class GoldChange:
    """The gold of one stage entry, baseline against current run.

    ``same`` holds the queries whose gold fingerprint is equal on both sides.
    """

    added: tuple[str, ...]
    removed: tuple[str, ...]
    edited: tuple[str, ...]
    documents: bool
    same: frozenset[str]

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.edited or self.documents)

    def text(self) -> str:
        """One line for the scorecard, the failure text and the reports."""
        parts = []
        for ids, word in ((self.added, "added"), (self.edited, "edited"),
                          (self.removed, "removed")):
            if ids:
                parts.append(f"{len(ids)} {'query' if len(ids) == 1 else 'queries'} {word} "
                             f"({_ids(ids)})")
        if self.documents:
            parts.append("documents edited")
        return (f"gold changed since the baseline: {', '.join(parts)}; per-query metrics "
                f"compared on the {len(self.same)} unchanged "
                f"{'query' if len(self.same) == 1 else 'queries'} (baseline and delta over "
                f"those), the others not compared")

    def to_json(self) -> dict[str, Any]:
        return {"added": list(self.added), "removed": list(self.removed),
                "edited": list(self.edited), "documents_edited": self.documents,
                "compared_on": len(self.same)}


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(map(shown_id, ids[:SHOWN_IDS]))
    return shown + (f", +{len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def gold_change(stored: Mapping[str, Any] | None, record: Fingerprinted) -> GoldChange | None:
    """The change between a baseline entry's ``gold`` object and ``record``'s, or
    ``None`` when either side has no fingerprints (nothing to tell)."""
    old_queries = (stored or {}).get("queries")
    if not old_queries or not record.gold:
        return None
    new_queries = record.gold
    whole = record.whole_gold

    def same_gold(query: str, digest: str) -> bool:
        old = old_queries.get(query)
        return old == digest or (old is not None and old == whole.get(query))

    added = tuple(query for query in new_queries if query not in old_queries)
    removed = tuple(query for query in old_queries if query not in new_queries)
    edited = tuple(query for query, digest in new_queries.items()
                   if query in old_queries and not same_gold(query, digest))
    edited_set = frozenset(edited)
    old_documents = (stored or {}).get("documents")
    documents = (old_documents is not None and record.documents is not None
                 and old_documents != record.documents)
    same = frozenset(query for query, digest in new_queries.items()
                     if query in old_queries and query not in edited_set)
    return GoldChange(added, removed, edited, documents, same)


def mean_over(values: Mapping[str, float | None], queries: frozenset[str]) -> float | None:
    """The mean of the measured values of ``queries`` (``None`` when none is measured)."""
    measured = [value for query, value in values.items()
                if query in queries and value is not None]
    if not measured:
        return None
    return sum(measured) / len(measured)
