"""The metric registry: the single source of every key, its stage and direction.

Reporters, baselines, assertions, the CLI and the README's metric table all
read :data:`REGISTRY`; nothing else lists metric keys.  A key may appear in
several stages (``ndcg_at_k`` in retrieval and reranking, ``p95_latency_ms``
in retrieval, generation and end to end); a :class:`MetricSpec` is identified
by ``(stage, key)`` and named ``"stage.key"``.

This module imports nothing heavy: it is safe to import at plugin start-up.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Final

from .errors import unknown_names

__all__ = [
    "REGISTRY",
    "STAGES",
    "Direction",
    "MetricSpec",
    "describe_need",
    "get_metric",
    "need_alternatives",
    "stage_metrics",
]

#: The seven stages, in pipeline order.
STAGES: Final[tuple[str, ...]] = (
    "chunking",
    "embedding",
    "retrieval",
    "reranking",
    "augmentation",
    "generation",
    "end_to_end",
)


class Direction(str, enum.Enum):
    """Which way a metric improves; baselines use it to tell a regression."""

    HIGHER = "higher"
    LOWER = "lower"
    INFO = "info"

    def worse(self, new: float, old: float, tolerance: float) -> bool:
        """True when ``new`` is worse than ``old`` by more than ``tolerance``."""
        if self is Direction.HIGHER:
            return new < old - tolerance
        if self is Direction.LOWER:
            return new > old + tolerance
        return False


@dataclass(frozen=True)
class MetricSpec:
    """One metric of one stage.

    Attributes
    ----------
    stage, key:
        Identify the metric; ``name`` is ``"stage.key"``.
    title:
        The reference's display name, e.g. ``"Recall@K"``.
    direction:
        Higher better, lower better, or informational (never a regression).
    meaning:
        One line: what the number says.
    formula:
        The definition, in plain text.
    needs:
        The inputs (their names in the dataset format) without which the metric is
        ``None``.
        An entry ``"answer|abstained"`` is met by either input
        (:func:`need_alternatives`).
    unit:
        ``"ratio"`` (absolute tolerance), ``"ms"``, ``"usd"``, ``"tokens"``
        (relative tolerance), or ``"score"`` (absolute, not bounded by 1).
    per_query:
        True when the value is a mean of per-query values.
    low, high:
        The range a value can take.
    undefined_when:
        When a per-query value is ``None`` although every input of :attr:`needs` is
        given: the pipeline's output leaves nothing to measure (``"the answer has no
        number"``).  ``None`` for a metric defined whenever its inputs are given.
        The baseline comparison does not count such a query as lost
        (:mod:`pytest_rag.compare.likeness`).
    """

    stage: str
    key: str
    title: str
    direction: Direction
    meaning: str
    formula: str
    needs: tuple[str, ...]
    unit: str = "ratio"
    per_query: bool = True
    low: float = 0.0
    high: float = 1.0
    undefined_when: str | None = None

    @property
    def name(self) -> str:
        return f"{self.stage}.{self.key}"

    @property
    def relative_tolerance(self) -> bool:
        """Latency, cost and token counts compare with a relative tolerance."""
        return self.unit in ("ms", "usd", "tokens")

    @property
    def graded_by_chunk(self) -> bool:
        """The value counts relevant *chunks* (it needs ``relevant``), so it compares
        across chunkers only when they share chunk-level grades: with grades derived
        from evidence spans each chunker grades its own chunks, and bigger chunks
        collect more grades.  Token, evidence, context and answer metrics compare
        text positions or answers and stay comparable."""
        return "relevant" in self.needs

    @property
    def cost(self) -> bool:
        """Latency, money or tokens spent, lower better: a cost of a sweep variant."""
        return self.relative_tolerance and self.direction is Direction.LOWER

    @property
    def measured(self) -> bool:
        """Latency: timed by the pipeline, so it varies between runs of unchanged code
        (cost and tokens are counted from the run and do not)."""
        return self.unit == "ms"


def need_alternatives(need: str) -> tuple[str, ...]:
    """The inputs that each meet the entry ``need`` of :attr:`MetricSpec.needs`.

    >>> need_alternatives("answer|abstained")
    ('answer', 'abstained')
    >>> need_alternatives("chunks")
    ('chunks',)
    """
    return tuple(need.split("|"))


def describe_need(need: str, quote: str = "") -> str:
    """An entry of :attr:`MetricSpec.needs` for people.

    >>> describe_need("answer|abstained", "`")
    '`answer` or `abstained`'
    """
    return " or ".join(f"{quote}{name}{quote}" for name in need_alternatives(need))


_H, _L, _I = Direction.HIGHER, Direction.LOWER, Direction.INFO
_INF = math.inf


def _spec(stage: str, key: str, title: str, direction: Direction, meaning: str,
          formula: str, needs: tuple[str, ...], **extra: object) -> MetricSpec:
    return MetricSpec(stage, key, title, direction, meaning, formula, needs, **extra)  # type: ignore[arg-type]


_CHUNK = ("documents", "chunks")
_POOLED: dict[str, object] = {"per_query": False}
_SPECS: tuple[MetricSpec, ...] = (
    # 1. Chunking: pooled over every chunk of the documents that have one.
    _spec("chunking", "coverage", "Document Coverage", _H,
          "share of source tokens covered by at least one chunk", "|U| / N", _CHUNK, **_POOLED),
    _spec("chunking", "size_compliance", "Size Compliance", _H,
          "share of chunks whose token count lies within size_limits",
          "#{C_i : L_min <= |C_i| <= L_max} / n", _CHUNK + ("size_limits",), **_POOLED),
    _spec("chunking", "mean_chunk_tokens", "Mean Chunk Size", _I,
          "mean tokens per chunk", "sum |C_i| / n", _CHUNK, unit="tokens", high=_INF, **_POOLED),
    _spec("chunking", "min_chunk_tokens", "Min Chunk Size", _I,
          "fewest tokens in a chunk", "min |C_i|", _CHUNK, unit="tokens", high=_INF, **_POOLED),
    _spec("chunking", "max_chunk_tokens", "Max Chunk Size", _I,
          "most tokens in a chunk", "max |C_i|", _CHUNK, unit="tokens", high=_INF, **_POOLED),
    _spec("chunking", "size_cv", "Size Variation (CV)", _I,
          "population standard deviation of chunk sizes over their mean",
          "sigma / mu", _CHUNK, unit="score", high=_INF, **_POOLED),
    _spec("chunking", "overlap_ratio", "Redundancy Ratio", _L,
          "extra tokens indexed because chunks overlap, per covered token",
          "(sum |C_i| - |U|) / |U|", _CHUNK, unit="score", high=_INF, **_POOLED),
    _spec("chunking", "evidence_completeness", "Evidence Completeness", _H,
          "share of gold spans held whole by one chunk",
          "#{g intact in one chunk} / |G|", _CHUNK + ("expected_evidence",), **_POOLED),
    _spec("chunking", "evidence_fragmentation", "Evidence Fragmentation", _L,
          "mean number of chunks a gold span touches (1 is best)",
          "mean over g of #{C_i : C_i meets g}", _CHUNK + ("expected_evidence",),
          unit="score", high=_INF, **_POOLED),
    _spec("chunking", "structural_integrity", "Structural Integrity", _H,
          "share of Markdown blocks (headings, code, tables, lists) held whole by one chunk",
          "#{intact blocks} / #{blocks}", _CHUNK, **_POOLED),
    _spec("chunking", "boundary_f1", "Boundary Alignment F1", _H,
          "F1 of chunk end offsets against those of expected_chunks",
          "2 P_b R_b / (P_b + R_b)", _CHUNK + ("expected_chunks",), **_POOLED),
    _spec("chunking", "semantic_cohesion", "Semantic Cohesion", _H,
          "mean cosine between the sentences of a chunk",
          "mean over chunks of mean_{i<j} cos(e_i, e_j)", _CHUNK + ("sentence_vectors",),
          low=-1.0, **_POOLED),
    _spec("chunking", "semantic_boundary_clarity", "Boundary Clarity", _H,
          "1 - cosine between the sentences on both sides of a boundary",
          "1 - cos(e_left, e_right)", _CHUNK + ("sentence_vectors",), high=2.0, **_POOLED),
    _spec("chunking", "semantic_chunk_stickiness", "Chunk Stickiness", _I,
          "mean cosine between neighbouring chunks (high: maybe split without need)",
          "mean cos(e_C_i, e_C_i+1)", _CHUNK + ("chunk_vectors",), low=-1.0, **_POOLED),
    _spec("chunking", "metadata_completeness", "Metadata Completeness", _H,
          "share of chunks carrying every required_metadata key",
          "#{chunks with every required key} / n", _CHUNK + ("required_metadata",), **_POOLED),
    _spec("chunking", "metadata_accuracy", "Metadata Accuracy", _H,
          "share of expected_metadata values that the chunks carry exactly",
          "#{correct values} / #{expected values}", _CHUNK + ("expected_metadata",), **_POOLED),
    _spec("chunking", "lexical_cohesion", "Lexical Cohesion", _H,
          "mean Jaccard overlap of the sentence pairs inside a chunk",
          "mean J(s_i, s_j)", _CHUNK, **_POOLED),
    _spec("chunking", "lexical_boundary_clarity", "Lexical Boundary Clarity", _H,
          "1 - Jaccard of the last 12 words left and first 12 words right of a boundary",
          "1 - J(last12, first12)", _CHUNK, **_POOLED),
    _spec("chunking", "lexical_chunk_stickiness", "Lexical Chunk Stickiness", _I,
          "mean Jaccard overlap of neighbouring chunks' word sets",
          "mean J(C_i, C_i+1)", _CHUNK, **_POOLED),
    # 2. Embedding and indexing.
    _spec("embedding", "zero_norm_rate", "Zero-Norm Rate", _L,
          "share of chunk vectors that are all zero", "#{v : ||v|| = 0} / |V|",
          ("chunk_vectors",), **_POOLED),
    _spec("embedding", "duplicate_vector_rate", "Duplicate Vector Rate", _L,
          "share of chunk vectors equal to an earlier one", "(|V| - #distinct) / |V|",
          ("chunk_vectors",), **_POOLED),
    _spec("embedding", "mean_vector_norm", "Mean Vector Norm", _I,
          "mean Euclidean norm of the chunk vectors", "mean ||v||",
          ("chunk_vectors",), unit="score", high=_INF, **_POOLED),
    _spec("embedding", "index_coverage", "Index Coverage", _H,
          "share of chunk vectors whose id reached the index", "|V ∩ indexed| / |V|",
          ("chunk_vectors", "indexed_ids"), **_POOLED),
    _spec("embedding", "query_topk_recall", "Query Top-K Recall", _H,
          "share of a query's gold chunks in its exact cosine top K",
          "|E_q^K ∩ G_q| / |G_q|", ("chunk_vectors", "query_vector", "relevant")),
    _spec("embedding", "ann_recall_at_k", "ANN Recall@K", _H,
          "share of the exact top K that the approximate index returned",
          "|index_q^K ∩ E_q^K| / |E_q^K|", ("chunk_vectors", "query_vector", "ann_ids")),
    _spec("embedding", "positive_similarity", "Positive Similarity", _H,
          "mean cosine between a query and its gold chunks", "mean cos(q, c), c in G_q",
          ("chunk_vectors", "query_vector", "relevant"), low=-1.0,
          undefined_when="no gold chunk has a vector"),
    _spec("embedding", "negative_similarity", "Negative Similarity", _L,
          "mean cosine between a query and the other chunks", "mean cos(q, c), c not in G_q",
          ("chunk_vectors", "query_vector"), low=-1.0,
          undefined_when="every chunk vector belongs to a gold chunk"),
    _spec("embedding", "similarity_margin", "Similarity Margin", _H,
          "positive minus negative similarity, per query", "positive - negative",
          ("chunk_vectors", "query_vector", "relevant"), unit="score", low=-2.0, high=2.0,
          undefined_when="no gold chunk has a vector, or every vector is gold"),
    # 3. Retrieval.
    _spec("retrieval", "precision_at_k", "Precision@K", _H,
          "share of the top K that is relevant", "#relevant in top K / K",
          ("retrieved_ids", "relevant")),
    _spec("retrieval", "recall_at_k", "Recall@K", _H,
          "share of the relevant chunks found in the top K", "#relevant in top K / #relevant",
          ("retrieved_ids", "relevant")),
    _spec("retrieval", "f1_at_k", "F1@K", _H,
          "harmonic mean of precision@K and recall@K", "2PR / (P + R)",
          ("retrieved_ids", "relevant")),
    _spec("retrieval", "mrr_at_k", "MRR@K", _H,
          "reciprocal rank of the first relevant result in the top K (a miss is 0)",
          "mean 1 / rank_q", ("retrieved_ids", "relevant")),
    _spec("retrieval", "ndcg_at_k", "nDCG@K", _H,
          "graded ranking quality of the top K against the ideal order",
          "sum (2^rel_i - 1) / log2(i + 1) / IDCG@K", ("retrieved_ids", "relevant")),
    _spec("retrieval", "hit_at_k", "Hit Rate@K", _H,
          "share of queries with a relevant result in the top K", "#{queries with a hit} / Q",
          ("retrieved_ids", "relevant")),
    _spec("retrieval", "average_precision_at_k", "MAP@K", _H,
          "mean precision at the relevant ranks of the top K",
          "sum_{relevant i <= K} P@i / min(#relevant, K)", ("retrieved_ids", "relevant")),
    _spec("retrieval", "token_recall", "Token Recall", _H,
          "share of gold evidence tokens inside the top K chunks", "|R ∩ G| / |G|",
          ("retrieved_ids", "expected_evidence", "chunks")),
    _spec("retrieval", "token_precision", "Token Precision", _H,
          "share of the top K chunks' tokens that are evidence", "|R ∩ G| / |R|",
          ("retrieved_ids", "expected_evidence", "chunks")),
    _spec("retrieval", "token_iou", "Token IoU", _H,
          "overlap of retrieved and evidence tokens over their union", "|R ∩ G| / |R ∪ G|",
          ("retrieved_ids", "expected_evidence", "chunks")),
    _spec("retrieval", "complete_evidence_recall", "Complete Evidence Recall", _H,
          "share of gold spans held whole by one top-K chunk",
          "#{fully recovered spans} / #{spans}", ("retrieved_ids", "expected_evidence", "chunks")),
    _spec("retrieval", "p50_latency_ms", "Retrieval P50 Latency", _L,
          "median retrieval latency", "P50(retrieval_latency_ms)", ("retrieval_latency_ms",),
          unit="ms", high=_INF, per_query=False),
    _spec("retrieval", "p95_latency_ms", "Retrieval P95 Latency", _L,
          "95th percentile retrieval latency", "P95(retrieval_latency_ms)",
          ("retrieval_latency_ms",), unit="ms", high=_INF, per_query=False),
    # 4. Reranking.
    _spec("reranking", "ndcg_at_k", "nDCG@K", _H,
          "nDCG@K of the reranked list", "nDCG@K(after)", ("reranked_ids", "relevant")),
    _spec("reranking", "mrr_at_k", "MRR@K", _H,
          "MRR@K of the reranked list", "MRR@K(after)", ("reranked_ids", "relevant")),
    _spec("reranking", "ndcg_gain", "nDCG Gain", _H,
          "nDCG@K after minus before reranking (above 0 the reranker helps)",
          "nDCG_after - nDCG_before", ("retrieved_ids", "reranked_ids", "relevant"),
          unit="score", low=-1.0),
    _spec("reranking", "mrr_gain", "MRR Gain", _H,
          "MRR@K after minus before reranking", "MRR_after - MRR_before",
          ("retrieved_ids", "reranked_ids", "relevant"), unit="score", low=-1.0),
    _spec("reranking", "precision_gain", "Precision Gain", _H,
          "precision@K after minus before reranking", "P@K_after - P@K_before",
          ("retrieved_ids", "reranked_ids", "relevant"), unit="score", low=-1.0),
    _spec("reranking", "first_relevant_rank_change", "First Relevant Rank Change", _I,
          "places the first relevant chunk moved up, over the whole lists",
          "rank_before - rank_after", ("retrieved_ids", "reranked_ids", "relevant"),
          unit="score", low=-_INF, high=_INF,
          undefined_when="a list has no relevant chunk"),
    _spec("reranking", "candidate_set_preservation_rate", "Candidate Set Preservation", _I,
          "share of queries whose reranked list holds the same chunks as before",
          "#{queries with the same chunk set} / Q", ("retrieved_ids", "reranked_ids")),
    # 5. Augmentation (context).
    _spec("augmentation", "context_precision", "Context Precision", _H,
          "share of the context's tokens that are evidence", "|C ∩ G| / |C|",
          ("context_ids", "expected_evidence", "chunks")),
    _spec("augmentation", "context_recall", "Context Recall", _H,
          "share of the evidence tokens that reached the context", "|C ∩ G| / |G|",
          ("context_ids", "expected_evidence", "chunks")),
    _spec("augmentation", "context_noise", "Context Noise", _L,
          "share of the context's tokens that are not evidence", "1 - context_precision",
          ("context_ids", "expected_evidence", "chunks")),
    _spec("augmentation", "context_sufficient", "Context Sufficiency", _H,
          "share of queries whose every gold span is whole in one context chunk",
          "1[every gold span whole in a context chunk]",
          ("context_ids", "expected_evidence", "chunks")),
    _spec("augmentation", "duplicate_ratio", "Duplicate Ratio", _L,
          "share of context tokens that repeat a position already in the context",
          "(context tokens - |C|) / context tokens", ("context_ids", "chunks"),
          undefined_when="the context is empty"),
    _spec("augmentation", "budget_compliant", "Budget Compliance", _H,
          "share of queries whose context fits max_context_tokens",
          "1[context tokens <= max_context_tokens]",
          ("context_ids", "chunks", "max_context_tokens")),
    _spec("augmentation", "evidence_edge_placement", "Evidence Edge Placement", _H,
          "1 when evidence chunks sit first or last in the context, 0 in the middle",
          "mean |2p - 1|, p = position / (entries - 1)",
          ("context_ids", "expected_evidence", "chunks"),
          undefined_when="no context chunk touches the evidence"),
    # 6. Generation.
    _spec("generation", "exact_match", "Exact Match (EM)", _H,
          "share of answers whose normalised tokens equal a reference's",
          "1[norm(A) = norm(Y)]", ("answer", "reference_answer")),
    _spec("generation", "answer_precision", "Answer Token Precision", _H,
          "share of the answer's tokens matched in the reference", "matched / |t(A)|",
          ("answer", "reference_answer")),
    _spec("generation", "answer_recall", "Answer Token Recall", _H,
          "share of the reference's tokens matched in the answer", "matched / |t(Y)|",
          ("answer", "reference_answer")),
    _spec("generation", "answer_f1", "Answer F1", _H,
          "harmonic mean of answer token precision and recall", "2 P_a R_a / (P_a + R_a)",
          ("answer", "reference_answer")),
    _spec("generation", "rouge_l_f1", "ROUGE-L F1", _H,
          "F1 of the longest common token subsequence with the reference",
          "2 P_LCS R_LCS / (P_LCS + R_LCS)", ("answer", "reference_answer")),
    _spec("generation", "required_fact_coverage", "Required Fact Coverage", _H,
          "share of required facts found as phrases in the answer",
          "#{required facts in A} / #{required facts}", ("answer", "required_facts")),
    _spec("generation", "citation_precision", "Citation Precision", _H,
          "share of cited ids that are expected", "#correct cited / #cited",
          ("cited_ids", "expected_citations")),
    _spec("generation", "citation_recall", "Citation Recall", _H,
          "share of expected ids that are cited", "#correct cited / #expected",
          ("cited_ids", "expected_citations")),
    _spec("generation", "citation_f1", "Citation F1", _H,
          "harmonic mean of citation precision and recall", "2PR / (P + R)",
          ("cited_ids", "expected_citations")),
    _spec("generation", "annotated_claim_support", "Claim Support", _H,
          "share of human-verified claims marked supported",
          "#{claims supported} / #{claims}", ("verified_claims",),
          undefined_when="the answer has no verified claim"),
    _spec("generation", "abstention_accuracy", "Abstention Accuracy", _H,
          "share of queries where answering or abstaining was the right call",
          "#{correct decisions} / Q", ("answerable", "answer|abstained")),
    _spec("generation", "context_grounding", "Context Grounding", _H,
          "share of the answer's tokens found in the context chunks",
          "#{w in t(A) : w in context} / |t(A)|", ("answer", "context_ids", "chunks"),
          undefined_when="the answer has no token"),
    _spec("generation", "unsupported_number_rate", "Unsupported Number Rate", _L,
          "share of the answer's numbers absent from the context",
          "#{numbers of A not in context} / #{numbers of A}", ("answer", "context_ids", "chunks"),
          undefined_when="the answer has no number"),
    _spec("generation", "task_success", "Task Success", _H,
          "share of labelled queries marked successful", "#successful / #labelled",
          ("task_success",)),
    _spec("generation", "p95_latency_ms", "Generation P95 Latency", _L,
          "95th percentile of LLM generation time", "P95(generation_latency_ms)",
          ("generation_latency_ms",), unit="ms", high=_INF, per_query=False),
    # 7. End to end.
    _spec("end_to_end", "answer_exact_match", "Exact Match", _H,
          "share of final answers equal to a reference after normalisation",
          "1[norm(A) = norm(Y)]", ("answer", "reference_answer")),
    _spec("end_to_end", "answer_f1", "Answer F1", _H,
          "token F1 of the final answer against the reference", "2 P_a R_a / (P_a + R_a)",
          ("answer", "reference_answer")),
    _spec("end_to_end", "task_success_rate", "Task Success Rate", _H,
          "share of labelled requests marked successful", "#successful / #labelled",
          ("task_success",)),
    _spec("end_to_end", "p50_latency_ms", "End-to-End P50 Latency", _L,
          "median request-to-answer time", "P50(latency_ms)", ("latency_ms",),
          unit="ms", high=_INF, per_query=False),
    _spec("end_to_end", "p95_latency_ms", "End-to-End P95 Latency", _L,
          "95th percentile request-to-answer time", "P95(latency_ms)", ("latency_ms",),
          unit="ms", high=_INF, per_query=False),
    _spec("end_to_end", "mean_cost_usd", "Mean Cost", _L,
          "mean cost per request", "mean cost_usd", ("cost_usd",), unit="usd", high=_INF),
    _spec("end_to_end", "mean_total_tokens", "Mean Tokens", _L,
          "mean LLM tokens per request", "mean total_tokens", ("total_tokens",),
          unit="tokens", high=_INF),
)

#: Every metric, keyed by ``"stage.key"``, in stage order then reference order.
REGISTRY: Final[dict[str, MetricSpec]] = {spec.name: spec for spec in _SPECS}


def stage_metrics(stage: str) -> tuple[MetricSpec, ...]:
    """The metrics of one stage, in the reference's order."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; known: {', '.join(STAGES)}")
    return tuple(spec for spec in _SPECS if spec.stage == stage)


def get_metric(name: str) -> MetricSpec:
    """Look up ``"stage.key"``.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown metric {unknown_names([name], REGISTRY)}; known: {', '.join(REGISTRY)}"
        ) from None
