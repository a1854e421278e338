"""Evaluator keyword arguments: checked like a file, errors name the argument.

Per-query inputs are mappings of query id to value; an input passed replaces
the dataset's input of that name for every query.  ``RetrievalEvaluator``
is used to check the path from ``evaluate(**inputs)`` to the numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.dataset.arguments import ALL_INPUTS, GOLD_QUERY_INPUTS, RUN_INPUTS, resolve_inputs
from pytest_rag.dataset.model import Chunk, Dataset, Document, EvidenceSpan, Query, RunEntry
from pytest_rag.dataset.parser import parse_dataset
from pytest_rag.errors import DatasetError
from pytest_rag.stages.retrieval import RetrievalEvaluator

TEXT = "alpha beta gamma. delta epsilon zeta. eta theta iota."
GOLD = {
    "documents": [{"id": "d", "text": TEXT}],
    "chunks": [{"id": "c0", "start": 0, "end": 17}, {"id": "c1", "start": 18, "end": 37},
               {"id": "c2", "start": 38, "end": 53}],
    "vectors": {"chunks": {"c0": [1.0, 0.0], "c1": [0.0, 1.0], "c2": [1.0, 1.0]}},
    "queries": [{"id": "q1", "relevant": ["c1"], "expected_evidence": [{"start": 18, "end": 23}]},
                {"id": "q2", "relevant": {"c2": 2}, "reference_answer": "eta"}],
    "run": {"q1": {"retrieved_ids": ["c0", "c1"], "answer": "delta", "retrieval_latency_ms": 5},
            "q2": {"retrieved_ids": ["c2"], "query_vector": [0.5, 0.5]}},
}


@pytest.fixture
def gold() -> Dataset:
    return parse_dataset(GOLD, source="gold.yaml")


def error_of(dataset: Dataset | None, **inputs: Any) -> str:
    with pytest.raises(DatasetError) as info:
        resolve_inputs(dataset, inputs)
    return str(info.value)


# -- building and replacing ---------------------------------------------------------


def test_no_inputs_returns_the_dataset_itself(gold: Dataset) -> None:
    assert resolve_inputs(gold, {}) is gold
    assert resolve_inputs(None, {}) == Dataset()


def test_queries_come_from_the_inputs_without_a_dataset() -> None:
    data = resolve_inputs(None, {"retrieved_ids": {"q2": ["a"], "q1": ["b"]},
                                 "relevant": {"q3": ["a"], "q1": ["b"]}})
    assert data.source == "<arguments>"
    assert data.query_ids == ("q2", "q1", "q3")
    assert [q.relevant for q in data.queries] == [None, {"b": 1}, {"a": 1}]
    assert data.run == {"q2": RunEntry(retrieved_ids=("a",)), "q1": RunEntry(retrieved_ids=("b",))}


def test_an_input_replaces_the_dataset_input_for_every_query(gold: Dataset) -> None:
    data = resolve_inputs(gold, {"retrieved_ids": {"q2": ["c0"]}})
    assert data.source == "gold.yaml"
    # q1 keeps its entry (other fields) but its retrieved_ids are replaced by "none given".
    assert data.run["q1"] == RunEntry(answer="delta", retrieval_latency_ms=5.0)
    assert data.run["q2"].retrieved_ids == ("c0",)
    assert data.run["q2"].query_vector is not None  # untouched fields stay
    assert gold.run["q1"].retrieved_ids == ("c0", "c1")  # the dataset is not changed


def test_gold_input_replaces_for_every_query(gold: Dataset) -> None:
    data = resolve_inputs(gold, {"relevant": {"q2": ["c0"]}, "reference_answer": {"q1": "x"}})
    assert [q.relevant for q in data.queries] == [None, {"c0": 1}]
    assert [q.reference_answers for q in data.queries] == [("x",), ()]
    assert data.queries[0].expected_evidence == (EvidenceSpan("d", 18, 23),)


def test_none_is_the_same_as_not_given(gold: Dataset) -> None:
    assert resolve_inputs(gold, {"retrieved_ids": None, "relevant": None, "chunks": None}) is gold
    data = resolve_inputs(gold, {"retrieved_ids": None, "answer": {"q2": "x"}})
    assert data.run["q1"].retrieved_ids == ("c0", "c1")
    assert data.run["q1"].answer is None and data.run["q2"].answer == "x"


def test_per_query_none_means_not_given_for_that_query(gold: Dataset) -> None:
    data = resolve_inputs(gold, {"answer": {"q1": None, "q2": "eta"}})
    assert (data.run["q1"].answer, data.run["q2"].answer) == (None, "eta")


def test_queries_with_no_run_data_get_no_entry() -> None:
    data = resolve_inputs(None, {"relevant": {"q1": ["a"]}, "retrieved_ids": {"q1": None}})
    assert data.query_ids == ("q1",)
    assert "q1" not in data.run


def test_every_run_field_by_keyword() -> None:
    data = resolve_inputs(None, {
        "retrieved_ids": {"q": ["a"]}, "reranked_ids": {"q": ("b",)}, "context_ids": {"q": []},
        "answer": {"q": "x"}, "cited_ids": {"q": ["d"]}, "abstained": {"q": False},
        "verified_claims": {"q": [{"claim": "c", "supported": True}]},
        "task_success": {"q": True}, "query_vector": {"q": [1, 2]}, "ann_ids": {"q": ["a"]},
        "retrieval_latency_ms": {"q": 1}, "generation_latency_ms": {"q": 2.5},
        "latency_ms": {"q": 3}, "cost_usd": {"q": 0.01}, "total_tokens": {"q": 7}})
    entry = data.run["q"]
    assert (entry.retrieved_ids, entry.reranked_ids, entry.context_ids) == (("a",), ("b",), ())
    assert (entry.answer, entry.cited_ids, entry.abstained, entry.task_success) == (
        "x", ("d",), False, True)
    assert entry.verified_claims is not None and entry.verified_claims[0].supported is True
    assert entry.query_vector is not None and entry.query_vector.tolist() == [1.0, 2.0]
    assert (entry.retrieval_latency_ms, entry.generation_latency_ms, entry.latency_ms,
            entry.cost_usd, entry.total_tokens) == (1.0, 2.5, 3.0, 0.01, 7.0)


def test_every_gold_field_by_keyword() -> None:
    data = resolve_inputs(None, {
        "documents": {"d": "alpha beta"}, "relevant": {"q": {"c": 2}},
        "expected_evidence": {"q": [{"quote": "beta"}]}, "reference_answer": {"q": ["a", "b"]},
        "required_facts": {"q": ["f"]}, "expected_citations": {"q": ["d"]},
        "answerable": {"q": False}})
    assert data.queries == (Query("q", relevant={"c": 2},
                                  expected_evidence=(EvidenceSpan("d", 6, 10),),
                                  reference_answers=("a", "b"), required_facts=("f",),
                                  expected_citations=("d",), answerable=False),)


def test_section_inputs() -> None:
    data = resolve_inputs(None, {
        "documents": [{"id": "d", "text": "alpha beta"}],
        "chunks": [{"id": "c0", "text": "alpha"}, Chunk("c1", "d", 6, 10)],
        "expected_chunks": [{"start": 0, "end": 5}],
        "expected_metadata": {"c0": {"k": 1}},
        "queries": [{"id": "q", "relevant": ["c1"]}, Query("r")],
        "chunk_vectors": {"c0": [1, 0], "c1": [0, 1]},
        "sentence_vectors": {"c0": [[1, 0]]},
        "indexed_ids": ["c0"]})
    assert data.chunks == (Chunk("c0", "d", 0, 5), Chunk("c1", "d", 6, 10))
    assert data.expected_chunks == (Chunk(None, "d", 0, 5),)
    assert data.expected_metadata == {"c0": {"k": 1}}
    assert data.query_ids == ("q", "r")
    assert data.vectors is not None and data.vectors.chunk_ids == ("c0", "c1")
    assert data.vectors.indexed_ids == ("c0",)


def test_documents_as_a_mapping_or_objects() -> None:
    by_mapping = resolve_inputs(None, {"documents": {"a": "x", "b": "y"}})
    by_objects = resolve_inputs(None, {"documents": [Document("a", "x"), Document("b", "y")]})
    assert by_mapping.documents == by_objects.documents == (Document("a", "x"), Document("b", "y"))


def test_chunk_vectors_as_an_array_follow_chunk_order(gold: Dataset) -> None:
    matrix = np.arange(6, dtype=np.float32).reshape(3, 2)
    data = resolve_inputs(gold, {"chunk_vectors": matrix})
    assert data.vectors is not None
    assert data.vectors.chunk_ids == ("c0", "c1", "c2")
    assert data.vectors.chunk_matrix is not None
    # float32 stays float32 (no float64 copy of a large matrix); the stages
    # compute in float64 a block at a time.
    assert data.vectors.chunk_matrix.dtype == np.float32
    assert data.vectors.chunk_matrix.tolist() == matrix.tolist()


def test_float32_and_float64_vectors_give_the_same_report() -> None:
    from pytest_rag import EmbeddingEvaluator

    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((3, 4)).astype(np.float32)
    matrix[2] = matrix[0]
    chunks = [{"id": f"c{i}", "doc_id": "d", "start": 0, "end": 5} for i in range(3)]
    common = {"documents": {"d": TEXT}, "chunks": chunks, "relevant": {"q": ["c1"]},
              "query_vector": {"q": rng.standard_normal(4)}}
    evaluator = EmbeddingEvaluator(k=2)
    reports = [evaluator.evaluate(chunk_vectors=vectors, **common)
               for vectors in (matrix, matrix.astype(np.float64),
                               dict(zip(("c0", "c1", "c2"), matrix)))]
    assert reports[0].values["duplicate_vector_rate"] == 1 / 3
    assert reports[0].values == reports[1].values == reports[2].values


def test_new_documents_recheck_the_dataset_chunks_and_evidence(gold: Dataset) -> None:
    longer = resolve_inputs(gold, {"documents": {"d": TEXT + " more"}})
    assert longer.chunks == gold.chunks
    assert longer.documents[0].text.endswith(" more")
    assert error_of(gold, documents={"d": "short"}) == (
        "<arguments>: chunks[0].end: 17 is past the end of document 'd' (5 characters)")
    assert error_of(gold, documents={"e": TEXT}, chunks=[]) == (
        "<arguments>: queries[0].expected_evidence[0].doc_id: unknown document 'd' "
        "(known: 'e')")


def test_replaced_queries_must_cover_the_dataset_run(gold: Dataset) -> None:
    data = resolve_inputs(gold, {"queries": [{"id": "q1"}, {"id": "q2"}, {"id": "q3"}]})
    assert data.query_ids == ("q1", "q2", "q3")
    assert set(data.run) == {"q1", "q2"}
    assert error_of(gold, queries=[{"id": "q1"}]) == (
        "<arguments>: queries: the dataset's run has an entry for query 'q2', which is not in "
        "'queries'")


def test_dataset_without_queries_takes_them_from_the_inputs() -> None:
    documents_only = parse_dataset({"documents": [{"id": "d", "text": TEXT}]})
    data = resolve_inputs(documents_only, {"retrieved_ids": {"q1": ["c0"]},
                                           "expected_evidence": {"q1": [{"quote": "beta"}]}})
    assert data.query_ids == ("q1",)
    assert data.queries[0].expected_evidence == (EvidenceSpan("d", 6, 10),)


def test_numpy_values_are_accepted() -> None:
    data = resolve_inputs(None, {
        "retrieved_ids": {"q": np.array(["a", "b"])}, "relevant": {"q": {"a": np.int64(2)}},
        "latency_ms": {"q": np.float32(1.5)}, "answerable": {"q": np.bool_(True)},
        "query_vector": {"q": np.array([1, 2], dtype=np.int32)}})
    assert data.run["q"].retrieved_ids == ("a", "b")
    assert all(type(item) is str for item in data.run["q"].retrieved_ids or ())
    assert data.queries[0].relevant == {"a": 2} and type(data.queries[0].relevant["a"]) is int
    assert data.queries[0].answerable is True
    assert data.run["q"].latency_ms == 1.5
    assert data.run["q"].query_vector is not None
    assert data.run["q"].query_vector.dtype == np.float64


# -- errors name the argument ---------------------------------------------------------------

ARGUMENT_ERRORS = [
    ({"retrieved_ids": {"q1": ["a", "b", 7]}},
     "retrieved_ids['q1'][2]: expected a string, got a number 7"),
    ({"retrieved_ids": ["a", "b"]},
     "retrieved_ids: expected a mapping of query id to value (like {'q1': ...}), got a list "
     "['a', 'b']"),
    ({"retrieved_ids": {1: ["a"]}}, "retrieved_ids: query ids must be strings, got a number 1"),
    ({"retrieved_ids": {"q1": "a"}}, "retrieved_ids['q1']: expected a list, got a string 'a'"),
    ({"retrieved_ids": {"q1": {"a", "b"}}},
     "retrieved_ids['q1']: expected a list, got a set "),
    ({"relevant": {"q1": {"a": True}}},
     "relevant['q1'].a: expected a whole number, got a boolean True"),
    ({"relevant": {"q1": {"a#0": -1}}}, "relevant['q1']['a#0']: must be >= 0, got -1"),
    ({"relevant": {"q1": "a"}}, "relevant['q1']: expected a list of chunk ids or a mapping of "
                                "chunk id to grade, got a string 'a'"),
    ({"reference_answer": {"q1": 5}},
     "reference_answer['q1']: expected a string or a list of strings, got a number 5"),
    ({"answerable": {"q1": "yes"}}, "answerable['q1']: expected true or false, got a string 'yes'"),
    ({"required_facts": {"q1": "x"}}, "required_facts['q1']: expected a list, got a string 'x'"),
    ({"expected_evidence": {"q1": [{"doc_id": "d", "start": 0, "end": 3}]}},
     "expected_evidence['q1'][0].doc_id: unknown document 'd' (there are no documents)"),
    ({"documents": {"d": "abc"}, "expected_evidence": {"q1": [{"start": 0, "end": 9}]}},
     "expected_evidence['q1'][0].end: 9 is past the end of document 'd' (3 characters)"),
    ({"documents": {"d": "abc"}, "expected_evidence": {"q1": [{"quote": "xyz"}]}},
     "expected_evidence['q1'][0].quote: 'xyz' not found in document 'd'"),
    ({"retrieval_latency_ms": {"q1": -1}}, "retrieval_latency_ms['q1']: must be >= 0, got -1"),
    ({"latency_ms": {"q1": float("nan")}}, "latency_ms['q1']: must be a finite number, got nan"),
    ({"cost_usd": {"q1": float("inf")}}, "cost_usd['q1']: must be a finite number, got inf"),
    ({"total_tokens": {"q1": "many"}},
     "total_tokens['q1']: expected a number, got a string 'many'"),
    ({"query_vector": {"q1": [1.0, float("nan")]}},
     "query_vector['q1'][1]: must be a finite number, got nan"),
    ({"query_vector": {"q1": []}}, "query_vector['q1']: a vector must have at least one dimension"),
    ({"query_vector": {"q1": np.array([[1.0]])}},
     "query_vector['q1']: expected a vector, got an array of 2 dimensions"),
    ({"query_vector": {"q1": np.array([1.0, np.inf])}},
     "query_vector['q1'][1]: must be a finite number, got inf"),
    ({"query_vector": {"q1": np.array(["a"])}},
     "query_vector['q1']: expected numbers, got an array of <U1"),
    ({"verified_claims": {"q1": [{"claim": "x"}]}},
     "verified_claims['q1'][0]: missing required key 'supported'"),
    ({"verified_claims": {"q1": [{"claim": "x", "supported": True, "extra": 1}]}},
     "verified_claims['q1'][0].extra: unknown key"),
    ({"documents": [{"id": "d", "txt": "x"}]},
     "documents[0].txt: unknown key (did you mean 'text'?)"),
    ({"documents": [{"id": "d", "text": "x"}, {"id": "d", "text": "y"}]},
     "documents[1].id: duplicate document id 'd'"),
    ({"documents": {"d": 5}}, "documents[0].text: expected a string, got a number 5"),
    ({"documents": [Document("d", 5)]},  # type: ignore[arg-type]
     "documents[0].text: expected a string, got a number 5"),
    ({"documents": {"d": "x"}, "chunks": [{"id": "c", "start": 0, "end": 1},
                                          {"id": "c", "start": 0, "end": 1}]},
     "chunks[1].id: duplicate chunk id 'c'"),
    ({"documents": {"d": "x"}, "chunks": [Chunk("c", "e", 0, 1)]},
     "chunks[0].doc_id: unknown document 'e' (known: 'd')"),
    ({"documents": {"d": "x"}, "chunks": [Chunk("c", "d", 0, 5)]},
     "chunks[0].end: 5 is past the end of document 'd' (1 characters)"),
    ({"documents": {"d": "x"}, "chunks": [Chunk(None, "d", 0, 1)]},
     "chunks[0].id: expected a string, got null"),
    ({"queries": [{"id": "q1"}, {"id": "q1"}]}, "queries[1].id: duplicate query id 'q1'"),
    ({"queries": [Query(5)]}, "queries[0].id: expected a string, got a number 5"),  # type: ignore[arg-type]
    ({"queries": [{"id": "q1"}], "answer": {"q2": "x"}},
     "answer['q2']: query 'q2' is not in the dataset"),
    ({"chunk_vectors": {"a": [1.0], "b": [1.0, 2.0]}},
     "chunk_vectors.b: has 2 dimensions, chunk_vectors.a has 1"),
    ({"chunk_vectors": {"a": [1.0, "x"]}},
     "chunk_vectors.a[1]: expected a number, got a string 'x'"),
    ({"chunk_vectors": np.ones((2, 2))},
     "chunk_vectors: an array of 2 rows needs one row per chunk; there are 0 chunks (or pass "
     "a mapping of chunk id to vector)"),
    ({"chunk_vectors": {"a": [1.0, 2.0]}, "query_vector": {"q1": [1.0]}},
     "query_vector['q1']: has 1 dimensions, the chunk vectors have 2"),
    ({"sentence_vectors": {"a": [[1.0], [1.0, 2.0]]}},
     "sentence_vectors.a[1]: has 2 dimensions, sentence_vectors.a[0] has 1"),
    ({"indexed_ids": "a"}, "indexed_ids: expected a list, got a string 'a'"),
    ({"expected_metadata": {"c": 5}}, "expected_metadata.c: expected a mapping, got a number 5"),
]


@pytest.mark.parametrize(("inputs", "message"), ARGUMENT_ERRORS,
                         ids=[str(i) for i in range(len(ARGUMENT_ERRORS))])
def test_argument_errors_name_the_argument(inputs: dict[str, Any], message: str) -> None:
    assert error_of(None, **inputs).startswith(f"<arguments>: {message}")


def test_unknown_query_in_a_dataset_is_an_error(gold: Dataset) -> None:
    assert error_of(gold, retrieved_ids={"q1": [], "q9": ["c0"]}) == (
        "<arguments>: retrieved_ids['q9']: query 'q9' is not in the dataset")
    assert error_of(gold, relevant={"Q1": ["c0"]}) == (
        "<arguments>: relevant['Q1']: query 'Q1' is not in the dataset")


def test_new_chunk_vectors_are_checked_against_the_dataset_query_vectors(gold: Dataset) -> None:
    assert error_of(gold, chunk_vectors={"c0": [1.0, 0.0, 0.0]}) == (
        "<arguments>: chunk_vectors: has 3 dimensions, the dataset's query vector of 'q2' has 2")
    assert error_of(gold, query_vector={"q1": [1.0]}) == (
        "<arguments>: query_vector['q1']: has 1 dimensions, the chunk vectors have 2")
    data = resolve_inputs(gold, {"chunk_vectors": {"c0": [1.0, 0.0, 0.0]},
                                 "query_vector": {"q1": [1.0, 2.0, 3.0]}})
    assert data.run["q1"].query_vector is not None and data.run["q2"].query_vector is None


def test_unknown_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"^unexpected input\(s\) 'retrived_ids' \(did you mean "
                                        r"'retrieved_ids'\?\); accepted: "):
        resolve_inputs(None, {"retrived_ids": {}})
    with pytest.raises(TypeError, match=r"^unexpected input\(s\) 'answer'; accepted: chunks, "
                                        r"documents, expected_evidence, queries, relevant, "
                                        r"retrieval_latency_ms, retrieved_ids$"):
        RetrievalEvaluator().evaluate(answer={"q1": "x"})


def test_unknown_setting_of_evaluate_dataset_suggests_the_closest() -> None:
    from pytest_rag import evaluate_dataset

    with pytest.raises(TypeError, match=r"^unexpected setting\(s\) 'kk' \(did you mean 'k'\?\); "
                                        r"settings: "):
        evaluate_dataset(resolve_inputs(None, {}), kk=3)


def test_dataset_must_be_a_dataset() -> None:
    with pytest.raises(TypeError, match=r"^dataset must be a pytest_rag.Dataset \(read a file "
                                        r"with pytest_rag.load_dataset\(path\)\) "
                                        r"or None, got str$"):
        RetrievalEvaluator().evaluate("gold.yaml")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got dict$"):
        resolve_inputs({"queries": []}, {})  # type: ignore[arg-type]


# -- through an evaluator ---------------------------------------------------------------------


def test_retrieval_uses_the_dataset_run(gold: Dataset) -> None:
    report = RetrievalEvaluator(k=2).evaluate(gold)
    # q1: c1 at rank 2 of 1 relevant; q2: c2 at rank 1.
    assert report.recall_at_k == 1.0
    assert report.mrr_at_k == pytest.approx((1 / 2 + 1) / 2)
    assert report.per_query["mrr_at_k"] == {"q1": 0.5, "q2": 1.0}


def test_retrieval_with_replaced_inputs(gold: Dataset) -> None:
    report = RetrievalEvaluator(k=2).evaluate(gold, retrieved_ids={"q1": ["c1"]})
    # q2 has no retrieved_ids any more: its ranking metrics are None, not 0.
    assert report.per_query["mrr_at_k"] == {"q1": 1.0, "q2": None}
    assert report.mrr_at_k == 1.0
    report = RetrievalEvaluator(k=2).evaluate(gold, relevant={"q1": ["c0"], "q2": ["c0"]})
    assert report.per_query["mrr_at_k"] == {"q1": 1.0, "q2": 0.0}


def test_retrieval_from_keywords_only() -> None:
    report = RetrievalEvaluator(k=2).evaluate(
        documents={"d": TEXT},
        chunks=[{"id": "c0", "start": 0, "end": 17}, {"id": "c1", "text": "delta epsilon zeta."}],
        retrieved_ids={"q1": ["c1", "c0"]}, relevant={"q1": ["c1"]},
        expected_evidence={"q1": [{"quote": "epsilon"}]})
    assert report.recall_at_k == 1.0 and report.mrr_at_k == 1.0
    assert report.token_recall == 1.0


def test_retrieval_error_names_the_argument() -> None:
    with pytest.raises(DatasetError) as info:
        RetrievalEvaluator().evaluate(retrieved_ids={"q1": ["c1", "c2", 7]},
                                      relevant={"q1": ["c1"]})
    assert str(info.value) == ("<arguments>: retrieved_ids['q1'][2]: "
                               "expected a string, got a number 7")
    assert info.value.place == "retrieved_ids['q1'][2]"


# -- no raw exceptions -----------------------------------------------------------------------------

ODD = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4),
    st.sampled_from([10**400, b"x", frozenset({"a"}), np.nan, np.array([1.0]), np.array(["a"]),
                     np.array([[1.0]]), np.int64(3), np.bool_(True), Document("d", "x"),
                     Chunk("c", "d", 0, 1), Query("q1"), EvidenceSpan("d", 0, 1)]),
)
ODD_VALUES = st.recursive(ODD, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["q1", "q2", "c0", "d", "id", "text", "start", "end",
                                     "quote", "doc_id", "supported"]), inner, max_size=3)),
    max_leaves=5)


PER_QUERY = sorted(set(GOLD_QUERY_INPUTS) | set(RUN_INPUTS))


@st.composite
def odd_inputs(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly well-shaped inputs (per-query ones keyed by query id) with odd values inside."""
    names = draw(st.lists(st.sampled_from(sorted(ALL_INPUTS)), min_size=1, max_size=3,
                          unique=True))
    inputs: dict[str, Any] = {}
    for name in names:
        if name in PER_QUERY and draw(st.integers(0, 3)):
            inputs[name] = draw(st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), ODD_VALUES,
                                                max_size=2))
        else:
            inputs[name] = draw(ODD_VALUES)
    return inputs


@settings(max_examples=budget(400), derandomize=True, deadline=None)
@given(odd_inputs(), st.booleans())
def test_odd_inputs_give_a_dataset_error_or_a_dataset(inputs: dict[str, Any],
                                                      with_gold: bool) -> None:
    dataset = parse_dataset(GOLD) if with_gold else None
    try:
        resolve_inputs(dataset, inputs)
    except DatasetError as error:
        assert str(error).startswith("<arguments>: ")


ODD_LEAVES = [None, True, 0, -1, 1.5, 10**400, float("nan"), "", "x", b"x", [], {}, {"x": 1},
              {1: 2}, frozenset({"a"}), np.array([1.0]), np.array(["a"]), np.array([[1.0]]),
              np.array([], dtype=np.float64), np.int64(3), np.float32(2), np.bool_(True),
              Document("d", "x"), Document("zz", "x"), Chunk("c0", "d", 0, 99),
              Chunk("c9", "zz", 0, 1), Query("q1"), EvidenceSpan("zz", 0, 1),
              EvidenceSpan("d", 5, 1)]


@pytest.mark.parametrize("name", sorted(ALL_INPUTS))
def test_every_input_refuses_odd_values_cleanly(name: str) -> None:
    # Exhaustive companion of the random test: each input, each odd value, as the
    # whole argument, as one query's value and inside one query's list.
    for value in ODD_LEAVES:
        for shaped in (value, {"q1": value}, {"q1": [value]}, [value]):
            for dataset in (None, parse_dataset(GOLD)):
                try:
                    resolve_inputs(dataset, {name: shaped})
                except DatasetError as error:
                    assert str(error).startswith("<arguments>: ")


def test_evidence_positions_follow_the_queries_of_each_dataset(gold: Dataset) -> None:
    """Datasets made from one configured dataset share its evidence positions while
    their queries are the dataset's own; new gold evidence is placed afresh."""
    from pytest_rag.kernels.positions import positions_of

    chunks = [{"id": "c0", "doc_id": "d", "start": 0, "end": 37}]
    first = resolve_inputs(gold, {"chunks": chunks})
    second = resolve_inputs(gold, {"chunks": chunks[:1] + [
        {"id": "c1", "doc_id": "d", "start": 38, "end": 53}]})
    assert first.queries is gold.queries and second.queries is gold.queries
    assert positions_of(first).evidence_lo is positions_of(second).evidence_lo
    moved = resolve_inputs(gold, {"chunks": chunks,
                                  "expected_evidence": {"q1": [{"doc_id": "d", "start": 38,
                                                                "end": 53}]}})
    assert moved.queries is not gold.queries
    assert positions_of(moved).evidence_lo.tolist() == [6]  # "eta": the 7th token
    assert positions_of(first).evidence_lo.tolist() == [3]  # "delta", placed before
    assert positions_of(resolve_inputs(gold, {"chunks": chunks})).evidence_lo.tolist() == [3]


def test_gold_given_as_an_argument_has_its_own_fingerprint(gold: Dataset) -> None:
    """A query rebuilt with new gold does not keep the fingerprint its dataset's query
    had already computed (cached): the gate must see the gold change."""
    before = [query.fingerprint for query in gold.queries]  # computed and cached
    changed = resolve_inputs(gold, {"relevant": {"q1": {"c2": 2}, "q2": ["c0"]}})
    expected = parse_dataset({**GOLD, "queries": [
        {**GOLD["queries"][0], "relevant": {"c2": 2}},
        {**GOLD["queries"][1], "relevant": ["c0"]}]}, source="gold.yaml")
    assert [q.fingerprint for q in changed.queries] == [q.fingerprint for q in expected.queries]
    assert [q.fingerprint for q in changed.queries] != before


def test_chunk_positions_are_shared_by_equal_chunks_only(gold: Dataset) -> None:
    """Two stages given the same chunks place them once; chunks that differ in any
    column (here one end offset, then the order) are placed afresh."""
    from pytest_rag.kernels.positions import positions_of

    chunks = [{"id": "a", "doc_id": "d", "start": 0, "end": 17},
              {"id": "b", "doc_id": "d", "start": 18, "end": 37}]
    first = positions_of(resolve_inputs(gold, {"chunks": chunks}))
    again = positions_of(resolve_inputs(gold, {"chunks": [dict(c) for c in chunks]}))
    assert again.chunk_lo is first.chunk_lo
    shorter = positions_of(resolve_inputs(gold, {"chunks": [chunks[0], {**chunks[1], "end": 23}]}))
    assert shorter.chunk_hi.tolist() == [3, 4] and first.chunk_hi.tolist() == [3, 6]
    swapped = positions_of(resolve_inputs(gold, {"chunks": chunks[::-1]}))
    assert swapped.chunk_lo.tolist() == [3, 0]
    assert positions_of(resolve_inputs(gold, {"chunks": chunks})).chunk_hi.tolist() == [3, 6]
