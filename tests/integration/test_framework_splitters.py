"""Real LangChain, LlamaIndex and Haystack splitters on the Chroma corpora.

For each framework, the objects its splitter makes, passed straight in, must
give the metrics that the same chunks give converted by hand into mappings:
for chunking, retrieval, reranking and augmentation, with the ranked lists
made of a retriever's copies of the chunks (new objects, as a vector store
hands back).  Install the frameworks with ``pip install -e '.[integration]'``;
without them, or without ``../shared``, the tests skip and say why.
"""

from __future__ import annotations

import copy
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_rag import Dataset, load_dataset
from pytest_rag.stages.augmentation import AugmentationEvaluator
from pytest_rag.stages.chunking import ChunkingEvaluator
from pytest_rag.stages.reranking import RerankingEvaluator
from pytest_rag.stages.retrieval import RetrievalEvaluator

CHROMA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "chroma_chunking"
#: Two corpora of the five: a chat log and a speech (88,000 characters, 132 queries).
CORPORA = ("chatlogs", "state_of_the_union")

needs_shared = pytest.mark.skipif(
    not (CHROMA / "all.gold.json").is_file(),
    reason=f"shared data absent: {CHROMA / 'all.gold.json'} not found")


@cache
def gold() -> Dataset:
    """The chosen corpora of the Chroma gold file, their queries, no run."""
    full = load_dataset(CHROMA / "all.gold.json")
    documents = tuple(d for d in full.documents if d.id in CORPORA)
    queries = tuple(q for q in full.queries
                    if all(span.doc_id in CORPORA for span in q.expected_evidence))
    return Dataset(documents=documents, queries=queries)


def _words(text: str) -> Counter[str]:
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def rank(texts: Sequence[str], question: str, k: int = 10) -> list[int]:
    """Indices of the ``k`` texts sharing the most question words: a stand-in retriever."""
    asked = _words(question)
    scores = [sum(min(count, asked[word]) for word, count in _words(text).items()
                  if word in asked) for text in texts]
    return sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:k]


def metrics(chunks: Sequence[Any], ranked: Mapping[str, Sequence[Any]]
            ) -> dict[str, Mapping[str, float | None]]:
    dataset = gold()
    graded = {"relevance_from_evidence": True}
    return {
        "chunking": ChunkingEvaluator().evaluate(dataset, chunks=chunks).values,
        "retrieval": RetrievalEvaluator(**graded).evaluate(
            dataset, chunks=chunks, retrieved_ids=ranked).values,
        "reranking": RerankingEvaluator(**graded).evaluate(
            dataset, chunks=chunks, reranked_ids={q: list(reversed(r)) for q, r in ranked.items()}
        ).values,
        "augmentation": AugmentationEvaluator().evaluate(
            dataset, chunks=chunks, context_ids={q: r[:4] for q, r in ranked.items()}).values,
    }


def check_same(objects: Sequence[Any], text_of: Callable[[Any], str],
               mapping_of: Callable[[Any], dict[str, Any]]) -> None:
    """Objects in, retriever copies in the ranked lists, against the hand conversion."""
    texts = [text_of(item) for item in objects]
    order = {q.id: rank(texts, q.question or "") for q in gold().queries}
    copies = {q: [copy.deepcopy(objects[i]) for i in indices] for q, indices in order.items()}
    by_hand = [mapping_of(item) for item in objects]
    ids = {q: [by_hand[i]["id"] for i in indices] for q, indices in order.items()}
    expected = metrics(by_hand, ids)
    got = metrics(objects, copies)
    assert expected["retrieval"]["recall_at_k"], "the stand-in retriever found nothing"
    for stage, values in expected.items():
        wrong = {key: (value, got[stage][key]) for key, value in values.items()
                 if (value is None) != (got[stage][key] is None) or (
                     value is not None and not math.isclose(value, got[stage][key] or 0.0,
                                                            rel_tol=1e-12, abs_tol=1e-12))}
        assert not wrong, f"{stage}: {wrong}"


def text_of_document(doc_id: str) -> str:
    return next(d.text for d in gold().documents if d.id == doc_id)


@needs_shared
def test_langchain_recursive_splitter() -> None:
    splitters = pytest.importorskip("langchain_text_splitters",
                                    reason="langchain-text-splitters not installed")
    splitter = splitters.RecursiveCharacterTextSplitter(chunk_size=600, chunk_overlap=80,
                                                        add_start_index=True)
    # The loader's metadata: 'source' is the file's path, which the gold reads as 'path:'.
    documents = splitter.create_documents(
        [text_of_document(name) for name in CORPORA],
        metadatas=[{"source": str(CHROMA / f"{name}.md")} for name in CORPORA])
    assert all(document.id is None for document in documents)  # no ids: they are derived

    def by_hand(document: Any) -> dict[str, Any]:
        doc_id = Path(document.metadata["source"]).stem
        start = document.metadata["start_index"]
        end = start + len(document.page_content)
        assert text_of_document(doc_id)[start:end] == document.page_content
        return {"id": f"{doc_id}[{start}:{end}]", "doc_id": doc_id, "start": start, "end": end}

    check_same(documents, lambda document: document.page_content, by_hand)


@needs_shared
def test_llamaindex_sentence_splitter() -> None:
    core = pytest.importorskip("llama_index.core", reason="llama-index-core not installed")
    parser = pytest.importorskip("llama_index.core.node_parser",
                                 reason="llama-index-core not installed")
    schema = pytest.importorskip("llama_index.core.schema", reason="llama-index-core not installed")
    splitter = parser.SentenceSplitter(chunk_size=160, chunk_overlap=20)
    nodes = splitter.get_nodes_from_documents(
        [core.Document(text=text_of_document(name), id_=name) for name in CORPORA])

    def by_hand(node: Any) -> dict[str, Any]:
        start, end = node.start_char_idx, node.end_char_idx
        assert text_of_document(node.ref_doc_id)[start:end] == node.get_content()
        return {"id": node.node_id, "doc_id": node.ref_doc_id, "start": start, "end": end}

    check_same(nodes, lambda node: node.get_content(), by_hand)
    # A retriever's results: NodeWithScore around copies of the nodes.
    scored = [schema.NodeWithScore(node=copy.deepcopy(node), score=0.5) for node in nodes]
    check_same(scored, lambda item: item.node.get_content(), lambda item: by_hand(item.node))


@needs_shared
def test_haystack_document_splitter() -> None:
    haystack = pytest.importorskip("haystack", reason="haystack-ai not installed")
    preprocessors = pytest.importorskip("haystack.components.preprocessors",
                                        reason="haystack-ai not installed")
    splitter = preprocessors.DocumentSplitter(split_by="word", split_length=120, split_overlap=15)
    documents = splitter.run(documents=[haystack.Document(content=text_of_document(name), id=name)
                                        for name in CORPORA])["documents"]

    def by_hand(document: Any) -> dict[str, Any]:
        doc_id = document.meta["source_id"]
        start = document.meta["split_idx_start"]
        end = start + len(document.content)
        assert text_of_document(doc_id)[start:end] == document.content
        return {"id": document.id, "doc_id": doc_id, "start": start, "end": end}

    check_same(documents, lambda document: document.content, by_hand)
