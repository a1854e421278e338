"""An extractive answerer: the best-supported sentence of the context, or an abstention.

It stands in for the LLM call of a production pipeline, so it reports what
that call would use: prompt and completion tokens (estimated from the prompt
it would send) and their price from a :class:`PriceTable`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .documents import Chunk
from .text import content_terms, estimate_llm_tokens, sentence_spans

__all__ = ["ABSTENTION", "PROMPT_TEMPLATE", "Answer", "ExtractiveAnswerer", "PriceTable"]

PROMPT_TEMPLATE = (
    "Answer the question using only the context below. Cite the documents you use. "
    "If the context does not contain the answer, say that you do not know.\n\n"
    "Context:\n{context}\n\nQuestion: {question}\nAnswer:"
)
ABSTENTION = "I don't know: the documents do not answer this."


@dataclass(frozen=True)
class PriceTable:
    """Prices in US dollars per million tokens, as providers publish them."""

    model: str = "hosted-medium"
    input_per_million: float = 3.00
    output_per_million: float = 15.00

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_million
                + completion_tokens * self.output_per_million) / 1_000_000


@dataclass(frozen=True)
class Answer:
    """What the answerer returns for one question."""

    text: str
    cited_ids: tuple[str, ...]
    abstained: bool
    support: float
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ExtractiveAnswerer:
    """Pick the context sentence that covers most of the question's weight.

    ``support(s)`` = the idf weight of the question's distinct content words
    that sentence ``s`` contains, over the weight of all of them.  The best
    sentence (ties: earlier chunk rank, then earlier sentence) is the answer,
    followed by the next sentence of its chunk when that one adds a word of
    the question.  Below ``abstain_below`` the answerer abstains.  The answer
    cites the document of the chunk it came from.

    Parameters
    ----------
    idf:
        Weight of a word, usually ``BM25Retriever.idf_of``.
    abstain_below:
        The support an answer needs.
    price:
        The price table for the cost figure.
    """

    def __init__(self, idf: Callable[[str], float], *, abstain_below: float = 0.5,
                 price: PriceTable | None = None) -> None:
        self.idf = idf
        self.abstain_below = abstain_below
        self.price = price or PriceTable()

    def answer(self, question: str, ranked: Sequence[Chunk], prompt_context: str) -> Answer:
        """Answer from ``ranked`` (best first); ``prompt_context`` is the packed prompt text."""
        weights = {term: self.idf(term) for term in sorted(set(content_terms(question)))}
        total = sum(weights.values())
        best: tuple[float, int, int] | None = None
        candidates: list[tuple[Chunk, list[tuple[int, int]], list[set[str]]]] = []
        for rank, chunk in enumerate(ranked):
            spans = sentence_spans(chunk.text)
            terms = [set(content_terms(chunk.text[s:e])) & weights.keys() for s, e in spans]
            candidates.append((chunk, spans, terms))
            for i, found in enumerate(terms):
                support = round(sum(weights[t] for t in found) / total, 12) if total else 0.0
                if best is None or support > best[0]:
                    best = (support, rank, i)
        prompt = PROMPT_TEMPLATE.format(context=prompt_context, question=question)
        prompt_tokens = estimate_llm_tokens(prompt)
        if best is None or best[0] < self.abstain_below:
            completion = estimate_llm_tokens(ABSTENTION)
            return Answer(ABSTENTION, (), True, best[0] if best else 0.0, prompt_tokens,
                          completion, self.price.cost(prompt_tokens, completion))
        support, rank, i = best
        chunk, spans, terms = candidates[rank]
        end = spans[i][1]
        if i + 1 < len(spans) and terms[i + 1] - terms[i]:
            end = spans[i + 1][1]
        text = " ".join(chunk.text[spans[i][0]:end].split())
        completion = estimate_llm_tokens(text)
        return Answer(text, (chunk.doc_id,), False, support, prompt_tokens, completion,
                      self.price.cost(prompt_tokens, completion))
