"""Every rule of FORMAT.md that makes a file invalid, with the exact message.

Each case changes one value of a valid dataset (``BASE``) and checks the one
:class:`DatasetError` it must raise: ``"{file}: {place}: {problem}"``.  File
level errors (missing file, invalid YAML/JSON, ``path:`` documents) are below
the table, and a hypothesis test mutates ``BASE`` at random to check that no
malformed input ever escapes as a raw Python exception.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import budget

from pytest_rag.dataset.loading import load_dataset
from pytest_rag.dataset.model import Dataset
from pytest_rag.dataset.parser import parse_dataset
from pytest_rag.errors import DatasetError

DOC_A = "Refunds are accepted within 30 days of purchase.\nShipping takes  five days."
DOC_B = "Warranty covers two years."
NAN = float("nan")
INF = float("inf")

BASE: dict[str, Any] = {
    "format": "pytest-rag/v1",
    "params": {"k": 3, "size_limits": [1, 50], "boundary_tolerance": 0,
               "required_metadata": ["source"], "max_context_tokens": 100,
               "abstain_phrases": ["i don't know"]},
    "documents": [{"id": "a", "text": DOC_A, "metadata": {"source": "a.md"}},
                  {"id": "b", "text": DOC_B}],
    "chunks": [{"id": "a#0", "doc_id": "a", "start": 0, "end": 48,
                "metadata": {"source": "a.md"}},
               {"id": "a#1", "doc_id": "a", "text": "Shipping takes five days."},
               {"id": "b#0", "doc_id": "b", "start": 0, "end": 26}],
    "expected_chunks": [{"doc_id": "a", "start": 0, "end": 48},
                        {"doc_id": "b", "text": "Warranty"}],
    "expected_metadata": {"a#0": {"source": "a.md"}},
    "vectors": {"chunks": {"a#0": [1.0, 0.0], "a#1": [0.0, 1.0], "b#0": [0.5, 0.5]},
                "sentences": {"a#0": [[1.0, 0.0], [0.0, 1.0]], "a#1": [[0.0, 1.0]]},
                "indexed_ids": ["a#0", "a#1"]},
    "queries": [{"id": "q1", "question": "How long?", "relevant": {"a#0": 2, "b#0": 0},
                 "expected_evidence": [{"doc_id": "a", "start": 0, "end": 7},
                                       {"doc_id": "a", "quote": "within 30 days"}],
                 "reference_answer": "30 days", "required_facts": ["30 days"],
                 "expected_citations": ["a"], "answerable": True},
                {"id": "q2", "relevant": ["a#1"]}],
    "run": {"q1": {"retrieved_ids": ["a#0", "a#1"], "reranked_ids": ["a#1", "a#0"],
                   "context_ids": ["a#1"], "answer": "30 days", "cited_ids": ["a"],
                   "abstained": False,
                   "verified_claims": [{"claim": "30 days", "supported": True}],
                   "task_success": True, "query_vector": [0.2, 0.1], "ann_ids": ["a#0"],
                   "retrieval_latency_ms": 12.5, "generation_latency_ms": 840,
                   "latency_ms": 910, "cost_usd": 0.0021, "total_tokens": 1830}},
    "expected": {"retrieval": {"recall_at_k": 0.5, "mrr_at_k": None}},
}

class _Drop:
    def __repr__(self) -> str:  # a stable test id (xdist compares ids across workers)
        return "DROP"


DROP = _Drop()


def changed(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of BASE with the value at ``path`` replaced (or dropped: DROP)."""
    data = copy.deepcopy(BASE)
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    if value is DROP:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


def error_of(data: object, source: str = "gold.yaml") -> str:
    with pytest.raises(DatasetError) as info:
        parse_dataset(data, source=source)
    return str(info.value)


def test_base_is_valid() -> None:
    dataset = parse_dataset(copy.deepcopy(BASE), source="gold.yaml")
    assert [q.id for q in dataset.queries] == ["q1", "q2"]


CASES = [
    # -- unknown keys, at the top and inside every kind of entry ---------------
    (("formatt",), 1, "formatt: unknown key (did you mean 'format'?)"),
    (("params", "kk"), 1, "params.kk: unknown key (did you mean 'k'?)"),
    (("documents", 0, "txt"), "x", "documents[0].txt: unknown key (did you mean 'text'?)"),
    (("chunks", 0, "doc"), "a", "chunks[0].doc: unknown key (did you mean 'doc_id'?)"),
    (("expected_chunks", 0, "ende"), 3,
     "expected_chunks[0].ende: unknown key (did you mean 'end'?)"),
    (("vectors", "chunk"), {}, "vectors.chunk: unknown key (did you mean 'chunks'?)"),
    (("queries", 0, "expected_evidnce"), [],
     "queries[0].expected_evidnce: unknown key (did you mean 'expected_evidence'?)"),
    (("queries", 0, "expected_evidence", 0, "qoute"), "x",
     "queries[0].expected_evidence[0].qoute: unknown key (did you mean 'quote'?)"),
    (("run", "q1", "retrieved"), [],
     "run.q1.retrieved: unknown key (did you mean 'retrieved_ids'?)"),
    (("run", "q1", "verified_claims", 0, "suported"), True,
     "run.q1.verified_claims[0].suported: unknown key (did you mean 'supported'?)"),
    (("expected", "retrievel"), {}, "expected.retrievel: unknown key (did you mean 'retrieval'?)"),
    (("expected", "retrieval", "recall_at"), 1,
     "expected.retrieval.recall_at: unknown key (did you mean 'recall_at_k'?)"),
    (("queries", 0, "zzz"), 1, "queries[0].zzz: unknown key"),
    (("queries", 0, "my key"), 1, "queries[0]['my key']: unknown key"),
    # -- ids: strings, not empty, unique --------------------------------------
    (("documents", 1, "id"), "a", "documents[1].id: duplicate document id 'a'"),
    (("chunks", 1, "id"), "a#0", "chunks[1].id: duplicate chunk id 'a#0'"),
    (("queries", 1, "id"), "q1", "queries[1].id: duplicate query id 'q1'"),
    (("documents", 0, "id"), 123, "documents[0].id: expected a string, got a number 123"),
    (("queries", 0, "id"), datetime.date(2024, 1, 1),
     "queries[0].id: expected a string, got a date 2024-01-01"),
    (("chunks", 0, "id"), True, "chunks[0].id: expected a string, got a boolean True"),
    (("expected_chunks", 0, "id"), 5, "expected_chunks[0].id: expected a string, got a number 5"),
    (("queries", 0, "id"), "", "queries[0].id: an id must not be empty"),
    (("queries", 0, "id"), DROP, "queries[0]: missing required key 'id'"),
    (("queries", 0, "id"), None, "queries[0]: missing required key 'id'"),
    (("documents", 0, "id"), DROP, "documents[0]: missing required key 'id'"),
    (("chunks", 0, "id"), DROP, "chunks[0]: missing required key 'id'"),
    (("queries", 1, "relevant"), [1], "queries[1].relevant[0]: expected a string, got a number 1"),
    (("run", "q1", "retrieved_ids"), ["a#0", 7],
     "run.q1.retrieved_ids[1]: expected a string, got a number 7"),
    # -- format and params ----------------------------------------------------
    (("format",), 1, "format: expected 'pytest-rag/v1', got a number 1"),
    (("format",), "pytest-rag/v2",
     "format: expected 'pytest-rag/v1', got a string 'pytest-rag/v2'"),
    (("params",), [], "params: expected a mapping, got a list []"),
    (("params", "k"), "5", "params.k: expected a whole number, got a string '5'"),
    (("params", "k"), 0, "params.k: must be >= 1, got 0"),
    (("params", "k"), 2.5, "params.k: expected a whole number, got a number 2.5"),
    (("params", "k"), True, "params.k: expected a whole number, got a boolean True"),
    (("params", "k"), INF, "params.k: expected a whole number, got a number inf"),
    (("params", "size_limits"), [1], "params.size_limits: expected [min, max], got [1]"),
    (("params", "size_limits"), [5, 1], "params.size_limits: min 5 is greater than max 1"),
    (("params", "size_limits"), "1-5", "params.size_limits: expected a list, got a string '1-5'"),
    (("params", "size_limits"), [-1, 5], "params.size_limits[0]: must be >= 0, got -1"),
    (("params", "boundary_tolerance"), -1, "params.boundary_tolerance: must be >= 0, got -1"),
    (("params", "required_metadata"), "source",
     "params.required_metadata: expected a list, got a string 'source'"),
    (("params", "required_metadata"), [1],
     "params.required_metadata[0]: expected a string, got a number 1"),
    (("params", "max_context_tokens"), 1.5,
     "params.max_context_tokens: expected a whole number, got a number 1.5"),
    (("params", "abstain_phrases"), [None],
     "params.abstain_phrases[0]: expected a string, got null"),
    # -- documents ------------------------------------------------------------
    (("documents",), {}, "documents: expected a list, got a mapping {}"),
    (("documents",), "", "documents: expected a list, got a string ''"),
    (("documents",), 0, "documents: expected a list, got a number 0"),
    (("documents", 0), "a", "documents[0]: expected a mapping, got a string 'a'"),
    (("documents", 0, "text"), 5, "documents[0].text: expected a string, got a number 5"),
    (("documents", 0, "path"), "a.md", "documents[0]: give either 'text' or 'path', not both"),
    (("documents", 0, "text"), DROP, "documents[0]: missing 'text' (or 'path' to a UTF-8 file)"),
    (("documents", 0, "metadata"), [], "documents[0].metadata: expected a mapping, got a list []"),
    (("documents", 0, "metadata"), {1: "x"},
     "documents[0].metadata: keys must be strings, got a number 1"),
    # -- chunks and expected chunks: offsets, located texts ---------------------
    (("chunks",), {"a#0": {}}, "chunks: expected a list, got a mapping {'a#0': {}}"),
    (("chunks", 0, "start"), "0", "chunks[0].start: expected a whole number, got a string '0'"),
    (("chunks", 0, "start"), -1, "chunks[0].start: must be >= 0, got -1"),
    (("chunks", 0, "end"), 10**6, "chunks[0].end: 1000000 is past the end of document 'a' "
                                  "(75 characters)"),
    (("chunks", 0, "start"), 76, "chunks[0].start: 76 is past the end of document 'a' "
                                 "(75 characters)"),
    (("chunks", 0, "start"), 49, "chunks[0]: start 49 is after end 48"),
    (("chunks", 0, "end"), DROP, "chunks[0]: give both 'start' and 'end', or neither"),
    (("chunks", 0, "start"), DROP, "chunks[0]: give both 'start' and 'end', or neither"),
    (("chunks", 0, "start"), None, "chunks[0]: give both 'start' and 'end', or neither"),
    (("chunks", 1, "text"), DROP, "chunks[1]: give 'start' and 'end', or 'text' to locate"),
    (("chunks", 0, "text"), 5, "chunks[0].text: expected a string, got a number 5"),
    (("chunks", 1, "text"), "Nowhere to be found",
     "chunks[1].text: 'Nowhere to be found' not found in document 'a' at or after character 0"),
    (("chunks", 1, "text"), "", "chunks[1].text: an empty text cannot be located; "
                                "give 'start' and 'end'"),
    (("chunks", 0, "doc_id"), "zz", "chunks[0].doc_id: unknown document 'zz' (known: 'a', 'b')"),
    (("chunks", 0, "doc_id"), 7, "chunks[0].doc_id: expected a string, got a number 7"),
    (("chunks", 0, "doc_id"), DROP, "chunks[0]: missing 'doc_id' (it may be omitted only with "
                                    "exactly one document; there are 2 documents)"),
    (("chunks", 0, "metadata"), "x", "chunks[0].metadata: expected a mapping, got a string 'x'"),
    (("expected_chunks", 1, "text"), "warranty",
     "expected_chunks[1].text: 'warranty' not found in document 'b' at or after character 0; "
     "its last 7 characters are at character 1 of the document, which has 'W' before them "
     "where the quote has 'w'"),
    (("expected_chunks", 0, "end"), 99,
     "expected_chunks[0].end: 99 is past the end of document 'a' (75 characters)"),
    (("expected_metadata",), [], "expected_metadata: expected a mapping, got a list []"),
    (("expected_metadata", "a#0"), 5,
     "expected_metadata['a#0']: expected a mapping, got a number 5"),
    # -- vectors: finite, not empty, one dimension ------------------------------
    (("vectors",), [], "vectors: expected a mapping, got a list []"),
    (("vectors", "chunks"), [[1.0]], "vectors.chunks: expected a mapping, got a list [[1.0]]"),
    (("vectors", "chunks", "a#0"), [],
     "vectors.chunks['a#0']: a vector must have at least one dimension"),
    (("vectors", "chunks", "a#0"), [1.0, NAN],
     "vectors.chunks['a#0'][1]: must be a finite number, got nan"),
    (("vectors", "chunks", "a#0"), [INF, 1.0],
     "vectors.chunks['a#0'][0]: must be a finite number, got inf"),
    (("vectors", "chunks", "a#0"), [1.0, "x"],
     "vectors.chunks['a#0'][1]: expected a number, got a string 'x'"),
    (("vectors", "chunks", "a#0"), [1.0, True],
     "vectors.chunks['a#0'][1]: expected a number, got a boolean True"),
    (("vectors", "chunks", "a#0"), 1.0, "vectors.chunks['a#0']: expected a list, got a number 1.0"),
    (("vectors", "chunks", "a#1"), [1.0, 2.0, 3.0],
     "vectors.chunks['a#1']: has 3 dimensions, vectors.chunks['a#0'] has 2"),
    (("vectors", "sentences", "a#0"), [[1.0], [1.0, 2.0]],
     "vectors.sentences['a#0'][1]: has 2 dimensions, vectors.sentences['a#0'][0] has 1"),
    (("vectors", "sentences", "a#0"), [[]],
     "vectors.sentences['a#0'][0]: a vector must have at least one dimension"),
    (("vectors", "sentences", "a#0"), [1.0],
     "vectors.sentences['a#0'][0]: expected a list, got a number 1.0"),
    (("vectors", "sentences", "a#1"), [[1.0, 2.0, 3.0]],
     "vectors.sentences['a#1']: has 3 dimensions, vectors.sentences['a#0'] has 2"),
    (("vectors", "sentences", "a#1"), [[-INF, 1.0]],
     "vectors.sentences['a#1'][0][0]: must be a finite number, got -inf"),
    (("vectors", "indexed_ids"), "a#0", "vectors.indexed_ids: expected a list, got a string 'a#0'"),
    (("vectors", "indexed_ids"), ["a#0", None],
     "vectors.indexed_ids[1]: expected a string, got null"),
    # -- queries and evidence ---------------------------------------------------
    (("queries",), {}, "queries: expected a list, got a mapping {}"),
    (("queries", 0), "q1", "queries[0]: expected a mapping, got a string 'q1'"),
    (("queries", 0, "question"), 5, "queries[0].question: expected a string, got a number 5"),
    (("queries", 0, "relevant"), "a#0", "queries[0].relevant: expected a list of chunk ids or a "
                                        "mapping of chunk id to grade, got a string 'a#0'"),
    (("queries", 0, "relevant"), 3, "queries[0].relevant: expected a list of chunk ids or a "
                                    "mapping of chunk id to grade, got a number 3"),
    (("queries", 0, "relevant", "a#0"), True,
     "queries[0].relevant['a#0']: expected a whole number, got a boolean True"),
    (("queries", 0, "relevant", "a#0"), False,
     "queries[0].relevant['a#0']: expected a whole number, got a boolean False"),
    (("queries", 0, "relevant", "a#0"), -1, "queries[0].relevant['a#0']: must be >= 0, got -1"),
    (("queries", 0, "relevant", "a#0"), 1.5,
     "queries[0].relevant['a#0']: expected a whole number, got a number 1.5"),
    (("queries", 0, "relevant"), {1: 1},
     "queries[0].relevant: keys must be strings, got a number 1"),
    (("queries", 0, "expected_evidence"), {},
     "queries[0].expected_evidence: expected a list, got a mapping {}"),
    (("queries", 0, "expected_evidence", 0), "x",
     "queries[0].expected_evidence[0]: expected a mapping, got a string 'x'"),
    (("queries", 0, "expected_evidence", 0), {"doc_id": "a"},
     "queries[0].expected_evidence[0]: missing 'start' and 'end' (or a 'quote' to locate)"),
    (("queries", 0, "expected_evidence", 0), {"doc_id": "a", "start": 0, "end": 3, "quote": "Ref"},
     "queries[0].expected_evidence[0]: give either 'start' and 'end', or 'quote', not both"),
    (("queries", 0, "expected_evidence", 0, "end"), 5120,
     "queries[0].expected_evidence[0].end: 5120 is past the end of document 'a' (75 characters)"),
    (("queries", 0, "expected_evidence", 0, "start"), 9,
     "queries[0].expected_evidence[0]: start 9 is after end 7"),
    (("queries", 0, "expected_evidence", 0, "start"), DROP,
     "queries[0].expected_evidence[0]: give both 'start' and 'end', or neither"),
    (("queries", 0, "expected_evidence", 1, "quote"), "within 31 days",
     "queries[0].expected_evidence[1].quote: 'within 31 days' not found in document 'a'; its "
     "first 8 characters are at character 21 of the document, which goes on '0 days of "
     "purchase.\\nShipping t' where the quote has '1 days'"),
    (("queries", 0, "expected_evidence", 1, "quote"), 5,
     "queries[0].expected_evidence[1].quote: expected a string, got a number 5"),
    (("queries", 0, "expected_evidence", 1, "quote"), "",
     "queries[0].expected_evidence[1].quote: an empty quote cannot be located; "
     "give 'start' and 'end'"),
    (("queries", 0, "expected_evidence", 1, "doc_id"), DROP,
     "queries[0].expected_evidence[1]: missing 'doc_id' (it may be omitted only with exactly "
     "one document; there are 2 documents)"),
    (("queries", 0, "expected_evidence", 1, "doc_id"), "zz",
     "queries[0].expected_evidence[1].doc_id: unknown document 'zz' (known: 'a', 'b')"),
    (("queries", 0, "reference_answer"), 5,
     "queries[0].reference_answer: expected a string or a list of strings, got a number 5"),
    (("queries", 0, "reference_answer"), ["a", 5],
     "queries[0].reference_answer[1]: expected a string, got a number 5"),
    (("queries", 0, "required_facts"), "30 days",
     "queries[0].required_facts: expected a list, got a string '30 days'"),
    (("queries", 0, "expected_citations"), [None],
     "queries[0].expected_citations[0]: expected a string, got null"),
    (("queries", 0, "answerable"), "yes",
     "queries[0].answerable: expected true or false, got a string 'yes'"),
    (("queries", 0, "answerable"), 1,
     "queries[0].answerable: expected true or false, got a number 1"),
    # -- run ---------------------------------------------------------------------
    (("run",), [], "run: expected a mapping, got a list []"),
    (("run", "qX"), {}, "run.qX: query 'qX' is not in 'queries'"),
    (("run", "no such"), None, "run['no such']: query 'no such' is not in 'queries'"),
    (("run", "q1"), [], "run.q1: expected a mapping, got a list []"),
    (("run", "q1", "retrieved_ids"), "a#0",
     "run.q1.retrieved_ids: expected a list, got a string 'a#0'"),
    (("run", "q1", "reranked_ids"), {"a#0": 1},
     "run.q1.reranked_ids: expected a list, got a mapping {'a#0': 1}"),
    (("run", "q1", "context_ids"), [["a#0"]],
     "run.q1.context_ids[0]: expected a string, got a list ['a#0']"),
    (("run", "q1", "cited_ids"), 1, "run.q1.cited_ids: expected a list, got a number 1"),
    (("run", "q1", "ann_ids"), [None], "run.q1.ann_ids[0]: expected a string, got null"),
    (("run", "q1", "answer"), 5, "run.q1.answer: expected a string, got a number 5"),
    (("run", "q1", "abstained"), "no",
     "run.q1.abstained: expected true or false, got a string 'no'"),
    (("run", "q1", "task_success"), 0,
     "run.q1.task_success: expected true or false, got a number 0"),
    (("run", "q1", "verified_claims"), {},
     "run.q1.verified_claims: expected a list, got a mapping {}"),
    (("run", "q1", "verified_claims", 0), "x",
     "run.q1.verified_claims[0]: expected a mapping, got a string 'x'"),
    (("run", "q1", "verified_claims", 0, "supported"), DROP,
     "run.q1.verified_claims[0]: missing required key 'supported'"),
    (("run", "q1", "verified_claims", 0, "supported"), "yes",
     "run.q1.verified_claims[0].supported: expected true or false, got a string 'yes'"),
    (("run", "q1", "verified_claims", 0, "claim"), 5,
     "run.q1.verified_claims[0].claim: expected a string, got a number 5"),
    (("run", "q1", "query_vector"), [],
     "run.q1.query_vector: a vector must have at least one dimension"),
    (("run", "q1", "query_vector"), [NAN, 1.0],
     "run.q1.query_vector[0]: must be a finite number, got nan"),
    (("run", "q1", "query_vector"), [[1.0, 2.0]],
     "run.q1.query_vector[0]: expected a number, got a list [1.0, 2.0]"),
    (("run", "q1", "query_vector"), [1.0, 2.0, 3.0],
     "run.q1.query_vector: has 3 dimensions, the chunk vectors have 2"),
    (("run", "q1", "retrieval_latency_ms"), -1,
     "run.q1.retrieval_latency_ms: must be >= 0, got -1"),
    (("run", "q1", "retrieval_latency_ms"), INF,
     "run.q1.retrieval_latency_ms: must be a finite number, got inf"),
    (("run", "q1", "generation_latency_ms"), NAN,
     "run.q1.generation_latency_ms: must be a finite number, got nan"),
    (("run", "q1", "generation_latency_ms"), -0.5,
     "run.q1.generation_latency_ms: must be >= 0, got -0.5"),
    (("run", "q1", "latency_ms"), INF, "run.q1.latency_ms: must be a finite number, got inf"),
    (("run", "q1", "latency_ms"), -INF, "run.q1.latency_ms: must be a finite number, got -inf"),
    (("run", "q1", "latency_ms"), "fast",
     "run.q1.latency_ms: expected a number, got a string 'fast'"),
    (("run", "q1", "latency_ms"), -3, "run.q1.latency_ms: must be >= 0, got -3"),
    (("run", "q1", "cost_usd"), NAN, "run.q1.cost_usd: must be a finite number, got nan"),
    (("run", "q1", "cost_usd"), -0.5, "run.q1.cost_usd: must be >= 0, got -0.5"),
    (("run", "q1", "total_tokens"), -5, "run.q1.total_tokens: must be >= 0, got -5"),
    (("run", "q1", "total_tokens"), True,
     "run.q1.total_tokens: expected a number, got a boolean True"),
    (("run", "q1", "latency_ms"), 10**400,
     "run.q1.latency_ms: must be a finite number, got 100000000000000000...0000000000000000000"),
    # -- expected -----------------------------------------------------------------
    (("expected",), [], "expected: expected a mapping, got a list []"),
    (("expected", "retrieval"), 5, "expected.retrieval: expected a mapping, got a number 5"),
    (("expected", "retrieval", "recall_at_k"), "0.5",
     "expected.retrieval.recall_at_k: expected a number, got a string '0.5'"),
    (("expected", "retrieval", "recall_at_k"), NAN,
     "expected.retrieval.recall_at_k: must be a finite number, got nan"),
]


@pytest.mark.parametrize(("path", "value", "message"), CASES,
                         ids=[".".join(map(str, case[0])) + f"={case[1]!r}"[:30] for case in CASES])
def test_invalid_value_is_reported_at_its_place(path: tuple[Any, ...], value: Any,
                                                message: str) -> None:
    assert error_of(changed(path, value)) == f"gold.yaml: {message}"


def test_error_carries_source_place_and_problem() -> None:
    with pytest.raises(DatasetError) as info:
        parse_dataset(changed(("queries", 0, "expected_evidence", 0, "end"), 5120),
                      source="gold.yaml")
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.source, error.place) == ("gold.yaml", "queries[0].expected_evidence[0].end")
    assert error.problem == "5120 is past the end of document 'a' (75 characters)"


def test_default_source_is_arguments() -> None:
    with pytest.raises(DatasetError, match=r"^<arguments>: formatt: unknown key"):
        parse_dataset({"formatt": 1})


@pytest.mark.parametrize("raw", [[], "text", 5, True])
def test_top_level_must_be_a_mapping(raw: object) -> None:
    assert error_of(raw).startswith("gold.yaml: expected a mapping, got ")


def test_top_level_keys_must_be_strings() -> None:
    assert error_of({1: "x"}) == "gold.yaml: keys must be strings, got a number 1"


def test_doc_id_may_not_be_omitted_without_documents() -> None:
    data = {"chunks": [{"id": "c", "start": 0, "end": 0}]}
    assert error_of(data) == ("gold.yaml: chunks[0]: missing 'doc_id' (it may be omitted only "
                              "with exactly one document; there are no documents)")
    data = {"chunks": [{"id": "c", "doc_id": "a", "start": 0, "end": 0}]}
    assert error_of(data) == ("gold.yaml: chunks[0].doc_id: unknown document 'a' (there are no "
                              "documents)")


def test_run_entry_for_a_query_when_there_are_no_queries() -> None:
    assert error_of({"run": {"q1": {}}}) == "gold.yaml: run.q1: query 'q1' is not in 'queries'"


def test_unknown_document_list_is_shortened() -> None:
    data = {"documents": [{"id": f"d{i}", "text": "x"} for i in range(7)],
            "chunks": [{"id": "c", "doc_id": "zz", "start": 0, "end": 1}]}
    assert error_of(data) == ("gold.yaml: chunks[0].doc_id: unknown document 'zz' "
                              "(known: 'd0', 'd1', 'd2', 'd3', 'd4', ...)")


def test_chunk_text_search_start_is_named_in_the_error() -> None:
    data = {"documents": [{"id": "d", "text": "alpha beta alpha"}],
            "chunks": [{"id": "c0", "start": 6, "end": 10}, {"id": "c1", "text": "alpha beta"}]}
    assert error_of(data) == ("gold.yaml: chunks[1].text: 'alpha beta' not found in document "
                              "'d' at or after character 6; it is at character 0, before the "
                              "search start (chunks given by text are located in order, each "
                              "after the one before)")


def test_long_values_are_shortened_in_messages() -> None:
    message = error_of(changed(("chunks", 1, "text"), "x" * 500))
    assert message == (f"gold.yaml: chunks[1].text: '{'x' * 56}... not found in document 'a' "
                       "at or after character 0")


def test_mixed_chunk_vector_dimensions_name_the_first_odd_one() -> None:
    vectors = {"c1": [1.0], "c2": [1.0], "c3": [1.0, 2.0], "c4": [1.0, 2.0, 3.0]}
    assert error_of({"vectors": {"chunks": vectors}}) == (
        "gold.yaml: vectors.chunks.c3: has 2 dimensions, vectors.chunks.c1 has 1")


def test_sentence_vector_dimension_error_is_deterministic() -> None:
    sentences = {f"c{i}": [[1.0, 2.0]] for i in range(20)} | {"odd": [[1.0]]}
    assert error_of({"vectors": {"sentences": sentences}}) == (
        "gold.yaml: vectors.sentences.odd: has 1 dimensions, vectors.sentences.c0 has 2")


def test_query_vector_dimension_is_checked_against_chunk_vectors_only() -> None:
    data = {"queries": [{"id": "q1"}], "run": {"q1": {"query_vector": [1.0, 2.0, 3.0]}},
            "vectors": {"sentences": {"c": [[1.0]]}}}
    assert parse_dataset(data).run["q1"].query_vector.shape == (3,)
    data["vectors"]["chunks"] = {"c": [1.0, 2.0]}
    assert error_of(data) == ("gold.yaml: run.q1.query_vector: has 3 dimensions, the chunk "
                              "vectors have 2")


@pytest.mark.parametrize("value", [{"a", "b"}, frozenset({"a"})])
def test_sets_are_not_lists(value: object) -> None:
    # A YAML !!set has no order: a ranked list must not come from one.
    message = error_of(changed(("run", "q1", "retrieved_ids"), value))
    assert message.startswith("gold.yaml: run.q1.retrieved_ids: expected a list, got a set ")


# -- files -------------------------------------------------------------------------


def load_error(path: Path, **kwargs: Any) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path, **kwargs)
    return str(info.value)


def test_file_not_found(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    assert load_error(path) == f"{path}: file not found"


def test_a_directory_is_read_as_a_beir_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "gold.yaml"
    folder.mkdir()
    assert load_error(folder) == (
        f"{folder}: no qrels/test.tsv (a BEIR folder holds corpus.jsonl, queries.jsonl and "
        "qrels/<split>.tsv); splits found: none")


@pytest.mark.parametrize("name", ["gold.toml", "gold.xml", "gold"])
def test_unknown_extension(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xff\xfe binary")
    suffix = Path(name).suffix or "(no extension)"
    assert load_error(path) == (
        f"{path}: unknown file type {suffix!r}: expected a .yaml, .yml or .json dataset, a BEIR "
        "folder, a ragas .jsonl or .csv file, or TREC qrels (.qrels, .txt, qrels.*)")


def test_dataset_file_must_be_utf8(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_bytes(b"queries:\n  - id: caf\xe9\n")
    assert load_error(path) == f"{path}: is not UTF-8 text (invalid continuation byte at byte 20)"


def test_empty_json_file_is_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text("")
    assert load_error(path) == f"{path}: line 1, column 1: invalid JSON: Expecting value"


@pytest.mark.parametrize(("text", "place", "problem"), [
    ("{\n  \"queries\": [\n    {\"id\": \"q1\",}\n  ]\n}\n", "line 3, column 17",
     "Expecting property name enclosed in double quotes"),
    ("{\"queries\": [}", "line 1, column 14", "Expecting value"),
    ("{\"a\": 1} x", "line 1, column 10", "Extra data"),
])
def test_invalid_json_names_line_and_column(tmp_path: Path, text: str, place: str,
                                            problem: str) -> None:
    path = tmp_path / "gold.json"
    path.write_text(text)
    assert load_error(path) == f"{path}: {place}: invalid JSON: {problem}"


@pytest.mark.parametrize(("text", "place", "key"), [
    ('{"format": "pytest-rag/v1", "format": "pytest-rag/v1"}', "line 1, column 29", "format"),
    ('{\n  "queries": [\n    {"id": "q1",\n     "id": "q2"}\n  ]\n}\n', "line 4, column 6", "id"),
    ('{"run": {"q1": {}, "q2": {"answer": "x"}, "q1": {}}}', "line 1, column 43", "q1"),
    ('{"a": {"id": 1, "b": {"id": 2}, "id": 3}}', "line 1, column 33", "id"),
])
def test_duplicate_json_key_names_the_key_and_its_line(tmp_path: Path, text: str, place: str,
                                                       key: str) -> None:
    path = tmp_path / "gold.json"
    path.write_text(text)
    assert load_error(path) == f"{path}: {place}: invalid JSON: duplicate key {key!r}"


def test_json_nan_and_infinity_are_refused_where_numbers_must_be_finite(tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text('{"vectors": {"chunks": {"c": [0.5, NaN]}}}')
    assert load_error(path) == f"{path}: vectors.chunks.c[1]: must be a finite number, got nan"
    path.write_text('{"queries": [{"id": "q"}], "run": {"q": {"latency_ms": Infinity}}}')
    assert load_error(path) == (f"{path}: run.q.latency_ms (line 1): must be a finite "
                                "number, got inf")
    path.write_text('{"queries": [{"id": "q"}], "run": {"q": {"cost_usd": -Infinity}}}')
    assert load_error(path) == (f"{path}: run.q.cost_usd (line 1): must be a finite "
                                "number, got -inf")


def test_deeply_nested_json_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text('{"expected_metadata": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert load_error(path) == f"{path}: invalid JSON: nested too deeply"


needs_int_digit_limit = pytest.mark.skipif(
    not hasattr(sys, "get_int_max_str_digits"), reason="Python without an integer digit limit")


@needs_int_digit_limit
def test_json_integer_too_long_to_convert_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text('{"params": {"k": ' + "1" * 5000 + "}}")
    assert load_error(path) == (f"{path}: line 1, column 18: invalid JSON: an integer of 5000 "
                                "digits, more than Python converts")


@needs_int_digit_limit
def test_yaml_integer_too_long_to_convert_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("params: {k: " + "1" * 5000 + "}\n")
    assert load_error(path) == (f"{path}: line 1, column 13: invalid YAML: cannot read "
                                f"'{'1' * 37}...' as int; quote it if it is text")


@pytest.mark.parametrize(("text", "message"), [
    ("queries:\n  - id: 123\n", "queries[0].id (line 2): expected a string, got a number 123"),
    ("queries:\n  - id: 2024-01-01\n",
     "queries[0].id (line 2): expected a string, got a date 2024-01-01"),
    ("queries:\n  - id: 2024-01-01 10:30:00\n",
     "queries[0].id (line 2): expected a string, got a date and time 2024-01-01T10:30:00"),
    ("queries:\n  - id: yes\n", "queries[0].id (line 2): expected a string, got a boolean True"),
    ("queries:\n  - id: ~\n", "queries[0] (line 2): missing required key 'id'"),
    ("documents:\n  - id: 1.5\n    text: x\n", "documents[0].id (line 2): expected a string, "
     "got a number 1.5"),
    ("vectors:\n  chunks:\n    c: [0.5, .nan]\n",
     "vectors.chunks.c[1]: must be a finite number, got nan"),
    ("vectors:\n  chunks:\n    c: [.inf]\n",
     "vectors.chunks.c[0]: must be a finite number, got inf"),
    ("queries: [{id: q}]\nrun:\n  q: {latency_ms: -.inf}\n",
     "run.q.latency_ms (line 3): must be a finite number, got -inf"),
    ("queries: [{id: q}]\nrun:\n  q: {cost_usd: .NaN}\n",
     "run.q.cost_usd (line 3): must be a finite number, got nan"),
    ("queries: [{id: q}]\nrun:\n  q: {retrieval_latency_ms: -1}\n",
     "run.q.retrieval_latency_ms (line 3): must be >= 0, got -1"),
    ("queries: [{id: q}]\nrun:\n  123: {}\n",
     "run (line 3): keys must be strings, got a number 123"),
    ("queries: [{id: q}]\nrun:\n  q:\n    retrieved_ids: !!set {a, b}\n",
     "run.q.retrieved_ids (line 4): expected a list, got a set "),
    ("documents:\n  - id: d\n    text: !!binary aGVsbG8=\n",
     "documents[0].text (document 'd', line 3): expected a string, got a bytes b'hello'"),
    ("format: pytest-rag/v2\n", "format: expected 'pytest-rag/v1', got a string 'pytest-rag/v2'"),
    ("- id: q1\n", "expected a mapping, got a list [{'id': 'q1'}]"),
])
def test_yaml_values_are_checked(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text(text)
    assert load_error(path).startswith(f"{path}: {message}")


# The problem text comes from PyYAML; libyaml (CSafeLoader) and the pure Python
# loader word some problems differently, so each case lists both wordings.
@pytest.mark.parametrize(("text", "place", "problems"), [
    ("queries:\n  - id: q1\n    id: q2\n", "line 3, column 5", ["duplicate key 'id'"]),
    ("format: pytest-rag/v1\nformat: pytest-rag/v1\n", "line 2, column 1",
     ["duplicate key 'format'"]),
    ("run:\n  q1: {}\n  q1: {answer: x}\n", "line 3, column 3", ["duplicate key 'q1'"]),
    ("base: &b {a: 1}\nrun:\n  <<: *b\n  x: 1\n  x: 2\n", "line 5, column 3",
     ["duplicate key 'x'"]),
    ("queries: [\n", "line 2, column 1",
     ["did not find expected node content", "expected the node content, but found '<stream end>'"]),
    ("queries:\n  - id: q1\n   question: x\n", "line 3, column 4",
     ["did not find expected '-' indicator",
      "expected <block end>, but found '<block mapping start>'"]),
    ("queries:\n  - id: q1: x\n", "line 2, column 11",
     ["mapping values are not allowed in this context", "mapping values are not allowed here"]),
    ("a: 1\n\tb: 2\n", "line 2, column 1",
     ["found a tab character that violates indentation",
      "found character '\\t' that cannot start any token"]),
    ("a: 1\n---\nb: 2\n", "line 2, column 1", ["but found another document"]),
    ("? [a, b]\n: 1\n", "line 1, column 3", ["found unhashable key"]),
    # A set key (looked up as a frozenset, so only adding it fails; found by the fuzz suite).
    ('{!!set "params": {}, "run": {}}\n', "line 1, column 2", ["found unhashable key"]),
    ("? !!set {a: null}\n: 1\n", "line 1, column 3", ["found unhashable key"]),
    ("a: 1\nb: \x01\n", "line 2, column 4", ["character #x0001 is not allowed"]),
    # Scalars a tag (given or implied) cannot construct: never a raw Python exception.
    ("queries:\n  - id: 2024-02-30\n", "line 2, column 9",
     ["cannot read '2024-02-30' as timestamp (day is out of range for month); "
      "quote it if it is text"]),
    ("queries:\n  - id: 2001-13-45 10:00:00\n", "line 2, column 9",
     ["cannot read '2001-13-45 10:00:00' as timestamp (month must be in 1..12); "
      "quote it if it is text"]),
    ("params: {k: !!int five}\n", "line 1, column 13",
     ["cannot read 'five' as int; quote it if it is text"]),
    ("params: {k: !!float x}\n", "line 1, column 13",
     ["cannot read 'x' as float; quote it if it is text"]),
    ("a: !!bool maybe\n", "line 1, column 4",
     ["cannot read 'maybe' as bool; quote it if it is text"]),
    ("a: !!timestamp soon\n", "line 1, column 4",
     ["cannot read 'soon' as timestamp; quote it if it is text"]),
    ("a: !!map [1]\n", "line 1, column 4", ["expected a mapping, but found sequence"]),
    ("a: !!set [1]\n", "line 1, column 4", ["expected a mapping, but found sequence"]),
    ("a: *nowhere\n", "line 1, column 4",
     ["found undefined alias", "found undefined alias 'nowhere'"]),
    # An anchor used inside itself would make a structure that contains itself.
    ("documents: &d\n  - id: x\n    metadata: {self: *d}\n", "line 1, column 12",
     ["an anchor is used inside itself (a recursive alias)"]),
    ("expected_metadata:\n  c: &m {again: [*m]}\n", "line 2, column 6",
     ["an anchor is used inside itself (a recursive alias)"]),
])
def test_invalid_yaml_names_line_and_column(tmp_path: Path, text: str, place: str,
                                            problems: list[str]) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text(text)
    assert load_error(path) in [f"{path}: {place}: invalid YAML: {problem}" for problem in problems]


@pytest.mark.parametrize(("tag", "name"), [
    ("!!python/object:os.system {}", "!!python/object:os.system"),
    ("!!python/object/apply:os.system ['echo pwned']", "!!python/object/apply:os.system"),
    ("!!python/object/new:builtins.dict {}", "!!python/object/new:builtins.dict"),
    ("!!python/name:os.system", "!!python/name:os.system"),
    ("!!python/module:os", "!!python/module:os"),
    ("!<tag:yaml.org,2002:python/object:os.system> {}", "!!python/object:os.system"),
    ("!<tag:example.com,2000:app/x> 1", "tag:example.com,2000:app/x"),
    ("!custom 1", "!custom"),
])
def test_yaml_tags_never_construct_objects(tmp_path: Path, tag: str, name: str) -> None:
    path = tmp_path / "gold.yml"
    path.write_text(f"documents:\n  - id: d\n    text: x\n    metadata:\n      obj: {tag}\n")
    assert load_error(path) == (f"{path}: line 5, column 12: invalid YAML: the tag {name!r} is "
                                "not allowed (files are read with a safe loader: no tag "
                                "constructs an object)")


def test_shared_yaml_anchors_are_allowed(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n    relevant: &rel [c1, c2]\n"
                    "  - id: q2\n    relevant: *rel\n")
    dataset = load_dataset(path)
    assert [q.relevant for q in dataset.queries] == [{"c1": 1, "c2": 1}] * 2


def test_yaml_merge_keys_are_allowed_and_may_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("documents:\n  - &doc {id: d, text: hello world}\n"
                    "  - <<: *doc\n    id: e\n")
    dataset = load_dataset(path)
    assert [(doc.id, doc.text) for doc in dataset.documents] == [
        ("d", "hello world"), ("e", "hello world")]


# -- path: documents ---------------------------------------------------------------------


def write_gold(folder: Path, document_path: str, name: str = "gold.yaml") -> Path:
    gold = folder / name
    gold.parent.mkdir(parents=True, exist_ok=True)
    gold.write_text(json.dumps({"documents": [{"id": "d", "path": document_path}]}))
    return gold


def test_path_document_missing(tmp_path: Path) -> None:
    gold = write_gold(tmp_path, "docs/none.md")
    looked = tmp_path.resolve() / "docs" / "none.md"
    assert load_error(gold) == (f"{gold}: documents[0].path (document 'd', line 1): document file "
                                f"'docs/none.md' not "
                                f"found (looked at {str(looked)!r})")


def test_path_document_must_be_utf8(tmp_path: Path) -> None:
    (tmp_path / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    gold = write_gold(tmp_path, "latin1.md")
    assert load_error(gold) == (f"{gold}: documents[0].path (document 'd', line 1): document file "
                                f"'latin1.md' is not "
                                "UTF-8 text (unexpected end of data at byte 3)")


def test_path_document_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    gold = write_gold(tmp_path, "docs")
    assert load_error(gold) == (f"{gold}: documents[0].path (document 'd', line 1): document file "
                                f"'docs' is a directory "
                                f"({str(tmp_path.resolve() / 'docs')!r})")


@pytest.mark.parametrize("name", ["", "a\0b"])
def test_path_document_name_must_be_a_file_name(tmp_path: Path, name: str) -> None:
    gold = write_gold(tmp_path, name)
    assert load_error(gold) == (f"{gold}: documents[0].path (document 'd', line 1): "
                                f"{name!r} is not a file name")


def test_path_outside_the_dataset_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("outside")
    gold = write_gold(tmp_path / "data", "../secret.txt")
    root = (tmp_path / "data").resolve()
    assert load_error(gold) == (
        f"{gold}: documents[0].path (document 'd', line 1): '../secret.txt' is outside the "
        f"dataset's folder "
        f"{str(root)!r} (allow it with allow_outside_paths=True, --allow-outside-paths on the "
        "command line, or the ini option rag_allow_outside_paths)")
    assert load_dataset(gold, allow_outside_paths=True).documents[0].text == "outside"


def test_absolute_path_outside_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    gold = write_gold(tmp_path / "data", str(secret))
    assert "is outside the dataset's folder" in load_error(gold)
    assert load_dataset(gold, allow_outside_paths=True).documents[0].text == "outside"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlink_escaping_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("outside")
    (tmp_path / "data").mkdir()
    try:
        (tmp_path / "data" / "link.txt").symlink_to(tmp_path / "secret.txt")
    except OSError:
        pytest.skip("cannot create symbolic links here")
    gold = write_gold(tmp_path / "data", "link.txt")
    assert "'link.txt' is outside the dataset's folder" in load_error(gold)


# -- no raw exceptions, whatever the input ----------------------------------------------

KEYS = sorted({key for value in (BASE, *BASE["run"].values(), *BASE["queries"])
               if isinstance(value, dict) for key in value}
              | {"id", "doc_id", "start", "end", "text", "path", "quote", "metadata", "claim",
                 "supported", "chunks", "sentences", "indexed_ids", "retrieval", "chunking",
                 "recall_at_k", "k", "size_limits"})
SCALARS = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1.5, 10**400, -(10**400), NAN, INF, -INF, b"x",
                     datetime.date(2024, 1, 1), frozenset({"a#0"})]),
    st.integers(-3, 100), st.integers(), st.floats(), st.text(max_size=6),
    st.sampled_from(["a", "b", "q1", "q2", "a#0", "a#1", "b#0", "", "within 30 days",
                     "pytest-rag/v1"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=4), st.integers(0, 3)),
                        inner, max_size=3),
    ),
    max_leaves=6,
)


def paths_of(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            paths.extend(paths_of(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            paths.extend(paths_of(value, (*prefix, index)))
    return paths


@st.composite
def mutated_datasets(draw: st.DrawFn) -> Any:
    data: Any = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(paths_of(data)))
        action = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
        if not path:
            if action == "replace":
                data = draw(VALUES)
            continue
        parent: Any = data
        for key in path[:-1]:
            parent = parent[key]
        target = parent[path[-1]]
        if action == "replace":
            parent[path[-1]] = draw(VALUES)
        elif action == "drop":
            del parent[path[-1]]
        elif isinstance(target, dict):
            target[draw(st.one_of(st.sampled_from(KEYS), st.text(max_size=4)))] = draw(VALUES)
        elif isinstance(target, list):
            target.insert(draw(st.integers(0, len(target))), draw(VALUES))
    return data


def check_invariants(dataset: Dataset) -> None:
    """What a Dataset promises (data.py): every offset in range, ids strings, numbers finite."""
    texts = {doc.id: doc.text for doc in dataset.documents}
    assert len(texts) == len(dataset.documents)
    for chunk in (*dataset.chunks, *dataset.expected_chunks):
        assert 0 <= chunk.start <= chunk.end <= len(texts[chunk.doc_id])
    query_ids = [query.id for query in dataset.queries]
    assert len(set(query_ids)) == len(query_ids)
    assert all(isinstance(query_id, str) and query_id for query_id in query_ids)
    for query in dataset.queries:
        for span in query.expected_evidence:
            assert 0 <= span.start <= span.end <= len(texts[span.doc_id])
        assert all(type(grade) is int and grade >= 0 for grade in (query.relevant or {}).values())
    assert set(dataset.run) <= set(query_ids)
    for entry in dataset.run.values():
        for name in ("retrieval_latency_ms", "generation_latency_ms", "latency_ms", "cost_usd",
                     "total_tokens"):
            value = getattr(entry, name)
            assert value is None or (math.isfinite(value) and value >= 0)


@settings(max_examples=budget(300), derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutated_datasets())
def test_malformed_input_gives_a_dataset_error_or_a_valid_dataset(data: Any) -> None:
    try:
        dataset = parse_dataset(data, source="gold.yaml")
    except DatasetError as error:
        assert str(error).startswith("gold.yaml: ")
        assert error.problem
    else:
        check_invariants(dataset)


ODD_VALUES = [None, True, False, 0, -1, 1.5, 10**400, NAN, INF, -INF, "", "x", b"x", [], [None],
              [[1]], {}, {"x": 1}, {1: 2}, {"a"}, datetime.date(2024, 1, 1)]


@pytest.mark.parametrize("path", [path for path in paths_of(BASE) if path],
                         ids=lambda path: ".".join(map(str, path)))
def test_every_place_refuses_odd_values_cleanly(path: tuple[Any, ...]) -> None:
    # Exhaustive companion of the random test: each place of BASE, each odd value.
    for value in [DROP, *ODD_VALUES]:
        try:
            dataset = parse_dataset(changed(path, value), source="gold.yaml")
        except DatasetError as error:
            assert str(error).startswith("gold.yaml: ")
        else:
            check_invariants(dataset)


YAML_PIECES = ["a", "b", "1", "-1", ".5", "x y", "2024-01-01", "2024-13-45", "2024-02-30 10:00",
               "!!int ", "!!float ", "!!bool ", "!!timestamp ", "!!set ", "!!map ", "!!seq ",
               "!!omap ", "!!pairs ", "!!binary ", "!!str ", "!!null ", "!!python/tuple ", "!x ",
               "&a ", "*a", "&b ", "*b", "<<: ", "? ", ": ", "- ", ", ", "[", "]", "{", "}", "\n",
               "  ", "'", '"', "#", "|", ">", "%", "@", "`", "\t", "---\n", "...\n", "\x00"]


@settings(max_examples=budget(500), derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(YAML_PIECES), max_size=25).map("".join))
def test_arbitrary_yaml_text_gives_a_dataset_error_or_a_dataset(text: str) -> None:
    from pytest_rag.dataset.safe_yaml import load_yaml

    try:
        parse_dataset(load_yaml(text, "gold.yaml"), source="gold.yaml")
    except DatasetError as error:
        assert str(error).startswith("gold.yaml")


def test_a_huge_grade_is_refused_with_its_place() -> None:
    # Found by the deep fuzz run: 2**63 overflowed the grade matrix instead.
    raw = {"queries": [{"id": "q1", "relevant": {"c0": 2**63}}]}
    with pytest.raises(DatasetError) as info:
        parse_dataset(raw, source="gold.json")
    assert str(info.value) == ("gold.json: queries[0].relevant.c0: a grade must be <= 100 (its "
                               "nDCG gain is 2**grade - 1), got 9223372036854775808")
    assert parse_dataset({"queries": [{"id": "q1", "relevant": {"c0": 100}}]}).queries[0].relevant


def _aliased_run(tmp_path: Path, entries: int) -> Path:
    """``entries`` run entries, each an alias of one anchored list of 2,000 ids."""
    ids = ", ".join(f"c{i}" for i in range(2000))
    lines = ["queries:", *(f"  - {{id: q{i}, relevant: [c0]}}" for i in range(entries)), "run:"]
    lines.append(f"  q0: {{retrieved_ids: &top [{ids}]}}")
    lines += [f"  q{i}: {{retrieved_ids: *top}}" for i in range(1, entries)]
    path = tmp_path / "gold.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_aliases_may_repeat_a_list_within_the_limit(tmp_path: Path) -> None:
    path = _aliased_run(tmp_path, 400)  # 399 repeats of 2,001 nodes: under 1,000,000
    assert len(load_dataset(path).run) == 400


def test_aliases_over_the_expansion_limit_are_refused_at_the_anchor(tmp_path: Path) -> None:
    path = _aliased_run(tmp_path, 1000)  # 999 repeats of 2,001 nodes
    assert load_error(path) == (
        f"{path}: line 1003, column 23: invalid YAML: aliases expand this document by "
        "1,998,999 nodes, over the limit of 1,000,000; the value anchored here (2,001 nodes) "
        "is used 1,000 times")
