"""Chunk objects of LangChain, LlamaIndex and Haystack, recognised by their attributes.

The classes below carry only the attributes pytest-rag reads, named as the
frameworks name them; ``tests/integration`` runs the real frameworks.  Every
case checks that objects give, metric for metric, what the same chunks give as
hand-written mappings.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_rag import DatasetError, load_dataset
from pytest_rag.stages.augmentation import AugmentationEvaluator
from pytest_rag.stages.chunking import ChunkingEvaluator
from pytest_rag.stages.reranking import RerankingEvaluator
from pytest_rag.stages.retrieval import RetrievalEvaluator

FAQ = ("Refunds are paid within 14 days. Ask support for a refund form.\n\n"
       "Shipping takes 3 to 5 days. Express shipping takes one day.\n\n"
       "Returns are free for 30 days after delivery.")
GUIDE = "Install the app. Sign in with your account. Open settings to change the language."
DOCUMENTS = [{"id": "faq", "text": FAQ}, {"id": "guide", "text": GUIDE}]
QUERIES = [
    {"id": "q1", "question": "How long do refunds take?",
     "expected_evidence": [{"doc_id": "faq", "start": 0, "end": 32}]},
    {"id": "q2", "question": "How do I change the language?",
     "expected_evidence": [{"doc_id": "guide", "start": 44, "end": 81}]},
]


class LangChainDocument:
    """``langchain_core.documents.Document``'s attributes."""

    def __init__(self, page_content: str, metadata: Mapping[str, Any] | None = None,
                 id: str | None = None) -> None:
        self.page_content = page_content
        self.metadata = dict(metadata or {})
        self.id = id


class TextNode:
    """``llama_index.core.schema.TextNode``'s attributes."""

    def __init__(self, text: str, node_id: str, ref_doc_id: str | None,
                 start_char_idx: int | None = None, end_char_idx: int | None = None,
                 metadata: Mapping[str, Any] | None = None) -> None:
        self.text = text
        self.node_id = node_id
        self.ref_doc_id = ref_doc_id
        self.start_char_idx = start_char_idx
        self.end_char_idx = end_char_idx
        self.metadata = dict(metadata or {})

    def get_content(self, metadata_mode: object = None) -> str:
        return self.text


class NodeWithScore:
    def __init__(self, node: TextNode, score: float | None) -> None:
        self.node = node
        self.score = score

    # The real one forwards these to its node.
    @property
    def node_id(self) -> str:
        return self.node.node_id

    def get_content(self) -> str:
        return self.node.get_content()


class HaystackDocument:
    """``haystack.Document``'s attributes."""

    def __init__(self, content: str, meta: Mapping[str, Any], id: str) -> None:
        self.content = content
        self.meta = dict(meta)
        self.id = id


def spans(text: str, size: int) -> list[tuple[int, int]]:
    """Consecutive ``[start, end)`` spans of at most ``size`` characters."""
    return [(start, min(start + size, len(text))) for start in range(0, len(text), size)]


def hand_chunks(prefix: str = "") -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{doc['id']}[{start}:{end}]", "doc_id": doc["id"], "start": start,
             "end": end} for doc in DOCUMENTS for start, end in spans(doc["text"], 35)]


def langchain(**extra: Any) -> list[LangChainDocument]:
    return [LangChainDocument(doc["text"][start:end],
                              {"source": doc["id"], "start_index": start, **extra})
            for doc in DOCUMENTS for start, end in spans(doc["text"], 35)]


def llamaindex() -> list[TextNode]:
    return [TextNode(doc["text"][start:end], f"{doc['id']}[{start}:{end}]", doc["id"], start, end)
            for doc in DOCUMENTS for start, end in spans(doc["text"], 35)]


def haystack() -> list[HaystackDocument]:
    return [HaystackDocument(doc["text"][start:end], {"source_id": doc["id"],
                                                      "split_idx_start": start},
                             f"{doc['id']}[{start}:{end}]")
            for doc in DOCUMENTS for start, end in spans(doc["text"], 35)]


def same(left: Mapping[str, float | None], right: Mapping[str, float | None]) -> bool:
    return left.keys() == right.keys() and all(
        (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b))
        for a, b in ((left[k], right[k]) for k in left))


def evaluate_all(chunks: list[Any], ranked: dict[str, list[Any]],
                 **options: Any) -> dict[str, Mapping[str, float | None]]:
    common = {"documents": DOCUMENTS, "queries": QUERIES, "chunks": chunks, **options}
    graded = {"relevance_from_evidence": True}
    return {
        "chunking": ChunkingEvaluator().evaluate(**common).values,
        "retrieval": RetrievalEvaluator(**graded).evaluate(**common, retrieved_ids=ranked).values,
        "reranking": RerankingEvaluator(**graded).evaluate(**common, reranked_ids=ranked).values,
        "augmentation": AugmentationEvaluator().evaluate(**common, context_ids=ranked).values,
    }


def ranked_ids(chunks: list[dict[str, Any]]) -> dict[str, list[str]]:
    ids = [chunk["id"] for chunk in chunks]
    return {"q1": [ids[0], ids[3], ids[1]], "q2": [ids[-1], ids[-2], ids[2]]}


def ranked_objects(objects: list[Any]) -> dict[str, list[Any]]:
    return {"q1": [objects[0], objects[3], objects[1]], "q2": [objects[-1], objects[-2],
                                                               objects[2]]}


EXPECTED = evaluate_all(hand_chunks(), ranked_ids(hand_chunks()))


@pytest.mark.parametrize("make", [langchain, llamaindex, haystack],
                         ids=["langchain", "llamaindex", "haystack"])
def test_objects_give_the_metrics_of_the_hand_conversion(make: Any) -> None:
    objects = make()
    got = evaluate_all(objects, ranked_objects(objects))
    for stage, values in EXPECTED.items():
        assert same(got[stage], values), stage
    assert EXPECTED["retrieval"]["recall_at_k"] is not None  # the comparison measured something


@pytest.mark.parametrize("make", [langchain, llamaindex, haystack],
                         ids=["langchain", "llamaindex", "haystack"])
def test_a_retrievers_copies_name_the_same_chunks(make: Any) -> None:
    """A retriever hands back new objects, not the ones that were indexed."""
    got = evaluate_all(make(), ranked_objects(make()))
    for stage, values in EXPECTED.items():
        assert same(got[stage], values), stage


@pytest.mark.parametrize("make", [langchain, llamaindex, haystack],
                         ids=["langchain", "llamaindex", "haystack"])
def test_retrieved_objects_bring_their_chunks(make: Any) -> None:
    """No ``chunks=``: the retriever's results are the chunks that are known.

    Their grades are exact, so are hit, MRR and precision; the number of
    relevant chunks in the corpus is not known, so recall, F1, nDCG and AP
    are ``None``, with the reason.
    """
    ranked = ranked_objects(make())
    uncounted = {"recall_at_k", "f1_at_k", "ndcg_at_k", "average_precision_at_k", "ndcg_gain"}
    for stage, evaluator, name in [("retrieval", RetrievalEvaluator, "retrieved_ids"),
                                   ("reranking", RerankingEvaluator, "reranked_ids")]:
        got = evaluator(relevance_from_evidence=True).evaluate(
            documents=DOCUMENTS, queries=QUERIES, **{name: ranked})
        expected = {key: None if key in uncounted else value
                    for key, value in EXPECTED[stage].items()}
        assert same(got.values, expected), stage
        for key in uncounted & got.values.keys() - {"ndcg_gain"}:  # that one needs both lists
            assert got.missing[key] == ("pass chunks=, the full chunk list, to count the "
                                        "relevant chunks"), (stage, key)
    got = AugmentationEvaluator().evaluate(documents=DOCUMENTS, queries=QUERIES,
                                           context_ids=ranked)
    assert same(got.values, EXPECTED["augmentation"])


def test_langchain_documents_without_ids_get_ids_from_document_and_offsets() -> None:
    report = ChunkingEvaluator().evaluate(documents=DOCUMENTS, chunks=langchain())
    assert report.dataset is not None
    assert [chunk.id for chunk in report.dataset.chunks][:2] == ["faq[0:35]", "faq[35:70]"]


def test_score_pairs_and_nodes_with_scores_stand_for_their_chunk() -> None:
    documents = langchain()
    pairs = {query: [(item, 0.5) for item in items]
             for query, items in ranked_objects(documents).items()}
    graded = RetrievalEvaluator(relevance_from_evidence=True)
    got = graded.evaluate(documents=DOCUMENTS, queries=QUERIES, chunks=documents,
                          retrieved_ids=pairs)
    assert same(got.values, EXPECTED["retrieval"])
    nodes = llamaindex()
    scored = {query: [NodeWithScore(item, 0.1) for item in items]
              for query, items in ranked_objects(nodes).items()}
    got = graded.evaluate(documents=DOCUMENTS, queries=QUERIES,
                          chunks=[NodeWithScore(node, None) for node in nodes],
                          retrieved_ids=scored)
    assert same(got.values, EXPECTED["retrieval"])


def test_plain_strings_are_located_by_text() -> None:
    texts = [doc["text"][start:end] for doc in DOCUMENTS for start, end in spans(doc["text"], 35)]
    got = ChunkingEvaluator().evaluate(documents=DOCUMENTS, queries=QUERIES, chunks=texts)
    assert same(got.values, EXPECTED["chunking"])


def test_offsets_that_disagree_with_the_text_fall_back_to_locating_it() -> None:
    documents = langchain()
    for document in documents:  # off by 3, as after a lossy preprocessing step
        document.metadata["start_index"] += 3
    got = evaluate_all(documents, ranked_objects(documents))
    for stage, values in EXPECTED.items():
        assert same(got[stage], values), stage


def test_a_source_path_matches_the_file_a_document_was_read_from(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    for doc in DOCUMENTS:
        (tmp_path / "docs" / f"{doc['id']}.md").write_text(doc["text"], encoding="utf-8")
    gold = tmp_path / "gold.yaml"
    gold.write_text("documents:\n- {id: faq, path: docs/faq.md}\n"
                    "- {id: guide, path: docs/guide.md}\n", encoding="utf-8")
    dataset = load_dataset(gold)
    for source in (str(tmp_path / "docs" / "{}.md"), "elsewhere/{}.md"):  # full path; file name
        documents = [LangChainDocument(item.page_content, {
            **item.metadata, "source": source.format(item.metadata["source"])})
            for item in langchain()]
        got = ChunkingEvaluator().evaluate(dataset, chunks=documents, queries=QUERIES)
        assert same(got.values, EXPECTED["chunking"]), source


def test_doc_id_key_names_the_metadata_key() -> None:
    documents = [LangChainDocument(item.page_content, {
        "start_index": item.metadata["start_index"], "article": item.metadata["source"],
        "source": "crawler-7"}) for item in langchain()]
    with pytest.raises(DatasetError) as raised:
        ChunkingEvaluator().evaluate(documents=DOCUMENTS, chunks=documents)
    message = str(raised.value)
    assert message.startswith("<arguments>: chunks[0]: the LangChain Document's document is not "
                              "known: metadata['source'] 'crawler-7' matches no document (tried "
                              "as a document id, as a file (no document was read from a file));")
    assert message.endswith("(metadata['article'] is a document id: set doc_id_key='article')")
    got = ChunkingEvaluator().evaluate(documents=DOCUMENTS, queries=QUERIES, chunks=documents,
                                    doc_id_key="article")
    assert same(got.values, EXPECTED["chunking"])


def test_a_parent_id_that_matches_nothing_falls_back_to_metadata() -> None:
    """Haystack's ``source_id`` is a content hash unless the document was given an id."""
    documents = [HaystackDocument(item.content, {**item.meta, "source_id": "9f2c",
                                                 "file_path": item.meta["source_id"]}, item.id)
                 for item in haystack()]
    got = ChunkingEvaluator().evaluate(documents=DOCUMENTS, queries=QUERIES, chunks=documents)
    assert same(got.values, EXPECTED["chunking"])


@pytest.mark.parametrize(("chunks", "message"), [
    ([object()], "chunks[0]: expected a mapping, a chunk object (a LangChain or Haystack "
                 "Document, a LlamaIndex node) or a string, got an object "),
    ([LangChainDocument("Refunds", {})], "chunks[0]: a LangChain Document without "
     "metadata['doc_id'] or metadata['source'] or metadata['file_path']: its document is not "
     "known (there are 2 documents; set doc_id_key to the metadata key that names it)"),
    ([LangChainDocument("not in the text", {"source": "faq"})],
     "chunks[0]: the LangChain Document's text 'not in the text' is not in document 'faq'"),
    (["nowhere to be found"], "chunks[0]: the string 'nowhere to be found' is in no document "
                              "(known documents: 'faq', 'guide')"),
    ([TextNode("Refunds", "n1", "missing")], "chunks[0]: the LlamaIndex node's document is not "
     "known: ref_doc_id 'missing' matches no document"),
])
def test_objects_that_cannot_be_placed_are_located_errors(chunks: list[Any],
                                                          message: str) -> None:
    with pytest.raises(DatasetError) as raised:
        ChunkingEvaluator().evaluate(documents=DOCUMENTS, chunks=chunks)
    assert str(raised.value).startswith(f"<arguments>: {message}")


def test_an_unknown_object_in_a_ranked_list_is_named() -> None:
    with pytest.raises(DatasetError) as raised:
        RetrievalEvaluator().evaluate(documents=DOCUMENTS, chunks=hand_chunks(),
                                      retrieved_ids={"q1": ["faq[0:35]", object()]})
    assert str(raised.value).startswith(
        "<arguments>: retrieved_ids['q1'][1]: expected a chunk id or a chunk object (a LangChain "
        "or Haystack Document, a LlamaIndex node, an (object, score) pair), got an object ")


def test_files_still_hold_mappings_only(tmp_path: Path) -> None:
    gold = tmp_path / "gold.yaml"
    gold.write_text("documents: [{id: faq, text: 'Refunds are paid.'}]\nchunks: [Refunds]\n",
                    encoding="utf-8")
    with pytest.raises(DatasetError,
                       match=r"chunks\[0\] \(line 2\): expected a mapping, got a string"):
        load_dataset(gold)


def test_no_framework_is_imported() -> None:
    """In a fresh interpreter: this process may have imported a framework for another test."""
    import subprocess

    code = (
        "import sys\n"
        "from pytest_rag.stages.chunking import ChunkingEvaluator\n"
        "class Document:\n"
        "    def __init__(self, text):\n"
        "        self.page_content, self.metadata, self.id = text, {'start_index': 0}, None\n"
        "ChunkingEvaluator().evaluate(documents=[{'id': 'd', 'text': 'alpha beta'}],\n"
        "                          chunks=[Document('alpha')])\n"
        "print(sorted({'langchain_core', 'llama_index', 'haystack'} & set(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


@pytest.mark.parametrize("item", [None, 3, ["a"], True])
def test_plain_data_in_chunks_gets_the_files_message(item: Any) -> None:
    """A null or a number is a broken mapping, not an unknown object: the same message
    as from a file (the fuzz suite compares the two)."""
    with pytest.raises(DatasetError, match=r"chunks\[0\]: expected a mapping, got "):
        ChunkingEvaluator().evaluate(documents=DOCUMENTS, chunks=[item])


def test_parse_dataset_takes_objects_when_asked() -> None:
    from pytest_rag import parse_dataset

    data = {"documents": DOCUMENTS, "chunks": langchain()[:2]}
    with pytest.raises(DatasetError, match=r"chunks\[0\]: expected a mapping, got a "):
        parse_dataset(data)  # read as a file's data
    dataset = parse_dataset(data, objects=True)
    assert [chunk.id for chunk in dataset.chunks] == ["faq[0:35]", "faq[35:70]"]


def _same(item: Any) -> Any:
    return item


ITERABLES = {
    "iter": iter,
    "map": lambda items: map(_same, items),
    "generator": lambda items: (item for item in items),
}


@pytest.mark.parametrize("make", [langchain, llamaindex, haystack, hand_chunks],
                         ids=["langchain", "llamaindex", "haystack", "mappings"])
@pytest.mark.parametrize("once", list(ITERABLES.values()), ids=list(ITERABLES))
def test_any_iterable_is_read_once_and_gives_the_lists_result(make: Any, once: Any) -> None:
    """``chunks=iter(...)``, ``expected_chunks=map(...)``, generators of ranked lists,
    queries: each is read once, and the report equals the one of lists."""
    ranked = ranked_objects(make()) if make is not hand_chunks else ranked_ids(make())
    expected = evaluate_all(make(), ranked)
    graded = {"relevance_from_evidence": True}
    for stage, evaluator, name in [("chunking", ChunkingEvaluator(), None),
                                   ("retrieval", RetrievalEvaluator(**graded), "retrieved_ids"),
                                   ("reranking", RerankingEvaluator(**graded), "reranked_ids"),
                                   ("augmentation", AugmentationEvaluator(), "context_ids")]:
        lists = {} if name is None else {
            name: {query: once(items) for query, items in ranked.items()}}
        got = evaluator.evaluate(documents=DOCUMENTS, queries=QUERIES, chunks=once(make()),
                                 **lists)
        assert same(got.values, expected[stage]), stage
    boundaries = ChunkingEvaluator().evaluate(documents=DOCUMENTS, chunks=once(make()),
                                           expected_chunks=once(make()))
    assert same(boundaries.values, ChunkingEvaluator().evaluate(
        documents=DOCUMENTS, chunks=make(), expected_chunks=make()).values)
    assert boundaries.values["boundary_f1"] == 1.0
    queries = ChunkingEvaluator().evaluate(documents=DOCUMENTS, queries=once(QUERIES),
                                        chunks=once(make()))
    assert same(queries.values, ChunkingEvaluator().evaluate(
        documents=DOCUMENTS, queries=QUERIES, chunks=make()).values)


def test_objects_without_offsets_in_a_long_document_are_placed_without_scanning_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A retriever's copies of the chunks of one long document, without offsets:
    each is placed from the document's index of first occurrences (one check
    each), never by a scan of the text from its start (quadratic overall), and
    the result is that of the chunks with their offsets."""
    from pytest_rag.dataset import frameworks

    words = [f"w{i * 7919 % 100003}" for i in range(20_000)]
    text = " ".join(words)
    pieces = [" ".join(words[i:i + 40]) for i in range(0, len(words), 40)]
    starts = [text.index(piece) for piece in pieces]
    queries = {f"q{i}": [i, (i + 7) % len(pieces)] for i in range(len(pieces))}
    evidence = {query: [{"doc_id": "d", "start": starts[rows[0]],
                         "end": starts[rows[0]] + 10}] for query, rows in queries.items()}
    with_offsets = RetrievalEvaluator(relevance_from_evidence=True).evaluate(
        documents={"d": text}, expected_evidence=evidence,
        retrieved_ids={query: [LangChainDocument(pieces[row], {"start_index": starts[row]})
                               for row in rows] for query, rows in queries.items()})
    scans: list[str] = []
    checked: list[Any] = []
    real_locate, real_index = frameworks.locate, frameworks.FrameworkReader._occurrences

    def counted_index(self: Any, doc_id: str) -> Any:
        index = real_index(self, doc_id)
        checked.append(index)
        return index

    monkeypatch.setattr(frameworks, "locate", lambda *args: scans.append("") or real_locate(*args))
    monkeypatch.setattr(frameworks.FrameworkReader, "_occurrences", counted_index)
    without = RetrievalEvaluator(relevance_from_evidence=True).evaluate(
        documents={"d": text}, expected_evidence=evidence,
        retrieved_ids={query: [LangChainDocument(pieces[row]) for row in rows]
                       for query, rows in queries.items()})
    assert scans == []
    assert len(checked) == 2 * len(pieces) and len(set(map(id, checked))) == 1  # one index
    assert checked[0].compared == 2 * len(pieces)  # one comparison per object
    assert same(without.values, with_offsets.values)
    assert without.values["hit_at_k"] == 1.0
