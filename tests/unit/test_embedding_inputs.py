"""The embedding stage's inputs: plain chunks as columns, vector arrays checked at once.

A list of plain ``{"id", "doc_id", "start", "end"}`` dicts is kept as columns
(``ChunkTable``), and the embedding stage reads only its ids, so it never
makes a record per chunk.  The same chunks given as :class:`Chunk` records
take the item-by-item path; both must give the same report, and bad chunks
the same message.  A vector array is checked for NaN and infinity by one sum,
value by value only when that sum is not finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytest_rag.dataset.arguments import resolve_inputs
from pytest_rag.dataset.model import Chunk, ChunkTable, chunk_ids
from pytest_rag.dataset.parser import parse_dataset
from pytest_rag.errors import DatasetError
from pytest_rag.stages.chunking import ChunkingEvaluator
from pytest_rag.stages.embedding import EmbeddingEvaluator
from pytest_rag.stages.report import Report
from pytest_rag.stages.retrieval import RetrievalEvaluator

TEXT = " ".join(f"w{i}" for i in range(400))
DOCUMENTS = {"d1": TEXT, "d2": TEXT[:700]}
COUNT = 40
DIM = 6


def _plain_chunks() -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "doc_id": "d1" if i % 3 else "d2", "start": 10 * i,
             "end": 10 * i + 15} for i in range(COUNT)]


def _records(plain: list[dict[str, Any]]) -> list[Chunk]:
    return [Chunk(item["id"], item["doc_id"], item["start"], item["end"]) for item in plain]


def _vectors() -> np.ndarray:
    """Chunk vectors with zero rows, exact duplicates and ties (same direction)."""
    rng = np.random.default_rng(7)
    vectors = rng.integers(-3, 4, size=(COUNT, DIM)).astype(np.float64)
    vectors[[4, 17]] = 0.0
    vectors[[9, 22, 31]] = vectors[2]          # duplicates of row 2
    vectors[[12, 25]] = 2.5 * vectors[5]       # same cosine as row 5: ties
    vectors[30] = -vectors[5]
    return vectors


VECTORS = _vectors()
QUERY_VECTORS = {"q1": VECTORS[2] + 0.01, "q2": VECTORS[5].copy(), "q3": np.zeros(DIM),
                 "q4": VECTORS[7] - VECTORS[3], "q5": np.ones(DIM)}
RELEVANT = {"q1": {"c2": 1, "c9": 2, "c39": 1}, "q2": ["c12", "c25", "ghost"],
            "q4": {"c7": 0, "c3": 1}, "q5": ["c0"]}
ANN_IDS = {"q1": ["c2", "c22", "c2", "c31", "nowhere"], "q2": ["c5", "c25"],
           "q3": ["c0", "c1"], "q4": []}


def _assert_same(columnar: Report, records: Report) -> None:
    assert columnar.values == records.values
    assert columnar.missing == records.missing
    assert columnar.settings == records.settings
    assert columnar.query_ids == records.query_ids
    assert columnar.query_values.keys() == records.query_values.keys()
    for key, values in columnar.query_values.items():
        np.testing.assert_array_equal(values, records.query_values[key], err_msg=key)
    assert columnar.dataset is not None and records.dataset is not None
    assert columnar.dataset.chunks == records.dataset.chunks


def _both(vectors: Any, k: int = 3, **inputs: Any) -> tuple[Report, Report]:
    plain = _plain_chunks()
    evaluator = EmbeddingEvaluator(k=k)
    common = dict(documents=DOCUMENTS, chunk_vectors=vectors, query_vector=QUERY_VECTORS,
                  relevant=RELEVANT, ann_ids=ANN_IDS, **inputs)
    columnar = evaluator.evaluate(chunks=plain, **common)
    records = evaluator.evaluate(chunks=_records(plain), **common)
    assert columnar.dataset is not None and records.dataset is not None
    assert isinstance(columnar.dataset.chunks, ChunkTable)
    assert type(records.dataset.chunks) is tuple
    return columnar, records


def _mapping(rows: list[int]) -> dict[str, np.ndarray]:
    return {f"c{row}": VECTORS[row] for row in rows}


@pytest.mark.parametrize("vectors", [
    pytest.param(VECTORS, id="matrix aligned with the chunks"),
    pytest.param(VECTORS.astype(np.float32), id="float32 matrix"),
    pytest.param(_mapping(list(range(COUNT))), id="mapping in chunk order"),
    pytest.param(_mapping(list(range(COUNT))[::-1]), id="mapping in reverse order"),
    pytest.param({**_mapping([1, 3, 5, 12, 25, 2, 9, 22, 0]), "other": VECTORS[5],
                  "zero": np.zeros(DIM)}, id="missing vectors and non-chunk ids"),
    pytest.param({"stray": VECTORS[5], **_mapping(list(range(COUNT)))},
                 id="a non-chunk id first"),
])
@pytest.mark.parametrize("k", [1, 3, 50])
def test_columnar_chunks_give_the_record_path_report(vectors: Any, k: int) -> None:
    columnar, records = _both(vectors, k, indexed_ids=["c0", "c1", "other"])
    _assert_same(columnar, records)
    # The ties and duplicates are really there: they decide some top K.
    assert columnar.values["duplicate_vector_rate"] is not None
    assert columnar.values["zero_norm_rate"] is not None


def test_the_embedding_stage_makes_no_chunk_records() -> None:
    columnar, _ = _both(VECTORS)
    assert columnar.dataset is not None
    table = columnar.dataset.chunks
    assert isinstance(table, ChunkTable)
    assert "chunks" not in vars(table)  # the stage read the id column only
    assert table[0] == Chunk("c0", "d2", 0, 15)  # made when first read
    assert "chunks" in vars(table)


def test_a_table_behaves_as_the_tuple_of_its_records() -> None:
    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": _plain_chunks()})
    table = data.chunks
    assert isinstance(table, ChunkTable)
    records = tuple(_records(_plain_chunks()))
    assert table == records and records == table and not table != records
    assert hash(table) == hash(records)
    assert repr(table) == repr(records)
    assert len(table) == COUNT and list(table) == list(records)
    assert table[3] == records[3] and table[-1] == records[-1] and table[2:5] == records[2:5]
    assert table + (records[0],) == records + (records[0],)
    assert (records[0],) + table == (records[0],) + records
    assert table.index(records[7]) == 7 and records[5] in table
    assert data.chunk_index == {f"c{i}": i for i in range(COUNT)}
    assert chunk_ids(table) == chunk_ids(records) == tuple(f"c{i}" for i in range(COUNT))
    assert table.starts == tuple(chunk.start for chunk in records)
    assert resolve_inputs(None, {"documents": DOCUMENTS, "chunks": records}) == data


def test_a_file_with_plain_chunks_equals_one_with_records() -> None:
    raw = {"documents": [{"id": doc_id, "text": text} for doc_id, text in DOCUMENTS.items()],
           "chunks": _plain_chunks()}
    loaded = parse_dataset(raw, source="gold.json")
    assert isinstance(loaded.chunks, ChunkTable)
    assert loaded.chunks == tuple(_records(_plain_chunks()))


def test_other_stages_read_a_table_as_records() -> None:
    plain = _plain_chunks()
    queries = {"q1": ["c1", "c2"], "q2": ["c5"]}
    retrieved = {"q1": ["c2", "c7", "c1"], "q2": ["c9", "c5"]}
    for evaluator, inputs in (
            (ChunkingEvaluator(size_limits=(2, 4)), {}),
            (RetrievalEvaluator(k=2), {"relevant": queries, "retrieved_ids": retrieved})):
        columnar = evaluator.evaluate(documents=DOCUMENTS, chunks=plain, **inputs)
        records = evaluator.evaluate(documents=DOCUMENTS, chunks=_records(plain), **inputs)
        _assert_same(columnar, records)


def test_new_documents_reread_a_table() -> None:
    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": _plain_chunks()})
    again = resolve_inputs(data, {"documents": {**DOCUMENTS, "d3": "x"}})
    assert again.chunks == data.chunks
    with pytest.raises(DatasetError) as info:
        resolve_inputs(data, {"documents": {"d1": TEXT[:100], "d2": TEXT}})
    assert str(info.value) == ("<arguments>: chunks[10].end: 115 is past the end of document "
                               "'d1' (100 characters)")


def _with(index: int, **changes: Any) -> list[dict[str, Any]]:
    """Plain chunks with item ``index`` changed (a value ``...`` removes that key)."""
    plain = _plain_chunks()
    plain[index] = {key: value for key, value in {**plain[index], **changes}.items()
                    if value is not ...}
    return plain


BAD_CHUNKS = [
    (_with(7, id="c3"), "chunks[7].id: duplicate chunk id 'c3'"),
    (_with(5, id=""), "chunks[5].id: an id must not be empty"),
    (_with(5, id=5), "chunks[5].id: expected a string, got a number 5"),
    (_with(2, doc_id="d9"), "chunks[2].doc_id: unknown document 'd9' (known: 'd1', 'd2')"),
    (_with(2, doc_id=None), "chunks[2]: missing 'doc_id' (it may be omitted only with exactly "
                            "one document; there are 2 documents)"),
    (_with(3, end=9999), "chunks[3].end: 9999 is past the end of document 'd2' "
                         "(700 characters)"),
    (_with(3, start=2**70), "chunks[3].start: 1180591620717411303424 is past the end of "
                            "document 'd2' (700 characters)"),
    (_with(4, start=-1), "chunks[4].start: must be >= 0, got -1"),
    (_with(4, start=60), "chunks[4]: start 60 is after end 55"),
    (_with(6, start=True), "chunks[6].start: expected a whole number, got a boolean True"),
    (_with(6, end=70.5), "chunks[6].end: expected a whole number, got a number 70.5"),
    (_with(8, end=...), "chunks[8]: give both 'start' and 'end', or neither"),
    (_with(8, id=...), "chunks[8]: missing required key 'id'"),
    (_with(8, size=3), "chunks[8].size: unknown key"),
]


@pytest.mark.parametrize(("chunks", "message"), [
    pytest.param(chunks, message, id=message.split(":")[0]) for chunks, message in BAD_CHUNKS])
def test_bad_chunks_get_the_item_by_item_message(chunks: list[Any], message: str) -> None:
    # With a chunk carrying metadata appended, the list can only go item by item:
    # the first problem, and its message, must be the same either way.
    item_by_item = [*chunks, {"id": "extra", "doc_id": "d1", "start": 0, "end": 1,
                              "metadata": {"k": 1}}]
    for given in (chunks, item_by_item):
        with pytest.raises(DatasetError) as info:
            EmbeddingEvaluator(k=2).evaluate(documents=DOCUMENTS, chunks=given,
                                             chunk_vectors=VECTORS, query_vector=QUERY_VECTORS)
        assert str(info.value) == f"<arguments>: {message}"


def test_chunks_that_are_not_plain_take_the_item_path_with_the_same_result() -> None:
    # 70.0 is a whole number to the format, but not an int: no table, same chunks.
    data = resolve_inputs(None, {"documents": DOCUMENTS, "chunks": _with(6, end=75.0)})
    assert type(data.chunks) is tuple
    assert data.chunks == resolve_inputs(None, {"documents": DOCUMENTS,
                                                "chunks": _plain_chunks()}).chunks


def test_a_matrix_needs_a_row_per_chunk_of_a_table() -> None:
    with pytest.raises(DatasetError) as info:
        EmbeddingEvaluator().evaluate(documents=DOCUMENTS, chunks=_plain_chunks(),
                                      chunk_vectors=VECTORS[:-1])
    assert str(info.value) == ("<arguments>: chunk_vectors: an array of 39 rows needs one row per "
                               "chunk; there are 40 chunks (or pass a mapping of chunk id to "
                               "vector)")


@pytest.mark.parametrize(("bad", "message"), [
    ((3, 4, np.nan), "chunk_vectors[3][4]: must be a finite number, got nan"),
    ((0, 0, np.inf), "chunk_vectors[0][0]: must be a finite number, got inf"),
    ((39, 5, -np.inf), "chunk_vectors[39][5]: must be a finite number, got -inf"),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_non_finite_value_is_named_in_an_array(bad: tuple[int, int, float], message: str,
                                                 dtype: type) -> None:
    vectors = VECTORS.astype(dtype)
    vectors[1, 1] = np.inf if bad[2] == -np.inf else 1.0  # +inf and -inf: a NaN sum
    vectors[bad[0], bad[1]] = bad[2]
    with pytest.raises(DatasetError) as info:
        EmbeddingEvaluator().evaluate(documents=DOCUMENTS, chunks=_plain_chunks(),
                                      chunk_vectors=vectors)
    first = ("chunk_vectors[1][1]: must be a finite number, got inf" if bad[2] == -np.inf
             else message)
    assert str(info.value) == f"<arguments>: {first}"


@pytest.mark.parametrize(("dtype", "huge"), [(np.float32, 1e38), (np.float64, 1e306)])
def test_finite_values_whose_sum_overflows_are_accepted(dtype: type, huge: float) -> None:
    vectors = np.full((COUNT, DIM), huge, dtype=dtype)
    vectors[::2, 0] = huge / 2
    with np.errstate(over="ignore"):
        assert not np.isfinite(vectors.sum())  # the value-by-value check decides
    report = EmbeddingEvaluator(k=2).evaluate(documents=DOCUMENTS, chunks=_plain_chunks(),
                                              chunk_vectors=vectors, query_vector=QUERY_VECTORS,
                                              relevant=RELEVANT)
    assert report.values["duplicate_vector_rate"] == (COUNT - 2) / COUNT


def test_documents_and_query_vectors_checked_at_once_equal_those_checked_one_by_one() -> None:
    from pytest_rag.dataset.model import Document

    vectors32 = {query: vector.astype(np.float32) for query, vector in QUERY_VECTORS.items()}
    at_once = resolve_inputs(None, {"documents": DOCUMENTS, "query_vector": vectors32})
    # A list of documents and a vector given as a list take the item-by-item paths.
    one_by_one = resolve_inputs(None, {
        "documents": [Document(doc_id, text) for doc_id, text in DOCUMENTS.items()],
        "query_vector": {**vectors32, "q1": vectors32["q1"].tolist()}})
    assert at_once.documents == one_by_one.documents
    assert [doc.path for doc in at_once.documents] == [None, None]
    assert at_once.run.keys() == one_by_one.run.keys()
    for query, entry in at_once.run.items():
        expected = one_by_one.run[query].query_vector
        assert entry.query_vector is not None and expected is not None
        assert entry.query_vector.dtype == np.float64
        np.testing.assert_array_equal(entry.query_vector, expected)
    # float64 vectors are kept as they are, as the parser keeps them.
    kept = resolve_inputs(None, {"query_vector": QUERY_VECTORS})
    assert all(kept.run[query].query_vector is vector for query, vector in QUERY_VECTORS.items())


@pytest.mark.parametrize(("inputs", "message"), [
    ({"documents": {"d1": TEXT, "d2": 5}}, "documents[1].text: expected a string, got a number 5"),
    ({"documents": {"d1": TEXT, "": "x"}}, "documents[1].id: an id must not be empty"),
    ({"query_vector": {"q1": np.ones(3), "q2": np.array([1.0, np.nan, 2.0])}},
     "query_vector['q2'][1]: must be a finite number, got nan"),
    ({"query_vector": {"q1": np.ones(3), "q2": np.ones(0)}},
     "query_vector['q2']: a vector must have at least one dimension"),
    ({"query_vector": {"q1": np.ones(3), "q2": np.ones((1, 3))}},
     "query_vector['q2']: expected a vector, got an array of 2 dimensions"),
    ({"query_vector": {"q1": np.ones(3), "q2": np.ones(2)}, "chunk_vectors": {"c": [1.0] * 3}},
     "query_vector['q2']: has 2 dimensions, the chunk vectors have 3"),
])
def test_documents_and_query_vectors_that_are_not_plain_get_their_messages(
        inputs: dict[str, Any], message: str) -> None:
    with pytest.raises(DatasetError) as info:
        resolve_inputs(None, inputs)
    assert str(info.value) == f"<arguments>: {message}"
