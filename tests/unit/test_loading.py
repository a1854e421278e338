"""Reading valid files: what each section of FORMAT.md becomes.

Invalid input and its messages are in ``test_loading_errors.py``.  The files
of ``shared/conformance`` and ``shared/data`` (beside this repository) must all
load; those tests skip when that folder is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from pytest_rag.dataset.loading import load_dataset
from pytest_rag.dataset.model import (
    Chunk,
    Claim,
    Dataset,
    Document,
    EvidenceSpan,
    Params,
    Query,
    RunEntry,
)
from pytest_rag.dataset.parser import FORMAT_ID, parse_dataset
from pytest_rag.errors import DatasetError

SHARED = Path(__file__).resolve().parents[2].parent / "shared"

HANDBOOK = ("Refund policy.\nRefunds are accepted within 30 days of purchase.\n"
            "Shipping   takes\nfive days.\nRefunds need a receipt.")

FULL_YAML = f"""
format: pytest-rag/v1
params:
  k: 5
  size_limits: [50, 400]
  boundary_tolerance: 0
  required_metadata: [source]
  max_context_tokens: 1500
  abstain_phrases: ["i don't know"]
documents:
  - id: handbook
    text: {json.dumps(HANDBOOK)}
    metadata: {{source: handbook.md}}
chunks:
  - id: handbook#0
    doc_id: handbook
    start: 0
    end: 63
    metadata: {{source: handbook.md, page: 1}}
  - id: handbook#1
    text: "Shipping takes five days."
expected_chunks:
  - {{doc_id: handbook, start: 0, end: 14}}
  - {{text: "Refunds are accepted"}}
expected_metadata:
  handbook#0: {{source: handbook.md, page: 1}}
vectors:
  chunks: {{handbook#0: [0.1, 0.3], handbook#1: [1, 0]}}
  sentences: {{handbook#0: [[0.1, 0.2], [0.0, 1.0]]}}
  indexed_ids: [handbook#0]
queries:
  - id: q1
    question: "How long is the refund window?"
    relevant: {{handbook#0: 2, handbook#3: 1}}
    expected_evidence:
      - {{doc_id: handbook, start: 15, end: 63}}
      - {{doc_id: handbook, quote: "within 30 days of purchase"}}
    reference_answer: "30 days"
    required_facts: ["30 days"]
    expected_citations: [handbook]
    answerable: true
  - id: q2
    relevant: [handbook#1, handbook#0]
    reference_answer: ["five days", "5 days"]
run:
  q1:
    retrieved_ids: [handbook#0, handbook#5]
    reranked_ids: [handbook#5, handbook#0]
    context_ids: [handbook#5, handbook#0]
    answer: "Refunds are accepted within 30 days."
    cited_ids: [handbook]
    abstained: false
    verified_claims: [{{claim: "refund window is 30 days", supported: true}}, {{supported: false}}]
    task_success: true
    query_vector: [0.2, 0.1]
    ann_ids: [handbook#0]
    retrieval_latency_ms: 12.5
    generation_latency_ms: 840
    latency_ms: 910
    cost_usd: 0.0021
    total_tokens: 1830
expected:
  retrieval: {{recall_at_k: 0.5, ndcg_at_k: null}}
"""


@pytest.fixture
def full(tmp_path: Path) -> Dataset:
    path = tmp_path / "gold.yaml"
    path.write_text(FULL_YAML)
    return load_dataset(path)


def test_every_section_of_the_format_example(full: Dataset) -> None:
    assert full.params == Params(k=5, size_limits=(50, 400), boundary_tolerance=0,
                                 required_metadata=("source",), max_context_tokens=1500,
                                 abstain_phrases=("i don't know",))
    assert full.documents == (Document("handbook", HANDBOOK, {"source": "handbook.md"}),)
    shipping = HANDBOOK.index("Shipping")
    assert full.chunks == (
        Chunk("handbook#0", "handbook", 0, 63, {"source": "handbook.md", "page": 1}),
        Chunk("handbook#1", "handbook", shipping, shipping + len("Shipping   takes\nfive days.")),
    )
    assert full.expected_chunks == (Chunk(None, "handbook", 0, 14), Chunk(None, "handbook", 15, 35))
    assert full.expected_metadata == {"handbook#0": {"source": "handbook.md", "page": 1}}
    q1, q2 = full.queries
    window = HANDBOOK.index("within 30 days of purchase")
    assert q1 == Query(
        id="q1", question="How long is the refund window?",
        relevant={"handbook#0": 2, "handbook#3": 1},
        expected_evidence=(EvidenceSpan("handbook", 15, 63),
                           EvidenceSpan("handbook", window, window + 26)),
        reference_answers=("30 days",), required_facts=("30 days",),
        expected_citations=("handbook",), answerable=True)
    assert q2 == Query(id="q2", relevant={"handbook#1": 1, "handbook#0": 1},
                       reference_answers=("five days", "5 days"))
    assert full.expected == {"retrieval": {"recall_at_k": 0.5, "ndcg_at_k": None}}


def test_run_entry_fields(full: Dataset) -> None:
    entry = full.run["q1"]
    assert entry == RunEntry(
        retrieved_ids=("handbook#0", "handbook#5"), reranked_ids=("handbook#5", "handbook#0"),
        context_ids=("handbook#5", "handbook#0"), answer="Refunds are accepted within 30 days.",
        cited_ids=("handbook",), abstained=False,
        verified_claims=(Claim("refund window is 30 days", True), Claim("", False)),
        task_success=True, ann_ids=("handbook#0",), retrieval_latency_ms=12.5,
        generation_latency_ms=840.0, latency_ms=910.0, cost_usd=0.0021, total_tokens=1830.0)
    assert entry.query_vector is not None
    assert entry.query_vector.dtype == np.float64
    assert entry.query_vector.tolist() == [0.2, 0.1]
    assert type(entry.latency_ms) is float
    assert set(full.run) == {"q1"}  # q2 has no run entry: no run data


def test_vectors(full: Dataset) -> None:
    vectors = full.vectors
    assert vectors is not None
    assert vectors.chunk_ids == ("handbook#0", "handbook#1")
    assert vectors.chunk_matrix is not None
    assert vectors.chunk_matrix.dtype == np.float64
    assert vectors.chunk_matrix.tolist() == [[0.1, 0.3], [1.0, 0.0]]
    assert vectors.sentences is not None
    assert vectors.sentences["handbook#0"].tolist() == [[0.1, 0.2], [0.0, 1.0]]
    assert vectors.indexed_ids == ("handbook#0",)


def test_source_is_the_path_as_given(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text(FULL_YAML)
    assert load_dataset(path).source == str(path)
    assert load_dataset(str(path)).source == str(path)
    assert parse_dataset({}).source == "<arguments>"


def test_yaml_and_json_give_the_same_dataset(tmp_path: Path, full: Dataset) -> None:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(yaml.safe_load(FULL_YAML)))
    other = load_dataset(path)
    assert (other.params, other.documents, other.chunks, other.queries, other.run) == (
        full.params, full.documents, full.chunks, full.queries, full.run)


@pytest.mark.parametrize("name", ["gold.yml", "gold.YAML", "gold.Json"])
def test_extensions_are_case_insensitive(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text('{"queries": [{"id": "q1"}]}')
    assert load_dataset(path).query_ids == ("q1",)


def test_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    for name in ("gold.json", "gold.yaml"):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + b'{"queries": [{"id": "q1"}]}')
        assert load_dataset(path).query_ids == ("q1",)


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n", "---\n", "null\n"])
def test_empty_yaml_file_is_an_empty_dataset(tmp_path: Path, text: str) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text(text)
    dataset = load_dataset(path)
    assert dataset == Dataset(source=str(path))
    assert ((dataset.documents, dataset.chunks, dataset.queries, dict(dataset.run))
            == ((), (), (), {}))
    assert dataset.vectors is None and dataset.expected is None and dataset.params == Params()


def test_none_and_empty_mapping_are_empty_datasets() -> None:
    assert parse_dataset(None) == Dataset()
    assert parse_dataset({}) == Dataset()


def test_format_may_be_given_or_omitted() -> None:
    assert parse_dataset({"format": FORMAT_ID}) == Dataset()
    assert parse_dataset({"format": None}) == Dataset()


@pytest.mark.parametrize("section", ["params", "documents", "chunks", "expected_chunks",
                                     "expected_metadata", "vectors", "queries", "run",
                                     "expected"])
def test_null_section_is_the_same_as_an_absent_one(section: str) -> None:
    assert parse_dataset({section: None}) == Dataset()


# -- ids, grades, answers ------------------------------------------------------


def test_relevant_list_means_grade_one_and_mapping_keeps_grades() -> None:
    data = {"queries": [{"id": "a", "relevant": ["c1", "c2", "c1"]},
                        {"id": "b", "relevant": {"c1": 0, "c2": 3}},
                        {"id": "c", "relevant": []},
                        {"id": "d", "relevant": {}},
                        {"id": "e", "relevant": {"c1": 2.0}}]}
    relevant = [query.relevant for query in parse_dataset(data).queries]
    assert relevant == [{"c1": 1, "c2": 1}, {"c1": 0, "c2": 3}, None, None, {"c1": 2}]
    assert type(relevant[4]["c1"]) is int


def test_reference_answer_string_or_list() -> None:
    data = {"queries": [{"id": "a", "reference_answer": "30 days"},
                        {"id": "b", "reference_answer": ["30 days", "a month"]},
                        {"id": "c", "reference_answer": []}]}
    answers = [query.reference_answers for query in parse_dataset(data).queries]
    assert answers == [("30 days",), ("30 days", "a month"), ()]


def test_empty_lists_are_the_same_as_absent_ones() -> None:
    data = {"queries": [{"id": "a", "expected_evidence": [], "required_facts": [],
                         "expected_citations": [], "relevant": []}]}
    assert parse_dataset(data).queries == (Query("a"),)


def test_ids_are_any_non_empty_strings() -> None:
    data = {"documents": [{"id": "2024-01-01", "text": "x"},
                          {"id": "-803302492_842~v2", "text": "y"}],
            "queries": [{"id": "123"}, {"id": " spaced id "}]}
    dataset = parse_dataset(data)
    assert [doc.id for doc in dataset.documents] == ["2024-01-01", "-803302492_842~v2"]
    assert dataset.query_ids == ("123", " spaced id ")


def test_yaml_quoted_numbers_and_dates_are_string_ids(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: '123'\n  - id: \"2024-01-01\"\n")
    assert load_dataset(path).query_ids == ("123", "2024-01-01")


def test_whole_floats_are_accepted_as_whole_numbers() -> None:
    data = {"params": {"k": 5.0}, "documents": [{"id": "d", "text": "hello"}],
            "chunks": [{"id": "c", "start": 1.0, "end": 3.0}]}
    dataset = parse_dataset(data)
    assert dataset.params.k == 5 and type(dataset.params.k) is int
    assert (dataset.chunks[0].start, dataset.chunks[0].end) == (1, 3)
    assert type(dataset.chunks[0].start) is int


def test_zero_latency_and_cost_are_valid() -> None:
    data = {"queries": [{"id": "q"}], "run": {"q": {"latency_ms": 0, "cost_usd": 0.0,
                                                     "retrieval_latency_ms": 0}}}
    entry = parse_dataset(data).run["q"]
    assert (entry.latency_ms, entry.cost_usd, entry.retrieval_latency_ms) == (0.0, 0.0, 0.0)


def test_run_ids_need_not_be_known_chunks() -> None:
    data = {"queries": [{"id": "q"}], "run": {"q": {"retrieved_ids": ["nowhere", "nowhere"]}}}
    assert parse_dataset(data).run["q"].retrieved_ids == ("nowhere", "nowhere")


def test_null_run_fields_are_the_same_as_absent_ones() -> None:
    fields = ["retrieved_ids", "reranked_ids", "context_ids", "answer", "cited_ids", "abstained",
              "verified_claims", "task_success", "query_vector", "ann_ids", "retrieval_latency_ms",
              "generation_latency_ms", "latency_ms", "cost_usd", "total_tokens"]
    data = {"queries": [{"id": "q"}], "run": {"q": dict.fromkeys(fields)}}
    entry = parse_dataset(data).run["q"]
    assert entry == RunEntry()
    assert entry.query_vector is None


def test_null_run_entry_is_the_same_as_no_entry() -> None:
    data = {"queries": [{"id": "q1"}, {"id": "q2"}], "run": {"q1": None, "q2": {}}}
    run = parse_dataset(data).run
    assert "q1" not in run
    assert run["q2"] == RunEntry()


def test_null_query_fields_are_the_same_as_absent_ones() -> None:
    data = {"queries": [{"id": "q", "question": None, "relevant": None, "expected_evidence": None,
                         "reference_answer": None, "required_facts": None,
                         "expected_citations": None, "answerable": None}]}
    assert parse_dataset(data).queries == (Query("q"),)


def test_params_all_optional() -> None:
    assert parse_dataset({"params": {}}).params == Params()
    assert parse_dataset({"params": {"k": None, "size_limits": None}}).params == Params()
    assert parse_dataset({"params": {"size_limits": [7, 7]}}).params.size_limits == (7, 7)


def test_expected_metadata_and_metadata_take_any_values() -> None:
    data = {"documents": [{"id": "d", "text": "x", "metadata": {"n": 1, "tags": ["a"], "x": None}}],
            "expected_metadata": {"any id": {"page": 1.5, "ok": True}}}
    dataset = parse_dataset(data)
    assert dataset.documents[0].metadata == {"n": 1, "tags": ["a"], "x": None}
    assert dataset.expected_metadata == {"any id": {"page": 1.5, "ok": True}}


def test_vector_sections() -> None:
    data = {"vectors": {"chunks": {}, "sentences": {"c": []}, "indexed_ids": []}}
    vectors = parse_dataset(data).vectors
    assert vectors is not None
    assert (vectors.chunk_ids, vectors.chunk_matrix, vectors.indexed_ids) == ((), None, ())
    assert vectors.sentences is not None and vectors.sentences["c"].shape == (0, 0)
    data = {"vectors": {"chunks": {"x": [1, 2]}, "sentences": {"x": [[1, 0], [0, 1]], "y": []}}}
    vectors = parse_dataset(data).vectors
    assert vectors is not None and vectors.chunk_matrix is not None
    assert vectors.chunk_matrix.tolist() == [[1.0, 2.0]]  # integers become floats
    assert vectors.sentences is not None and vectors.sentences["x"].shape == (2, 2)


def test_zero_vectors_are_valid() -> None:
    data = {"vectors": {"chunks": {"a": [0.0, 0.0], "b": [0, 1]}}}
    vectors = parse_dataset(data).vectors
    assert vectors is not None and vectors.chunk_matrix is not None
    assert vectors.chunk_matrix.tolist() == [[0.0, 0.0], [0.0, 1.0]]


# -- documents, offsets, located texts --------------------------------------------


def test_doc_id_may_be_omitted_with_exactly_one_document() -> None:
    data = {"documents": [{"id": "only", "text": "alpha beta gamma"}],
            "chunks": [{"id": "c", "start": 0, "end": 5}, {"id": "d", "text": "gamma"}],
            "expected_chunks": [{"start": 0, "end": 10}],
            "queries": [{"id": "q", "expected_evidence": [{"start": 6, "end": 10},
                                                          {"quote": "alpha"}]}]}
    dataset = parse_dataset(data)
    assert dataset.chunks == (Chunk("c", "only", 0, 5), Chunk("d", "only", 11, 16))
    assert dataset.expected_chunks == (Chunk(None, "only", 0, 10),)
    assert dataset.queries[0].expected_evidence == (EvidenceSpan("only", 6, 10),
                                                    EvidenceSpan("only", 0, 5))


def test_offsets_are_python_string_indices() -> None:
    text = "café 🙂 naïve"  # code points, not UTF-8 bytes
    data = {"documents": [{"id": "d", "text": text}],
            "chunks": [{"id": "c", "text": "naïve"}, {"id": "e", "start": 0, "end": len(text)}]}
    chunks = parse_dataset(data).chunks
    assert text[chunks[0].start:chunks[0].end] == "naïve"
    assert (chunks[0].start, chunks[0].end) == (7, 12)
    assert chunks[1].end == 12


def test_offsets_at_the_bounds_are_valid() -> None:
    data = {"documents": [{"id": "d", "text": "abc"}, {"id": "e", "text": ""}],
            "chunks": [{"id": "c0", "doc_id": "d", "start": 0, "end": 0},
                       {"id": "c1", "doc_id": "d", "start": 3, "end": 3},
                       {"id": "c2", "doc_id": "d", "start": 0, "end": 3},
                       {"id": "c3", "doc_id": "e", "start": 0, "end": 0}]}
    assert ([(c.start, c.end) for c in parse_dataset(data).chunks]
            == [(0, 0), (3, 3), (0, 3), (0, 0)])


def test_chunk_text_is_ignored_when_offsets_are_given() -> None:
    # SEMANTICS: a chunk's text is always the document slice at its span.
    data = {"documents": [{"id": "d", "text": "alpha beta"}],
            "chunks": [{"id": "c", "start": 6, "end": 10, "text": "something else"}]}
    assert parse_dataset(data).chunks == (Chunk("c", "d", 6, 10),)


def test_chunk_text_is_located_exactly_first_then_with_flexible_whitespace() -> None:
    text = "one  two\nthree one two three"
    data = {"documents": [{"id": "d", "text": text}],
            "chunks": [{"id": "a", "text": "one two"}, {"id": "b", "text": "two   three"}]}
    a, b = parse_dataset(data).chunks
    # "one two" occurs exactly at 15, even though "one  two" at 0 matches flexibly.
    assert (a.start, a.end) == (15, 22)
    # "two   three" has no exact occurrence; searched from 15, "two three" at 19 matches
    # (not "two\nthree" at 5, which is before the search start).
    assert (b.start, b.end) == (19, 28)


def test_flexible_location_in_real_whitespace() -> None:
    text = "Shipping\ttakes\r\n  five\u00a0days."
    data = {"documents": [{"id": "d", "text": text}],
            "chunks": [{"id": "c", "text": "Shipping takes five days."}],
            "queries": [{"id": "q", "expected_evidence": [{"quote": "takes\nfive"}]}]}
    dataset = parse_dataset(data)
    assert (dataset.chunks[0].start, dataset.chunks[0].end) == (0, len(text))
    span = dataset.queries[0].expected_evidence[0]
    assert text[span.start:span.end] == "takes\r\n  five"


def test_leading_and_trailing_whitespace_of_a_text_match_whole_runs() -> None:
    text = "alpha   beta  \n gamma"
    data = {"documents": [{"id": "d", "text": text}],
            "chunks": [{"id": "c", "text": "alpha\tbeta "}, {"id": "e", "text": "\tgamma"}]}
    c, e = parse_dataset(data).chunks
    assert text[c.start:c.end] == "alpha   beta  \n "
    assert text[e.start:e.end] == "  \n gamma"


def test_each_chunk_search_starts_at_the_previous_chunks_start() -> None:
    text = "x y x y"
    data = {"documents": [{"id": "d", "text": text}],
            "chunks": [{"id": "a", "text": "x y"}, {"id": "b", "text": "y x"},
                       {"id": "c", "text": "x y"}, {"id": "d", "text": "x y"}]}
    spans = [(c.start, c.end) for c in parse_dataset(data).chunks]
    # b is found from a's start (0); c from b's start (2), not from b's end (5),
    # and not from 0; d from c's start, so it is found at the same place.
    assert spans == [(0, 3), (2, 5), (4, 7), (4, 7)]


def test_chunks_given_by_offsets_also_set_the_search_start() -> None:
    data = {"documents": [{"id": "d", "text": "ab ab ab"}],
            "chunks": [{"id": "a", "start": 3, "end": 5}, {"id": "b", "text": "ab"},
                       {"id": "c", "start": 0, "end": 2}, {"id": "d", "text": "ab"}]}
    spans = [(c.start, c.end) for c in parse_dataset(data).chunks]
    assert spans == [(3, 5), (3, 5), (0, 2), (0, 2)]


def test_search_start_is_kept_per_document() -> None:
    data = {"documents": [{"id": "d", "text": "ab ab"}, {"id": "e", "text": "ab ab"}],
            "chunks": [{"id": "a", "doc_id": "d", "start": 3, "end": 5},
                       {"id": "b", "doc_id": "e", "text": "ab"},
                       {"id": "c", "doc_id": "d", "text": "ab"}]}
    spans = [(c.doc_id, c.start) for c in parse_dataset(data).chunks]
    assert spans == [("d", 3), ("e", 0), ("d", 3)]


def test_expected_chunks_are_located_among_themselves() -> None:
    data = {"documents": [{"id": "d", "text": "ab ab ab"}],
            "chunks": [{"id": "a", "start": 6, "end": 8}],
            "expected_chunks": [{"text": "ab"}, {"start": 3, "end": 5}, {"text": "ab"}]}
    spans = [(c.start, c.end) for c in parse_dataset(data).expected_chunks]
    assert spans == [(0, 2), (3, 5), (3, 5)]


def test_quotes_are_the_first_occurrence_in_the_document() -> None:
    data = {"documents": [{"id": "d", "text": "ab ab ab"}],
            "chunks": [{"id": "a", "start": 6, "end": 8}],
            "queries": [{"id": "q", "expected_evidence": [{"start": 3, "end": 5},
                                                          {"quote": "b a"}, {"quote": "ab"}]}]}
    spans = [(s.start, s.end) for s in parse_dataset(data).queries[0].expected_evidence]
    assert spans == [(3, 5), (1, 4), (0, 2)]


def test_evidence_is_deduplicated_within_a_query_after_locating() -> None:
    text = "Refunds within 30 days. Refunds within 30 days."
    data = {"documents": [{"id": "d", "text": text}, {"id": "e", "text": text}],
            "queries": [
                {"id": "q1", "expected_evidence": [
                    {"doc_id": "d", "quote": "within 30 days"},
                    {"doc_id": "d", "start": 8, "end": 22},
                    {"doc_id": "e", "start": 8, "end": 22},
                    {"doc_id": "d", "quote": "within  30\ndays"},
                    {"doc_id": "d", "start": 0, "end": 7},
                    {"doc_id": "d", "start": 8, "end": 22}]},
                {"id": "q2", "expected_evidence": [{"doc_id": "d", "start": 8, "end": 22}]}]}
    q1, q2 = parse_dataset(data).queries
    assert q1.expected_evidence == (EvidenceSpan("d", 8, 22), EvidenceSpan("e", 8, 22),
                                    EvidenceSpan("d", 0, 7))
    # Across queries each query keeps its own span; metrics pool distinct spans.
    assert q2.expected_evidence == (EvidenceSpan("d", 8, 22),)


# -- path: documents -----------------------------------------------------------------


def test_path_document_is_read_relative_to_the_file(tmp_path: Path) -> None:
    docs = tmp_path / "data" / "docs"
    docs.mkdir(parents=True)
    (docs / "handbook.md").write_text("Héllo\nworld 🙂\n", encoding="utf-8")
    gold = tmp_path / "data" / "gold.yaml"
    gold.write_text("documents:\n  - id: h\n    path: docs/handbook.md\n"
                    "chunks:\n  - id: c\n    text: world\n")
    dataset = load_dataset(gold)
    assert dataset.documents[0].text == "Héllo\nworld 🙂\n"
    assert (dataset.chunks[0].start, dataset.chunks[0].end) == (6, 11)


def test_path_document_keeps_its_text_exactly(tmp_path: Path) -> None:
    # No newline translation and no stripping: offsets refer to the exact text.
    (tmp_path / "doc.txt").write_bytes(b"line one\r\nline two\r\n")
    gold = tmp_path / "gold.json"
    gold.write_text('{"documents": [{"id": "d", "path": "doc.txt"}]}')
    assert load_dataset(gold).documents[0].text == "line one\r\nline two\r\n"


def test_parse_dataset_reads_paths_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text("content")
    data = {"documents": [{"id": "d", "path": "doc.md"}]}
    assert parse_dataset(data, base_dir=tmp_path).documents[0].text == "content"


def test_path_inside_a_subfolder_via_dots_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "doc.md").write_text("content")
    gold = tmp_path / "gold.yaml"
    gold.write_text("documents:\n  - {id: d, path: docs/../doc.md}\n")
    assert load_dataset(gold).documents[0].text == "content"


def test_relative_dataset_path_resolves_documents_next_to_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "doc.md").write_text("content")
    (tmp_path / "sub" / "gold.yaml").write_text("documents:\n  - {id: d, path: doc.md}\n")
    monkeypatch.chdir(tmp_path)
    dataset = load_dataset("sub/gold.yaml")
    assert dataset.documents[0].text == "content"
    assert dataset.source == "sub/gold.yaml"


# -- the shared files ------------------------------------------------------------------

CONFORMANCE = sorted((SHARED / "conformance").glob("*.json"))
DATA = sorted([*(SHARED / "data").glob("**/*.gold.json"),
               *(SHARED / "data" / "trec_eval" / "cases").glob("*.json")])
needs_shared = pytest.mark.skipif(not SHARED.is_dir(),
                                  reason=f"shared reference files not found at {SHARED}")


def _ids(paths: list[Path]) -> list[str]:
    return [str(path.relative_to(SHARED)) for path in paths]


def check_loaded(dataset: Dataset) -> None:
    texts = {doc.id: doc.text for doc in dataset.documents}
    for chunk in (*dataset.chunks, *dataset.expected_chunks):
        assert 0 <= chunk.start <= chunk.end <= len(texts[chunk.doc_id])
    for query in dataset.queries:
        for span in query.expected_evidence:
            assert 0 <= span.start <= span.end <= len(texts[span.doc_id])
    assert set(dataset.run) <= set(dataset.query_ids)


@needs_shared
def test_shared_files_are_present() -> None:
    assert CONFORMANCE, f"no conformance cases in {SHARED / 'conformance'}"
    assert DATA, f"no gold files in {SHARED / 'data'}"


@needs_shared
@pytest.mark.parametrize("path", CONFORMANCE, ids=_ids(CONFORMANCE))
def test_conformance_case_loads(path: Path) -> None:
    dataset = load_dataset(path)
    check_loaded(dataset)
    assert dataset.queries
    assert dataset.expected, "a conformance case carries its expected values"


@needs_shared
@pytest.mark.parametrize("path", DATA, ids=_ids(DATA))
def test_public_gold_file_loads(path: Path) -> None:
    dataset = load_dataset(path)
    check_loaded(dataset)
    assert dataset.queries
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert dataset.query_ids == tuple(query["id"] for query in raw["queries"])


@needs_shared
def test_chroma_spans_match_the_upstream_excerpts() -> None:
    # README: text[start:end] == content for every reference, offsets unchanged.
    path = SHARED / "data" / "chroma_chunking" / "state_of_the_union.gold.json"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    raw = json.loads(path.read_text(encoding="utf-8"))
    dataset = load_dataset(path)
    for query, raw_query in zip(dataset.queries, raw["queries"]):
        offsets = [(e["doc_id"], e["start"], e["end"]) for e in raw_query["expected_evidence"]]
        assert [(s.doc_id, s.start, s.end) for s in query.expected_evidence] == list(
            dict.fromkeys(offsets))


def test_loading_never_returns_a_partial_dataset_on_error(tmp_path: Path) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("queries:\n  - id: q1\n  - id: q1\n")
    with pytest.raises(DatasetError,
                       match=r"queries\[1\]\.id \(query 'q1', line 3\): duplicate query id 'q1'$"):
        load_dataset(path)
