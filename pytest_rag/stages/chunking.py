"""Stage 1, chunking: how a chunker split the documents, pooled over all chunks.

Every metric here is one number for the whole chunking (not per query).  The
scope is the documents that have at least one chunk: the source tokens ``N``,
the gold spans ``G``, the structural blocks and the ideal boundaries all come
from those documents only, so a chunking of one document can be judged
against a dataset of many.  With no chunk at all every metric is ``None``.

Positions (source tokens) are integer intervals on one line
(:mod:`pytest_rag.kernels.positions`); coverage, overlap, evidence and structure are
interval arithmetic (:mod:`pytest_rag.text.intervals`), never sets of positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ..dataset.model import Chunk, Dataset, Document, EvidenceSpan
from ..escaping import quoted
from ..kernels.aggregate import mean_or_none
from ..kernels.cohesion import PAIR_WORD_LIMIT
from ..kernels.lexical import LexicalMetrics, lexical_metrics
from ..kernels.lexical_sets import lexical_metrics_sets
from ..kernels.positions import positions_of
from ..kernels.vector_scan import sentence_metrics, unit_vectors
from ..settings import setting, validate_setting
from ..text.intervals import containing, touching_count, union_sizes
from ..text.markdown import markdown_blocks
from ..text.tokens import span_intervals
from ._base import ReportBuilder, StageEvaluator, StageSettings

__all__ = ["ChunkingEvaluator", "ChunkingSettings", "json_equal"]

DEFAULT_BOUNDARY_TOLERANCE: Final[int] = setting("boundary_tolerance").default
#: Tokens on each side of a boundary for ``lexical_boundary_clarity``.

_IntArray = npt.NDArray[np.int64]
_FloatArray = npt.NDArray[np.float64]


# -- small helpers -----------------------------------------------------------
def json_equal(left: object, right: object) -> bool:
    """Equality of two JSON values: a boolean never equals a number; ``1`` equals ``1.0``.

    Examples
    --------
    >>> json_equal(1, 1.0), json_equal(True, 1), json_equal([1, {"a": None}], [1.0, {"a": None}])
    (True, False, True)
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, str) or isinstance(right, str):
        return isinstance(left, str) and isinstance(right, str) and left == right
    if isinstance(left, Mapping) or isinstance(right, Mapping):
        return (isinstance(left, Mapping) and isinstance(right, Mapping)
                and left.keys() == right.keys()
                and all(json_equal(left[key], right[key]) for key in left))
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return bool(left == right)


def _greedy_matches(predicted: list[int], ideal: list[int], tolerance: int) -> int:
    """One-to-one matches ``|b - g| <= tolerance`` by a greedy walk of both sorted lists."""
    i = j = matches = 0
    while i < len(predicted) and j < len(ideal):
        if abs(predicted[i] - ideal[j]) <= tolerance:
            matches += 1
            i += 1
            j += 1
        elif predicted[i] < ideal[j]:
            i += 1
        else:
            j += 1
    return matches


@dataclass(frozen=True)
class ChunkingSettings(StageSettings):
    """The settings of chunking (see :class:`ChunkingEvaluator`); ``None``: not
    given, the metric that needs it is not measured."""

    size_limits: tuple[int, int] | None = None
    boundary_tolerance: int = DEFAULT_BOUNDARY_TOLERANCE
    required_metadata: tuple[str, ...] | None = None


class ChunkingEvaluator(StageEvaluator[ChunkingSettings]):
    """Chunking metrics, pooled over every chunk of the documents that have one.

    Parameters
    ----------
    size_limits:
        ``(L_min, L_max)`` in tokens, both inclusive.  ``None``: the dataset's
        ``params.size_limits``; without any, ``size_compliance`` is ``None``.
    boundary_tolerance:
        Characters a predicted boundary may lie from an ideal one and still
        match.  ``None``: ``params.boundary_tolerance``, else 0.
    required_metadata:
        Keys every chunk must carry.  ``None``: ``params.required_metadata``;
        without any, ``metadata_completeness`` is ``None``.

    Notes
    -----
    ``|C_i|`` is the number of source tokens a chunk overlaps by at least one
    character (a chunk without a token counts, with size 0); ``N`` the tokens
    of the documents in scope and ``U`` the tokens covered by some chunk.

    * ``coverage`` = ``|U| / N``; ``overlap_ratio`` = ``(sum |C_i| - |U|) / |U|``;
      ``mean_chunk_tokens``, ``min_chunk_tokens``, ``max_chunk_tokens`` and
      ``size_cv`` (population std over mean) describe ``|C_i|``.  ``None``
      when the denominator is 0 (no source token, nothing covered, mean 0).
    * ``size_compliance``: share of chunks with ``L_min <= |C_i| <= L_max``.
    * ``evidence_completeness``: share of the distinct gold spans (all
      queries, by ``(doc_id, start, end)``, spans without a token ignored)
      held whole by one chunk; ``evidence_fragmentation``: mean number of
      chunks a gold span touches.  ``None`` without such a span.
    * ``structural_integrity``: share of the Markdown blocks
      (:func:`pytest_rag.text.markdown.markdown_blocks`, blocks without a token
      ignored) held whole by one chunk; ``None`` without a block.
    * ``boundary_f1``: chunk ``end`` offsets per document (a set; an end at
      or after ``len(text.rstrip())`` is the document end, not a boundary)
      against those of ``expected_chunks``, matched one to one within
      ``boundary_tolerance``.  1.0 when both sets are empty, 0 without a
      match, ``None`` without ``expected_chunks``.
    * Neighbours are consecutive chunks of one document in the order given.
      ``semantic_cohesion``: mean cosine of the sentence-vector pairs of a
      chunk with at least 2 sentences, then the mean over those chunks;
      ``semantic_boundary_clarity``: mean ``1 - cos`` of the last sentence
      left and the first right of each pair; ``semantic_chunk_stickiness``:
      mean cosine of the pair's chunk vectors.  Cosine with a zero vector is
      0; ``None`` when no chunk or pair has the vectors.
    * ``metadata_completeness``: share of chunks with every required key
      present and not null.  ``metadata_accuracy``: share of the
      ``expected_metadata`` values the chunks carry (:func:`json_equal`; a
      missing chunk or key is wrong); ``None`` without expected values.
    * ``lexical_cohesion``: like ``semantic_cohesion`` with the Jaccard
      overlap of the sentences' token sets (split after ``.``, ``!``, ``?``
      followed by whitespace and at newlines);
      ``lexical_boundary_clarity``: mean ``1 - J`` of the last 12 tokens
      left and the first 12 right; ``lexical_chunk_stickiness``: mean ``J``
      of the neighbours' token sets.  Tokens are those of the chunk text (a
      word cut by a boundary gives its cut part).  ``J`` of two empty sets
      is 0.  ``lexical_cohesion`` is ``None`` when a chunk needs more than
      :data:`~pytest_rag.kernels.cohesion.PAIR_WORD_LIMIT` (sentence pair,
      shared word) counts, identical sentences counted once (the reason
      names the chunk).

    Examples
    --------
    >>> report = ChunkingEvaluator(size_limits=(2, 3)).evaluate(
    ...     documents={"d": "One two three. Four five"},
    ...     chunks=[{"id": "a", "doc_id": "d", "start": 0, "end": 14},
    ...             {"id": "b", "doc_id": "d", "start": 15, "end": 24}])
    >>> report["coverage"], report["mean_chunk_tokens"], report["size_compliance"]
    (1.0, 2.5, 1.0)
    """

    stage = "chunking"
    inputs = frozenset({"documents", "chunks", "expected_chunks", "expected_metadata", "queries",
                        "expected_evidence", "chunk_vectors", "sentence_vectors"})
    settings_type = ChunkingSettings

    def __init__(self, *, size_limits: Sequence[int] | None = None,
                 boundary_tolerance: int | None = None,
                 required_metadata: Sequence[str] | None = None) -> None:
        self.size_limits: tuple[int, int] | None = validate_setting("size_limits", size_limits)
        self.boundary_tolerance: int | None = validate_setting("boundary_tolerance",
                                                               boundary_tolerance)
        self.required_metadata: tuple[str, ...] | None = validate_setting("required_metadata",
                                                                          required_metadata)

    def _compute(self, dataset: Dataset, settings: ChunkingSettings,
                 builder: ReportBuilder) -> None:
        if not dataset.chunks:
            return
        positions = positions_of(dataset)
        scope = np.unique(positions.chunk_doc)
        pairs = _neighbour_pairs(positions.chunk_doc)
        for key, value in _size_metrics(dataset, scope, settings.size_limits).items():
            builder.set(key, value)
        completeness, fragmentation = _evidence_metrics(dataset, scope)
        builder.set("evidence_completeness", completeness)
        builder.set("evidence_fragmentation", fragmentation)
        builder.set("structural_integrity", _structural_integrity(dataset, scope))
        builder.set("boundary_f1", _boundary_f1(dataset, scope, settings.boundary_tolerance))
        for key, value in _semantic_metrics(dataset, pairs).items():
            builder.set(key, value)
        builder.set("metadata_completeness",
                    _metadata_completeness(dataset.chunks, settings.required_metadata))
        builder.set("metadata_accuracy", _metadata_accuracy(dataset))
        lexical = _lexical_metrics(dataset, scope, pairs)
        for key, value in lexical.values.items():
            builder.set(key, value)
        if lexical.unmeasured:
            builder.set("lexical_cohesion", None, reason=_unmeasured_reason(dataset, lexical))


# -- positional metrics ------------------------------------------------------
def _neighbour_pairs(chunk_doc: _IntArray) -> tuple[_IntArray, _IntArray]:
    """``(left, right)`` chunk rows of consecutive chunks within one document."""
    order = np.argsort(chunk_doc, kind="stable")
    same = chunk_doc[order][1:] == chunk_doc[order][:-1]
    return order[:-1][same], order[1:][same]


def _size_metrics(dataset: Dataset, scope: _IntArray,
                  size_limits: tuple[int, int] | None) -> dict[str, float | None]:
    positions = positions_of(dataset)
    lo, hi = positions.chunk_lo, positions.chunk_hi
    sizes = (hi - lo).astype(np.float64)
    source = int((positions.base[scope + 1] - positions.base[scope]).sum())
    covered = int(union_sizes(lo, hi, np.zeros_like(lo), 1)[0])
    mean = float(sizes.mean())
    values: dict[str, float | None] = {
        "coverage": covered / source if source else None,
        "mean_chunk_tokens": mean,
        "min_chunk_tokens": float(sizes.min()),
        "max_chunk_tokens": float(sizes.max()),
        "size_cv": float(sizes.std()) / mean if mean else None,
        "overlap_ratio": (float(sizes.sum()) - covered) / covered if covered else None,
    }
    if size_limits is not None:
        # Limits above every size compare the same as one more than the largest
        # size, which keeps a huge limit (10**400) out of numpy's conversions.
        bound = int(sizes.max()) + 1
        low, high = (min(limit, bound) for limit in size_limits)
        values["size_compliance"] = float(((sizes >= low) & (sizes <= high)).mean())
    return values


def _distinct_evidence(dataset: Dataset) -> tuple[_IntArray, _IntArray]:
    """The flat index (over all queries' spans) of each distinct gold span's first
    occurrence, in that order, and its document's index (kept with the gold)."""
    doc_index = {doc.id: i for i, doc in enumerate(dataset.documents)}
    first: dict[EvidenceSpan, int] = {}
    flat = 0
    for query in dataset.queries:
        for span in query.expected_evidence:
            first.setdefault(span, flat)
            flat += 1
    rows = np.fromiter(first.values(), dtype=np.int64, count=len(first))
    docs = np.fromiter((doc_index[span.doc_id] for span in first), dtype=np.int64,
                       count=len(first))
    rows.setflags(write=False)
    docs.setflags(write=False)
    return rows, docs


def _evidence_metrics(dataset: Dataset, scope: _IntArray) -> tuple[float | None, float | None]:
    """Completeness and fragmentation over the distinct gold spans of the documents in scope."""
    positions = positions_of(dataset)
    rows, docs = dataset.gold_cached("distinct_evidence", _distinct_evidence)
    in_scope = np.zeros(len(dataset.documents), dtype=bool)
    in_scope[scope] = True
    rows = rows[in_scope[docs]]
    ev_lo, ev_hi = positions.evidence_lo[rows], positions.evidence_hi[rows]
    keep = ev_hi > ev_lo
    ev_lo, ev_hi = ev_lo[keep], ev_hi[keep]
    if ev_lo.shape[0] == 0:
        return None, None
    whole = containing(positions.chunk_lo, positions.chunk_hi, ev_lo, ev_hi)
    touched = touching_count(positions.chunk_lo, positions.chunk_hi, ev_lo, ev_hi)
    return float(whole.mean()), float(touched.mean())


def _block_intervals(document: Document) -> tuple[_IntArray, _IntArray]:
    """Token intervals ``[lo, hi)`` of a document's Markdown blocks (kept with the document)."""
    blocks = markdown_blocks(document.text)
    starts = np.fromiter((block.start for block in blocks), dtype=np.int64, count=len(blocks))
    ends = np.fromiter((block.end for block in blocks), dtype=np.int64, count=len(blocks))
    lo, hi = span_intervals(document.tokens, starts, ends)
    lo.setflags(write=False)
    hi.setflags(write=False)
    return lo, hi


def _structural_integrity(dataset: Dataset, scope: _IntArray) -> float | None:
    """Share of the Markdown blocks (with a token) of the documents in scope held by one chunk."""
    positions = positions_of(dataset)
    lows: list[_IntArray] = []
    highs: list[_IntArray] = []
    for doc in scope.tolist():
        lo, hi = dataset.documents[doc].cached("markdown_blocks", _block_intervals)
        if not lo.shape[0]:
            continue
        lows.append(lo + positions.base[doc])
        highs.append(hi + positions.base[doc])
    if not lows:
        return None
    block_lo, block_hi = np.concatenate(lows), np.concatenate(highs)
    keep = block_hi > block_lo
    if not keep.any():
        return None
    whole = containing(positions.chunk_lo, positions.chunk_hi, block_lo[keep], block_hi[keep])
    return float(whole.mean())


def _ends(chunks: Sequence[Chunk], limits: Mapping[str, int]) -> dict[str, list[int]]:
    """Sorted distinct ``end`` offsets per document in scope, without document ends."""
    ends: dict[str, set[int]] = {}
    for chunk in chunks:
        limit = limits.get(chunk.doc_id)
        if limit is not None and chunk.end < limit:
            ends.setdefault(chunk.doc_id, set()).add(chunk.end)
    return {doc_id: sorted(values) for doc_id, values in ends.items()}


def _boundary_f1(dataset: Dataset, scope: _IntArray, tolerance: int) -> float | None:
    if not dataset.expected_chunks:
        return None
    limits = {dataset.documents[doc].id: len(dataset.documents[doc].text.rstrip())
              for doc in scope.tolist()}
    predicted = _ends(dataset.chunks, limits)
    ideal = _ends(dataset.expected_chunks, limits)
    n_predicted = sum(map(len, predicted.values()))
    n_ideal = sum(map(len, ideal.values()))
    if n_predicted == 0 and n_ideal == 0:
        return 1.0
    matches = sum(_greedy_matches(ends, ideal.get(doc_id, []), tolerance)
                  for doc_id, ends in predicted.items())
    if matches == 0:
        return 0.0
    precision, recall = matches / n_predicted, matches / n_ideal
    return 2 * precision * recall / (precision + recall)


# -- vectors -----------------------------------------------------------------
def _semantic_metrics(dataset: Dataset, pairs: tuple[_IntArray, _IntArray]
                      ) -> dict[str, float | None]:
    vectors = dataset.vectors
    values: dict[str, float | None] = {}
    if vectors is None:
        return values
    left, right = pairs
    chunk_ids = [chunk.id for chunk in dataset.chunks]
    if vectors.chunk_matrix is not None and vectors.chunk_ids:
        row_of = {chunk_id: row for row, chunk_id in enumerate(vectors.chunk_ids)}
        rows = np.fromiter((-1 if chunk_id is None else row_of.get(chunk_id, -1)
                            for chunk_id in chunk_ids), dtype=np.int64, count=len(chunk_ids))
        unit = unit_vectors(np.asarray(vectors.chunk_matrix, dtype=np.float64))
        both = (rows[left] >= 0) & (rows[right] >= 0)
        cos = np.einsum("ij,ij->i", unit[rows[left[both]]], unit[rows[right[both]]])
        # A dot product of unit rows can pass +-1 by a rounding step: clip to the range.
        values["semantic_chunk_stickiness"] = mean_or_none(np.clip(cos, -1.0, 1.0))
    if vectors.sentences:
        values.update(sentence_metrics(vectors.sentences, chunk_ids, left, right))
    return values


# -- metadata ----------------------------------------------------------------
def _metadata_completeness(chunks: Sequence[Chunk], required: tuple[str, ...] | None
                           ) -> float | None:
    if required is None:
        return None
    complete = sum(1 for chunk in chunks
                   if all((chunk.metadata or {}).get(key) is not None for key in required))
    return complete / len(chunks)


def _metadata_accuracy(dataset: Dataset) -> float | None:
    expected = dataset.expected_metadata
    if not expected:
        return None
    by_id = {chunk.id: chunk for chunk in dataset.chunks}
    total = correct = 0
    for chunk_id, wanted in expected.items():
        chunk = by_id.get(chunk_id)
        metadata = chunk.metadata if chunk is not None and chunk.metadata is not None else {}
        for key, value in wanted.items():
            total += 1
            correct += key in metadata and json_equal(metadata[key], value)
    return correct / total if total else None


# -- words -------------------------------------------------------------------
def _lexical_metrics(dataset: Dataset, scope: _IntArray, pairs: tuple[_IntArray, _IntArray]
                     ) -> LexicalMetrics:
    """Word-overlap proxies over the tokens of each chunk's text.

    Computed on integer word ids by :func:`pytest_rag.kernels.lexical.lexical_metrics`
    (sorting and counting, no Python set);
    :func:`pytest_rag.kernels.lexical_sets.lexical_metrics_sets`, the same
    definitions with Python sets, serves where its integer keys would not fit an
    int64 and is the reference the tests compare it with.
    """
    values = lexical_metrics(dataset, scope, pairs)
    return values if values is not None else lexical_metrics_sets(dataset, scope, pairs)


def _unmeasured_reason(dataset: Dataset, lexical: LexicalMetrics) -> str:
    """Why ``lexical_cohesion`` is ``None``: the first chunk it could not measure."""
    row, counts = lexical.unmeasured[0]
    chunk_id = dataset.chunks[row].id
    name = f"chunk {quoted(chunk_id)}" if chunk_id is not None else f"chunks[{row}]"
    others = len(lexical.unmeasured) - 1
    more = f" (and {others:,} more chunk{'s' if others > 1 else ''})" if others else ""
    return (f"{name}{more} has {counts:,} (sentence pair, "
            f"shared word) counts, over the limit of {PAIR_WORD_LIMIT:,} per chunk "
            "(identical sentences counted once): not computed")
