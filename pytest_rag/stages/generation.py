"""Stage 6, generation: the answer against the reference, facts, citations, context."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from ..dataset.model import Dataset, Query, RunEntry
from ..errors import DatasetError
from ..kernels.aggregate import FloatArray, percentile
from ..kernels.answers import (
    DEFAULT_ABSTAIN_PHRASES,
    abstains,
    answer_tokens,
    fact_coverage,
    normalize,
    numbers,
    score_tokens,
)
from ..settings import validate_setting
from ._base import ReportBuilder, StageEvaluator, StageSettings

__all__ = ["GenerationEvaluator", "GenerationSettings", "answer_metrics"]

_NAN = float("nan")
_ANSWER_KEYS = ("exact_match", "answer_precision", "answer_recall", "answer_f1", "rouge_l_f1")
_QUERY_KEYS = ("required_fact_coverage", "citation_precision", "citation_recall", "citation_f1",
               "annotated_claim_support", "abstention_accuracy", "context_grounding",
               "unsupported_number_rate")


def answer_metrics(dataset: Dataset, *, rouge: bool = True,
                   tokens: Mapping[int, list[str]] | None = None) -> dict[str, FloatArray]:
    """Per-query exact match, token P/R/F1 and ROUGE-L F1 (NaN = ``None``).

    A query is scored when it has at least one reference answer and a run
    entry with an ``answer`` (an empty answer counts).  ``tokens`` may hold
    the already tokenized answers by query index.  Shared with the end to
    end stage; ``rouge=False`` leaves ``rouge_l_f1`` all NaN.
    """
    count = len(dataset.queries)
    rows: list[int] = []
    scored: list[tuple[float, ...]] = []
    run = dataset.run
    for i, query in enumerate(dataset.queries):
        entry = run.get(query.id)
        if entry is None or entry.answer is None or not query.reference_answers:
            continue
        words = tokens[i] if tokens is not None and i in tokens else answer_tokens(entry.answer)
        scores = score_tokens(words, [answer_tokens(ref) for ref in query.reference_answers],
                              rouge=rouge)
        if scores is None:  # pragma: no cover - references are not empty here
            continue
        rows.append(i)
        scored.append(scores)
    # One array per metric at the end, rather than five item assignments per query.
    columns = np.fromiter(chain.from_iterable(scored), dtype=np.float64,
                          count=len(scored) * len(_ANSWER_KEYS)).reshape(-1, len(_ANSWER_KEYS))
    out = {key: np.full(count, _NAN) for key in _ANSWER_KEYS}
    for j, key in enumerate(_ANSWER_KEYS):
        out[key][rows] = columns[:, j]
    return out


def task_success(dataset: Dataset) -> FloatArray:
    """Per query 1.0 / 0.0 from the ``task_success`` label; NaN without one."""
    run = dataset.run
    return np.fromiter(
        (_NAN if (entry := run.get(query.id)) is None or entry.task_success is None
         else float(entry.task_success) for query in dataset.queries),
        dtype=np.float64, count=len(dataset.queries))


class _Context:
    """Token sets and numbers of context chunks, each chunk read once."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.cache: dict[int, tuple[frozenset[str], frozenset[str]]] = {}

    def of(self, query_id: str, ids: Sequence[str]) -> tuple[set[str], set[str]]:
        dataset = self.dataset
        index = dataset.chunk_index
        words: set[str] = set()
        nums: set[str] = set()
        for rank, chunk_id in enumerate(ids):
            row = index.get(chunk_id)
            if row is None:
                raise DatasetError(*dataset.run_place(query_id, "context_ids", rank),
                                   f"unknown chunk {chunk_id!r}: context_grounding and "
                                   "unsupported_number_rate need its text")
            cached = self.cache.get(row)
            if cached is None:
                chunk = dataset.chunks[row]
                text = dataset.document_by_id[chunk.doc_id].text[chunk.start:chunk.end]
                cached = self.cache[row] = (frozenset(answer_tokens(text)),
                                            frozenset(numbers(text)))
            words |= cached[0]
            nums |= cached[1]
        return words, nums


@dataclass(frozen=True)
class GenerationSettings(StageSettings):
    """The settings of generation (see :class:`GenerationEvaluator`)."""

    abstain_phrases: tuple[str, ...] = DEFAULT_ABSTAIN_PHRASES


class GenerationEvaluator(StageEvaluator[GenerationSettings]):
    """Generation metrics: the generated ``answer`` against the validated ground truth.

    Parameters
    ----------
    abstain_phrases:
        Phrases that mark an abstention when ``abstained`` is not given.
        ``None``: the dataset's ``params.abstain_phrases``, else
        :data:`~pytest_rag.kernels.answers.DEFAULT_ABSTAIN_PHRASES`.  An empty list
        means no phrase (only an answer without a token abstains).

    Notes
    -----
    Per query, then averaged over the queries where the value is not ``None``:

    * ``exact_match``, ``answer_precision``, ``answer_recall``, ``answer_f1``,
      ``rouge_l_f1``: need a reference answer and a run ``answer``.  These are
      SQuAD's EM and F1 formulas on this project's tokens (no article or
      punctuation stripping, see :mod:`pytest_rag.kernels.answers`).  With several
      references EM is 1 if any matches, P/R/F1 come from the first reference
      with the best token F1, ROUGE-L is the best over the references.
    * ``required_fact_coverage``: share of the required facts (those with a
      token) found as contiguous token runs of the answer; needs an answer.
    * ``citation_precision``, ``citation_recall``, ``citation_f1``: distinct
      ``cited_ids`` against distinct ``expected_citations``; need expected
      citations and ``cited_ids``; an empty ``cited_ids`` list (nothing cited)
      gives precision 0 and F1 0, an absent one ``None``.
    * ``annotated_claim_support``: share of ``verified_claims`` marked
      supported; ``None`` without claims.
    * ``abstention_accuracy``: 1 when an answerable query was answered or an
      unanswerable one abstained; needs ``answerable`` and a run entry with
      ``abstained`` or ``answer``.  ``abstained`` wins over detection; else an
      answer abstains when it has no token or holds a phrase's tokens as a
      contiguous run.
    * ``context_grounding``: answer token occurrences found in the token set
      of the context chunks' texts, over the answer's token count; needs an
      answer with a token, ``context_ids`` and chunks.  An empty context gives 0.
    * ``unsupported_number_rate``: the answer's number occurrences not among
      the context's numbers, over the answer's numbers; needs an answer,
      ``context_ids`` and chunks, and is ``None`` when the answer has no
      number.  An empty context gives 1.
    * ``task_success``: mean of the ``task_success`` labels.

    ``p95_latency_ms`` pools ``generation_latency_ms`` (numpy's linear
    percentile).

    Raises
    ------
    DatasetError
        For a context id that is not a known chunk, when the query's context
        metrics are computed.

    Examples
    --------
    >>> report = GenerationEvaluator().evaluate(
    ...     answer={"q1": "Refunds within 30 days"}, reference_answer={"q1": "30 days"})
    >>> report["exact_match"], report["answer_precision"], report["answer_recall"]   # 2/4, 2/2
    (0.0, 0.5, 1.0)
    """

    stage = "generation"
    inputs = frozenset({"documents", "chunks", "queries", "reference_answer", "required_facts",
                        "expected_citations", "answerable", "answer", "cited_ids", "abstained",
                        "verified_claims", "task_success", "context_ids", "generation_latency_ms"})
    settings_type = GenerationSettings

    def __init__(self, *, abstain_phrases: Iterable[str] | None = None) -> None:
        self.abstain_phrases: tuple[str, ...] | None = validate_setting("abstain_phrases",
                                                                        abstain_phrases)

    def _compute(self, dataset: Dataset, settings: GenerationSettings,
                 builder: ReportBuilder) -> None:
        count = len(dataset.queries)
        # Each answer is tokenized once; its tokens serve every metric.
        tokens = {i: answer_tokens(entry.answer) for i, query in enumerate(dataset.queries)
                  if (entry := dataset.run.get(query.id)) is not None and entry.answer is not None}
        for key, values in answer_metrics(dataset, tokens=tokens).items():
            builder.set_per_query(key, values)
        out = {key: np.full(count, _NAN) for key in _QUERY_KEYS}
        phrases = tuple(norm for norm in map(normalize, settings.abstain_phrases) if norm)
        context = _Context(dataset) if dataset.chunks else None
        for i, query in enumerate(dataset.queries):
            entry = dataset.run.get(query.id)
            if entry is None:
                continue
            for key, value in _query_metrics(query, entry, tokens.get(i), phrases, context).items():
                out[key][i] = value
        for key in _QUERY_KEYS:
            builder.set_per_query(key, out[key])
        builder.set_per_query("task_success", task_success(dataset))
        builder.set("p95_latency_ms", percentile(
            (entry.generation_latency_ms for entry in dataset.run.values()), 95))


def _query_metrics(query: Query, entry: RunEntry, tokens: list[str] | None,
                   phrases: Sequence[str], context: _Context | None) -> dict[str, float]:
    """The other per-query metrics of a query with a run entry (absent keys: ``None``).

    ``tokens`` are the answer's tokens, ``None`` without an answer.
    """
    values: dict[str, float] = {}
    if tokens is not None and query.required_facts:
        coverage = fact_coverage(tokens, query.required_facts)
        if coverage is not None:
            values["required_fact_coverage"] = coverage
    if query.expected_citations and entry.cited_ids is not None:
        expected = set(query.expected_citations)
        cited = set(entry.cited_ids)
        correct = len(cited & expected)
        precision = correct / len(cited) if cited else 0.0
        recall = correct / len(expected)
        values["citation_precision"] = precision
        values["citation_recall"] = recall
        values["citation_f1"] = (0.0 if correct == 0
                                 else 2 * precision * recall / (precision + recall))
    if entry.verified_claims:
        claims = entry.verified_claims
        values["annotated_claim_support"] = sum(claim.supported for claim in claims) / len(claims)
    if query.answerable is not None and (entry.abstained is not None or tokens is not None):
        abstained = (entry.abstained if entry.abstained is not None
                     else abstains(tokens or (), phrases))
        values["abstention_accuracy"] = float(abstained != query.answerable)
    if context is not None and tokens is not None and entry.context_ids is not None:
        answer_numbers = numbers(entry.answer or "")
        if tokens or answer_numbers:
            words, nums = context.of(query.id, entry.context_ids)
            if tokens:
                values["context_grounding"] = sum(token in words for token in tokens) / len(tokens)
            if answer_numbers:
                values["unsupported_number_rate"] = (
                    sum(number not in nums for number in answer_numbers) / len(answer_numbers))
    return values
